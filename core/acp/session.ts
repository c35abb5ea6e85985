// One ACP session: one engine session (core/cli/chat-modes.ts createCoder) on the client's
// folder, with its own chat files, history, model and edit format. A prompt turn runs
// a request exactly as the CLI does (or a slash command); the gate asks through the
// client, and files are read and written through the client's fs methods when offered.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import type { App } from "../kernel.ts";
import { createCoder, localRunner } from "../chat/create.ts";
import type { CommandRunner } from "../chat/types.ts";
import { Interrupted, exitCodeFor } from "../errors.ts";
import { type EditorFiles, WriteDeclined } from "../edit/files.ts";
import { mediaTypeOfFile, sniffMedia } from "../chat/parts.ts";
import { writeState } from "../edit/state.ts";
import { messageOf } from "../plugins/registry.ts";
import { CoderSession } from "../chat/session.ts";
import type { Totals } from "../chat/events.ts";
import type { Coder } from "../chat/coder.ts";
import { trace } from "../trace.ts";
import { AcpOutput } from "./output.ts";
import { AcpPrompter } from "./prompter.ts";
import { clientReason, terminalRunner } from "./terminal.ts";
import { type ReplayCard, type SessionRecord, saveRecord } from "./records.ts";

/** The "code" mode picks only a format that edits files itself (its `mode` says so), never one that answers, plans or picks files. */
const editsItself = (format: { mode?: string } | undefined): boolean => format !== undefined && (format.mode === undefined || format.mode === "edit");
/** The most finished cards a session's record keeps for `session/load`. */
const MAX_KEPT_CARDS = 200;

const IMAGE_EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

/** The mode that edits: whichever format of the session edits files itself. */
const CODE_MODE: acp.SessionMode = { id: "code", name: "Code", description: "Requests are answered with edits to the files" };

/**
 * The session's modes, from the formats' own `mode`: each format that only answers (`none`),
 * then Code, then each that plans for an editor (`editor`); a format that picks files is no mode.
 */
export function sessionModes(formats: Iterable<{ name: string; summary: string; mode?: string }>): acp.SessionMode[] {
  const list = [...formats].filter((f) => f.name !== CODE_MODE.id);
  const mode = (f: { name: string; summary: string }): acp.SessionMode => ({ id: f.name, name: f.name.charAt(0).toUpperCase() + f.name.slice(1), description: f.summary.charAt(0).toUpperCase() + f.summary.slice(1) });
  return [...list.filter((f) => f.mode === "none").map(mode), CODE_MODE, ...list.filter((f) => f.mode === "editor").map(mode)];
}

export interface SessionSetup {
  id: string;
  cwd: string;
  /** The kernel for this session's folder (its own copy of the settings). */
  app: App;
  client: acp.AgentContext;
  /** What the client offers of `fs`. */
  fs: { read: boolean; write: boolean };
  /** The client offers terminals (`terminal/create` ...): shown commands run there. */
  terminal: boolean;
  /** The client offers form elicitation (`elicitation/create`). */
  forms?: boolean;
  log: (level: "info" | "warn" | "error", text: string) => void;
  /** A saved session to restore (`session/load`). */
  record?: SessionRecord;
}

