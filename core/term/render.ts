// Human output: plain text for pipes and files, and a streaming markdown
// renderer for terminals (line at a time, so nothing printed is ever redrawn).
import type { CoderEvent, Output, Totals } from "./events.ts";
import { usageLine } from "./events.ts";

type Write = (text: string) => void;

/**
 * Text from the model made safe for a terminal: escape sequences (clear screen, cursor
 * moves, window titles, colours that never reset) and other control characters are shown
 * as caret notation (`^[`) instead of acting; carriage returns, which would overwrite the
 * line already printed, are dropped. Line feeds and tabs stay.
 */
export function terminalSafe(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]/g, (c) => {
    if (c === "\r") return "";
    const code = c.charCodeAt(0);
    if (code === 0x7f) return "^?";
    if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
    return `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

const stdoutWrite: Write = (t) => process.stdout.write(t);
const stderrWrite: Write = (t) => process.stderr.write(t);

/** Plain text: the reply verbatim on stdout, status lines after it, warnings and errors on stderr. */
export class PlainOutput implements Output {
  private midLine = false;
  /** Writing to a terminal (`--no-pretty` on a TTY): the model's text goes through `terminalSafe`. */
  protected readonly safe: (text: string) => string;
  constructor(
    protected readonly out: Write = stdoutWrite,
    protected readonly err: Write = stderrWrite,
    terminal: boolean = out === stdoutWrite && Boolean(process.stdout.isTTY),
  ) {
    this.safe = terminal ? terminalSafe : (t) => t;
  }

  emit(event: CoderEvent): void {
    switch (event.type) {
      case "delta":
        this.writeReply(event.text);
        return;
      case "reply":
        this.endReply();
        this.status(usageLine(event.usage, event.cost, this.sessionTotals));
        return;
      case "edit":
        this.status(event.status === "applied" ? `${appliedVerb(event)} ${event.path}` : `Edit to ${event.path} ${event.status}: ${firstLine(event.detail)}`);
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
    this.out(this.safe(text));
    this.midLine = !text.endsWith("\n");
  }

  protected endReply(): void {
    if (this.midLine) this.out("\n");
    this.midLine = false;
  }

  protected status(text: string): void {
    this.endReply();
    this.out(`${this.safe(text)}\n`);
  }

  protected warnLine(text: string): void {
    this.endReply();
    this.err(`warning: ${this.safe(text)}\n`);
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
 * Streaming markdown for a terminal. Complete lines are rendered as they arrive (headings,
 * emphasis, inline code, fenced blocks). A long line of prose or code streams word by word:
 * its finished words are written at once (a model's paragraph is often one long line), so
 * only a line that may turn out to be a fence, a heading or an edit marker waits for its end.
 * Nothing printed is ever redrawn.
 */
export class MarkdownStream {
  private pending = "";
  private fence: string | null = null;
  /** Part of the current line is already on the screen. */
  private started = false;

  constructor(private readonly write: Write) {}

  push(text: string): void {
    this.pending += terminalSafe(text);
    let nl = this.pending.indexOf("\n");
    while (nl >= 0) {
      this.write(`${this.renderPart(this.pending.slice(0, nl))}\n`);
      this.started = false;
      this.pending = this.pending.slice(nl + 1);
      nl = this.pending.indexOf("\n");
    }
    this.writeFinishedWords();
  }

  /** Render what is left (the reply ended without a newline). */
  end(): boolean {
    const had = this.pending.length > 0 || this.started;
    if (had) this.write(`${this.renderPart(this.pending)}\n`);
    this.pending = "";
    this.fence = null;
    this.started = false;
    return had;
  }

  /** A whole line, or the rest of a line whose beginning was written already. */
  private renderPart(text: string): string {
    if (!this.started) return this.renderLine(text);
    return this.fence !== null ? style.cyan(text) : renderInline(text);
  }

  /** Write the unfinished line up to its last space, when that cannot change how it renders. */
  private writeFinishedWords(): void {
    if (!this.pending) return;
    if (!this.started) {
      const first = this.pending.trimStart()[0];
      // Fences, headings, quotes and SEARCH/REPLACE markers are known only from the whole line.
      if (first === undefined || "`~#<=>".includes(first)) return;
    }
    const cut = this.pending.lastIndexOf(" ") + 1;
    if (cut <= 0) return;
    const words = this.pending.slice(0, cut);
    // An inline code span or bold run still open would render differently once closed.
    if (this.fence === null && ((words.split("`").length - 1) % 2 === 1 || (words.split("**").length - 1) % 2 === 1)) return;
    this.write(this.renderPart(words));
    this.started = true;
    this.pending = this.pending.slice(cut);
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
    super(out, err, true);
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
            ? `${style.green("✓")} ${appliedVerb(event)} ${terminalSafe(event.path)}\n`
            : `${style.red("✗")} Edit to ${terminalSafe(event.path)} ${event.status}: ${terminalSafe(firstLine(event.detail))}\n`,
        );
        return;
      case "commit":
        this.out(`${style.dim(`Commit ${event.hash.slice(0, 7)} ${terminalSafe(event.message)}`)}\n`);
        return;
      case "error":
        this.md.end();
        this.err(`${style.red("error:")} ${terminalSafe(event.message)}\n`);
        return;
      case "warning":
        this.md.end();
        this.err(`${style.yellow("warning:")} ${terminalSafe(event.message)}\n`);
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

/** "Applied edit to", or under --dry-run "Would apply edit to" (nothing was written). */
function appliedVerb(event: { dryRun?: boolean }): string {
  return event.dryRun ? "Would apply edit to" : "Applied edit to";
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}
