// The turn loop: runOne → send, repairing through one reflection channel with a
// budget. `send` assembles the prompt (core/chat/prompt.ts), streams the reply, applies its
// edits and commits (core/chat/reply/commit.ts), lints and tests, makes its offers
// (core/chat/reply/offers.ts) or hands an architect's plan to an editor (core/chat/architect.ts);
// whatever needs the model's attention comes back as the reflection, the next user message.
import { isAbsolute } from "node:path";
import { chooseEditor, runEditor } from "./architect.ts";
import { type Chunk, chatFileEntry, chunkMessages, countMessageTokens, renderTokenReport, type TokenRow, tokenRows } from "./chunks.ts";
import { lintAndTest, warmSyntaxCheck } from "./checks.ts";
import { Interrupted, UsageError } from "../errors.ts";
import { chooseFence } from "../edit/fence.ts";
import { ChatHistory, historyBudget, summariseHistory, summaryPrompt } from "./history.ts";
import { CacheKeepalive } from "./keepalive.ts";
import { fileMentions, withoutNegatedClauses } from "./mentions.ts";
import { notifyReplyDone } from "./notify.ts";
import { resolveModelPath } from "../edit/paths.ts";
import { checkModelTakesParts } from "./parts.ts";
import type { ChatMessage, EditFormat, EditOutcome, Fence, FinishReason, ModelInfo, ModelRequest, PromptChunk, Session, ToolCall, ToolSpec, TurnContext } from "../plugin.ts";
import * as prompt from "./prompt.ts";
import { unsupportedReasoning } from "./reasoning.ts";
import { guard, messageOf, type Registered } from "../plugins/registry.ts";
import { type AppliedReply, editTargets, guardUncommitted, parseReply, type ReplyAmendment, stageEdits } from "./reply/apply.ts";
import { lastReplyDiff, writeAndCommit } from "./reply/commit.ts";
import { offerMentions, runShellSuggestion } from "./reply/offers.ts";
import type { ChatFiles } from "./chat-files.ts";
import { InterruptedReply, streamReply } from "./stream.ts";
import { replyCost, type Usage } from "./events.ts";
import type { CoderServices, CoderSetup, SendResult, TurnResult } from "./types.ts";
import { trace } from "../trace.ts";
import { answerDanglingToolCalls, answerToolCalls } from "./tool-answers.ts";
import { ToolGathering } from "./tool-calls.ts";

/** How long the tool offer may take before a front end that shows progress is told (`Output.waiting`). */
const SLOW_TOOLS_MS = 1000;

export class Coder {
  readonly history = new ChatHistory();
  model: string;
  modelInfo: ModelInfo;
  format: Registered<EditFormat>;
  private controller: AbortController | null = null;
  private turnRequest = "";
  private readonly keepalive = new CacheKeepalive();
  private lastRequest: ModelRequest | null = null;
  /** `--apply`: no model is asked for anything (the commit message is git's summary). */
  private noModel = false;
  /** Notices already given this session (a setting the model does not take is said once). */
  private readonly noticed = new Set<string>();
  private readonly providers: prompt.ContextProviders;
  /**
   * The slash-command session around a coder (core/chat/session.ts), for context providers'
   * `onMessage`; set by whoever builds the coder (core/chat/create.ts), so the turn loop does
   * not depend on the commands.
   */
  openSession: ((coder: Coder) => Session) | null = null;
  /** Changes a front end adds to each reply that changes files, in the same commit (watch mode's comment removal). */
  amendReply: ReplyAmendment | null = null;
  /** Tool providers' tools and the calls made for the current user request (core/chat/tool-calls.ts). */
  private gathering: ToolGathering | null = null;
  /** The repository's files, listed once per request (each listing costs a git call). */
  private fileList: Promise<string[]> | null = null;
  /** The request's turn context, built once for the context providers and the tool providers alike. */
  private turnMemo: { message: string; signal: AbortSignal; value: Promise<TurnContext> } | null = null;
  /** Counts in the current model's encoding (it changes with setModel). */
  private readonly countTokens = (text: string): number => {
    const { tokens } = this.services.app.kit;
    return tokens.count(text, tokens.encoding?.(this.modelInfo));
  };
  private readonly countMessages = (ms: readonly ChatMessage[]): number => countMessageTokens(ms, this.countTokens);
  private readonly summaryFailed = (error: unknown): void => this.services.out.warn(`History summary failed: ${messageOf(error)}`);

