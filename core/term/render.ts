// Human output in plain text, for pipes, files, `--no-pretty` and NO_COLOR: the reply
// verbatim on stdout, status lines after it, warnings and errors on stderr. The terminal's
// renderer (core/term/tty-output.ts) builds on it.
import type { CoderEvent, EventOf, Output, Totals } from "../chat/events.ts";
import { usageLine } from "../chat/events.ts";
import { pipeWriter, terminalSafe } from "./safe.ts";

export { terminalSafe } from "./safe.ts";

export type Write = (text: string) => void;

const stdoutWrite: Write = (t) => pipeWriter(process.stdout)(t);
const stderrWrite: Write = (t) => pipeWriter(process.stderr)(t);

export interface HumanOutputOptions {
  /** Show the diff of each applied edit (--show-diffs; on in the REPL). */
  showDiffs?: boolean;
  /** A person can answer (the REPL): a stopped reply may be resumed with "continue". */
  interactive?: boolean;
  /** The REPL's live input box (core/term/live-box.ts): shown while the model answers, hidden while a command reads the terminal. */
  live?: { show(): void; hide(): void };
}

/**
 * The one line a stopped reply gets: what was kept and whether anything was applied,
 * e.g. "stopped: 212 tokens kept; nothing applied".
 */
export function stopLine(keptTokens: number | null, applied: number, interactive: boolean): string {
  const done = applied ? `${applied} edit${applied === 1 ? "" : "s"} applied before it` : "nothing applied";
  if (keptTokens === null) return `stopped; ${done}`;
  if (keptTokens === 0) return `stopped before the reply began: nothing kept, ${done}`;
  return `stopped: ${keptTokens.toLocaleString("en-US")} tokens kept; ${done}${interactive ? ' · say "continue" to resume' : ""}`;
}

/** The line before a command's live output: "Running tests… (npm test)", or a shell's "$ make". */
export function commandLine(event: EventOf<"command">): string {
  if (event.purpose === "run") return `$ ${event.command}`;
  return `${event.purpose === "test" ? "Running tests" : "Linting"}… (${event.command})`;
}

export class PlainOutput implements Output {
  private midLine = false;
  /** Text of the reply streamed since the last request (a retry voids it). */
  protected streamed = false;
  /** The running command's output was shown live (its end need not repeat it). */
  protected commandShown = false;
  /** The model's reasoning of the reply under way, shown folded once the reply is in. */
  protected reasoning = "";
  /** Edits applied since the turn began (`beginTurn`), for the line a stop gets. */
  protected appliedThisTurn = 0;
  /** The stop of this turn was already said (by the stopped reply's line). */
  protected stopSaid = false;
  /** Writing to a terminal (`--no-pretty` on a TTY): the model's text goes through `terminalSafe`. */
  protected readonly safe: (text: string) => string;
  constructor(
    protected readonly out: Write = stdoutWrite,
    protected readonly err: Write = stderrWrite,
    terminal: boolean = out === stdoutWrite && Boolean(process.stdout.isTTY),
    protected readonly options: HumanOutputOptions = {},
  ) {
    this.safe = terminal ? terminalSafe : (t) => t;
  }

  emit(event: CoderEvent): void {
    switch (event.type) {
      case "request":
        this.streamed = false;
        this.reasoning = "";
        this.options.live?.show();
        return;
      case "reasoning":
        this.reasoning += event.text;
        return;
      case "delta":
        this.streamed ||= event.text.length > 0;
        this.writeReply(event.text);
        return;
      case "reply":
        this.endReply();
        if (this.reasoning.trim()) this.status(foldedReasoning(this.takeReasoning()));
        if (event.finishReason === "interrupted") return this.status(this.stoppedReply(event));
        this.status(usageLine(event.usage, event.cost, this.sessionTotals, event.costKnown !== false));
        return;
      case "edit":
        if (event.status === "applied") {
          this.appliedThisTurn++;
          this.status(`${appliedVerb(event)} ${event.path}`);
          if (event.diff && this.options.showDiffs) this.status(event.diff.replace(/^=+\n/, "").trimEnd());
        } else this.status(event.summary ?? `Edit to ${event.path} ${event.status}: ${firstLine(event.detail)}`);
        return;
      case "commit":
        this.status(`Commit ${event.hash.slice(0, 7)} ${event.message}`);
        return;
      case "reflection":
        this.status(`Reflection ${event.n}: ${firstLine(event.reason)}`);
        return;
      case "tool":
        this.endReply();
        this.status(foldedToolResult(event));
        return;
      case "command":
        this.commandShown = false;
        if (event.purpose === "run") this.options.live?.hide();
        this.status(commandLine(event));
        return;
      case "output":
        this.commandShown = true;
        this.out(this.safe(event.text));
        this.midLine = !event.text.endsWith("\n");
        return;
      case "lint":
      case "test":
        this.endReply();
        this.status(checkLine(event, !this.commandShown));
        return;
      case "retry":
        this.endReply();
        if (this.streamed) this.status(`— ${event.reason}, retrying (attempt ${event.attempt}); the text above is void —`);
        else this.warnLine(`${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)}s (attempt ${event.attempt})`);
        this.streamed = false;
        return;
      case "warning":
        this.warnLine(event.message);
        return;
      case "error":
        this.endReply();
        this.err(`coder: ${event.message}\n`);
        return;
      case "start":
      case "end":
        return;
    }
  }

