// The ACP agent behind `coder acp` (index.ts starts it): the official SDK (`agent()` over
// `ndJsonStream`) serving sessions, each one engine session on the folder the client names.
// When index.ts answered `initialize` before the SDK loaded, the SDK is handed the stream from
// that same first line, and its own answer to it is dropped: the client hears one answer, and
// the SDK knows the connection initialized.
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { App, Loaded } from "../kernel.ts";
import type { Logger } from "../plugin.ts";
import { missingApiKey } from "../chat/model-choice.ts";
import { messageOf } from "../plugins/registry.ts";
import { type RunInput, loadSettings } from "../cli/settings.ts";
import { assembleApp } from "../boot/assemble.ts";
import { trace } from "../trace.ts";
import { type Log, type Opening, SIGNAL_EXIT_CODES, onEarlySignal } from "./index.ts";
import { API_KEY_METHOD, initializeResult } from "./initialize.ts";
import { MAX_MESSAGE_BYTES } from "./limit.ts";
import { type SessionRecord, loadRecord } from "./records.ts";
import { deleteSession, listSessions } from "./saved.ts";
import { AcpSession } from "./session.ts";

/** A new session is warmed (a request assembled in the background) this long after it opens, unless a prompt came first. */
const WARM_DELAY_MS = 150;

/** How long coder waits, when the client goes away, for turns to finish their writes and commits. */
const CLOSE_WAIT_MS = 30_000;

export interface Start {
  input: RunInput;
  log: Log;
  /** stdout, the protocol's alone. */
  protocol: WritableStream<Uint8Array>;
  /** The settings of the folder coder was started in, read while the first message arrived. */
  loaded: Promise<Loaded>;
  /** What the client sent so far, and the rest of its input. */
  opening: Opening;
  /** The `initialize` index.ts answered (its id and result), if it did. */
  answered?: { id: number | string; result: acp.InitializeResponse };
}

/** Serve ACP until the client closes stdin; the exit code. */
export async function serve(start: Start): Promise<number> {
  const { input, log } = start;
  const agent = new CoderAgent(input, log, start.loaded, start.answered?.result);
  const { messages, replies } = handOver(start);
  const connection = acp.agent({ name: "coder" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => agent.initialize(params))
    .onRequest(acp.methods.agent.authenticate, ({ params }) => agent.authenticate(params))
    .onRequest(acp.methods.agent.session.new, ({ params, client }) => agent.newSession(params, client))
    .onRequest(acp.methods.agent.session.load, ({ params, client }) => agent.loadSession(params, client))
    .onRequest(acp.methods.agent.session.list, ({ params }) => agent.listSessions(params))
    .onRequest(acp.methods.agent.session.close, ({ params }) => agent.closeSession(params))
    .onRequest(acp.methods.agent.session.delete, ({ params }) => agent.deleteSession(params))
    .onRequest(acp.methods.agent.session.prompt, ({ params }) => agent.prompt(params))
    .onRequest(acp.methods.agent.session.setMode, ({ params }) => agent.setMode(params))
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => agent.setConfigOption(params))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => agent.cancel(params))
    .connect(acp.ndJsonStream(replies, messages, { maxMessageBytes: MAX_MESSAGE_BYTES }));
  // The binary starts with a raised JIT policy for short runs (scripts/build.ts JIT_POLICY); an
  // editor's agent serves for the whole editing session, so it gets the normal one back.
  Bun.unsafe.setJITPolicy(1);
  // The warm-up: the kernel for the folder coder was started in loads while the client reads the answer.
  agent.warm();
  trace("acp: serving");
  // The editor stops its agent with a signal: a turn under way is stopped like Ctrl-C, and
  // its write batch finished and committed, before coder exits.
  let signalled: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled !== null) return;
    signalled = SIGNAL_EXIT_CODES[signal] ?? 143;
    log("info", `${signal}: stopping`);
    connection.close();
  };
  for (const signal of Object.keys(SIGNAL_EXIT_CODES) as NodeJS.Signals[]) {
    process.off(signal, onEarlySignal);
    process.on(signal, onSignal);
  }
  await connection.closed;
  await agent.close();
  return signalled ?? 0;
}

/**
 * The SDK's input and output. Its input is the client's, from the first line on; when that line
 * was answered already, the rest waits until the SDK's own answer to it (the first thing it
 * writes, as nothing else was read) has been dropped, so it sees every request after it.
 */