  constructor(
    readonly services: CoderServices,
    readonly setup: CoderSetup,
  ) {
    this.model = setup.model;
    this.modelInfo = services.app.registry.modelInfo(setup.model);
    this.format = services.app.registry.formatEntry(setup.editFormat);
    this.providers = new prompt.ContextProviders(services.out);
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

  /** The messages of the last request (chat files, repo map, history), for the REPL's word completion. */
  get lastPrompt(): readonly ChatMessage[] {
    return this.lastRequest?.messages ?? [];
  }

  /** Is a request streaming right now? */
  get inFlight(): boolean {
    return this.controller !== null;
  }

  /**
   * Abort the request in flight (Ctrl-C, SIGTERM, SIGHUP). A write batch under way is finished
   * and committed first; no further request (a reflection) starts in this turn.
   */
  interrupt(): void {
    this.stopRequested = true;
    this.controller?.abort();
  }

  private stopRequested = false;

  /**
   * One user request with its reflections, within the budget. `options.typed`: the part of
   * `message` the user typed (what context providers' `onMessage` sees), when it differs.
   */
  async runOne(message: string, options: { typed?: string } = {}): Promise<TurnResult> {
    this.cancelPings();
    this.stopRequested = false;
    if (!this.setup.editor) await this.offerContext(options.typed ?? message);
    this.turnRequest = message;
    this.gathering = null;
    this.services.transcript.user(message);
    let next = message;
    let reflections = 0;
    try {
      for (;;) {
        if (this.stopRequested) throw new Interrupted();
        const result = await this.send(next);
        if (!result.reflection) return { ok: !result.failing, reflections };
        if (reflections >= this.setup.maxReflections) {
          const stopped = `Stopped after ${reflections} reflection${reflections === 1 ? "" : "s"} (--max-reflections ${this.setup.maxReflections}); the last problem was not fixed: ${problemSummary(result.reflection)}`;
          this.services.lastError = stopped;
          this.services.out.warn(stopped);
          return { ok: !result.failing, reflections };
        }
        reflections++;
        this.services.out.emit({ type: "reflection", n: reflections, reason: result.reflection });
        this.services.transcript.note(result.reflection);
        next = result.reflection;
      }
    } catch (error) {
      this.services.lastError = messageOf(error);
      throw error;
    } finally {
      // A request that got no reply (failed or interrupted) leaves no dangling user message behind,
      // and every tool call gets its answer (the protocol rejects a history without them).
      if (this.history.cur.at(-1)?.role === "user") this.history.cur.pop();
      answerDanglingToolCalls(this.history.cur);
      this.history.finishTurn();
      this.afterTurn();
      if (!this.setup.editor) await notifyReplyDone(this.options, this.services.app.kit, (t) => this.services.out.warn(t), this.services.bell);
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
      await this.services.files.sync(this.repoChatFiles());
      const { chunks, fence, shown } = await this.buildChunks(message, controller.signal);
      // A chat file that became something unreadable (a folder, a pipe, a link loop) is named, not passed off as a file yet to create.
      for (const [path, text] of shown) {
        const problem = text === null ? this.services.files.readProblem(path) : null;
        if (problem) out.warn(`${path} is left out of this request: ${problem}`);
      }
      const messages = chunkMessages(chunks);
      checkModelTakesParts(messages, this.modelInfo);
      const { promptTokens, estimated } = prompt.checkContextWindow(chunks, messages, this.modelInfo, this.countTokens);
      const request = this.request(messages);
      const offered = await this.offerTools(message, controller.signal);
      if (offered.length) request.tools = [...(request.tools ?? []), ...offered];
      out.emit({ type: "request", model: this.model, promptTokens, estimated });
      if (app.settings.options.verbose) out.print(messages.map((m) => `--- ${m.role}\n${m.content}`).join("\n"));

      // The syntax check after the edits needs the chat files' parsers: load them while the model answers.
      if (this.options.autoLint && (this.format.item.mode ?? "edit") === "edit" && this.chat.editable.length) warmSyntaxCheck(this.chat.editable);
      trace("send: request");
      const reply = await this.gather(await this.stream(request, controller.signal, promptTokens), request, promptTokens, controller.signal);
      trace("send: reply complete");
      this.lastRequest = request;
      this.services.lastReplyText = reply.text;
      this.services.transcript.assistant(reply.text);
      return await this.handleReply(reply, fence, controller.signal, shown);
    } finally {
      this.controller = null;
      this.fileList = null;
    }
  }

  private request(messages: ChatMessage[]): ModelRequest {
    const o = this.options;
    const caps = this.modelInfo.capabilities;
    for (const note of unsupportedReasoning(o, this.modelInfo)) {
      if (!this.noticed.has(note)) this.services.out.warn(note);
      this.noticed.add(note);
    }
    return {
      model: this.model,
      messages,
      tools: this.format.item.tools,
      stream: o.stream,
      temperature: caps.temperature ? 0 : undefined,
      reasoningEffort: o.reasoningEffort,
      thinkingTokens: o.thinkingTokens,
      verifySsl: o.verifySsl,
      apiBase: o.apiBase,
      apiKey: o.apiKey,
      env: this.services.app.env,
      timeoutMs: o.timeout * 1000,
    };
  }

  /** Tool providers' tools, offered with the main coder's requests (not the editor's, not to models without tools). */
  private async offerTools(message: string, signal: AbortSignal): Promise<ToolSpec[]> {
    const providers = [...this.services.app.registry.tools.values()];
    if (!providers.length || this.setup.editor || this.noModel || !this.modelInfo.capabilities.tools) return [];
    const warn = (text: string) => {
      if (!this.noticed.has(text)) this.services.out.warn(text);
      this.noticed.add(text);
    };
    this.gathering ??= new ToolGathering({ out: this.services.out, gate: this.services.gate, warn, hooks: this.services.app.registry.hooks }, this.options.maxToolCalls);
    const turn = await this.turnContext(message, signal);
    // A provider may be starting its servers (MCP): a front end that shows progress hears of it after a second.
    const { out } = this.services;
    const slow = out.waiting ? setTimeout(() => out.waiting?.(`Waiting for the tools of ${providers.map((p) => p.item.name).join(", ")} (starting)…`), SLOW_TOOLS_MS) : null;
    try {
      return await this.gathering.offer(providers, turn, this.format.item.tools ?? []);
    } finally {
      if (slow) clearTimeout(slow);
    }
  }

  /**
   * The gathering step: while the model calls offered tools, run the calls (core/chat/tool-calls.ts),
   * keep them in the history and ask again; the reply that answers is returned without such calls.
   */
  private async gather(first: Awaited<ReturnType<Coder["stream"]>>, request: ModelRequest, promptTokens: number, signal: AbortSignal) {
    const gathering = this.gathering;
    if (!gathering) return first;
    let reply = first;
    let estimate = promptTokens;
    while (gathering.wants(reply)) {
      const added = await gathering.answer(reply, signal);
      if (this.stopRequested) throw new Interrupted();
      this.history.cur.push(...added);
      request.messages = [...request.messages, ...added];
      estimate += this.countMessages(added);
      this.services.out.emit({ type: "request", model: this.model, promptTokens: estimate, estimated: true });
      reply = await this.stream(request, signal, estimate);
    }
    return gathering.withoutToolCalls(reply);
  }

  /** Stream one reply (core/chat/stream.ts) and count its usage and cost. */
  private async stream(request: ModelRequest, signal: AbortSignal, promptEstimate: number): Promise<{ text: string; toolCalls: ToolCall[]; finishReason: FinishReason }> {
    const { out } = this.services;
    const adapter = this.services.app.registry.adapterFor(this.model);
    const { hooks } = this.services.app.registry;
    // Plugins may change what is sent (e.g. mask secrets); the history keeps what the chat said.
    const sent = hooks.has("onRequest") ? { ...request, messages: await hooks.request(this.model, request.messages) } : request;
    let reply: Awaited<ReturnType<typeof streamReply>>;
    try {
      reply = await streamReply(adapter, sent, signal, out, this.modelInfo);
    } catch (error) {
      if (error instanceof InterruptedReply) this.keepInterrupted(error, promptEstimate);
      throw error;
    }
    this.countReply(reply, promptEstimate, reply.finishReason);
    if (hooks.has("onReply")) await hooks.reply({ model: this.model, text: reply.text, toolCalls: reply.toolCalls, finishReason: reply.finishReason });
    return reply;
  }

  /** Usage (estimated when the endpoint reported none) joins the session totals; the reply event says it. */
  private countReply(reply: { text: string; toolCalls: ToolCall[]; usage: Usage; usageReported: boolean }, promptEstimate: number, finishReason: string): void {
    const { usage, text, toolCalls } = reply;
    if (!reply.usageReported) {
      usage.promptTokens = promptEstimate;
      usage.completionTokens = Math.ceil((text.length + toolCalls.reduce((s, c) => s + c.arguments.length, 0)) / 4);
    }
    const { prices } = this.modelInfo;
    const costKnown = !this.modelInfo.unknown && (prices.input > 0 || prices.output > 0);
    const cost = replyCost(usage, prices);
    const totals = this.services.totals;
    totals.promptTokens += usage.promptTokens;
    totals.completionTokens += usage.completionTokens;
    totals.cachedTokens += usage.cachedTokens;
    totals.cost += cost;
    totals.requests++;
    if (!costKnown) totals.costUnknown = true;
    this.services.out.emit({ type: "reply", text, usage, cost, model: this.model, finishReason, ...(costKnown ? {} : { costKnown: false }) });
  }

  /**
   * Ctrl-C during a reply: the question and what arrived of the answer stay in the history,
   * marked as interrupted (so "continue" can resume it), and their tokens count.
   */
  private keepInterrupted(partial: InterruptedReply, promptEstimate: number): void {
    this.countReply({ text: partial.text, toolCalls: [], usage: { ...partial.usage }, usageReported: partial.usageReported }, promptEstimate, "interrupted");
    const content = `${partial.text.trimEnd()}${partial.text.trim() ? "\n\n" : ""}(interrupted by the user)`;
    this.history.cur.push({ role: "assistant", content });
    this.services.transcript.assistant(content);
  }

  // ─── Context ──────────────────────────────────────────────────────────────

  /** The chunks of the next request (core/chat/prompt.ts). */
  buildChunks(message: string, signal: AbortSignal): Promise<{ chunks: Chunk[]; fence: Fence; shown: Map<string, string | null> }> {
    return prompt.buildChunks(this, () => this.turnContext(message, signal), this.providers);
  }

  turnContext(message: string, signal: AbortSignal): Promise<TurnContext> {
    // One per request: the context providers and the tool providers see the same one.
    if (this.turnMemo?.signal === signal && this.turnMemo.message === message) return this.turnMemo.value;
    const value = prompt.turnContext(this, message, signal, () => this.repoFiles());
    this.turnMemo = { message, signal, value };
    return value;
  }

  private repoFiles(): Promise<string[]> {
    this.fileList ??= this.services.listFiles();
    return this.fileList;
  }

  /** `/tokens`: exact token use of the next request, per chunk, and per file for the chat's files. */
  async tokenReport(): Promise<string> {
    this.fileList = null;
    const signal = new AbortController().signal;
    const { chunks, fence } = await this.buildChunks("", signal);
    const rows: TokenRow[] = [];
    for (const chunk of chunks) {
      const [row] = tokenRows([chunk], this.countTokens, this.modelInfo.imageRules) as [TokenRow];
      if (chunk.name === "chat-files" && this.chat.editable.length) {
        const files = this.chat.editable.map((path) => ({ label: path, file: path, tokens: this.countTokens(chatFileEntry({ path, content: this.services.files.read(path) }, fence)) }));
        const framing = row.tokens - files.reduce((s, f) => s + f.tokens, 0);
        if (framing > 0) rows.push({ label: "chat files: framing", tokens: framing });
        rows.push(...files);
      } else if (chunk.name === "static" && chunk.label.startsWith("read-only: ")) rows.push({ ...row, file: chunk.label.slice("read-only: ".length) });
      else rows.push(row);
    }
    // Tool providers' tools go with every request too (their results are in the history rows).
    const tools = await this.offerTools("", signal);
    if (tools.length) rows.push({ label: `tools offered (${tools.length})`, tokens: this.countTokens(JSON.stringify(tools)) });
    const { prices, unknown } = this.modelInfo;
    const priced = !unknown && (prices.input > 0 || prices.output > 0);
    return `Context of the next request to ${this.model}:\n${renderTokenReport(rows, this.modelInfo.contextWindow, priced ? prices.input : null)}`;
  }

  /**
   * The messages a request for `message` would carry (system, examples, context, chat files,
   * the request with its reminder) and the format's tools, without sending it (`coder prompts`).
   */
  async previewRequest(message: string): Promise<{ chunks: Chunk[]; tools: ToolSpec[] }> {
    this.fileList = null;
    this.history.cur.push({ role: "user", content: message });
    try {
      const { chunks } = await this.buildChunks(message, new AbortController().signal);
      return { chunks, tools: this.format.item.tools ?? [] };
    } finally {
      this.history.cur.pop();
    }
  }

  /** The chunks of the next request as plugins see them (`/copy-context`). */
  async promptChunks(): Promise<PromptChunk[]> {
    this.fileList = null;
    const { chunks } = await this.buildChunks("", new AbortController().signal);
    return chunks.map((c) => ({ kind: c.name, label: c.label, messages: c.messages }));
  }

  /** Context providers' `onMessage`: each may offer context for a request the user typed (e.g. the pages its URLs name). */
  private async offerContext(message: string): Promise<void> {
    let session: Session | undefined;
    for (const entry of this.services.app.registry.context.values()) {
      const onMessage = entry.item.onMessage;
      if (!onMessage || !this.openSession) continue;
      session ??= this.openSession(this);
      const on = session;
      try {
        await guard(entry, "onMessage", () => onMessage.call(entry.item, message, on));
      } catch (error) {
        if (error instanceof Interrupted) throw error;
        this.services.out.warn(messageOf(error));
      }
    }
  }

  // ─── The reply ────────────────────────────────────────────────────────────

  /** The chat's files in the repository, editable and read-only. */
  private repoChatFiles(): string[] {
    return [...this.chat.editable, ...this.chat.readOnly.filter((p) => !isAbsolute(p))];
  }

  /** `shown`: the files' texts as the model was shown them (none for a saved reply): its edits are written from those. */
  private async handleReply(reply: { text: string; toolCalls: ToolCall[]; finishReason: FinishReason }, fence: Fence, signal: AbortSignal, shown?: ReadonlyMap<string, string | null>): Promise<SendResult> {
    const { out, app } = this.services;
    this.history.cur.push(reply.toolCalls.length ? { role: "assistant", content: reply.text, toolCalls: reply.toolCalls } : { role: "assistant", content: reply.text });

    const mode = this.format.item.mode ?? "edit";
    if (mode === "none") return this.offerMentionedFiles(reply.text, [], null);
    if (mode === "editor") return this.handOff(reply.text);
    if (mode === "files") return this.addNamedFiles(reply.text);

    const all = await this.repoFiles();
    const parsed = parseReply({
      format: this.format,
      reply,
      fence,
      chatFiles: this.chat.editable,
      resolvePath: (raw) => resolveModelPath(raw, this.chat.editable, all),
      repoFiles: all,
    });
    if (!parsed.ok) {
      answerToolCalls(this.history.cur, reply.toolCalls, [], parsed.error);
      if (parsed.pluginError) {
        out.emit({ type: "error", message: parsed.error, code: 1 });
        return { reflection: null, failing: true };
      }
      return { reflection: parsed.error, failing: true };
    }

    const { edits } = parsed.parsed;
    // The edits land on the files as they are now: an editor's buffer the user typed in while the model answered is read again.
    await this.services.files.sync(this.repoChatFiles());
    // --no-suggest-shell-commands: the prompt asked for none; any the model wrote anyway are not offered.
    const shell = this.options.suggestShellCommands ? parsed.parsed.shell : [];
    const first = await stageEdits(
      {
        format: this.format,
        reply,
        fence,
        chatFiles: this.chat.editable,
        readOnlyFiles: this.chat.readOnly,
        resolvePath: (r) => r,
        files: this.services.files,
        ...(shown ? { shown } : {}),
        gate: this.services.gate,
        diff: (path, before, after) => app.kit.diff.unified(path, before, after),
        hooks: app.registry.hooks,
        guardUncommitted: (paths) => guardUncommitted({ matcher: app.kit.matcher, git: this.services.git, files: this.services.files, ...(shown ? { shown } : {}) }, paths),
        ...(this.amendReply ? { amend: this.amendReply } : {}),
        ...(out.staged ? { preview: (changes) => out.staged?.(changes) } : {}),
      },
      edits,
    );
    // Syntax check, lint and tests run while the weak model writes the commit message; not
    // when an edit failed (its report goes back first).
    if (this.options.autoLint && first.changes.size) warmSyntaxCheck([...first.changes.keys()]);
    const checks = async (paths: readonly string[], staged: AppliedReply) => {
      if (staged.outcomes.some((o) => o.status === "failed")) return null;
      const edited = this.services.lastReply?.files.filter((f) => paths.includes(f.path)) ?? [];
      return lintAndTest(this.services.runShown, this.services.out, this.options, edited, signal);
    };
    const author = { services: this.services, model: this.model, weakModel: this.weakModel(), request: this.turnRequest, askModel: !this.noModel };
    const { written, staged, commitError, checked } = await writeAndCommit(author, first, signal, checks);
    const { outcomes } = staged;
    for (const path of [...staged.joined, ...staged.failedOutside]) this.chat.add(path);
    answerToolCalls(this.history.cur, reply.toolCalls, outcomes, null);

    // A suggested command that failed may come back as a fix request, through the same reflection.
    const fixes: string[] = [];
    for (const s of shell) {
      const fix = await runShellSuggestion(this.services, this.history, s.command);
      if (fix) fixes.push(fix);
    }
    const withFixes = (text: string) => [text, ...fixes].join("\n\n");

    // Declined edits (status "skipped") are the user's decision, not a failure to repair.
    const failed = outcomes.filter((o) => o.status === "failed");
    if (failed.length) {
      let report = this.failureReport(outcomes, fence);
      if (staged.failedOutside.length) {
        report += `\n\nI added ${staged.failedOutside.join(", ")} to the chat, so you can see ${staged.failedOutside.length === 1 ? "its" : "their"} actual content above; base your edits on it.`;
      }
      return { reflection: withFixes(report), failing: true };
    }
    // The files are written but git refused the commit (a hook, a lock): the user's to fix, said as an error.
    if (commitError) return { reflection: fixes.length ? fixes.join("\n\n") : null, failing: true };
    if (written.length && checked) return { reflection: withFixes(checked), failing: true };
    return this.offerMentionedFiles(reply.text, edits.flatMap(editTargets), fixes.length ? fixes.join("\n\n") : null);
  }

  /**
   * `--apply FILE`: a reply saved in a file, applied in the current format with no model (the
   * commit message is git's summary); true when every edit applied and the checks passed.
   */
  async applySavedReply(text: string, file: string): Promise<boolean> {
    if ((this.format.item.mode ?? "edit") !== "edit") throw new UsageError(`--apply needs an edit format that edits files, not ${this.format.item.name}`);
    this.turnRequest = `apply the edits saved in ${file}`;
    this.noModel = true;
    const controller = new AbortController();
    this.controller = controller;
    try {
      const texts = [...this.chat.editable, ...this.chat.readOnly].map((p) => this.services.files.read(p) ?? "");
      const result = await this.handleReply({ text, toolCalls: [], finishReason: "stop" }, chooseFence(texts), controller.signal);
      if (result.reflection) this.services.out.warn(result.reflection);
      return !result.failing;
    } finally {
      this.controller = null;
      this.noModel = false;
    }
  }

  /** Mentioned files are offered in the main chat only: an editor coder just carries out its plan. */
  private async offerMentionedFiles(text: string, targets: readonly string[], pending: string | null): Promise<SendResult> {
    if (this.setup.editor) return { reflection: pending, failing: pending !== null };
    return offerMentions(this.services, this.chat, () => this.repoFiles(), text, targets, pending);
  }

  /** A `files` format's reply (e.g. `context`): the repository files it names join the chat, no question asked. */
  private async addNamedFiles(text: string): Promise<SendResult> {
    const chat = this.chat;
    const candidates = (await this.repoFiles()).filter((f) => !chat.editable.includes(f));
    const named = fileMentions(withoutNegatedClauses(text), candidates, chat.editable, chat.readOnly);
    const added = named.filter((path) => this.services.files.check(path) === null && chat.add(path));
    this.services.out.print(added.length ? `Added to the chat: ${added.join(", ")}` : "The reply named no repository file that is not in the chat already.");
    return { reflection: null, failing: false };
  }

  private failureReport(outcomes: EditOutcome[], fence: Fence): string {
    const appliedCount = outcomes.filter((o) => o.status === "applied").length;
    try {
      return guard(this.format, "report", () => this.format.item.report(outcomes, { fence, appliedCount }));
    } catch (error) {
      this.services.out.warn(messageOf(error));
      return this.services.app.kit.reports.failedEdits(outcomes, { fence, appliedCount });
    }
  }

  /** `/diff`: what the last reply changed (core/chat/reply/commit.ts). */
  lastDiff(): Promise<string> {
    return lastReplyDiff(this.services);
  }

  weakModel(): string {
    return this.options.weakModel ?? this.modelInfo.weakModel ?? this.model;
  }

  // ─── Architect ────────────────────────────────────────────────────────────

  /** The plan becomes the request of an editor coder: editor model and format, no repo map, fresh history, own budget. */
  private async handOff(plan: string): Promise<SendResult> {
    if (!plan.trim()) return { reflection: null, failing: false };
    // Aider's question: the plan may need a word from the user first (--auto-accept-architect skips it).
    if (!this.options.autoAcceptArchitect && !(await this.services.gate.confirm("Edit the files?"))) {
      this.services.out.print("The plan was not handed to the editor: /ok (or /code with changes to the plan) goes ahead.");
      return { reflection: null, failing: false };
    }
    const { model, editFormat } = chooseEditor(this.options, this.model, this.modelInfo, this.format.item.name, this.services.app.registry);
    const editor = new Coder(this.services, { model, editFormat, editor: true, maxReflections: this.setup.maxReflections, chat: this.chat });
    editor.turnRequest = this.turnRequest;
    editor.openSession = this.openSession;
    return runEditor(editor, plan, this.controller);
  }

  // ─── After the turn ───────────────────────────────────────────────────────

  /** Summarise the history in the background when it outgrows its budget; keep the cache warm. */
  private afterTurn(): void {
    // One-shot runs end now; an editor coder's history is thrown away after its turn.
    if (!(this.services.app.interactive || this.services.app.persistent) || this.setup.editor) return;
    this.history.maybeSummarise(historyBudget(this.modelInfo.contextWindow), this.countMessages, (ms) => this.summarise(ms), this.summaryFailed);
    this.schedulePings();
  }

  /** After an edit-format switch: the history becomes a summary, in the background. */
  summariseForFormatSwitch(): void {
    this.history.summariseAll((ms) => this.summarise(ms), this.summaryFailed);
  }

  /** Summarise now (before the first request of a restored history). */
  async summariseNow(): Promise<boolean> {
    const budget = historyBudget(this.modelInfo.contextWindow);
    if (this.countMessages(this.history.done) <= budget) return false;
    this.history.done = await summariseHistory(this.history.done, budget, this.countMessages, (ms) => this.summarise(ms));
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
