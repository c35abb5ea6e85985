// How a confirmation question reaches a person at a terminal: Aider's one-keystroke
// prompt ("Allow edits to a.py? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: "),
// or a plain line prompt with --no-pretty or NO_COLOR. The gate (core/gate/gate.ts)
// decides what to ask; core/gate/prompter.ts has the choices and the non-interactive answer.
import { Interrupted } from "../errors.ts";
import { CHOICE_KEYS, CHOICE_LABELS, type Choice, type ChooseOptions, choiceLine, choiceOf, type Prompter } from "../gate/prompter.ts";
import { terminalSafe } from "./safe.ts";
import type { Theme } from "./style.ts";

export interface TerminalPrompterOptions {
  /** Colours for the question; null: a plain line prompt (--no-pretty, NO_COLOR). */
  theme: Theme | null;
  /** Waits until what was emitted before the question is on the screen. */
  settled?: () => Promise<void>;
  /** Where the question is written (stdout; the trust question uses stderr). */
  stream?: NodeJS.WriteStream;
  /** Ctrl-C answered No and is about to stop the request (the transcript records the No). */
  interrupted?: (question: string) => void;
  /** The REPL's live input box: it gives the terminal up while the question is asked. */
  live?: { show(): void; hide(): void } | null;
}

/**
 * Questions on the terminal. With colours, one keystroke answers (y n a s d; Enter takes
 * the default); keys typed before the question are thrown away first, so type-ahead never
 * answers. Esc answers No; Ctrl-C answers No and stops the request (Interrupted). Without
 * colours, a plain line is read and its first letter answers.
 */
export class TerminalPrompter implements Prompter {
  readonly interactive = true;

  constructor(private readonly opts: TerminalPrompterOptions) {}

  async choose(question: string, choices: readonly Choice[], detail?: string, options: ChooseOptions = {}): Promise<Choice> {
    await this.opts.settled?.();
    this.opts.live?.hide();
    try {
      return await this.ask(question, choices, detail, options);
    } finally {
      this.opts.live?.show();
    }
  }

  /**
   * A plugin's `kit.ui.select`: the choices numbered, one per line; the person types a number
   * (or the start of a choice's name) and Enter. Enter alone takes the default (null without
   * one), Esc cancels (null), Ctrl-C cancels and stops the request.
   */
  async select(question: string, choices: readonly string[], detail?: string, fallback?: string): Promise<string | null> {
    return this.asking(async (stream) => {
      if (detail) stream.write(`${terminalSafe(detail).trimEnd()}\n`);
      stream.write(`${this.bold(terminalSafe(question))}\n`);
      for (const [i, choice] of choices.entries()) stream.write(`  ${i + 1}. ${terminalSafe(choice)}${choice === fallback ? " (default)" : ""}\n`);
      const prompt = `Choose 1-${choices.length}${fallback !== undefined ? ` [${terminalSafe(fallback)}]` : ""}: `;
      for (;;) {
        const typed = await this.readLine(stream, prompt, question);
        if (typed === null) return null;
        if (!typed.trim()) return fallback ?? null;
        const picked = pickChoice(typed, choices);
        if (picked !== null) return picked;
        stream.write(`"${terminalSafe(typed.trim())}" is not one of the choices: type a number from 1 to ${choices.length}.\n`);
      }
    });
  }

  /** A plugin's `kit.ui.input`: a line of text; Enter alone takes the default, Esc cancels (null), Ctrl-C cancels and stops the request. */
  async input(question: string, detail?: string, fallback?: string): Promise<string | null> {
    return this.asking(async (stream) => {
      if (detail) stream.write(`${terminalSafe(detail).trimEnd()}\n`);
      const text = `${terminalSafe(question)}${fallback !== undefined ? ` [${terminalSafe(fallback)}]` : ""} `;
      const typed = await this.readLine(stream, this.bold(text), question);
      if (typed === null) return null;
      return typed === "" && fallback !== undefined ? fallback : typed;
    });
  }

  /** The question asked with the live input box out of the way, as `choose` does. */
  private async asking<T>(ask: (stream: NodeJS.WriteStream) => Promise<T>): Promise<T> {
    await this.opts.settled?.();
    this.opts.live?.hide();
    try {
      return await ask(this.opts.stream ?? process.stdout);
    } finally {
      this.opts.live?.show();
    }
  }

