// The files a command line names, found as the shell will find them: words split with sh's
// quoting, `~`, `$VAR` and `${VAR}` expanded, each word taken relative to the directory the
// command runs in (following `cd DIR &&`). Trust hashes what these name outside the repository.
import { homedir } from "node:os";
import { resolve } from "node:path";

/** One word of a command line, expanded; `problem` says why its value cannot be known beforehand. */
export interface ShellWord {
  /** The word as written. */
  literal: string;
  /** The word after quote removal and expansion. */
  text: string;
  problem?: string;
}

/** A simple command: its words, in order (the first is the program). */
export type ShellCommand = ShellWord[];

const OPERATORS = new Set([";", "&", "|", "(", ")", "\n"]);
const REDIRECTS = new Set(["<", ">"]);

/** Split `line` into simple commands the way sh does, expanding `~`, `$VAR` and `${VAR}` from `env`. */
export function shellCommands(line: string, env: Readonly<Record<string, string | undefined>>, home: string = env.HOME || homedir()): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let current: ShellWord[] = [];
  let literal = "";
  let text = "";
  let problem: string | undefined;
  let inWord = false;
  const endWord = () => {
    if (inWord) current.push(problem ? { literal, text, problem } : { literal, text });
    literal = "";
    text = "";
    problem = undefined;
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (current.length) commands.push(current);
    current = [];
  };
  /** `$...` at `i` (i points at `$`): the expansion and the index after it. */
  const expand = (i: number): { value: string; next: number } => {
    const rest = line.slice(i + 1);
    const braced = /^\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/.exec(rest);
    const plain = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    const name = braced?.[1] ?? plain?.[0];
    if (name) {
      const value = env[name];
      const length = (braced ?? plain)![0].length;
      if (value !== undefined && value !== "") return { value, next: i + 1 + length };
      if (braced?.[2] !== undefined) return { value: braced[2], next: i + 1 + length };
      problem ??= `$${name} is not set`;
      return { value: "", next: i + 1 + length };
    }
    if (rest.startsWith("(")) {
      problem ??= "a command substitution $(...) is only known when it runs";
      let depth = 0;
      for (let j = i + 1; j < line.length; j++) {
        if (line[j] === "(") depth++;
        else if (line[j] === ")" && --depth === 0) return { value: "", next: j + 1 };
      }
      return { value: "", next: line.length };
    }
    if (rest.startsWith("{")) problem ??= "an expansion ${...} coder cannot evaluate";
    else if (/^[0-9@*#?$!-]/.test(rest)) problem ??= `$${rest[0]} is only known when it runs`;
    else return { value: "$", next: i + 1 };
    return { value: "", next: i + 2 };
  };
  for (let i = 0; i < line.length; ) {
    const c = line[i]!;
    if (c === " " || c === "\t") {
      endWord();
      i++;
    } else if (OPERATORS.has(c)) {
      endCommand();
      i++;
    } else if (REDIRECTS.has(c)) {
      endWord();
      i++;
    } else if (c === "#" && !inWord) {
      const eol = line.indexOf("\n", i);
      i = eol < 0 ? line.length : eol;
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const end = close < 0 ? line.length : close;
      inWord = true;
      literal += line.slice(i, end + 1);
      text += line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      while (j < line.length && line[j] !== '"') {
        const d = line[j]!;
        if (d === "\\" && j + 1 < line.length && '$`"\\\n'.includes(line[j + 1]!)) {
          text += line[j + 1];
          j += 2;
        } else if (d === "$") {
          const e = expand(j);
          text += e.value;
          j = e.next;
        } else if (d === "`") {
          problem ??= "a command substitution `...` is only known when it runs";
          j++;
        } else {
          text += d;
          j++;
        }
      }
      literal += line.slice(i, j + 1);
      i = j + 1;
    } else if (c === "\\") {
      inWord = true;
      literal += line.slice(i, i + 2);
      text += line[i + 1] ?? "";
      i += 2;
    } else if (c === "$") {
      inWord = true;
      const e = expand(i);
      literal += line.slice(i, e.next);
      text += e.value;
      i = e.next;
    } else if (c === "`") {
      inWord = true;
      const close = line.indexOf("`", i + 1);
      const end = close < 0 ? line.length : close;
      problem ??= "a command substitution `...` is only known when it runs";
      literal += line.slice(i, end + 1);
      i = end + 1;
    } else if (c === "~" && !inWord) {
      inWord = true;
      const user = /^~([A-Za-z0-9._-]*)(?=\/|$|[\s;&|()<>])/.exec(line.slice(i));
      if (user && user[1] === "") {
        literal += "~";
        text += home;
        i++;
      } else {
        if (user) problem ??= `~${user[1]} (another user's home) is not looked up`;
        literal += c;
        text += c;
        i++;
      }
    } else {
      inWord = true;
      literal += c;
      text += c;
      i++;
    }
  }
  endCommand();
  return commands;
}

/** A word that may name a file: the word itself, and the value of `NAME=value` / `--flag=value`. */
function candidates(word: ShellWord): string[] {
  const out = [word.text];
  const eq = word.text.indexOf("=");
  if (eq > 0 && eq < word.text.length - 1) out.push(word.text.slice(eq + 1));
  return out.filter((t) => t !== "" && !t.startsWith("-"));
}

/** What a command line names: each path (absolute, as it resolves), the directories it runs in, and the words it cannot resolve. */
export interface NamedPaths {
  paths: string[];
  dirs: string[];
  unresolved: string[];
}

/**
 * The paths a command line names, resolved as it runs in `cwd`: a leading (or any) `cd DIR`
 * moves where later words resolve. The program word of each command is skipped when it has no
 * `/` (the shell looks it up in PATH); every other word is a possible path. With
 * `programWords: false` (an argv run without a shell: MCP servers' args) no word is skipped.
 */
export function commandPaths(
  line: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  opts: { home?: string; programWords?: boolean } = {},
): NamedPaths {
  const out: NamedPaths = { paths: [], dirs: [], unresolved: [] };
  let dir = cwd;
  for (const command of shellCommands(line, env, opts.home)) {
    // `cd DIR` (then `&&`, `;`): what follows runs in DIR.
    if (command[0]?.text === "cd" && opts.programWords !== false) {
      const target = command[1];
      if (!target) dir = opts.home || env.HOME || homedir();
      else if (target.problem) out.unresolved.push(`${target.literal} (${target.problem})`);
      else dir = resolve(dir, target.text);
      out.dirs.push(dir);
      continue;
    }
    // `NAME=value` words before the program set its environment; the program is the first other word.
    const program = command.findIndex((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word.literal));
    command.forEach((word, i) => {
      if (word.problem) {
        out.unresolved.push(`${word.literal} (${word.problem})`);
        return;
      }
      if (i === program && opts.programWords !== false && !word.text.includes("/")) return;
      for (const text of candidates(word)) out.paths.push(resolve(dir, text));
    });
  }
  return out;
}
