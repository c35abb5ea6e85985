// The turn loop: runOne → send, repairing through one reflection channel with a
// budget. `send` assembles the chunks, streams the reply, applies its edits,
// commits, lints and tests; whatever needs the model's attention comes back as
// the reflection, the next user message.
import { arch, platform } from "node:os";
import { basename } from "node:path";
import type { App } from "./app.ts";
import {
  assembleChunks,
  chatFilesBlock,
  chunkMessages,
  type Chunk,
  type ContextText,
  contextOverflow,
  countMessageTokens,
  readOnlyBlock,
  renderTokenReport,
  systemText,
  tokenRows,
} from "./chunks.ts";
import { Interrupted, PluginError, RuntimeFailure } from "./errors.ts";
import type { WriteReport } from "./files.ts";
import { chooseFence } from "./fence.ts";
import type { Gate } from "./gate.ts";
import { commitMessagePrompt, type GitRepo } from "./git.ts";
import { ChatHistory, historyBudget, summariseHistory, summaryPrompt, type Transcript } from "./history.ts";
import { fileMentions, identMentions } from "./mentions.ts";
import { resolveModelPath } from "./paths.ts";
import type { ChatMessage, EditFormat, EditOutcome, Fence, FinishReason, ModelInfo, ModelRequest, ToolCall, TurnContext } from "./plugin.ts";
import { guard, messageOf, type Registered } from "./registry.ts";
import { type AppliedReply, editTargets, type FileStoreLike, outcomeDetail, parseReply, stageEdits } from "./reply.ts";
import { askAboutOutput } from "./shell-output.ts";
import type { ChatFiles } from "./chat-files.ts";
import { lintAndTest } from "./checks.ts";
import { CacheKeepalive } from "./keepalive.ts";
import { streamReply } from "./stream.ts";
import { type Output, replyCost, type Totals } from "./term/events.ts";
import { trace } from "./term/trace.ts";

/** Everything a coder shares with the other coders of the session (architect and editor). */
export interface CoderServices {
  app: App;
  out: Output;
  files: FileStoreLike;
  gate: Gate;
  git: GitRepo | null;
  transcript: Transcript;
  /** Usage and cost over the whole session, every model included. */
  totals: Totals;
  /** Repository files (git ls-files, cached). */
  listFiles(): Promise<string[]>;
  /** The files the last reply wrote (any coder of the session), for `/diff`; unset until one did. */
  lastReply?: LastReply;
}

/** What the last reply that wrote files changed. */
export interface LastReply {
  /** Each file as it was before the reply and as the reply wrote it (null: missing / deleted). */
  files: { path: string; before: string | null; after: string | null }[];
  /** The commit holding the change; null when it stayed uncommitted (--no-auto-commits, or the commit failed). */
  commit: string | null;
}

export interface CoderSetup {
  model: string;
  editFormat: string;
  /** The editor step of architect: edit-only prompts, no repo map, fresh history. */
  editor: boolean;
  maxReflections: number;
  chat: ChatFiles;
}

export interface TurnResult {
  /** False when edits (or lint/tests) still failed when the budget ran out, or the request failed. */
  ok: boolean;
  reflections: number;
}

interface SendResult {
  reflection: string | null;
  /** The reflection is a repair (failed edits, lint, tests), not just "I added files". */
  failing: boolean;
}

const COMMIT_MESSAGE_TIMEOUT_MS = 30_000;

export class Coder {
  readonly history = new ChatHistory();
  model: string;
  modelInfo: ModelInfo;
  format: Registered<EditFormat>;
  private controller: AbortController | null = null;
  private turnRequest = "";
  private readonly keepalive = new CacheKeepalive();
  private lastRequest: ModelRequest | null = null;
  private warnedProviders = new Set<string>();
  /** The repository's files, listed once per request (each listing costs a git call). */
  private fileList: Promise<string[]> | null = null;

  constructor(
    readonly services: CoderServices,
    readonly setup: CoderSetup,
  ) {
    this.model = setup.model;
    this.modelInfo = services.app.registry.modelInfo(setup.model);
    this.format = services.app.registry.formatEntry(setup.editFormat);
  }

  get options() {
    return this.services.app.settings.options;
  }

  get chat(): ChatFiles {
    return this.setup.chat;
  }

  setModel(name: string): void {
    this.model = name;
    this.modelInfo = this.services.app.registry.modelInfo(name);
  }