/** The client's buffers: read before each turn, written through when the client can. */
class EditorBuffers implements EditorFiles {
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly root: string,
    private readonly setup: SessionSetup,
  ) {}

  text(rel: string): string | undefined {
    return this.texts.get(rel);
  }

  /** Paths whose text came with the prompt (embedded resources): not read again this turn. */
  private readonly held = new Set<string>();

  /** A new turn: what the editor holds is read again. */
  forget(): void {
    this.texts.clear();
    this.held.clear();
  }

  /** An embedded resource: the text the client sent is what the editor holds. */
  hold(rel: string, text: string): void {
    this.texts.set(rel, text);
    this.held.add(rel);
  }

  async write(rel: string, text: string): Promise<boolean> {
    this.texts.delete(rel);
    if (!this.setup.fs.write) return false;
    const path = join(this.root, rel);
    try {
      await this.setup.client.request(acp.methods.client.fs.writeTextFile, { sessionId: this.setup.id, path, content: text });
    } catch (error) {
      // The editor said no (or could not): its reason goes on the edit's card, and the model is not asked to "fix" it.
      throw new WriteDeclined(`the editor refused to write ${rel}: ${clientReason(error)}`);
    }
    this.texts.set(rel, text);
    // git commits what is on disk: an editor that only changed its buffer leaves the disk to the store.
    try {
      return readFileSync(path, "utf8").replace(/\r\n/g, "\n") === text.replace(/\r\n/g, "\n");
    } catch {
      return false;
    }
  }

  removed(rel: string): void {
    this.texts.delete(rel);
  }

  /** Read the chat files through the client, so unsaved changes are what the model sees. */
  async refresh(paths: readonly string[]): Promise<void> {
    if (!this.setup.fs.read) return;
    await Promise.all(
      paths.filter((rel) => !this.held.has(rel)).map(async (rel) => {
        try {
          const { content } = await this.setup.client.request(acp.methods.client.fs.readTextFile, { sessionId: this.setup.id, path: join(this.root, rel) });
          this.texts.set(rel, content);
        } catch {
          // Not open and not readable by the client (a new file, say): the disk decides.
        }
      }),
    );
  }
}

export class AcpSession {
  readonly output: AcpOutput;
  private readonly prompter: AcpPrompter;
  private readonly buffers: EditorBuffers;
  private readonly totals: Totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
  private coder!: Coder;
  private commands!: CoderSession;
  /** The edit format the "code" mode means. */
  private codeFormat = "";
  private running = false;
  private cancelled = false;
  /** Stops the shown command under way (lint, tests, a shell command) when the turn is cancelled. */
  private stopRuns = new AbortController();
  /** The prompt turn under way, if any (settles when it has finished writing and committing). */
  private turn: Promise<acp.StopReason> | null = null;
  /** A prompt has come: warming up is no longer worth it. */
  private prompted = false;
  /** The session's finished cards, for its record (the newest MAX_KEPT_CARDS). */
  private cards: ReplayCard[] = [];
  /** Every model configured or used in this session: the model list keeps them, table or not. */
  private readonly usedModels = new Set<string>();

  private constructor(private readonly setup: SessionSetup) {
    const { client, id, log } = setup;
    this.output = new AcpOutput((update) => client.notify(acp.methods.client.session.update, { sessionId: id, update }), {
      root: setup.app.root,
      written: (path) => this.written(path),
      canonical: (path) => this.coder.services.files.canonical(path),
      planning: () => this.coder.format.item.mode === "editor",
      usage: () => ({ size: this.coder.modelInfo.contextWindow, cost: this.totals.costUnknown ? null : this.totals.cost }),
      log: (level, text) => (level !== "info" || setup.app.settings.options.verbose) && log(level, text),
    });
    this.prompter = new AcpPrompter(
      (request) => client.request(acp.methods.client.session.requestPermission, { sessionId: id, ...request }),
      (text) => log("info", text),
      () => this.output.drained(),
      (key) => this.output.cardFor(key),
      (key) => this.output.declined(key),
      setup.forms ? (request) => client.request(acp.methods.client.elicitation.create, { sessionId: id, mode: "form", ...request }) : null,
    );
    this.buffers = new EditorBuffers(setup.app.root, setup);
  }

  static async create(setup: SessionSetup): Promise<AcpSession> {
    const session = new AcpSession(setup);
    await session.start();
    return session;
  }

  get id(): string {
    return this.setup.id;
  }

  get root(): string {
    return this.setup.app.root;
  }

  get cwd(): string {
    return this.setup.cwd;
  }

  /** Warnings of the folder's plugins said while this session prompts (each once per session). */
  private readonly noticed = new Set<string>();

  /** A warning from the folder's log (an MCP server that failed to start): said in the thread during a turn, once. */
  notice(text: string): void {
    if (!this.running || this.noticed.has(text)) return;
    this.noticed.add(text);
    this.output.warn(text, true);
  }

