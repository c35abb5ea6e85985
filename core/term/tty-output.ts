// The terminal's renderer: the reply as streaming markdown with highlighted code, a
// spinner while the model thinks, each applied edit's coloured diff, and coloured status
// lines. Loaded only when stdout is a terminal with colours on (one-shot or REPL).
import { renderDiff, DIFF_FOLD_LINES, looksLikeDiff } from "./diff-view.ts";
import type { CoderEvent } from "../chat/events.ts";
import { usageLine } from "../chat/events.ts";
import { highlighterFor } from "./highlight.ts";
import { MarkdownStream } from "./markdown.ts";
import { Spinner } from "./progress.ts";
import { appliedVerb, checkLine, stopLine, commandLine, firstLine, foldedReasoning, foldedToolResult, type HumanOutputOptions, PlainOutput, type Write } from "./render.ts";
import { terminalSafe } from "./safe.ts";
import { makeTheme, type Theme, type ThemeChoice, wrapStatus } from "./style.ts";

export interface TtyOutputOptions extends HumanOutputOptions, ThemeChoice {
  out?: Write;
  err?: Write;
  /** Columns (default: the terminal's, read per line). */
  width?: () => number;
}

export class TtyOutput extends PlainOutput {
  private readonly md: MarkdownStream;
  private readonly spinner: Spinner;
  readonly theme: Theme;
  /** The spinner's label for the request in flight ("Waiting for gpt-4.1"). */
  private waitingFor = "Waiting";
  /** Columns of the terminal, read per line. */
  private readonly width: () => number;
  /** Writes waiting for the markdown renderer (a grammar loading), in order. */
  private readonly queue: (() => void)[] = [];

  constructor(options: TtyOutputOptions = {}) {
    const out = options.out ?? ((t: string) => process.stdout.write(t));
    super(out, options.err ?? ((t: string) => process.stderr.write(t)), true, options);
    this.theme = makeTheme(options);
    const width = options.width ?? (() => process.stdout.columns || 80);
    this.width = width;
    this.md = new MarkdownStream(out, { theme: this.theme, width, highlighter: highlighterFor });
    this.spinner = new Spinner(out, this.theme.dim);
  }

  override emit(event: CoderEvent): void {
    // Everything after a held-back code block waits for it, so the screen keeps the engine's order.
    if (this.md.busy && event.type !== "delta") {
      this.queue.push(() => this.emitNow(event));
      void this.md.idle().then(() => this.drainQueue());
      return;
    }
    this.emitNow(event);
  }

  private drainQueue(): void {
    while (this.queue.length && !this.md.busy) this.queue.shift()?.();
  }

  private emitNow(event: CoderEvent): void {
    const t = this.theme;
    // The spinner's line is erased before anything is written; a retry waits again.
    const waiting = this.spinner.running && event.type === "retry";
    this.spinner.stop();
    switch (event.type) {
      case "request":
        super.emit(event);
        this.md.end();
        this.waitingFor = `Waiting for ${event.model.replace(/^[^/]+\//, "")}`;
        this.spinner.start(this.waitingFor, this.stopHint());
        return;
      case "delta":
        this.streamed ||= event.text.length > 0;
        this.md.push(event.text);
        return;
      case "reasoning":
        // Gathered while the model thinks, and shown dimmed and folded after the reply.
        this.reasoning += event.text;
        if (!this.streamed) this.spinner.start("Thinking");
        return;
      case "reply":
        this.md.end();
        if (this.reasoning.trim()) this.out(`${t.dim(terminalSafe(foldedReasoning(this.takeReasoning())))}\n`);
        if (event.finishReason === "interrupted") return this.out(`${t.warn(this.stoppedReply(event))}\n`);
        this.out(`${t.dim(usageLine(event.usage, event.cost, this.sessionTotals, event.costKnown !== false))}\n`);
        return;
      case "edit":
        this.md.end();
        if (event.status === "applied") {
          this.appliedThisTurn++;
          this.out(`${t.ok("✓")} ${appliedVerb(event)} ${terminalSafe(event.path)}\n`);
          if (event.diff && this.options.showDiffs) this.out(`${renderDiff(event.diff.replace(/^=+\n/, ""), t, DIFF_FOLD_LINES)}\n`);
        } else {
          const text = event.summary ?? `Edit to ${event.path} ${event.status}: ${firstLine(event.detail)}`;
          this.out(`${t.bad("✗")} ${terminalSafe(text)}\n`);
        }
        return;
      case "tool":
        this.md.end();
        this.out(`${t.dim(terminalSafe(foldedToolResult(event)))}\n`);
        return;
      case "commit":
        this.out(`${t.dim(`Commit ${event.hash.slice(0, 7)} ${terminalSafe(event.message)}`)}\n`);
        return;
      case "command":
        this.md.end();
        this.commandShown = false;
        if (event.purpose === "run") this.options.live?.hide();
        this.out(`${t.dim(terminalSafe(commandLine(event)))}\n`);
        return;
      case "lint":
      case "test": {
        super.flush();
        const line = checkLine(event, !this.commandShown);
        this.out(`${event.ok ? t.ok("✓") : t.bad("✗")} ${terminalSafe(line)}\n`);
        return;
      }
      case "retry":
        this.md.end();
        if (this.streamed) this.out(`${t.warn(`— ${event.reason}, retrying (attempt ${event.attempt}); the text above is void —`)}\n`);
        else this.err(`${t.warn("warning:")} ${terminalSafe(`${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)}s (attempt ${event.attempt})`)}\n`);
        if (waiting || this.streamed) this.spinner.start(this.waitingFor, this.stopHint());
        this.streamed = false;
        return;
      case "error":
        this.md.end();
        this.err(`${t.bad("error:")} ${terminalSafe(event.message)}\n`);
        return;
      case "warning":
        this.md.end();
        // Wrapped between words, under the message (the terminal would break words).
        this.err(`${t.warn("warning:")}${wrapStatus(`warning: ${terminalSafe(event.message)}`, this.width(), "warning: ".length).slice("warning:".length)}\n`);
        return;
      default:
        super.emit(event);
    }
  }

  /** How to stop the reply: Esc where keys reach coder (the REPL's box, a one-shot run on a terminal), else Ctrl-C. */
  private stopHint(): string {
    return this.options.live || (!this.options.interactive && process.stdin.isTTY) ? "esc to stop" : "ctrl-c to stop";
  }

  /** Human text; a unified diff (`/diff`, `/git diff`) is coloured. */
  override print(text: string): void {
    if (this.md.busy) {
      this.queue.push(() => this.print(text));
      void this.md.idle().then(() => this.drainQueue());
      return;
    }
    this.spinner.stop();
    this.md.end();
    if (looksLikeDiff(text)) return this.out(`${renderDiff(text, this.theme)}\n`);
    super.print(text);
  }

  override warn(text: string): void {
    this.emit({ type: "warning", message: text });
  }

  override flush(): void {
    this.spinner.stop();
    this.md.end();
  }

  override stopped(): void {
    if (this.stopSaid) return;
    this.stopSaid = true;
    this.flush();
    this.out(`${this.theme.warn(stopLine(null, this.appliedThisTurn, false))}\n`);
  }

  /** Resolves once everything emitted is on the screen (a code block may wait for its grammar). */
  async settled(): Promise<void> {
    while (this.md.busy || this.queue.length) {
      await this.md.idle();
      this.drainQueue();
    }
  }

  protected override endReply(): void {
    this.md.end();
  }
}