  setEditFormat(name: string): void {
    this.format = this.services.app.registry.formatEntry(name);
  }

  /** Is a request streaming right now? */
  get inFlight(): boolean {
    return this.controller !== null;
  }

  /** Abort the request in flight (Ctrl-C). */
  interrupt(): void {
    this.controller?.abort();
  }

  /** One user request with its reflections, within the budget. */
  async runOne(message: string): Promise<TurnResult> {
    this.cancelPings();
    this.turnRequest = message;
    this.services.transcript.user(message);
    let next = message;
    let reflections = 0;
    try {
      for (;;) {
        const result = await this.send(next);
        if (!result.reflection) return { ok: !result.failing, reflections };
        if (reflections >= this.setup.maxReflections) {
          this.services.out.warn(`Stopped after ${reflections} reflection${reflections === 1 ? "" : "s"} (--max-reflections ${this.setup.maxReflections}); the last problem was not fixed: ${problemSummary(result.reflection)}`);
          return { ok: !result.failing, reflections };
        }
        reflections++;
        this.services.out.emit({ type: "reflection", n: reflections, reason: result.reflection });
        this.services.transcript.note(result.reflection);
        next = result.reflection;
      }
    } finally {
      // A request that got no reply (failed or interrupted) leaves no dangling user message behind,
      // and every tool call gets its answer (the protocol rejects a history without them).
      if (this.history.cur.at(-1)?.role === "user") this.history.cur.pop();
      this.answerDanglingToolCalls();
      this.history.finishTurn();
      this.afterTurn();
    }
  }

  /** One request: assemble, stream, apply. */
  private async send(message: string): Promise<SendResult> {
    const { out, app } = this.services;
    await this.history.settle();
    this.history.cur.push({ role: "user", content: message });

    const controller = new AbortController();
    this.controller = controller;
    this.fileList = null;
    try {
      trace("send: assembling chunks");
      const { chunks, fence } = await this.buildChunks(message, controller.signal);
      const messages = chunkMessages(chunks);
      const { promptTokens, estimated } = this.checkContextWindow(chunks, messages);
      const request: ModelRequest = this.request(messages);
      out.emit({ type: "request", model: this.model, promptTokens, estimated });
      if (app.settings.options.verbose) out.print(messages.map((m) => `--- ${m.role}\n${m.content}`).join("\n"));

      trace("send: request");
      const reply = await this.stream(request, controller.signal, promptTokens);
      trace("send: reply complete");
      this.lastRequest = request;
      this.services.transcript.assistant(reply.text);
      return await this.handleReply(reply, fence, controller.signal);
    } finally {
      this.controller = null;
      this.fileList = null;
    }
  }

  private request(messages: ChatMessage[], maxTokens?: number): ModelRequest {
    const o = this.options;
    const caps = this.modelInfo.capabilities;
    return {
      model: this.model,
      messages,
      tools: this.format.item.tools,
      stream: o.stream,
      maxTokens,
      temperature: caps.temperature ? 0 : undefined,
      apiBase: o.apiBase,
      apiKey: o.apiKey,
      env: this.services.app.env,
      timeoutMs: o.timeout * 1000,
    };
  }

  /** Prompt tokens: a cheap estimate when the prompt clearly fits, an exact count (and check) otherwise. */
  private checkContextWindow(chunks: Chunk[], messages: ChatMessage[]): { promptTokens: number; estimated: boolean } {
    const window = this.modelInfo.contextWindow;
    const reserve = Math.min(this.modelInfo.maxOutput, Math.floor(window / 4));
    const chars = messages.reduce((s, m) => s + m.content.length + (m.toolCalls?.reduce((t, c) => t + c.arguments.length, 0) ?? 0), 0);
    // At worst about one token per character: below that the exact count cannot overflow.
    if (chars + reserve < window) return { promptTokens: Math.ceil(chars / 4) + 4 * messages.length, estimated: true };
    const count = (t: string) => this.services.app.kit.tokens.count(t);
    const rows = tokenRows(chunks, count);
    const overflow = contextOverflow(rows, window, reserve);
    if (overflow) throw new RuntimeFailure(overflow);
    return { promptTokens: rows.reduce((s, r) => s + r.tokens, 0), estimated: false };
  }