  private bold(text: string): string {
    return this.opts.theme ? this.opts.theme.bold(text) : text;
  }

  /** One line typed by the person: null for Esc; Ctrl-C throws Interrupted (after noting the question). */
  private async readLine(stream: NodeJS.WriteStream, prompt: string, question: string): Promise<string | null> {
    const { line, ctrlC } = this.opts.theme ? await readRawLine(stream, prompt) : await readPlainLine(stream, prompt);
    if (ctrlC) {
      this.opts.interrupted?.(question);
      throw new Interrupted();
    }
    return line;
  }

  private async ask(question: string, choices: readonly Choice[], detail: string | undefined, options: ChooseOptions): Promise<Choice> {
    const stream = this.opts.stream ?? process.stdout;
    const fallback = options.default && choices.includes(options.default) ? options.default : choices.includes("yes") ? "yes" : (choices[0] as Choice);
    // Questions carry model-chosen text (paths, commands): no escape sequence reaches the terminal.
    if (detail) stream.write(`${terminalSafe(detail).trimEnd()}\n`);
    const text = `${terminalSafe(question)} ${choiceLine(choices, fallback)}`;
    const { answer, ctrlC } = this.opts.theme ? await askKey(stream, this.opts.theme.bold(text), choices, fallback) : await askLine(stream, text, choices, fallback);
    if (ctrlC) {
      this.opts.interrupted?.(question);
      throw new Interrupted();
    }
    return answer;
  }
}

interface Answer {
  answer: Choice;
  /** Ctrl-C answered (No): the caller stops the request too. */
  ctrlC: boolean;
}

/** Type-ahead is read and dropped until the keyboard is quiet this long (at most DRAIN_MAX_MS). */
const DRAIN_QUIET_MS = 40;
const DRAIN_MAX_MS = 400;

/**
 * Ask in raw mode: type-ahead from before the question is dropped, `prompt` is written, and each
 * chunk of keys goes to `onKeys` until it returns an answer; the terminal's mode is restored.
 */
