// Human output: plain text for pipes and files, and a streaming markdown
// renderer for terminals (line at a time, so nothing printed is ever redrawn).
import type { CoderEvent, Output, Totals } from "./events.ts";
import { usageLine } from "./events.ts";

type Write = (text: string) => void;

const stdoutWrite: Write = (t) => process.stdout.write(t);
const stderrWrite: Write = (t) => process.stderr.write(t);

/** Plain text: the reply verbatim on stdout, status lines after it, warnings and errors on stderr. */
export class PlainOutput implements Output {
  private midLine = false;
  constructor(
    protected readonly out: Write = stdoutWrite,
    protected readonly err: Write = stderrWrite,
  ) {}

  emit(event: CoderEvent): void {
    switch (event.type) {
      case "delta":
        this.writeReply(event.text);
        return;
      case "reply":
        this.endReply();
        this.status(usageLine(event.usage, event.cost, this.totals(event)));
        return;
      case "edit":
        this.status(event.status === "applied" ? `Applied edit to ${event.path}` : `Edit to ${event.path} ${event.status}: ${firstLine(event.detail)}`);
        return;
      case "commit":
        this.status(`Commit ${event.hash.slice(0, 7)} ${event.message}`);
        return;
      case "reflection":
        this.status(`Reflection ${event.n}: ${firstLine(event.reason)}`);
        return;
      case "lint":
      case "test":
        if (!event.ok) this.status(`${event.type === "lint" ? "Lint" : "Tests"} failed (${event.command}):\n${event.output.trimEnd()}`);
        else this.status(`${event.type === "lint" ? "Lint" : "Tests"} passed.`);
        return;
      case "retry":
        this.endReply();
        this.warnLine(`${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)}s (attempt ${event.attempt})`);
        return;
      case "warning":
        this.warnLine(event.message);
        return;
      case "error":
        this.endReply();
        this.err(`coder: ${event.message}\n`);
        return;
      case "start":
      case "request":
      case "end":
        return;
    }
  }

  /** Session totals are carried by the engine; the line only needs the cost so far. */
  protected sessionTotals: Totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
  setTotals(totals: Totals): void {
    this.sessionTotals = totals;
  }
  private totals(_e: CoderEvent): Totals {
    return this.sessionTotals;
  }

  print(text: string): void {
    this.endReply();
    this.out(text.endsWith("\n") ? text : `${text}\n`);
  }

  warn(text: string): void {
    this.warnLine(text);
  }

  flush(): void {
    this.endReply();
  }

  protected writeReply(text: string): void {
    if (!text) return;
    this.out(text);
    this.midLine = !text.endsWith("\n");
  }

  protected endReply(): void {
    if (this.midLine) this.out("\n");
    this.midLine = false;
  }

  protected status(text: string): void {
    this.endReply();
    this.out(`${text}\n`);
  }

  protected warnLine(text: string): void {
    this.endReply();
    this.err(`warning: ${text}\n`);
  }
}

const ESC = "\x1b[";
const style = {
  bold: (s: string) => `${ESC}1m${s}${ESC}22m`,
  dim: (s: string) => `${ESC}2m${s}${ESC}22m`,
  cyan: (s: string) => `${ESC}36m${s}${ESC}39m`,
  green: (s: string) => `${ESC}32m${s}${ESC}39m`,
  yellow: (s: string) => `${ESC}33m${s}${ESC}39m`,
  red: (s: string) => `${ESC}31m${s}${ESC}39m`,
};

/**
 * Streaming markdown for a terminal: complete lines are rendered as they arrive
 * (headings, emphasis, inline code, fenced blocks); the unfinished line waits.
 */
export class MarkdownStream {
  private pending = "";
  private fence: string | null = null;

  constructor(private readonly write: Write) {}

  push(text: string): void {
    this.pending += text;
    let nl = this.pending.indexOf("\n");
    while (nl >= 0) {
      this.write(`${this.renderLine(this.pending.slice(0, nl))}\n`);
      this.pending = this.pending.slice(nl + 1);
      nl = this.pending.indexOf("\n");
    }
  }

  /** Render what is left (the reply ended without a newline). */
  end(): boolean {
    const had = this.pending.length > 0;
    if (had) this.write(`${this.renderLine(this.pending)}\n`);
    this.pending = "";
    this.fence = null;
    return had;
  }

  renderLine(line: string): string {
    const fenceMatch = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1] ?? "```";
      if (this.fence === null) this.fence = marker;
      else if (marker.startsWith(this.fence)) this.fence = null;
      return style.dim(line);
    }
    // Edit-block markers stand out, inside a fence or not.
    if (/^(<{5,9} SEARCH|={5,9}|>{5,9} REPLACE)\s*$/.test(line)) return style.yellow(line);
    if (this.fence !== null) return style.cyan(line);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) return style.bold(heading[2] ?? "");
    return renderInline(line);
  }
}

export function renderInline(line: string): string {
  return line
    .replace(/`([^`]+)`/g, (_m, code: string) => style.cyan(code))
    .replace(/\*\*([^*]+)\*\*/g, (_m, s: string) => style.bold(s));
}

/** A terminal: markdown-rendered reply, coloured status lines. */
export class TtyOutput extends PlainOutput {
  private readonly md: MarkdownStream;

  constructor(out: Write = stdoutWrite, err: Write = stderrWrite) {
    super(out, err);
    this.md = new MarkdownStream(out);
  }

  override emit(event: CoderEvent): void {
    switch (event.type) {
      case "delta":
        this.md.push(event.text);
        return;
      case "reply":
        this.md.end();
        this.out(`${style.dim(usageLine(event.usage, event.cost, this.sessionTotals))}\n`);
        return;
      case "edit":
        this.md.end();
        this.out(
          event.status === "applied"
            ? `${style.green("✓")} Applied edit to ${event.path}\n`
            : `${style.red("✗")} Edit to ${event.path} ${event.status}: ${firstLine(event.detail)}\n`,
        );
        return;
      case "commit":
        this.out(`${style.dim(`Commit ${event.hash.slice(0, 7)} ${event.message}`)}\n`);
        return;
      case "error":
        this.md.end();
        this.err(`${style.red("error:")} ${event.message}\n`);
        return;
      case "warning":
        this.md.end();
        this.err(`${style.yellow("warning:")} ${event.message}\n`);
        return;
      default:
        super.emit(event);
    }
  }

  override flush(): void {
    this.md.end();
  }

  protected override endReply(): void {
    this.md.end();
  }
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}