  /** Stream one reply (core/stream.ts) and count its usage and cost. */
  private async stream(request: ModelRequest, signal: AbortSignal, promptEstimate: number): Promise<{ text: string; toolCalls: ToolCall[]; finishReason: FinishReason }> {
    const { out } = this.services;
    const adapter = this.services.app.registry.adapterFor(this.model);
    const reply = await streamReply(adapter, request, signal, out, this.modelInfo);
    const { usage, text, toolCalls } = reply;
    if (!reply.usageReported) {
      usage.promptTokens = promptEstimate;
      usage.completionTokens = Math.ceil((text.length + toolCalls.reduce((s, c) => s + c.arguments.length, 0)) / 4);
    }
    const cost = replyCost(usage, this.modelInfo.prices);
    const totals = this.services.totals;
    totals.promptTokens += usage.promptTokens;
    totals.completionTokens += usage.completionTokens;
    totals.cachedTokens += usage.cachedTokens;
    totals.cost += cost;
    totals.requests++;
    out.emit({ type: "reply", text, usage, cost, model: this.model, finishReason: reply.finishReason });
    return reply;
  }

  // ─── Context ──────────────────────────────────────────────────────────────

  platform(): string {
    return `${platform()} ${arch()}, shell ${basename(process.env.SHELL ?? (platform() === "win32" ? "cmd" : "sh"))}`;
  }

  private readFile(path: string): string | null {
    return this.services.files.read(path);
  }

  /** The chunks of the next request. */
  async buildChunks(message: string, signal: AbortSignal): Promise<{ chunks: Chunk[]; fence: Fence }> {
    const { app } = this.services;
    const chatFiles = [...this.chat.editable];
    const fileTexts = chatFiles.map((path) => ({ path, content: this.readFile(path) }));
    const readOnly = this.chat.readOnly.map((path) => ({ path, content: this.readFile(path) }));
    const fence = chooseFence([...fileTexts, ...readOnly].map((f) => f.content ?? ""));

    const prompts = this.formatPrompts(fence, chatFiles);
    const staticBlocks: ContextText[] = this.setup.editor ? [] : readOnly.filter((f) => f.content !== null).map((f) => readOnlyBlock(f.path, f.content as string, fence));
    const sessionBlocks: ContextText[] = [];
    const turnBlocks: ContextText[] = [];
    if (!this.setup.editor) {
      const turn = await this.turnContext(message, signal);
      for (const entry of app.registry.context.values()) {
        const block = await this.provide(entry, turn);
        if (!block) continue;
        const target = entry.item.stability === "static" ? staticBlocks : entry.item.stability === "session" ? sessionBlocks : turnBlocks;
        target.push(block);
      }
    }
    const chunks = assembleChunks({
      system: systemText(prompts.system, this.platform(), fence),
      examples: prompts.examples,
      staticBlocks,
      sessionBlocks,
      history: this.history.done,
      chatFiles: chatFilesBlock(fileTexts, fence),
      turnBlocks,
      current: this.history.cur,
      reminder: prompts.reminder,
      systemRole: this.modelInfo.capabilities.systemPrompt,
      breakpoints: this.modelInfo.capabilities.cache === "breakpoints",
    });
    return { chunks, fence };
  }

  private formatPrompts(fence: Fence, chatFiles: readonly string[]) {
    try {
      return this.format.item.prompts({ fence, editorOnly: this.setup.editor, platform: this.platform(), chatFiles, shellSuggestions: !this.setup.editor });
    } catch (error) {
      throw new PluginError(this.format.plugin, this.format.origin, `prompts failed: ${messageOf(error)}`);
    }
  }

  private async provide(entry: Registered<{ name: string; provide: (t: TurnContext) => unknown }>, turn: TurnContext): Promise<ContextText | null> {
    try {
      const block = (await guard(entry, "provide", () => entry.item.provide(turn))) as { text: string; label?: string } | null;
      if (!block || !block.text) return null;
      return { label: block.label ?? entry.item.name, text: block.text };
    } catch (error) {
      if (error instanceof Interrupted || turn.signal.aborted) throw new Interrupted();
      if (!this.warnedProviders.has(entry.item.name)) {
        this.warnedProviders.add(entry.item.name);
        this.services.out.warn(messageOf(error));
      }
      return null;
    }
  }

