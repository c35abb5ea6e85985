// An ACP client for the end-to-end tests of `coder acp`: the SDK's own client side
// (`client()` over `ndJsonStream`) connected to dist/coder's stdin/stdout. It records
// every session/update, answers permission requests from a script, and can offer
// fs.readTextFile / fs.writeTextFile (recording the calls, writing the disk as an editor would).
import { afterEach, beforeAll } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { FakeServer } from "./fake-server.ts";

export const BINARY = join(import.meta.dir, "..", "..", "dist", "coder");

export interface ClientOptions {
  /** Offer fs.readTextFile / fs.writeTextFile. */
  fs?: boolean;
  /** Unsaved editor buffers by absolute path: what fs.readTextFile answers instead of the disk. */
  buffers?: Map<string, string>;
  /** The option ids to pick, one per permission request, in order ("cancelled" answers cancelled). */
  answers?: string[];
  /** fs/write_text_file answers with this error (message and data), as an editor whose user refused the write. */
  refuseWrites?: { message: string; data: unknown };
  /** Offer form elicitation, answering each `elicitation/create` with the next of these (decline when none is left). */
  forms?: acp.CreateElicitationResponse[];
  /** Extra arguments after `acp` and the test model's flags. */
  args?: string[];
  /** Offer terminals: `terminal/create` runs the command (recorded in `terminals.calls`). */
  terminal?: boolean;
  home: string;
}

/** One terminal call a test client received: the method, its terminal, and how many session/updates had arrived before it. */
export interface TerminalCall {
  method: "terminal/create" | "terminal/output" | "terminal/wait_for_exit" | "terminal/kill" | "terminal/release";
  terminalId: string;
  at: number;
  params: Record<string, unknown>;
}

interface RunningTerminal {
  proc: import("bun").Subprocess<"ignore", "pipe", "pipe">;
  output: string;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
}

/** How a terminal's command ended, or null while it runs. */
function exitStatus(proc: { exitCode: number | null; signalCode: unknown }): { exitCode: number | null; signal: string | null } | null {
  if (proc.signalCode) return { exitCode: null, signal: String(proc.signalCode) };
  return proc.exitCode === null ? null : { exitCode: proc.exitCode, signal: null };
}

/**
 * A client's terminals, as an editor runs them: \`terminal/create\` starts the command (argv,
 * in its own process group, in the given folder) and keeps its output; every call is recorded.
 */
export class TestTerminals {
  readonly calls: TerminalCall[] = [];
  private readonly running = new Map<string, RunningTerminal>();
  private next = 1;

  constructor(private readonly seen: () => number = () => 0) {}

  private record(method: TerminalCall["method"], params: { terminalId?: string } & Record<string, unknown>, terminalId = params.terminalId ?? ""): void {
    this.calls.push({ method, terminalId, at: this.seen(), params });
  }

  private get(terminalId: string): RunningTerminal {
    const terminal = this.running.get(terminalId);
    if (!terminal) throw new acp.RequestError(-32602, `unknown terminal ${terminalId}`);
    return terminal;
  }

  create(params: acp.CreateTerminalRequest): { terminalId: string } {
    const terminalId = `term-${this.next++}`;
    this.record("terminal/create", params as unknown as Record<string, unknown>, terminalId);
    const proc = Bun.spawn([params.command, ...(params.args ?? [])], { cwd: params.cwd ?? undefined, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
    const terminal: RunningTerminal = { proc, output: "", exit: Promise.resolve({ exitCode: null, signal: null }) };
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) terminal.output += decoder.decode(chunk, { stream: true });
    };
    const pumped = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
    terminal.exit = Promise.all([proc.exited, pumped]).then(() => exitStatus(proc)!);
    this.running.set(terminalId, terminal);
    return { terminalId };
  }

  output(params: acp.TerminalOutputRequest): acp.TerminalOutputResponse {
    this.record("terminal/output", params);
    const terminal = this.get(params.terminalId);
    const status = exitStatus(terminal.proc);
    return { output: terminal.output, truncated: false, ...(status ? { exitStatus: status } : {}) };
  }

  waitForExit(params: acp.WaitForTerminalExitRequest): Promise<acp.WaitForTerminalExitResponse> {
    this.record("terminal/wait_for_exit", params);
    return this.get(params.terminalId).exit;
  }

  kill(params: acp.KillTerminalRequest): acp.KillTerminalResponse {
    this.record("terminal/kill", params);
    this.stop(this.get(params.terminalId));
    return {};
  }

  release(params: acp.ReleaseTerminalRequest): acp.ReleaseTerminalResponse {
    this.record("terminal/release", params);
    const terminal = this.get(params.terminalId);
    this.stop(terminal);
    this.running.delete(params.terminalId);
    return {};
  }