function handOver(start: Start): { messages: ReadableStream<Uint8Array>; replies: WritableStream<Uint8Array> } {
  const { opening, answered, log } = start;
  let release: () => void = () => {};
  const held = answered ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const sink = start.protocol.getWriter();
  let dropping = answered !== undefined;
  const replies = new WritableStream<Uint8Array>({
    write: async (chunk) => {
      if (!dropping) return sink.write(chunk);
      dropping = false;
      // One message per write (ndJsonStream): the answer to the initialize the client has already had.
      const text = new TextDecoder().decode(chunk);
      let reply: { id?: unknown; result?: unknown } = {};
      try {
        reply = JSON.parse(text) as typeof reply;
      } catch {
        // said below
      }
      if (reply.id !== answered?.id || reply.result === undefined) log("warn", `the SDK's answer to the initialize coder answered first differs: ${text.slice(0, 300)}`);
      release();
    },
  });
  let after: Uint8Array | null = opening.after.length ? opening.after : null;
  const messages = new ReadableStream<Uint8Array>({
    start(controller) {
      if (opening.line) controller.enqueue(opening.line);
    },
    async pull(controller) {
      await held;
      if (after) {
        controller.enqueue(after);
        after = null;
        return;
      }
      const { value, done } = await opening.reader.read();
      if (done) controller.close();
      else if (value) controller.enqueue(value);
    },
    cancel: (reason) => opening.reader.cancel(reason),
  });
  return { messages, replies };
}

/**
 * The editor's MCP servers as entries of the shape other tools' `mcpServers` hold: stdio servers
 * with their environment, http and sse ones with their headers. A name is made a valid server
 * name (letters, digits, _ and -), as it prefixes the server's tools.
 */
export function clientServers(servers: readonly acp.McpServer[]): Record<string, unknown> {
  const pairs = (list: readonly { name: string; value: string }[] | undefined) => Object.fromEntries((list ?? []).map((p) => [p.name, p.value]));
  const entries: Record<string, unknown> = {};
  for (const server of servers) {
    const name = server.name.replace(/[^A-Za-z0-9_-]/g, "_") || "editor";
    if ("command" in server) entries[name] = { command: server.command, args: server.args, env: pairs(server.env) };
    else entries[name] = { url: server.url, type: server.type, headers: pairs(server.headers) };
  }
  return entries;
}


class CoderAgent {
  private readonly sessions = new Map<string, AcpSession>();
  /** The kernel of each folder sessions were opened in (settings are copied per session). */
  private readonly apps = new Map<string, Promise<App>>();
  private clientFs = { read: false, write: false };
  /** The client offers `elicitation/create` forms (a plugin's kit.ui.input is asked through one). */
  private clientForms = false;
  private clientTerminal = false;

  private readonly startCwd: string;

  constructor(
    private readonly input: RunInput,
    private readonly log: Log,
    /** The start folder's settings, read once for its first kernel (after `authenticate` they are read again). */
    private startLoaded: Promise<Loaded> | undefined,
    /** The answer index.ts gave to `initialize` before the SDK loaded: the SDK's replay of that request gets it. */
    private answered: acp.InitializeResponse | undefined,
  ) {
    this.startCwd = input.cwd ?? process.cwd();
  }

  warm(): void {
    this.appFor(this.startCwd).catch(() => {});
  }

  private appFor(cwd: string): Promise<App> {
    let app = this.apps.get(cwd);
    if (!app) {
      const read = cwd === this.startCwd && this.startLoaded ? this.startLoaded : loadSettings({ ...this.input, cwd, rest: [] });
      if (cwd === this.startCwd) this.startLoaded = undefined;
      app = read.then((loaded) => assembleApp({ ...loaded, log: this.toSessions(loaded.log, cwd) }, this.input.builtins));
      app.then(() => trace(`acp: kernel ready for ${cwd}`), () => {});
      this.apps.set(cwd, app);
      app.catch(() => this.apps.delete(cwd));
    }
    return app;
  }