  private async start(): Promise<void> {
    const { app, record } = this.setup;
    this.coder = await createCoder(app, { out: this.output, totals: this.totals, prompter: () => this.prompter, editor: this.buffers, runner: this.runner() });
    this.commands = new CoderSession(this.coder);
    for (const name of [app.settings.options.model, app.settings.options.weakModel, app.settings.options.editorModel, this.coder.model]) if (typeof name === "string" && name) this.usedModels.add(name);
    if (record) this.restore(record);
    this.usedModels.add(this.coder.model);
    const start = this.coder.format.item.name;
    this.codeFormat = [record?.editFormat ?? "", start, this.coder.modelInfo.editFormat].find((f) => f && editsItself(app.registry.formats.get(f)?.item)) ?? app.registry.fallbackFormat();
  }

  /**
   * Where shown commands run: the client's terminals when it offers them, else coder's own
   * process group (with their output on the card). A cancel of the turn stops either.
   */
  private runner(): CommandRunner {
    const { client, id, app, log } = this.setup;
    const run = this.setup.terminal ? terminalRunner({ client, sessionId: id, root: app.root, sent: () => this.output.drained(), show: (terminalId) => this.output.showTerminal(terminalId), log }) : localRunner(app);
    return (shown) => run({ ...shown, signal: shown.signal ? AbortSignal.any([shown.signal, this.stopRuns.signal]) : this.stopRuns.signal });
  }

  private restore(record: SessionRecord): void {
    const { registry } = this.setup.app;
    if (record.model && record.model !== this.coder.model) {
      try {
        registry.adapterFor(record.model);
        this.coder.setModel(record.model);
      } catch (error) {
        this.output.warn(`The saved model ${record.model} is not available (${messageOf(error)}); using ${this.coder.model}.`);
      }
    }
    if (record.editFormat && registry.formats.has(record.editFormat)) this.coder.setEditFormat(record.editFormat);
    const { files } = this.coder.services;
    for (const rel of record.editable) if (files.check(rel) === null) this.coder.chat.add(rel);
    // A record is not trusted with files outside the repository: those are named, not read.
    const outside: string[] = [];
    for (const path of record.readOnly) {
      const rel = this.inside(isAbsolute(path) ? path : join(this.root, path));
      if (rel !== null && files.read(rel) !== null) this.coder.chat.addReadOnly(rel);
      else if (rel === null) outside.push(path);
    }
    if (outside.length) this.output.warn(`Read-only files outside the repository are not reopened with a saved session; add them again to use them: ${outside.join(", ")}`);
    this.coder.history.done = [...record.messages];
    for (const key of record.allowed) this.prompter.allowed.add(key);
    this.cards = [...(record.cards ?? [])];
  }

  /**
   * While the user types the first prompt: assemble a request once (repo map, file list,
   * token counts), so the first request of the session goes out as fast as later ones.
   */
  warm(): void {
    // A client that prompts at once (a script) gets its request assembled only once.
    if (this.running || this.prompted) return;
    const started = performance.now();
    this.coder.promptChunks().then(
      () => trace(`acp: session ${this.id} warm in ${(performance.now() - started).toFixed(1)} ms`),
      (error: unknown) => this.setup.log("info", `warming session ${this.id} failed: ${messageOf(error)}`),
    );
  }

