// The stdio transport for a local MCP server, in its own process group: the whole group
// (an `npx` wrapper's node, a shell's children, a helper the server forked) ends when the
// transport closes, when the server's first process exits on its own, and when coder exits
// however it exits (normal exit, an error, SIGINT/SIGTERM/SIGHUP), which the SDK's own stdio
// transport cannot do. Waits for the pipes are bounded: a helper that holds them never hangs
// coder. The last lines of the server's stderr are kept for the one-line report when it fails.
import { type ChildProcess, spawn } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The environment a server gets besides its entry's `env`: enough to find programs and a home, no secrets. */
const INHERITED = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"];

/** A server's message may be large (a file, a page): up to this much is buffered for one line. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Process groups of the servers that may still have a process, killed when coder exits however it exits. */
const running = new Set<number>();
let exitHook = false;

/** After SIGTERM, how long a group gets before SIGKILL. */
const GRACE_MS = 1000;
/** After the server's first process exited, how long its pipes may stay open (a helper outside its group holds them). */
const PIPE_WAIT_MS = 1000;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export interface StdioParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | null = null;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private stderrText = "";
  /** How the process ended, once it has: "exit code 1", "signal SIGKILL". */
  exitStatus: string | null = null;
  /** Resolves when the server's first process has exited. */
  private exited: Promise<void> = Promise.resolve();
  /** Resolves when the group is ended (SIGKILL sent) and the pipes closed or given up on. */
  private ended: Promise<void> | null = null;
  private closedOnce = false;

  constructor(private readonly params: StdioParams) {}

  /** The last lines the server wrote on stderr. */
  stderrTail(lines = 3): string {
    return this.stderrText.trimEnd().split("\n").slice(-lines).join(" | ").slice(-400);
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (!exitHook) {
      exitHook = true;
      process.on("exit", () => {
        for (const pid of running) killGroup(pid, "SIGKILL");
      });
    }
    const env: Record<string, string> = {};
    for (const key of INHERITED) if (process.env[key] !== undefined) env[key] = process.env[key] as string;
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        env: { ...env, ...this.params.env },
        cwd: this.params.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      this.child = child;
      // Known at once, not at the "spawn" event: coder may exit before that arrives.
      if (child.pid) running.add(child.pid);
      let exited: () => void = () => {};
      this.exited = new Promise((r) => {
        exited = r;
      });
      const closed = new Promise<void>((r) => child.once("close", () => r()));
      child.once("error", (error) => {
        if (child.pid) running.delete(child.pid);
        this.child = null;
        exited();
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => resolve());
      // The first process ended (crashed, or was told to): what it started goes with it, the
      // pipes get a bounded wait, and the connection hears of it once.
      child.once("exit", (code, signal) => {
        this.exitStatus = signal ? `signal ${signal}` : `exit code ${code}`;
        exited();
        const pid = child.pid;
        this.ended ??= (async () => {
          if (pid) await endGroup(pid, closed);
          await Promise.race([closed, sleep(PIPE_WAIT_MS)]);
          if (pid) running.delete(pid);
        })();
        void this.ended.then(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          this.child = null;
          this.finish();
        });
      });
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            // A line that is not JSON-RPC (a server printing to stdout): reported, skipped.
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderrText = (this.stderrText + chunk.toString("utf8")).slice(-4000);
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error("the server is not running"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  /** End stdin and give the server a moment to leave; then its whole group ends (SIGTERM, then SIGKILL), all within a few seconds. */
  async close(): Promise<void> {
    const child = this.child;
    if (child?.pid) {
      child.stdin?.end();
      await Promise.race([this.exited, sleep(500)]);
      // Still running after its stdin closed: the group is told to stop (the exit handler then waits for it).
      if (child.exitCode === null && child.signalCode === null) await endGroup(child.pid, this.exited);
      await Promise.race([this.exited, sleep(GRACE_MS)]);
      await Promise.race([this.ended ?? Promise.resolve(), sleep(GRACE_MS + PIPE_WAIT_MS)]);
    }
    this.buffer.clear();
    this.finish();
  }

  private finish(): void {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.onclose?.();
  }
}

/** SIGTERM to the group, up to GRACE_MS for its first process to leave, then SIGKILL to whatever is left. */
async function endGroup(pid: number, exited: Promise<void>): Promise<void> {
  killGroup(pid, "SIGTERM");
  await Promise.race([exited, sleep(GRACE_MS)]);
  killGroup(pid, "SIGKILL");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