  /**
   * The folder's log, whose warnings and errors (an MCP server that did not start, a plugin's
   * failure) also reach the thread of each session prompting there, once per session.
   */
  private toSessions(log: Logger, cwd: string): Logger {
    const tell = (text: string) => {
      for (const session of this.sessions.values()) if (session.cwd === cwd) session.notice(text);
    };
    return {
      debug: (text) => log.debug(text),
      info: (text) => log.info(text),
      warn: (text) => {
        log.warn(text);
        tell(text);
      },
      error: (text) => {
        log.error(text);
        tell(text);
      },
    };
  }

  /** A kernel for one session: the folder's registry and kit, its own copy of the settings. */
  private async sessionApp(cwd: string): Promise<App> {
    if (!isAbsolute(cwd) || !existsSync(cwd) || !statSync(cwd).isDirectory()) throw new acp.RequestError(-32602, `cwd ${JSON.stringify(cwd)} is not an absolute path to a folder`);
    let app: App;
    try {
      app = await this.appFor(cwd);
    } catch (error) {
      throw new acp.RequestError(-32603, `cannot start coder in ${cwd}: ${messageOf(error)}`);
    }
    const { settings } = app;
    return {
      ...app,
      interactive: false,
      persistent: true,
      settings: { ...settings, options: { ...settings.options }, provenance: { ...settings.provenance }, positionals: [] },
    };
  }

  /** The variables to set when no API key is found (the CLI's warning), or null when a model is usable. */
  private async missingKey(cwd: string): Promise<string | null> {
    return missingApiKey(await this.appFor(cwd));
  }

  async initialize(params: acp.InitializeRequest): Promise<acp.InitializeResponse> {
    const fs = params.clientCapabilities?.fs;
    this.clientFs = { read: fs?.readTextFile === true, write: fs?.writeTextFile === true };
    this.clientForms = params.clientCapabilities?.elicitation?.form != null;
    this.clientTerminal = params.clientCapabilities?.terminal === true;
    if (this.answered) {
      // The request index.ts answered, replayed to the SDK (which drops this answer).
      const answered = this.answered;
      this.answered = undefined;
      return answered;
    }
    let missing: string | null = null;
    try {
      missing = await this.missingKey(this.input.cwd ?? process.cwd());
    } catch (error) {
      this.log("warn", `could not read the settings of ${process.cwd()}: ${messageOf(error)}`);
    }
    trace("acp: initialize answered");
    return initializeResult(this.input.version, missing);
  }

  async authenticate(params: acp.AuthenticateRequest): Promise<acp.AuthenticateResponse> {
    if (params.methodId !== API_KEY_METHOD) throw new acp.RequestError(-32602, `unknown auth method "${params.methodId}"; coder has "${API_KEY_METHOD}"`);
    // Keys are read again: the user may have set one in .env or the config since.
    this.apps.clear();
    const missing = await this.missingKey(this.input.cwd ?? process.cwd());
    if (missing) throw acp.RequestError.authRequired(undefined, missing);
    return {};
  }

  async newSession(params: acp.NewSessionRequest, client: acp.AgentContext): Promise<acp.NewSessionResponse> {
    const session = await this.open(randomUUID(), params, client);
    // The client learns the session id from this answer: updates for it go out after the answer.
    setTimeout(() => {
      session.output.open();
      session.output.update({ sessionUpdate: "available_commands_update", availableCommands: session.availableCommands() });
      setTimeout(() => session.warm(), WARM_DELAY_MS);
    }, 0);
    return { sessionId: session.id, modes: session.modes(), configOptions: session.configOptions() };
  }

  async loadSession(params: acp.LoadSessionRequest, client: acp.AgentContext): Promise<acp.LoadSessionResponse> {
    const app = await this.sessionApp(params.cwd);
    let ignored: string | null = null;
    const record = loadRecord(app.root, params.sessionId, (why) => (ignored = why));
    if (!record) throw new acp.RequestError(-32002, ignored ?? `no saved coder session ${params.sessionId} in ${app.root} (.coder/acp/)`);
    await this.sessions.get(params.sessionId)?.close();
    const session = await this.open(params.sessionId, params, client, record);
    session.output.open();
    session.replay();
    session.output.update({ sessionUpdate: "available_commands_update", availableCommands: session.availableCommands() });
    await session.output.drained();
    setTimeout(() => session.warm(), WARM_DELAY_MS);
    return { modes: session.modes(), configOptions: session.configOptions() };
  }

