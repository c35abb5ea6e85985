// coder's engine events as ACP `session/update`s: the reply streams as message
// chunks, each edit is an `edit` tool call with its diff, lint/test/shell runs are
// `execute` tool calls with their output, architect's plan is a `plan` update.
// Everything is also logged to stderr with --verbose; nothing here writes stdout.
import { isAbsolute, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { CoderEvent, EventOf, Output } from "../chat/events.ts";
import { fenced } from "../edit/fence.ts";

/** What the output asks of the session it belongs to. */
export interface OutputHooks {
  root: string;
  /** A file the last write changed, as it was and as it is now (for the diff content). */
  written(path: string): { before: string | null; after: string | null } | undefined;
  /** Is the main coder planning (architect) right now? Its reply is then the plan. */
  planning(): boolean;
  /** The context window of the model in use, and the session's cost so far (null: unknown prices). */
  usage(): { size: number; cost: number | null };
  /** Log a line to stderr (warnings and errors always; the rest with --verbose). */
  log(level: "info" | "warn" | "error", text: string): void;
}

type Send = (update: acp.SessionUpdate) => Promise<void>;

interface OpenCommand {
  id: string;
  purpose: EventOf<"command">["purpose"];
  output: string;
}

/**
 * One session's Output. Updates are sent in order (each waits for the one before); until
 * `open()` they are held back, since a client knows no session before `session/new` answers.
 */
export class AcpOutput implements Output {
  private chain: Promise<void> = Promise.resolve();
  private held: acp.SessionUpdate[] | null = [];
  private nextId = 1;
  private command: OpenCommand | null = null;
  /** Edits of this request that failed: the reflection's report is added to them. */
  private failedEdits: string[] = [];
  /** The finish reason of the last reply of the turn ("stop", "length", "content_filter", "interrupted"). */
  lastFinish = "stop";
  private planEntries: string[] | null = null;
  /** The last error event of the turn. */
  lastError: string | null = null;

  constructor(
    private readonly send: Send,
    private readonly hooks: OutputHooks,
  ) {}

  /** Send what was held back, and everything from now on. */
  open(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const update of held) this.update(update);
  }

  /** A new prompt turn: forget the last one's state. */
  beginTurn(): void {
    this.lastFinish = "stop";
    this.lastError = null;
    this.failedEdits = [];
    this.planEntries = null;
  }

  /** Resolves once every update so far is written. */
  drained(): Promise<void> {
    return this.chain;
  }

  /** Close what the turn left open (a command's tool call, the plan). */
  async endTurn(ok: boolean): Promise<void> {
    this.closeRun();
    if (this.planEntries && ok) this.update({ sessionUpdate: "plan", entries: this.planEntries.map((content) => ({ content, priority: "medium", status: "completed" })) });
    await this.drained();
  }

  update(update: acp.SessionUpdate): void {
    if (this.held) {
      this.held.push(update);
      return;
    }
    this.chain = this.chain.then(() => this.send(update)).catch((error: unknown) => this.hooks.log("warn", `could not send a session update: ${error instanceof Error ? error.message : String(error)}`));
  }

  private message(text: string): void {
    if (text) this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  }

  private id(kind: string): string {
    return `coder-${kind}-${this.nextId++}`;
  }

  private abs(path: string): string {
    return isAbsolute(path) ? path : join(this.hooks.root, path);
  }

  emit(event: CoderEvent): void {
    if (event.type !== "output") this.closeRun();
    switch (event.type) {
      case "delta":
        return this.message(event.text);
      case "reply": {
        this.lastFinish = event.finishReason;
        const { size, cost } = this.hooks.usage();
        this.update({ sessionUpdate: "usage_update", used: event.usage.promptTokens + event.usage.completionTokens, size, ...(cost === null ? {} : { cost: { amount: cost, currency: "USD" } }) });
        if (this.hooks.planning() && event.finishReason !== "interrupted") this.sendPlan(event.text);
        return;
      }
      case "edit":
        return this.edit(event);
      case "command":
        return this.openCommand(event);
      case "lint":
      case "test":
        return this.finishCheck(event);
      case "reflection":
        return this.reflection(event);
      case "commit":
        return this.message(`\n\nCommitted ${event.hash.slice(0, 7)}: ${event.message.split("\n")[0]}\n`);
      case "retry":
        this.hooks.log("info", `retrying the request (attempt ${event.attempt}): ${event.reason}`);
        return this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: `Retrying in ${Math.round(event.delayMs / 1000)} s: ${event.reason}\n` } });
      case "warning":
        return this.warn(event.message);
      case "error":
        this.lastError = event.message;
        this.hooks.log("error", event.message);
        return this.message(`\n\nError: ${event.message}\n`);
      case "request":
        return this.hooks.log("info", `request to ${event.model} (${event.promptTokens} prompt tokens)`);
      case "start":
      case "end":
      case "output":
        if (event.type === "output") this.commandOutput(event.text);
        return;
    }
  }

  print(text: string): void {
    this.closeRun();
    this.message(text.endsWith("\n") ? text : `${text}\n`);
  }

  warn(text: string): void {
    this.closeRun();
    this.hooks.log("warn", text);
    this.message(`\n\nWarning: ${text}\n`);
  }

  flush(): void {}

  private edit(event: EventOf<"edit">): void {
    const id = this.id("edit");
    const path = this.abs(event.path);
    const content: acp.ToolCallContent[] = [];
    const change = event.status === "applied" ? this.hooks.written(event.path) : undefined;
    if (change && event.diff) content.push({ type: "diff", path, oldText: change.before, newText: change.after ?? "" });
    const title = `Edit ${event.path}`;
    this.update({ sessionUpdate: "tool_call", toolCallId: id, title, kind: "edit", status: "pending", locations: [{ path }], content, rawInput: { path: event.path } });
    if (event.status === "applied") {
      const note = event.dryRun ? [{ type: "content" as const, content: { type: "text" as const, text: "dry run: not written" } }] : [];
      this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed", content: [...content, ...note] });
      return;
    }
    const text = [event.summary, event.detail].filter(Boolean).join("\n");
    this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "failed", content: [{ type: "content", content: { type: "text", text: text || event.status } }] });
    if (event.status === "failed") this.failedEdits.push(id);
  }

  /** The repair-grade report goes to the edits it is about, and the user sees that coder asks again. */
  private reflection(event: EventOf<"reflection">): void {
    for (const id of this.failedEdits) this.update({ sessionUpdate: "tool_call_update", toolCallId: id, content: [{ type: "content", content: { type: "text", text: event.reason } }] });
    this.failedEdits = [];
    this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: `Reflection ${event.n}: sending this back to the model.\n${event.reason}\n` } });
  }

  private openCommand(event: EventOf<"command">): void {
    const id = this.id(event.purpose);
    this.command = { id, purpose: event.purpose, output: "" };
    const title = event.purpose === "run" ? event.command : `${event.purpose === "lint" ? "Lint" : "Test"}: ${event.command}`;
    this.update({ sessionUpdate: "tool_call", toolCallId: id, title, kind: "execute", status: "in_progress", rawInput: { command: event.command } });
  }

  private commandOutput(text: string): void {
    if (!this.command) return;
    this.command.output += text;
    this.update({ sessionUpdate: "tool_call_update", toolCallId: this.command.id, content: [fencedContent(this.command.output)] });
  }

  private finishCheck(event: EventOf<"lint"> | EventOf<"test">): void {
    // The syntax check reports without a command event of its own.
    const id = this.command?.id ?? this.id(event.type);
    if (!this.command) this.update({ sessionUpdate: "tool_call", toolCallId: id, title: `${event.type === "lint" ? "Lint" : "Test"}: ${event.command}`, kind: "execute", status: "in_progress" });
    this.command = null;
    this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: event.ok ? "completed" : "failed", content: event.output.trim() ? [fencedContent(event.output)] : [] });
  }

  /** A `/run` or a suggested command ends at the next event that is not its output. */
  private closeRun(): void {
    if (this.command?.purpose !== "run") return;
    const { id } = this.command;
    this.command = null;
    this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed" });
  }

  private sendPlan(text: string): void {
    this.planEntries = planEntries(text);
    if (this.planEntries.length) this.update({ sessionUpdate: "plan", entries: this.planEntries.map((content) => ({ content, priority: "medium", status: "pending" })) });
  }
}

/** Command output as a fenced block: a fence none of its own lines clash with (core/edit/fence.ts). */
function fencedContent(text: string): acp.ToolCallContent {
  return { type: "content", content: { type: "text", text: fenced(text.trimEnd()) } };
}

/** The steps of an architect's plan: its list items, else its paragraphs. */
export function planEntries(text: string): string[] {
  const items = text
    .split("\n")
    .map((line) => /^\s*(?:[-*+]|\d+[.)])\s+(.*\S)/.exec(line)?.[1])
    .filter((item): item is string => item !== undefined);
  if (items.length) return items;
  return text
    .split(/\n\s*\n/)
    .map((p) => p.trim().replace(/\s*\n\s*/g, " "))
    .filter(Boolean);
}