  /** A new request from the user: the stop line counts edits from here. */
  beginTurn(): void {
    this.appliedThisTurn = 0;
    this.stopSaid = false;
  }

  /** The line for a reply stopped by Esc or Ctrl-C (said once per turn). */
  protected stoppedReply(event: EventOf<"reply">): string {
    this.stopSaid = true;
    return stopLine(event.text.trim() ? event.usage.completionTokens : 0, this.appliedThisTurn, this.options.interactive ?? false);
  }

  /** A request was stopped: one line says so, unless the stopped reply already did. */
  stopped(): void {
    if (this.stopSaid) return;
    this.stopSaid = true;
    this.status(stopLine(null, this.appliedThisTurn, false));
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

  /** The reasoning gathered for this reply (and forget it). */
  protected takeReasoning(): string {
    const text = this.reasoning;
    this.reasoning = "";
    return text;
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

/** "Lint passed.", or "Tests failed (npm test):" with the output when it was not shown live. */
export function checkLine(event: EventOf<"lint"> | EventOf<"test">, withOutput: boolean): string {
  const what = event.type === "lint" ? "Lint" : "Tests";
  if (event.ok) return `${what} passed.`;
  return withOutput && event.output.trim() ? `${what} failed (${event.command}):\n${event.output.trimEnd()}` : `${what} failed (${event.command}).`;
}

/** "Applied edit to", or under --dry-run "Would apply edit to" (nothing was written). */
export function appliedVerb(event: { dryRun?: boolean }): string {
  return event.dryRun ? "Would apply edit to" : "Applied edit to";
}

export function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/** A tool call and its result, folded: one header line, then at most three lines of the output. */
export function foldedToolResult(event: EventOf<"tool">, shown = 3): string {
  const args = event.arguments.length > 120 ? `${event.arguments.slice(0, 119)}…` : event.arguments;
  const lines = event.output.replace(/\s+$/, "").split("\n");
  const size = event.chars >= 10_000 ? `${Math.round(event.chars / 1000)}k characters` : `${lines.length} line${lines.length === 1 ? "" : "s"}`;
  const how = { ok: size, error: `error, ${size}`, declined: "not run: declined", "not-run": "not run" }[event.status];
  const head = `Tool ${event.name} ${args} (${event.origin}): ${how}`;
  if (event.status === "declined") return head;
  const body = lines.slice(0, shown).map((l) => `  │ ${l.length > 160 ? `${l.slice(0, 159)}…` : l}`);
  if (lines.length > shown) body.push(`  │ … ${lines.length - shown} more line${lines.length - shown === 1 ? "" : "s"}`);
  return [head, ...body].join("\n");
}

/** The model's reasoning, folded: a count and its first lines (the rest is in the `--json` stream). */
export function foldedReasoning(text: string, shown = 3): string {
  const lines = text.split("\n").map((l) => l.trimEnd()).filter((l) => l.trim());
  const more = lines.length - Math.min(shown, lines.length);
  const plural = (n: number) => `${n} line${n === 1 ? "" : "s"}`;
  return [`Reasoning (${plural(lines.length)}):`, ...lines.slice(0, shown).map((l) => `  ${l}`), ...(more ? [`  … ${plural(more)} more`] : [])].join("\n");
}
