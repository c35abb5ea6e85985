// coder's engine events as ACP `session/update`s: the reply streams as message
// chunks, each edit is an `edit` tool call with its diff, lint/test/shell runs are
// `execute` tool calls with their output, architect's plan is a `plan` update.
// Everything is also logged to stderr with --verbose; nothing here writes stdout.
import { isAbsolute, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { CoderEvent, EventOf, Output, StagedChange } from "../chat/events.ts";
import { fenced } from "../edit/fence.ts";

/** What the output asks of the session it belongs to. */
export interface OutputHooks {
  root: string;
  /** A file the last write changed, as it was and as it is now (for the diff content). */
  written(path: string): { before: string | null; after: string | null } | undefined;
  /** The repository path a write to `path` lands on (links inside the repository followed). */
  canonical(path: string): string;
  /** Is the main coder planning (architect) right now? Its reply is then the plan. */
  planning(): boolean;
  /** The context window of the model in use, and the session's cost so far (null: unknown prices). */
  usage(): { size: number; cost: number | null };
  /** Log a line to stderr (warnings and errors always; the rest with --verbose). */
  log(level: "info" | "warn" | "error", text: string): void;
}

type Send = (update: acp.SessionUpdate) => Promise<void>;

/**
 * One file's edit card through its life: announced pending with its diff before anything is
 * written (the permission question refers to it), in progress while written, then completed
 * (with the commit line) or failed.
 */
interface EditCard {
  id: string;
  path: string;
  diff: acp.ToolCallContent;
  locations: acp.ToolCallLocation[];
  state: "pending" | "writing" | "applied" | "done";
}

/** A finished card, kept for `session/load` to show again. */
export interface FinishedCard {
  title: string;
  kind: acp.ToolKind;
  status: "completed" | "failed";
  content: acp.ToolCallContent[];
  locations?: acp.ToolCallLocation[];
}

/** A saved card's content over this many characters keeps a note instead of its diff. */
const KEPT_CARD_CHARS = 100_000;

/** What a permission request shows of the edit card it is about. */
export interface CardView {
  toolCallId: string;
  title: string;
  content: acp.ToolCallContent[];
  locations: acp.ToolCallLocation[];
}

/** The model's tool call under way (calls run one at a time): its card until its `tool` event. */
interface ToolCard {
  id: string;
  name: string;
  title: string;
  state: "pending" | "running";
}

interface OpenCommand {
  id: string;
  purpose: EventOf<"command">["purpose"];
  output: string;
  /** The editor's terminal it runs in, embedded in its card (the editor shows the output itself). */
  terminalId?: string;
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
  private failedEdits: { id: string; text: string }[] = [];
  private toolCard: ToolCard | null = null;
  /** Shell commands asked about, by command: their execute card, adopted when the command runs. */
  private readonly askedRuns = new Map<string, string>();
  /** Cards finished since the session was last saved. */
  private finished: FinishedCard[] = [];
  /** The output of finished commands that ran in the editor's terminals, by terminal: what their kept cards show. */
  private readonly terminalOutputs = new Map<string, string>();
  /** Every card's title and kind, for the record of finished ones. */
  private readonly shown = new Map<string, { title: string; kind: acp.ToolKind; locations?: acp.ToolCallLocation[] }>();
  /** This reply's edit cards, by repository path. */
  private cards = new Map<string, EditCard>();
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
    this.settleEdits(null);
    if (this.planEntries && ok) this.update({ sessionUpdate: "plan", entries: this.planEntries.map((content) => ({ content, priority: "medium", status: "completed" })) });
    await this.drained();
  }

  /** The cards finished since the last call (for the session's record). */
  takeFinished(): FinishedCard[] {
    const cards = this.finished;
    this.finished = [];
    return cards;
  }

  update(update: acp.SessionUpdate): void {
    this.keep(update);
    if (this.held) {
      this.held.push(update);
      return;
    }
    this.chain = this.chain.then(() => this.send(update)).catch((error: unknown) => this.hooks.log("warn", `could not send a session update: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** A card's title and kind when it opens; a copy of it when it completes or fails. */
  private keep(update: acp.SessionUpdate): void {
    if ("toolCallId" in update && update.toolCallId.startsWith("coder-replay-")) return; // shown again, not new
    if (update.sessionUpdate === "tool_call") {
      this.shown.set(update.toolCallId, { title: update.title, kind: update.kind ?? "other", ...(update.locations ? { locations: update.locations } : {}) });
      if (update.status !== "completed" && update.status !== "failed") return;
    } else if (update.sessionUpdate !== "tool_call_update" || (update.status !== "completed" && update.status !== "failed")) return;
    const card = this.shown.get(update.toolCallId);
    if (!card) return;
    // A terminal is the editor's and ends with this process: a kept card shows the output instead.
    const content = (update.content ?? []).flatMap((c) => (c.type !== "terminal" ? [c] : this.terminalOutputs.has(c.terminalId) ? [fencedContent(this.terminalOutputs.get(c.terminalId)!)] : []));
    const kept = JSON.stringify(content).length > KEPT_CARD_CHARS ? [textContent("(the diff was too large to keep with the session)")] : content;
    this.shown.delete(update.toolCallId);
    this.finished.push({ title: card.title, kind: card.kind, status: update.status, content: kept, ...(card.locations ? { locations: card.locations } : {}) });
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
    if (event.type !== "edit" && event.type !== "commit" && event.type !== "warning" && event.type !== "output") this.settleEdits(null);
    if (event.type === "reply") this.cards.clear();
    switch (event.type) {
      case "delta":
        return this.message(event.text);
      case "reasoning":
        return this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } });
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
      case "commit": {
        const line = `Committed ${event.hash.slice(0, 7)}: ${event.message.split("\n")[0]}`;
        this.settleEdits(line);
        return this.message(`\n\n${line}\n`);
      }
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
      case "tool":
        return this.finishTool(event);
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

  /** A warning in the thread (and on stderr, unless it is already there: `logged`). */
  warn(text: string, logged = false): void {
    this.closeRun();
    if (!logged) this.hooks.log("warn", text);
    this.message(`\n\nWarning: ${text}\n`);
  }

  flush(): void {}

  /** The reply's changes, before anyone is asked: one pending card per file, with its diff. */
  staged(changes: readonly StagedChange[]): void {
    for (const change of changes) {
      const path = this.abs(change.path);
      const diff: acp.ToolCallContent = { type: "diff", path, oldText: change.before, newText: change.after ?? "" };
      const locations = [{ path, line: firstChangedLine(change.before ?? "", change.after ?? "") }];
      const known = this.cards.get(change.path);
      if (known && known.state !== "done") {
        // Staged again (a file changed meanwhile): the card shows the new diff.
        Object.assign(known, { diff, locations });
        this.update({ sessionUpdate: "tool_call_update", toolCallId: known.id, content: [diff], locations });
        continue;
      }
      const card: EditCard = { id: this.id("edit"), path: change.path, diff, locations, state: "pending" };
      this.cards.set(change.path, card);
      this.update({ sessionUpdate: "tool_call", toolCallId: card.id, title: `Edit ${change.path}`, kind: "edit", status: "pending", locations, content: [diff], rawInput: { path: change.path } });
    }
  }

  /** The pending card a permission question about `key` (`edit:`, `create:`, `config:` + path) refers to. */
  cardFor(key: string): CardView | null {
    if (key.startsWith("shell:")) {
      // The run's own card, opened now: the question is about it, and the run continues it.
      const command = key.slice("shell:".length);
      let id = this.askedRuns.get(command);
      if (!id) {
        id = this.id("run");
        this.askedRuns.set(command, id);
        this.update({ sessionUpdate: "tool_call", toolCallId: id, title: command, kind: "execute", status: "pending", rawInput: { command } });
      }
      return { toolCallId: id, title: command, content: [], locations: [] };
    }
    if (key.startsWith("tool:")) {
      const tool = this.toolCard;
      return tool && tool.state === "pending" && key === `tool:${tool.name}` ? { toolCallId: tool.id, title: tool.title, content: [], locations: [] } : null;
    }
    const path = /^(?:edit|create|config|conflict):(.*)$/s.exec(key)?.[1];
    const card = path === undefined ? undefined : (this.cards.get(path) ?? this.cards.get(this.hooks.canonical(path)));
    if (!card || card.state !== "pending") return null;
    return { toolCallId: card.id, title: `Edit ${card.path}`, content: [card.diff], locations: card.locations };
  }

  writing(paths: readonly string[]): void {
    for (const path of paths) {
      const card = this.cards.get(path);
      if (!card || card.state !== "pending") continue;
      card.state = "writing";
      this.update({ sessionUpdate: "tool_call_update", toolCallId: card.id, status: "in_progress" });
    }
  }

  toolCall(call: { name: string; origin: string; arguments: string }, phase: "pending" | "running"): void {
    if (phase === "running" && this.toolCard?.name === call.name) {
      this.toolCard.state = "running";
      this.update({ sessionUpdate: "tool_call_update", toolCallId: this.toolCard.id, status: "in_progress" });
      return;
    }
    const card: ToolCard = { id: this.id("tool"), name: call.name, title: `${call.name} (${call.origin})`, state: phase };
    this.toolCard = card;
    this.update({ sessionUpdate: "tool_call", toolCallId: card.id, title: card.title, kind: toolKind(call.name), status: phase === "pending" ? "pending" : "in_progress", rawInput: parsedArguments(call.arguments) });
  }

  /** The tool's answer ends its card: what the model was sent (capped as in the terminal). */
  private finishTool(event: EventOf<"tool">): void {
    let card = this.toolCard;
    this.toolCard = null;
    if (!card || card.name !== event.name) {
      card = { id: this.id("tool"), name: event.name, title: `${event.name} (${event.origin})`, state: "pending" };
      this.update({ sessionUpdate: "tool_call", toolCallId: card.id, title: card.title, kind: toolKind(event.name), status: "pending", rawInput: parsedArguments(event.arguments) });
    }
    const status = event.status === "ok" ? "completed" : "failed";
    this.update({ sessionUpdate: "tool_call_update", toolCallId: card.id, status, content: [textContent(event.output)], rawOutput: { status: event.status, chars: event.chars } });
  }

  /** Applied cards waiting for their commit: completed now, with the commit line when there is one. */
  private settleEdits(commitLine: string | null): void {
    for (const card of this.cards.values()) {
      if (card.state !== "applied") continue;
      card.state = "done";
      const note: acp.ToolCallContent[] = commitLine ? [{ type: "content", content: { type: "text", text: commitLine } }] : [];
      this.update({ sessionUpdate: "tool_call_update", toolCallId: card.id, status: "completed", content: [card.diff, ...note] });
    }
  }

  private edit(event: EventOf<"edit">): void {
    let canonical = event.path;
    try {
      canonical = this.hooks.canonical(event.path);
    } catch {
      // the path as the model wrote it
    }
    const card = this.cards.get(canonical) ?? this.cards.get(event.path);
    const text = event.summary ?? event.detail ?? event.status;
    if (event.status === "applied") {
      if (card && card.state !== "done") {
        const change = this.hooks.written(event.path);
        if (change && !event.dryRun) card.diff = { type: "diff", path: this.abs(card.path), oldText: change.before, newText: change.after ?? "" };
        if (event.dryRun) {
          card.state = "done";
          this.update({ sessionUpdate: "tool_call_update", toolCallId: card.id, status: "completed", content: [card.diff, textContent("dry run: not written")] });
        } else card.state = "applied";
        return;
      }
      if (card) return; // a second edit of a file already shown
    }
    // A refused or declined file's card fails with the reason; an edit that did not match gets a card of its own.
    if (event.status !== "applied" && card && (card.state === "pending" || card.state === "writing")) {
      card.state = "done";
      this.update({ sessionUpdate: "tool_call_update", toolCallId: card.id, status: "failed", content: [card.diff, textContent(text)] });
      if (event.status === "failed") this.failedEdits.push({ id: card.id, text });
      return;
    }
    const id = this.id("edit");
    const path = this.abs(event.path);
    const change = event.status === "applied" ? this.hooks.written(event.path) : undefined;
    const content: acp.ToolCallContent[] = change && event.diff ? [{ type: "diff", path, oldText: change.before, newText: change.after ?? "" }] : [];
    this.update({ sessionUpdate: "tool_call", toolCallId: id, title: `Edit ${event.path}`, kind: "edit", status: "pending", locations: [{ path }], content, rawInput: { path: event.path } });
    if (event.status === "applied") {
      const note = event.dryRun ? [textContent("dry run: not written")] : [];
      this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed", content: [...content, ...note] });
      return;
    }
    this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "failed", content: [textContent(text)] });
    if (event.status === "failed") this.failedEdits.push({ id, text });
  }

  /** The repair-grade report goes to the edits it is about, and the user sees that coder asks again. */
  private reflection(event: EventOf<"reflection">): void {
    // The failure stays on the card; the report the model gets is added under it.
    for (const { id, text } of this.failedEdits) this.update({ sessionUpdate: "tool_call_update", toolCallId: id, content: [textContent(text), textContent(event.reason)] });
    this.failedEdits = [];
    this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: `Reflection ${event.n}: sending this back to the model.\n${event.reason}\n` } });
  }

  waiting(what: string): void {
    this.message(`${what}\n`);
  }

  /** A question was answered No: a shell command's card fails, since it will not run. */
  declined(key: string): void {
    if (!key.startsWith("shell:")) return;
    const command = key.slice("shell:".length);
    const id = this.askedRuns.get(command);
    if (!id) return;
    this.askedRuns.delete(command);
    this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "failed", content: [textContent("Not run: the user declined.")] });
  }

  private openCommand(event: EventOf<"command">): void {
    const asked = event.purpose === "run" ? this.askedRuns.get(event.command) : undefined;
    if (asked) {
      this.askedRuns.delete(event.command);
      this.command = { id: asked, purpose: event.purpose, output: "" };
      this.update({ sessionUpdate: "tool_call_update", toolCallId: asked, status: "in_progress" });
      return;
    }
    const id = this.id(event.purpose);
    this.command = { id, purpose: event.purpose, output: "" };
    const title = event.purpose === "run" ? event.command : `${event.purpose === "lint" ? "Lint" : "Test"}: ${event.command}`;
    this.update({ sessionUpdate: "tool_call", toolCallId: id, title, kind: "execute", status: "in_progress", rawInput: { command: event.command } });
  }

  /** The command under way runs in the editor's terminal `terminalId`: its card embeds it. */
  showTerminal(terminalId: string): Promise<void> {
    if (this.command) {
      this.command.terminalId = terminalId;
      this.update({ sessionUpdate: "tool_call_update", toolCallId: this.command.id, content: [{ type: "terminal", terminalId }] });
    }
    return this.drained();
  }

  private commandOutput(text: string): void {
    if (!this.command) return;
    this.command.output += text;
    // A terminal's card shows its output live already.
    if (this.command.terminalId === undefined) this.update({ sessionUpdate: "tool_call_update", toolCallId: this.command.id, content: [fencedContent(this.command.output)] });
  }

  /** A finished command's card content: its terminal, else its output. */
  private commandContent(command: OpenCommand | null, output: string): acp.ToolCallContent[] {
    if (command?.terminalId === undefined) return output.trim() ? [fencedContent(output)] : [];
    this.terminalOutputs.set(command.terminalId, output);
    return [{ type: "terminal", terminalId: command.terminalId }];
  }

  private finishCheck(event: EventOf<"lint"> | EventOf<"test">): void {
    // The syntax check reports without a command event of its own.
    const command = this.command;
    const id = command?.id ?? this.id(event.type);
    if (!command) this.update({ sessionUpdate: "tool_call", toolCallId: id, title: `${event.type === "lint" ? "Lint" : "Test"}: ${event.command}`, kind: "execute", status: "in_progress" });
    this.command = null;
    this.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: event.ok ? "completed" : "failed", content: this.commandContent(command, event.output) });
  }

  /** A `/run` or a suggested command ends at the next event that is not its output. */
  private closeRun(): void {
    const command = this.command;
    if (command?.purpose !== "run") return;
    this.command = null;
    this.update({ sessionUpdate: "tool_call_update", toolCallId: command.id, status: "completed", content: this.commandContent(command, command.output) });
  }

  private sendPlan(text: string): void {
    this.planEntries = planEntries(text);
    if (this.planEntries.length) this.update({ sessionUpdate: "plan", entries: this.planEntries.map((content) => ({ content, priority: "medium", status: "pending" })) });
  }
}

/** A tool that fetches (by its name) is a `fetch` card; any other an `other` one. */
function toolKind(name: string): acp.ToolKind {
  return /fetch|http|url|web|download|browse/i.test(name) ? "fetch" : "other";
}

function parsedArguments(raw: string): unknown {
  try {
    return raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

function textContent(text: string): acp.ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

/** The 1-based line of the first difference between two texts (where the editor should look). */
export function firstChangedLine(before: string, after: string): number {
  const a = before.split("\n");
  const b = after.split("\n");
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return Math.min(i, Math.max(b.length - 1, 0)) + 1;
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