  /** The saved conversation, sent back as `session/update`s (`session/load`): its messages, and its tool calls as finished cards. */
  replay(): void {
    const messages = this.coder.history.done.filter((m) => m.role === "user" || m.role === "assistant");
    let next = 1;
    const cardsWhere = (placed: (after: number) => boolean) => {
      for (const card of this.cards) {
        if (!placed(card.after)) continue;
        this.output.update({
          sessionUpdate: "tool_call",
          toolCallId: `coder-replay-${next++}`,
          title: card.title,
          kind: card.kind as acp.ToolKind,
          status: card.status,
          content: card.content as acp.ToolCallContent[],
          ...(card.locations ? { locations: card.locations as acp.ToolCallLocation[] } : {}),
        });
      }
    };
    cardsWhere((after) => after <= 0 && messages.length > 0);
    messages.forEach((m, i) => {
      const sessionUpdate = m.role === "user" ? "user_message_chunk" : "agent_message_chunk";
      this.output.update({ sessionUpdate, content: { type: "text", text: m.content } });
      // A card follows the turn it came from; one whose turn a history summary folded away comes last.
      const shown = i + 1;
      cardsWhere((after) => (shown < messages.length ? after === shown : after >= shown));
    });
    if (!messages.length) cardsWhere(() => true);
    for (const card of this.cards) if (card.after > messages.length) card.after = messages.length;
  }

  modes(): acp.SessionModeState {
    return { currentModeId: this.modeId(), availableModes: this.availableModes() };
  }

  private availableModes(): acp.SessionMode[] {
    return sessionModes([...this.setup.app.registry.formats.values()].map((e) => e.item));
  }

  private modeId(): string {
    const name = this.coder.format.item.name;
    return name !== CODE_MODE.id && this.availableModes().some((m) => m.id === name) ? name : CODE_MODE.id;
  }

  setMode(modeId: string): void {
    const modes = this.availableModes();
    const format = modeId === CODE_MODE.id ? this.codeFormat : modes.some((m) => m.id === modeId) ? modeId : null;
    if (format === null) throw new acp.RequestError(-32602, `unknown mode "${modeId}"; the modes are ${modes.map((m) => m.id).join(", ")}`);
    this.commands.setEditFormat(format);
    this.save();
  }

  /** The model, as a session config option (where the protocol lets a client choose it). */
  configOptions(): acp.SessionConfigOption[] {
    const names = new Set([this.coder.model, ...this.usedModels, ...this.setup.app.registry.listModels().map((m) => m.name)]);
    return [{ id: "model", name: "Model", category: "model", type: "select", currentValue: this.coder.model, options: [...names].map((value) => ({ value, name: value })) }];
  }

  setConfigOption(configId: string, value: string): void {
    if (configId !== "model") throw new acp.RequestError(-32602, `unknown config option "${configId}"; coder has "model"`);
    try {
      this.commands.setModel(value);
    } catch (error) {
      throw new acp.RequestError(-32602, messageOf(error));
    }
    this.usedModels.add(this.coder.model);
    this.save();
  }

  /** The slash commands, for `available_commands_update`. */
  availableCommands(): acp.AvailableCommand[] {
    return this.commands.commands().map((c) => ({ name: c.name, description: c.summary, ...(c.usage ? { input: { hint: c.usage.replace(/^\/\S+\s*/, "") || c.usage } } : {}) }));
  }

  /** One prompt turn: a request with its reflections, or a slash command. */
  prompt(blocks: readonly acp.ContentBlock[]): Promise<acp.StopReason> {
    if (this.turn) throw new acp.RequestError(-32600, `session ${this.id} is already answering a prompt; cancel it first (session/cancel)`);
    const turn = this.runTurn(blocks).finally(() => {
      if (this.turn === turn) this.turn = null;
    });
    this.turn = turn;
    return turn;
  }