  async turnContext(message: string, signal: AbortSignal): Promise<TurnContext> {
    const prose = [...this.history.cur.filter((m) => m.role === "user").map((m) => m.content), message].join("\n");
    const all = await this.repoFiles();
    return {
      root: this.services.app.root,
      chatFiles: [...this.chat.editable],
      readOnlyFiles: [...this.chat.readOnly],
      message,
      mentionedFiles: fileMentions(prose, all, this.chat.editable, this.chat.readOnly),
      mentionedIdents: identMentions(prose),
      model: this.modelInfo,
      options: this.options as Readonly<Record<string, unknown>>,
      interactive: this.services.app.interactive,
      signal,
    };
  }

  private repoFiles(): Promise<string[]> {
    this.fileList ??= this.services.listFiles();
    return this.fileList;
  }

  /** `/tokens`: exact token use of the next request, per chunk. */
  async tokenReport(): Promise<string> {
    this.fileList = null;
    const { chunks } = await this.buildChunks("", new AbortController().signal);
    const rows = tokenRows(chunks, (t) => this.services.app.kit.tokens.count(t));
    return renderTokenReport(rows, this.modelInfo.contextWindow);
  }

  // ─── The reply ────────────────────────────────────────────────────────────

  private async handleReply(reply: { text: string; toolCalls: ToolCall[]; finishReason: FinishReason }, fence: Fence, signal: AbortSignal): Promise<SendResult> {
    const { out } = this.services;
    this.history.cur.push(reply.toolCalls.length ? { role: "assistant", content: reply.text, toolCalls: reply.toolCalls } : { role: "assistant", content: reply.text });

    const mode = this.format.item.mode ?? "edit";
    if (mode === "none") return this.offerMentions(reply.text, [], null);
    if (mode === "editor") return this.handOff(reply.text);

    const all = await this.repoFiles();
    const parsed = parseReply({
      format: this.format,
      reply,
      fence,
      chatFiles: this.chat.editable,
      resolvePath: (raw) => resolveModelPath(raw, this.chat.editable, all),
    });
    if (!parsed.ok) {
      this.answerToolCalls(reply.toolCalls, [], parsed.error);
      if (parsed.pluginError) {
        out.emit({ type: "error", message: parsed.error, code: 1 });
        return { reflection: null, failing: true };
      }
      return { reflection: parsed.error, failing: true };
    }

    const { edits, shell } = parsed.parsed;
    const staged = await stageEdits(
      { format: this.format, reply, fence, chatFiles: this.chat.editable, readOnlyFiles: this.chat.readOnly, resolvePath: (r) => r, files: this.services.files, gate: this.services.gate },
      edits,
    );
    const { outcomes } = staged;
    for (const path of [...staged.joined, ...staged.failedOutside]) this.chat.add(path);
    const written = await this.writeAndCommit(staged, signal);
    this.answerToolCalls(reply.toolCalls, outcomes, null);

    // A suggested command that failed may come back as a fix request, through the same reflection.
    const fixes: string[] = [];
    for (const s of shell) {
      const fix = await this.runShellSuggestion(s.command);
      if (fix) fixes.push(fix);
    }
    const withFixes = (text: string) => [text, ...fixes].join("\n\n");

    const failed = outcomes.filter((o) => o.status !== "applied");
    if (failed.length) {
      let report = this.failureReport(outcomes, fence);
      if (staged.failedOutside.length) {
        report += `\n\nI added ${staged.failedOutside.join(", ")} to the chat, so you can see ${staged.failedOutside.length === 1 ? "its" : "their"} actual content above; base your edits on it.`;
      }
      return { reflection: withFixes(report), failing: true };
    }
    if (written.length) {
      const check = await lintAndTest(this.services.app.kit, this.services.out, this.options, written);
      if (check) return { reflection: withFixes(check), failing: true };
    }
    return this.offerMentions(reply.text, edits.flatMap(editTargets), fixes.length ? fixes.join("\n\n") : null);
  }