async function askRaw<T>(stream: NodeJS.WriteStream, prompt: string, onKeys: (data: string) => T | null): Promise<T> {
  const stdin = process.stdin;
  stdin.setRawMode?.(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  try {
    await drainTypeahead(stdin);
    stream.write(prompt);
    return await new Promise<T>((resolve) => {
      const onData = (data: string) => {
        const answer = onKeys(data);
        if (answer === null) return;
        stdin.off("data", onData);
        resolve(answer);
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode?.(false);
    stdin.pause();
  }
}

/** One keystroke in raw mode; the answer's label is echoed after the question. */
async function askKey(stream: NodeJS.WriteStream, text: string, choices: readonly Choice[], fallback: Choice): Promise<Answer> {
  const result = await askRaw(stream, text, (data) => {
    const answer = keyAnswer(data, choices, fallback);
    if (!answer) stream.write("\x07");
    return answer;
  });
  stream.write(`${CHOICE_LABELS[result.answer]}${result.ctrlC ? " (Ctrl-C)" : ""}\n`);
  return result;
}

/** The answer one key gives: a choice's letter, Enter, Esc or Ctrl-C; null for any other key. */
export function keyAnswer(data: string, choices: readonly Choice[], fallback: Choice): Answer | null {
  if (data === "\x03") return { answer: "no", ctrlC: true };
  if (data === "\x1b") return { answer: "no", ctrlC: false };
  if (data === "\r" || data === "\n") return { answer: fallback, ctrlC: false };
  // "y⏎" typed fast arrives as one chunk: the habit of line prompts answers by its letter.
  const key = data.length === 2 && (data[1] === "\r" || data[1] === "\n") ? data.slice(0, 1) : data;
  if (key.length !== 1) return null;
  const choice = choices.find((c) => CHOICE_KEYS[c] === key.toLowerCase());
  return choice ? { answer: choice, ctrlC: false } : null;
}

function drainTypeahead(stdin: NodeJS.ReadStream): Promise<void> {
  return new Promise((resolve) => {
    const started = Date.now();
    let last = Date.now();
    const drop = () => {
      last = Date.now();
    };
    stdin.on("data", drop);
    const tick = () => {
      const now = Date.now();
      if (now - last >= DRAIN_QUIET_MS || now - started >= DRAIN_MAX_MS) {
        stdin.off("data", drop);
        resolve();
      } else setTimeout(tick, DRAIN_QUIET_MS / 2);
    };
    setTimeout(tick, DRAIN_QUIET_MS / 2);
  });
}

/** A plain line prompt: the first letter answers, an empty line takes the default; asked again otherwise. */
async function askLine(stream: NodeJS.WriteStream, text: string, choices: readonly Choice[], fallback: Choice): Promise<Answer> {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, output: stream, terminal: false });
  try {
    for (;;) {
      stream.write(text);
      const line = await new Promise<string | null>((resolve) => {
        rl.once("line", resolve);
        rl.once("close", () => resolve(null));
        rl.once("SIGINT", () => resolve(null));
      });
      if (line === null) return { answer: "no", ctrlC: true };
      const answer = choiceOf(line, choices, fallback);
      if (answer) return { answer, ctrlC: false };
    }
  } finally {
    rl.close();
  }
}

/** The choice a typed answer names: its number, its name, or the start of exactly one name (any case); null otherwise. */
export function pickChoice(typed: string, choices: readonly string[]): string | null {
  const t = typed.trim();
  if (/^\d+$/.test(t)) return choices[Number(t) - 1] ?? null;
  const exact = choices.find((c) => c.toLowerCase() === t.toLowerCase());
  if (exact !== undefined) return exact;
  const starts = choices.filter((c) => c.toLowerCase().startsWith(t.toLowerCase()));
  return starts.length === 1 ? starts[0]! : null;
}

interface TypedLine {
  /** The line, or null when Esc (or Ctrl-C) cancelled it. */
  line: string | null;
  ctrlC: boolean;
}

/**
 * A line typed in raw mode: printable text is echoed, Backspace removes the last character,
 * Enter ends the line, Esc cancels, Ctrl-C cancels and says so. Escape sequences (arrow keys)
 * are ignored; type-ahead from before the question is dropped first.
 */
async function readRawLine(stream: NodeJS.WriteStream, prompt: string): Promise<TypedLine> {
  let chars: string[] = [];
  const result = await askRaw(stream, prompt, (data) => {
    const edit = editLine(chars, data);
    chars = edit.chars;
    if (edit.echo) stream.write(edit.echo);
    return edit.end ?? null;
  });
  stream.write(result.ctrlC ? " (Ctrl-C)\n" : result.line === null ? " (Esc)\n" : "\n");
  return result;
}

/** What one chunk of keys does to a line being typed: the new text, what to echo, and the end of the line if it came. */
export function editLine(chars: readonly string[], data: string): { chars: string[]; echo: string; end?: TypedLine } {
  const next = [...chars];
  let echo = "";
  if (data === "\x1b") return { chars: next, echo, end: { line: null, ctrlC: false } };
  // Escape sequences (arrows, function keys) are not text.
  const keys = data.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1bO./g, "");
  for (const key of keys) {
    if (key === "\x03") return { chars: next, echo, end: { line: null, ctrlC: true } };
    if (key === "\r" || key === "\n") return { chars: next, echo, end: { line: next.join(""), ctrlC: false } };
    if (key === "\x7f" || key === "\b") {
      if (next.length) {
        next.pop();
        echo += "\b \b";
      }
    } else if (key >= " " && key !== "\x7f") {
      next.push(key);
      echo += terminalSafe(key);
    }
  }
  return { chars: next, echo };
}

/** A line read without raw mode (--no-pretty, NO_COLOR): the terminal echoes and edits it; end of input cancels. */
async function readPlainLine(stream: NodeJS.WriteStream, prompt: string): Promise<TypedLine> {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, output: stream, terminal: false });
  try {
    stream.write(prompt);
    const line = await new Promise<string | null>((resolve) => {
      rl.once("line", resolve);
      rl.once("close", () => resolve(null));
      rl.once("SIGINT", () => resolve(null));
    });
    return line === null ? { line: null, ctrlC: true } : { line, ctrlC: false };
  } finally {
    rl.close();
  }
}

/** The trust question and other start-up yes/no questions, in the same style (default No). */
export async function askYesNoOnTerminal(question: string, theme: Theme | null, stream: NodeJS.WriteStream = process.stderr): Promise<boolean> {
  const prompter = new TerminalPrompter({ theme, stream });
  try {
    return (await prompter.choose(question, ["yes", "no"], undefined, { default: "no" })) === "yes";
  } catch (error) {
    if (error instanceof Interrupted) return false;
    throw error;
  }
}