  private async runTurn(blocks: readonly acp.ContentBlock[]): Promise<acp.StopReason> {
    this.prompted = true;
    trace("acp: prompt");
    this.running = true;
    this.cancelled = false;
    this.stopRuns = new AbortController();
    const modeBefore = this.modeId();
    this.output.beginTurn();
    this.prompter.begin();
    let stop: acp.StopReason = "end_turn";
    let failure: unknown = null;
    try {
      this.buffers.forget();
      const { text, command } = this.takeContent(blocks);
      trace("acp: prompt content taken");
      const { chat } = this.coder;
      await this.buffers.refresh([...chat.editable, ...chat.readOnly.filter((p) => !isAbsolute(p))]);
      trace("acp: buffers read");
      if (this.cancelled) stop = "cancelled";
      else if (!text.trim()) this.output.print("The prompt had no request: the files it named are in the chat now.");
      else if (command !== null) await this.commands.runCommand(command);
      else await this.coder.runOne(text);
      if (stop !== "cancelled") stop = this.cancelled ? "cancelled" : stopReasonOf(this.output.lastFinish);
    } catch (error) {
      if (error instanceof Interrupted || this.cancelled) stop = "cancelled";
      else failure = error;
    } finally {
      this.prompter.end();
      this.running = false;
    }
    this.usedModels.add(this.coder.model); // a /model command may have switched
    await this.output.endTurn(stop === "end_turn");
    if (this.modeId() !== modeBefore) this.output.update({ sessionUpdate: "current_mode_update", currentModeId: this.modeId() });
    this.save();
    await this.output.drained();
    // A failed turn (the model unreachable, refused, no key) is an error answer, not a finished turn.
    if (failure !== null) throw turnError(failure);
    return stop;
  }

  /** `session/cancel`: stop the request like Ctrl-C; a question asked now answers No. */
  cancel(): void {
    if (!this.running) return;
    this.cancelled = true;
    this.stopRuns.abort();
    this.prompter.cancel();
    this.coder.interrupt();
  }

  /**
   * The prompt's text; its resource links and embedded resources join the chat (editable
   * inside the repository, read-only outside). Other resources are quoted in the text.
   */
  private takeContent(blocks: readonly acp.ContentBlock[]): { text: string; command: string | null } {
    const parts: string[] = [];
    const typed: string[] = [];
    const added: string[] = [];
    for (const block of blocks) {
      if (block.type === "text") {
        parts.push(block.text);
        typed.push(block.text);
      }
      else if (block.type === "resource_link") {
        const path = filePath(block.uri);
        if (path) added.push(...this.addPath(path));
        else parts.push(`[${block.title ?? block.name}](${block.uri})`);
      } else if (block.type === "resource") {
        const res = block.resource;
        const path = filePath(res.uri);
        const text = "text" in res ? res.text : null;
        if (path && text !== null) {
          const rel = this.inside(path);
          if (rel !== null) this.buffers.hold(rel, text);
          added.push(...this.addPath(path));
        } else if (text !== null) parts.push(`${res.uri}:\n\`\`\`\n${text}\n\`\`\``);
        else this.output.warn(`The prompt's resource ${res.uri} is binary; coder takes text resources only.`);
      } else if (block.type === "image") {
        const path = this.saveImage(block.data, block.mimeType);
        if (path) added.push(...this.addPath(path));
      } else this.output.warn(`coder does not take ${block.type} content in a prompt; it was left out.`);
    }
    if (added.length) this.output.print(`Added to the chat: ${added.join(", ")}`);
    // A slash command is what the user typed, never what a resource or a file's text says.
    const own = typed.join("").trim();
    const command = own.startsWith("/") ? own : null;
    return { text: parts.join(""), command };
  }

  /**
   * An image in the prompt is kept as /paste keeps the clipboard's (under .coder/pastes/, named
   * by its content) and joins the chat read-only; the request carries it as an image part.
   */
  private saveImage(data: string, mimeType: string): string | null {
    const ext = IMAGE_EXTENSIONS[mimeType];
    if (!ext) {
      this.output.warn(`coder takes PNG, JPEG, GIF and WebP images; the prompt's ${mimeType} image was left out.`);
      return null;
    }
    const bytes = Buffer.from(data, "base64");
    // The bytes decide, not the label: anything else saved as .png would join the chat as an editable text file.
    const actual = sniffMedia(bytes.subarray(0, 16));
    if (actual !== mimeType) {
      this.output.warn(`The prompt's image, labelled ${mimeType}, ${actual ? `is ${actual}` : "is not an image"}; it was left out.`);
      return null;
    }
    const name = `acp-${createHash("sha256").update(bytes).digest("hex").slice(0, 12)}.${ext}`;
    // Like every file under .coder/: never written through a link a cloned repository planted.
    return writeState(this.root, `pastes/${name}`, bytes);
  }