  /**
   * Write the staged changes (or show them with --dry-run), emit one edit event per
   * outcome, and commit what was written. Returns the written paths.
   */
  private async writeAndCommit(staged: AppliedReply, signal: AbortSignal): Promise<string[]> {
    const { out } = this.services;
    const { outcomes, changes } = staged;
    const dryRun = this.options.dryRun;
    let written: string[] = [];
    let message: Promise<string | null> = Promise.resolve(null);
    if (changes.size && dryRun) {
      for (const [path, after] of changes) out.print(this.services.app.kit.diff.unified(path, staged.before.get(path) ?? "", after ?? ""));
      await this.services.files.writeAll(changes, { dryRun: true });
    } else if (changes.size) {
      // The weak model writes the commit message while git and the disk do their part.
      message = this.commitMessage([...changes.keys()], staged.before, changes, signal).catch(() => null);
      const report = await this.writeChanges(changes);
      trace("reply: written");
      written = report.written.map((w) => w.path);
      if (written.length) this.services.lastReply = { files: report.written.map(({ path, before, after }) => ({ path, before, after })), commit: null };
      // A write the store refused fails every edit of that file, with the store's reason.
      for (const refusal of report.refused) {
        outcomes.forEach((o, i) => {
          if (o.path === refusal.path && o.status === "applied") outcomes[i] = { status: "failed", edit: o.edit, path: o.path, reason: "refused", detail: refusal.reason };
        });
      }
    }
    for (const o of outcomes) {
      const notWritten = dryRun && o.status === "applied";
      out.emit({ type: "edit", path: o.path, status: o.status, detail: notWritten ? "dry run: not written" : outcomeDetail(o), ...(notWritten ? { dryRun: true } : {}) });
    }
    // The human renderers say "Applied edit to ..." for every applied outcome; say plainly that nothing was written.
    if (dryRun && changes.size) out.print(`Dry run (--dry-run): nothing was written or committed (${changes.size} file${changes.size === 1 ? "" : "s"} would change).`);
    if (written.length) {
      // The files are on disk now: commit them even after Ctrl-C (the aborted message
      // request resolves to null, so the deterministic summary is used). Leaving them
      // uncommitted would let /undo revert an older commit instead of this change.
      const text = signal.aborted ? null : await message;
      trace("reply: commit message");
      const commit = await this.commit(written, text);
      if (this.services.lastReply) this.services.lastReply.commit = commit;
      trace("reply: committed");
      if (signal.aborted) throw new Interrupted();
    }
    return written;
  }

  private failureReport(outcomes: EditOutcome[], fence: Fence): string {
    const appliedCount = outcomes.filter((o) => o.status === "applied").length;
    try {
      return this.format.item.report(outcomes, { fence, appliedCount });
    } catch (error) {
      this.services.out.warn(new PluginError(this.format.plugin, this.format.origin, `report failed: ${messageOf(error)}`).message);
      return this.services.app.kit.reports.failedEdits(outcomes, { fence, appliedCount });
    }
  }

  private answerDanglingToolCalls(): void {
    const cur = this.history.cur;
    const last = cur.findLastIndex((m) => m.role === "assistant");
    const calls = cur[last]?.toolCalls ?? [];
    const answered = new Set(cur.slice(last + 1).map((m) => m.toolCallId));
    for (const call of calls) if (!answered.has(call.id)) cur.push({ role: "tool", toolCallId: call.id, content: "Not applied: the request was interrupted." });
  }

  /** Tool-call formats: one `tool` message answering each call id, as the Chat Completions protocol requires. */
  private answerToolCalls(calls: ToolCall[], outcomes: EditOutcome[], error: string | null): void {
    for (const call of calls) {
      const mine = outcomes.filter((o) => o.edit.toolCallId === call.id);
      let content: string;
      if (error) content = `Not applied: ${error}`;
      else if (!mine.length) content = "No edit was made from this call.";
      else content = mine.map((o) => (o.status === "applied" ? `Applied to ${o.path}.` : `Not applied to ${o.path}: ${o.status === "failed" ? o.reason : "skipped"} (see the report).`)).join("\n");
      this.history.cur.push({ role: "tool", toolCallId: call.id, content });
    }
  }

  /** Dirty-commit the user's pending changes to these files, then write atomically. */
  private async writeChanges(changes: Map<string, string | null>): Promise<WriteReport> {
    const { git, out } = this.services;
    if (git && this.options.dirtyCommits) {
      const outcome = await git.commitDirty([...changes.keys()], { verify: this.options.verify });
      if (outcome.status === "committed") out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
      else if (outcome.status === "failed") out.warn(`Could not commit the pending changes first: ${outcome.message}`);
    }
    return this.services.files.writeAll(changes, { dryRun: false });
  }