  /** `session/list`: the saved sessions of the repository at `cwd` (the folder coder started in by default). */
  async listSessions(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const cwd = params.cwd ?? this.input.cwd ?? process.cwd();
    if (!isAbsolute(cwd) || !existsSync(cwd)) throw new acp.RequestError(-32602, `cwd ${JSON.stringify(cwd)} is not an absolute path to a folder`);
    const app = await this.appFor(cwd).catch((error: unknown) => {
      throw new acp.RequestError(-32603, `cannot read the sessions of ${cwd}: ${messageOf(error)}`);
    });
    return { sessions: listSessions(app.root) };
  }

  /** `session/close`: the turn under way stops (its writes finished and committed) and the session is forgotten; its record stays. */
  async closeSession(params: acp.CloseSessionRequest): Promise<acp.CloseSessionResponse> {
    const session = this.session(params.sessionId);
    this.sessions.delete(params.sessionId);
    await session.close();
    return {};
  }

  /** `session/delete`: closed if open, and its saved record removed. */
  async deleteSession(params: acp.DeleteSessionRequest): Promise<acp.DeleteSessionResponse> {
    const open = this.sessions.get(params.sessionId);
    const root = open?.root ?? (await this.appFor(this.input.cwd ?? process.cwd())).root;
    if (open) {
      this.sessions.delete(params.sessionId);
      await open.close();
    }
    if (!deleteSession(root, params.sessionId) && !open) throw new acp.RequestError(-32002, `no saved coder session ${params.sessionId} in ${root} (.coder/acp/)`);
    return {};
  }

  private async open(id: string, params: acp.NewSessionRequest, client: acp.AgentContext, record?: SessionRecord): Promise<AcpSession> {
    const app = await this.sessionApp(params.cwd);
    // The editor's own MCP servers are the user's choice: they join this session's servers without the trust a project's need.
    // They go to the option a plugin declares for them (`editorMcpServers`); with none, nothing would start them.
    const target = app.settings.table.specs.find((spec) => spec.editorMcpServers && spec.type === "object");
    if (params.mcpServers?.length && target) {
      const options = app.settings.options as Record<string, unknown>;
      options[target.key] = { ...((options[target.key] as Record<string, unknown> | undefined) ?? {}), ...clientServers(params.mcpServers) };
      this.log("info", `session ${id}: MCP servers from the editor: ${params.mcpServers.map((s) => s.name).join(", ")}`);
    }
    let session: AcpSession;
    try {
      session = await AcpSession.create({ id, cwd: params.cwd, app, client, fs: this.clientFs, terminal: this.clientTerminal, forms: this.clientForms, log: this.log, ...(record ? { record } : {}) });
    } catch (error) {
      if (error instanceof acp.RequestError) throw error;
      throw new acp.RequestError(-32603, `cannot start a coder session in ${params.cwd}: ${messageOf(error)}`);
    }
    this.sessions.set(id, session);
    session.save();
    this.log("info", `session ${id} in ${app.root}`);
    return session;
  }

  private session(id: string): AcpSession {
    const session = this.sessions.get(id);
    if (!session) throw new acp.RequestError(-32002, `unknown session ${JSON.stringify(id)}: create one with session/new (or session/load)`);
    return session;
  }

  async prompt(params: acp.PromptRequest): Promise<acp.PromptResponse> {
    return { stopReason: await this.session(params.sessionId).prompt(params.prompt) };
  }

  setMode(params: acp.SetSessionModeRequest): acp.SetSessionModeResponse {
    this.session(params.sessionId).setMode(params.modeId);
    return {};
  }

  setConfigOption(params: acp.SetSessionConfigOptionRequest): acp.SetSessionConfigOptionResponse {
    const session = this.session(params.sessionId);
    if (typeof params.value !== "string") throw new acp.RequestError(-32602, `config option ${params.configId} takes a string value`);
    session.setConfigOption(params.configId, params.value);
    return { configOptions: session.configOptions() };
  }

  cancel(params: acp.CancelNotification): void {
    const session = this.sessions.get(params.sessionId);
    if (session) session.cancel();
    else this.log("warn", `session/cancel for unknown session ${params.sessionId}`);
  }

  /** Stop every session's turn; resolves once they have settled (at most CLOSE_WAIT_MS). */
  async close(): Promise<void> {
    const settled = Promise.all([...this.sessions.values()].map((session) => session.close()));
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }
}