  /** The command and everything it started. */
  private stop(terminal: RunningTerminal): void {
    if (terminal.proc.exitCode !== null || terminal.proc.signalCode) return;
    try {
      process.kill(-terminal.proc.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }

  /** The calls as "create term-1", "wait_for_exit term-1", ... */
  sequence(): string[] {
    return this.calls.map((c) => `${c.method.slice("terminal/".length)} ${c.terminalId}`);
  }
}

export interface AcpTestClient {
  agent: acp.ClientContext;
  proc: ReturnType<typeof Bun.spawn>;
  /** Every session/update, in arrival order. */
  updates: acp.SessionNotification[];
  /** Every permission request, in arrival order. */
  permissions: acp.RequestPermissionRequest[];
  /** Every elicitation/create request, in arrival order (with `forms`). */
  elicitations: acp.CreateElicitationRequest[];
  /** How many session/updates had arrived when each permission request came. */
  askedAt: number[];
  reads: string[];
  writes: { path: string; content: string }[];
  /** The terminals the client ran (with `terminal: true`). */
  terminals: TestTerminals;
  initialize(): Promise<acp.InitializeResponse>;
  updatesOf(sessionId: string): acp.SessionUpdate[];
  /** The text of the agent_message_chunks of a session since update number `from`. */
  text(sessionId: string, from?: number): string;
  stderr(): Promise<string>;
  close(): Promise<void>;
}

/** Spawn `dist/coder acp` in `cwd` against the fake server and connect the SDK client to it. */
export function startAcp(cwd: string, server: FakeServer, options: ClientOptions): AcpTestClient {
  const proc = Bun.spawn(
    [BINARY, "acp", "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", server.url, "--api-key", "sk-test", "--edit-format", "diff", ...(options.args ?? [])],
    {
      timeout: 120_000,
      killSignal: "SIGKILL",
      cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: options.home, XDG_CONFIG_HOME: join(options.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const askedAt: number[] = [];
  const reads: string[] = [];
  const writes: { path: string; content: string }[] = [];
  const answers = [...(options.answers ?? [])];
  const elicitations: acp.CreateElicitationRequest[] = [];
  const forms = [...(options.forms ?? [])];
  const terminals = new TestTerminals(() => updates.length);
  const app = acp
    .client({ name: "coder-tests" })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      askedAt.push(updates.length);
      const pick = answers.shift() ?? "reject";
      return pick === "cancelled" ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId: pick } };
    })
    .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
      elicitations.push(params);
      return forms.shift() ?? { action: "decline" };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      reads.push(params.path);
      const held = options.buffers?.get(params.path);
      return { content: held ?? readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      writes.push({ path: params.path, content: params.content });
      if (options.refuseWrites) throw new acp.RequestError(-32000, options.refuseWrites.message, options.refuseWrites.data);
      mkdirSync(dirname(params.path), { recursive: true });
      writeFileSync(params.path, params.content);
      options.buffers?.delete(params.path);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => terminals.create(params))
    .onRequest(acp.methods.client.terminal.output, ({ params }) => terminals.output(params))
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => terminals.waitForExit(params))
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => terminals.kill(params))
    .onRequest(acp.methods.client.terminal.release, ({ params }) => terminals.release(params));
  const stdin = proc.stdin as import("bun").FileSink;
  const toAgent = new WritableStream<Uint8Array>({
    write: async (chunk) => {
      stdin.write(chunk);
      await stdin.flush();
    },
    close: () => void stdin.end(),
  });
  const connection = app.connect(acp.ndJsonStream(toAgent, proc.stdout as ReadableStream<Uint8Array>));
  const stderrText = new Response(proc.stderr as ReadableStream<Uint8Array>).text();
  const updatesOf = (sessionId: string) => updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  return {
    agent: connection.agent,
    proc,
    updates,
    permissions,
    elicitations,
    askedAt,
    reads,
    writes,
    terminals,
    initialize: () =>
      connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { ...(options.fs ? { fs: { readTextFile: true, writeTextFile: true } } : {}), ...(options.terminal ? { terminal: true } : {}), ...(options.forms ? { elicitation: { form: {} } } : {}) },
      }),
    updatesOf,
    text: (sessionId, from = 0) =>
      updatesOf(sessionId)
        .slice(from)
        .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
        .join(""),
    stderr: () => stderrText,
    close: async () => {
      connection.close();
      try {
        stdin.end();
      } catch {
        // already closed
      }
      const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => null)]);
      if (exited === null) proc.kill("SIGKILL");
    },
  };
}

/**
 * For a test file that drives `coder acp`: it stops at once without dist/coder, and the
 * returned `start` is `startAcp` whose clients are closed after each test.
 */
export function acpClientsPerTest(): (...args: Parameters<typeof startAcp>) => AcpTestClient {
  beforeAll(() => {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`);
  });
  const clients: AcpTestClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  return (...args) => {
    const c = startAcp(...args);
    clients.push(c);
    return c;
  };
}

/** `coder acp` in `root` with raw pipes (for tests that write protocol lines by hand); killed after 60 s. */
export function spawnRawAcp(root: string, home: string, args: string[] = []): import("bun").Subprocess<"pipe", "pipe", "pipe"> {
  return Bun.spawn([BINARY, "acp", ...args], {
    timeout: 60_000,
    killSignal: "SIGKILL",
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/**
 * The JSON-RPC messages on an agent's stdout, one `next()` at a time; `skip` passes over some
 * (session/update notifications, say). `rest()` is every line read or buffered so far.
 */
export function acpLines(stream: ReadableStream<Uint8Array>, skip: (message: any) => boolean = () => false) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const seen: string[] = [];
  return {
    async next(): Promise<any> {
      for (;;) {
        const nl = buffer.indexOf("\n");
        if (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          seen.push(line);
          const message = JSON.parse(line);
          if (skip(message)) continue;
          return message;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`stdout ended; seen: ${seen.join("\n")}`);
        buffer += decoder.decode(value, { stream: true });
      }
    },
    rest: () => [...seen, ...buffer.split("\n").filter(Boolean)],
  };
}