  /** The weak model's commit message for these changes; null (git's deterministic summary) when it fails. */
  private async commitMessage(paths: string[], before: Map<string, string | null>, changes: Map<string, string | null>, signal: AbortSignal): Promise<string | null> {
    const { git, out, app } = this.services;
    if (!git || !this.options.autoCommits) return null;
    const diff = paths.map((p) => app.kit.diff.unified(p, before.get(p) ?? "", changes.get(p) ?? "")).join("\n");
    try {
      // A commit message is not worth a long wait: git's summary is the fallback.
      const reply = await app.kit.complete({ model: this.weakModel(), messages: commitMessagePrompt(this.turnRequest, diff), maxTokens: 100, timeoutMs: COMMIT_MESSAGE_TIMEOUT_MS }, signal);
      return reply.text.trim() || null;
    } catch (error) {
      if (signal.aborted) throw new Interrupted();
      out.warn(`The weak model could not write the commit message (${messageOf(error).split("\n")[0]}); using a summary.`);
      return null;
    }
  }

  /** One commit per applied reply; returns its hash, or null when nothing was committed. */
  private async commit(paths: string[], message: string | null): Promise<string | null> {
    const { git, out } = this.services;
    if (!git || !this.options.autoCommits) return null;
    const outcome = await git.commitEdits(paths, { message, request: this.turnRequest, model: this.model, attribution: this.options.attribution, verify: this.options.verify });
    if (outcome.status === "committed") {
      out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
      return outcome.commit.hash;
    }
    if (outcome.status === "failed") out.warn(`Commit failed: ${outcome.message}`);
    return null;
  }

  /**
   * `/diff`: what the last reply changed. A committed reply is shown from git (its commit);
   * an uncommitted one (--no-auto-commits, a failed commit, no git) from the contents it replaced.
   */
  async lastDiff(): Promise<string> {
    const { git, app } = this.services;
    const last = this.services.lastReply;
    if (last && last.commit === null) {
      const diffs = last.files.map(({ path, before, after }) => {
        const what = before === null ? " (created)" : after === null ? " (deleted)" : "";
        const body = app.kit.diff.unified(path, before ?? "", after ?? "").replace(/^=+\n/, "").trimEnd();
        return what ? `${path}${what}\n${body}` : body;
      });
      return [`The last reply's changes (not committed):`, ...diffs].join("\n\n");
    }
    // With auto-commits the last reply is coder's last commit, in this session or an earlier one.
    if (git && (last || this.options.autoCommits)) return git.lastDiff();
    return git ? "No reply has changed files in this session yet." : "No reply has changed files yet.";
  }

  weakModel(): string {
    return this.options.weakModel ?? this.modelInfo.weakModel ?? this.model;
  }

  /**
   * Run a command the model suggested, once the gate allows it. Its output may then join the
   * chat; a failure's output may go back to the model: the fix request is returned, for the
   * reflection (so it counts against --max-reflections).
   */
  private async runShellSuggestion(command: string): Promise<string | null> {
    const { gate, app, out } = this.services;
    if (this.options.dryRun || !(await gate.shellPermission(command))) return null;
    const r = await app.kit.run(command, { timeoutMs: 600_000 });
    const output = `${r.stdout}${r.stderr}`;
    out.print(`$ ${command}\n${output.trimEnd()}${r.code ? `\n(exit ${r.code})` : ""}`);
    const choice = await askAboutOutput(command, { code: r.code, output }, (question) => gate.confirm(question));
    if (choice?.kind === "add") {
      // After the reply that suggested it, as finished conversation: the next request carries it.
      this.history.cur.push({ role: "user", content: choice.message }, { role: "assistant", content: "Ok." });
      out.print("Added the output to the chat.");
    }
    return choice?.kind === "fix" ? choice.message : null;
  }

  /**
   * Files the reply names in prose (not its edit targets) are offered for the chat; added ones
   * trigger a reflection. `pending` is a repair already due (a suggested command's fix request).
   */
  private async offerMentions(text: string, targets: readonly string[], pending: string | null): Promise<SendResult> {
    const failing = pending !== null;
    if (this.setup.editor) return { reflection: pending, failing };
    const all = await this.repoFiles();
    const addable = all.filter((f) => !this.chat.editable.includes(f) && !this.chat.readOnly.includes(f) && !targets.includes(f));
    const named = fileMentions(text, addable, this.chat.editable, this.chat.readOnly);
    if (!named.length) return { reflection: pending, failing };
    const added: string[] = [];
    const group = this.services.gate.group(named.length);
    for (const path of named) {
      if (await this.services.gate.confirm(`Add ${path} to the chat?`, { key: `add:${path}`, group })) {
        this.chat.add(path);
        added.push(path);
      }
    }
    if (!added.length) return { reflection: pending, failing };
    const note = `I added ${added.join(", ")} to the chat: ${added.length === 1 ? "its" : "their"} content is above now. Go on with my request; if you need other files, name them.`;
    return { reflection: pending ? `${pending}\n\n${note}` : note, failing };
  }