  /** The repository path of an absolute path inside the repository, or null. */
  private inside(path: string): string | null {
    const rel = relative(this.root, path);
    return rel && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel) ? rel.split(sep).join("/") : null;
  }

  /**
   * A file the prompt names joins the chat as a file typed on the command line would
   * (no repository listing: the client gave its exact path). Returns the path added, if any.
   */
  private addPath(path: string): string[] {
    const { chat, services } = this.coder;
    const rel = this.inside(path);
    if (rel !== null && (chat.editable.includes(rel) || chat.readOnly.includes(rel))) return [];
    // coder's own state folder is never edited through the chat.
    if (rel !== null && !mediaTypeOfFile(path) && !rel.startsWith(".coder/")) {
      const problem = services.files.check(rel);
      if (problem === null) return chat.add(rel) ? [rel] : [];
      this.output.warn(`${rel} joins the chat read-only: ${problem}`);
    }
    const readable = mediaTypeOfFile(path) !== null || (rel !== null ? services.files.read(rel) : services.files.readOutside(path)) !== null;
    if (!readable) {
      this.output.warn(`Cannot add ${path} to the chat: not found, not a text file, or over the --max-file-size limit`);
      return [];
    }
    return chat.addReadOnly(rel ?? path) ? [`${rel ?? path} (read-only)`] : [];
  }

  /** A file the last reply wrote: its text before and after. */
  private written(path: string): { before: string | null; after: string | null } | undefined {
    const files = this.coder.services.lastReply?.files ?? [];
    let canonical = path;
    try {
      canonical = this.coder.services.files.canonical(path);
    } catch {
      // the path as the model wrote it
    }
    return files.find((f) => f.path === canonical || f.path === path);
  }

  /** The session's finished cards, with those of the last turn placed after its messages. */
  private keptCards(): ReplayCard[] {
    const after = this.coder.history.done.filter((m) => m.role === "user" || m.role === "assistant").length;
    for (const card of this.output.takeFinished()) this.cards.push({ after, ...card });
    this.cards = this.cards.slice(-MAX_KEPT_CARDS);
    return this.cards;
  }

  save(): void {
    const { chat, history } = this.coder;
    try {
      saveRecord(this.root, {
        version: 1,
        id: this.id,
        cwd: this.setup.cwd,
        model: this.coder.model,
        editFormat: this.coder.format.item.name,
        editable: [...chat.editable],
        readOnly: [...chat.readOnly],
        messages: history.done.filter((m) => m.role === "user" || m.role === "assistant").map((m) => ({ role: m.role, content: m.content })),
        allowed: [...this.prompter.allowed],
        updatedAt: new Date().toISOString(),
        cards: this.keptCards(),
      });
    } catch (error) {
      this.setup.log("warn", `could not save session ${this.id}: ${messageOf(error)}`);
    }
  }

  /** Stop the turn under way like Ctrl-C; resolves once it has settled (its write batch finished and committed). */
  async close(): Promise<void> {
    this.cancel();
    this.coder.cancelPings();
    await this.turn?.catch(() => undefined);
  }
}

/**
 * The JSON-RPC error a failed turn answers with: `auth_required` when the key is missing or
 * refused (the editor can offer its sign-in), else the failure's own one-line message.
 */
export function turnError(error: unknown): acp.RequestError {
  const message = messageOf(error);
  if (/\bno API key\b|: 40[13] (unauthorized|forbidden)\b/i.test(message)) return acp.RequestError.authRequired({ exitCode: exitCodeFor(error) }, message);
  return new acp.RequestError(-32603, message, { exitCode: exitCodeFor(error) });
}

function filePath(uri: string): string | null {
  if (!uri.startsWith("file:")) return null;
  try {
    return fileURLToPath(uri);
  } catch {
    return null;
  }
}

function stopReasonOf(finish: string): acp.StopReason {
  if (finish === "length") return "max_tokens";
  if (finish === "content_filter") return "refusal";
  if (finish === "interrupted") return "cancelled";
  return "end_turn";
}
