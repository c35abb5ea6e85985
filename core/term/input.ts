// REPL input: one line at a time with editing, history kept in
// .coder/input.history, and tab completion of slash commands and file names.
// A fresh readline per prompt, so Ctrl-C during a request reaches the engine.
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { appendRecord } from "../edit/state.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";

const MAX_HISTORY = 1000;
/** readLine's answer when Ctrl-C ended a line of a multi-line block. */
const CANCELLED = "\u0000cancelled";

type Keypress = { sequence?: string; name?: string; ctrl?: boolean; meta?: boolean; shift?: boolean } | undefined;

export type Completer = (line: string) => string[];

export class LineInput {
  private readonly history: string[];

  constructor(
    private readonly historyPath: string | null,
    private readonly completer: Completer = () => [],
  ) {
    this.history = historyPath ? loadInputHistory(historyPath) : [];
  }

  /**
   * One line (or a `{` ... `}` block for multi-line input). Null at end of input
   * (Ctrl-D) or after Ctrl-C twice on an empty line. `initial` is typed into the line
   * first, for the user to edit (e.g. a voice transcription). When `signal` aborts (e.g.
   * watched files asked for something), the prompt ends at once with "".
   */
  async read(prompt: string, opts: { initial?: string; signal?: AbortSignal } = {}): Promise<string | null> {
    const first = await this.readLine(prompt, opts.initial ?? "", opts.signal);
    if (first === null || first.trim() !== "{") return this.remember(first);
    const lines: string[] = [];
    this.inBlock = true;
    try {
      for (;;) {
        const line = await this.readLine("... ");
        if (line === null) return null;
        // Ctrl-C in a block drops the block (as in a shell), not one line of it.
        if (line === CANCELLED) return "";
        if (line.trim() === "}") break;
        lines.push(line);
      }
    } finally {
      this.inBlock = false;
    }
    return this.remember(lines.join("\n"));
  }

  private inBlock = false;
  /** Keys that arrived after a line was taken (a paste of several lines, typing ahead). */
  private readonly typeahead: [string | undefined, Keypress][] = [];

  private remember(line: string | null): string | null {
    if (line === null || !line.trim()) return line;
    if (this.history[0] !== line) {
      this.history.unshift(line);
      if (this.history.length > MAX_HISTORY) this.history.length = MAX_HISTORY;
      if (this.historyPath) appendInputHistory(this.historyPath, line);
    }
    return line;
  }

  /** The previous prompt ended with Ctrl-C on an empty line: a second one leaves. */
  private armedExit = false;

  private readLine(prompt: string, initial = "", signal?: AbortSignal): Promise<string | null> {
    return new Promise((resolve) => {
      const rl = createInterface({
        input: process.stdin,
        output: process.stdout,
        terminal: Boolean(process.stdin.isTTY),
        history: [...this.history],
        historySize: MAX_HISTORY,
        completer: (line: string) => {
          const hits = this.completer(line);
          return [hits, line];
        },
      });
      let settled = false;
      const finish = (value: string | null, keepRest = false) => {
        if (settled) return;
        settled = true;
        rl.close();
        // Lines typed ahead or pasted together arrive in one chunk; this readline saw only the
        // first. Keep the rest of the chunk's keys (emitted right after, in this tick) for the next prompt.
        if (keepRest && process.stdin.isTTY) {
          const grab = (s: string | undefined, key: Keypress) => this.typeahead.push([s, key]);
          process.stdin.on("keypress", grab);
          setImmediate(() => process.stdin.off("keypress", grab));
        }
        resolve(value);
      };
      // Ctrl-C clears the line; on an empty line it asks for a second one to leave.
      rl.on("SIGINT", () => {
        const typed = rl.line;
        if (this.inBlock) {
          process.stdout.write("\n(multi-line input dropped)\n");
          return finish(CANCELLED);
        }
        if (!typed && this.armedExit) {
          process.stdout.write("\n");
          return finish(null);
        }
        this.armedExit = !typed;
        process.stdout.write(typed ? "\n" : "\n(Ctrl-C again or Ctrl-D to leave)\n");
        finish("");
      });
      signal?.addEventListener(
        "abort",
        () => {
          if (settled) return;
          process.stdout.write("\n");
          finish("");
        },
        { once: true },
      );
      // Ctrl-D: end the prompt's line, so what follows (a shell prompt) starts on its own.
      rl.on("close", () => {
        if (!settled) process.stdout.write("\n");
        finish(null);
      });
      rl.question(prompt, (answer) => {
        this.armedExit = false;
        // readline keeps a recalled multi-line entry's line breaks as "\r": give the model "\n".
        finish(answer.replace(/\r\n?/g, "\n"), true);
      });
      if (initial) rl.write(initial.replace(/\r?\n/g, " "));
      // Keys typed ahead for this prompt, up to the end of its line (the rest waits for the next one).
      while (this.typeahead.length && !settled) {
        const [s, key] = this.typeahead.shift() as [string | undefined, Keypress];
        (rl as unknown as { write(data: string | undefined, key?: Keypress): void }).write(s, key);
      }
    });
  }
}

/**
 * Newest first; the file holds one entry per line: a line break as `\n`, a backslash as `\\`
 * (so a typed `\n`, as in `print("a\n")`, comes back as typed).
 */
export function loadInputHistory(path: string): string[] {
  if (!existsSync(path)) return [];
  try {
    const lines = (readCappedText(path, { maxBytes: 8 * SMALL_FILE_BYTES }).text ?? "").split("\n").filter(Boolean);
    return lines.map(unescapeEntry).reverse().slice(0, MAX_HISTORY);
  } catch {
    return [];
  }
}

function unescapeEntry(line: string): string {
  return line.replace(/\\([\\n])/g, (_m, c: string) => (c === "n" ? "\n" : "\\"));
}

function escapeEntry(line: string): string {
  return line.replaceAll("\\", "\\\\").replace(/\r\n?|\n/g, "\\n");
}

export function appendInputHistory(path: string, line: string): void {
  try {
    appendRecord(path, `${escapeEntry(line)}\n`);
  } catch {
    // history is a convenience
  }
}