  // ─── Architect ────────────────────────────────────────────────────────────

  /** The plan becomes the request of an editor coder: editor model and format, no repo map, fresh history, own budget. */
  private async handOff(plan: string): Promise<SendResult> {
    if (!plan.trim()) return { reflection: null, failing: false };
    const o = this.options;
    const editorModel = o.editorModel ?? this.modelInfo.editorModel ?? this.model;
    const editorInfo = this.services.app.registry.modelInfo(editorModel);
    let editorFormat = o.editorEditFormat ?? this.modelInfo.editorFormat ?? editorInfo.editFormat;
    const registry = this.services.app.registry;
    if (editorFormat === this.format.item.name || registry.formats.get(editorFormat)?.item.mode === "editor" || !registry.formats.has(editorFormat)) {
      editorFormat = registry.formats.has("diff") ? "diff" : editorFormat;
    }
    const editor = new Coder(this.services, { model: editorModel, editFormat: editorFormat, editor: true, maxReflections: this.setup.maxReflections, chat: this.chat });
    editor.turnRequest = this.turnRequest;
    const parentInterrupt = this.controller;
    const onAbort = () => editor.interrupt();
    parentInterrupt?.signal.addEventListener("abort", onAbort);
    try {
      const result = await editor.runOne(plan);
      return { reflection: null, failing: !result.ok };
    } finally {
      parentInterrupt?.signal.removeEventListener("abort", onAbort);
    }
  }

  // ─── After the turn ───────────────────────────────────────────────────────

  /** Summarise the history in the background when it outgrows its budget; keep the cache warm. */
  private afterTurn(): void {
    // One-shot runs end now; an editor coder's history is thrown away after its turn.
    if (!this.services.app.interactive || this.setup.editor) return;
    const count = (ms: readonly ChatMessage[]) => countMessageTokens(ms, (t) => this.services.app.kit.tokens.count(t));
    this.history.maybeSummarise(historyBudget(this.modelInfo.contextWindow), count, (ms) => this.summarise(ms), (e) => this.services.out.warn(`History summary failed: ${messageOf(e)}`));
    this.schedulePings();
  }

  /** After an edit-format switch: the history becomes a summary, in the background. */
  summariseForFormatSwitch(): void {
    this.history.summariseAll((ms) => this.summarise(ms), (e) => this.services.out.warn(`History summary failed: ${messageOf(e)}`));
  }

  /** Summarise now (before the first request of a restored history). */
  async summariseNow(): Promise<boolean> {
    const count = (ms: readonly ChatMessage[]) => countMessageTokens(ms, (t) => this.services.app.kit.tokens.count(t));
    const budget = historyBudget(this.modelInfo.contextWindow);
    if (count(this.history.done) <= budget) return false;
    this.history.done = await summariseHistory(this.history.done, budget, count, (ms) => this.summarise(ms));
    return true;
  }

  private async summarise(messages: readonly ChatMessage[]): Promise<string> {
    const { kit } = this.services.app;
    const models = [...new Set([this.weakModel(), this.model])];
    let lastError: unknown;
    for (const model of models) {
      try {
        const reply = await kit.complete({ model, messages: summaryPrompt(messages), timeoutMs: this.options.timeout * 1000 });
        if (reply.text.trim()) return reply.text;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError ?? new Error("empty summary");
  }

  private schedulePings(): void {
    const n = this.options.cacheKeepalivePings;
    if (!n || this.modelInfo.capabilities.cache === "none" || !this.lastRequest) return;
    this.keepalive.schedule(this.services.app.registry.adapterFor(this.model), this.lastRequest, n);
  }

  cancelPings(): void {
    this.keepalive.cancel();
  }
}

/**
 * The first two paragraphs of a reflection (what failed, and why), on one line: the
 * run's last word when the budget runs out, so a script or CI log says what is wrong.
 */
export function problemSummary(reflection: string): string {
  const paragraphs = reflection.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
  const second = paragraphs[1]?.split("\n")[0]?.replace(/^#+\s*/, "");
  const text = [paragraphs[0] ?? "", second ?? ""].filter(Boolean).join(" ").replace(/\s*\n\s*/g, " ");
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}
