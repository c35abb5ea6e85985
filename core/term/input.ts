// REPL input: one line at a time with editing, history kept in
// .coder/input.history, and tab completion of slash commands and file names.
// A fresh readline per prompt, so Ctrl-C during a request reaches the engine.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";

const MAX_HISTORY = 1000;

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
   * (Ctrl-D) or after Ctrl-C twice on an empty line.
   */
  async read(prompt: string): Promise<string | null> {
    const first = await this.readLine(prompt);
    if (first === null || first.trim() !== "{") return this.remember(first);
    const lines: string[] = [];
    for (;;) {
      const line = await this.readLine("... ");
      if (line === null) return null;
      if (line.trim() === "}") break;
      lines.push(line);
    }
    return this.remember(lines.join("\n"));
  }

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

  private readLine(prompt: string): Promise<string | null> {
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
      const finish = (value: string | null) => {
        if (settled) return;
        settled = true;
        rl.close();
        resolve(value);
      };
      // Ctrl-C clears the line; on an empty line it asks for a second one to leave.
      rl.on("SIGINT", () => {
        const typed = rl.line;
        if (!typed && this.armedExit) {
          process.stdout.write("\n");
          return finish(null);
        }
        this.armedExit = !typed;
        process.stdout.write(typed ? "\n" : "\n(Ctrl-C again or Ctrl-D to leave)\n");
        finish("");
      });
      rl.on("close", () => finish(null));
      rl.question(prompt, (answer) => {
        this.armedExit = false;
        finish(answer);
      });
    });
  }
}

/** Newest first; the file holds one entry per line (multi-line entries with escaped newlines). */
export function loadInputHistory(path: string): string[] {
  if (!existsSync(path)) return [];
  try {
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    return lines.map((l) => l.replaceAll("\\n", "\n")).reverse().slice(0, MAX_HISTORY);
  } catch {
    return [];
  }
}

export function appendInputHistory(path: string, line: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, `${line.replaceAll("\n", "\\n")}\n`);
  } catch {
    // history is a convenience
  }
}
