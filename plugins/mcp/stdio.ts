// The stdio transport for a local MCP server, in its own process group: closing it (or
// coder exiting) ends the server and everything it started (an `npx` wrapper's node, a
// shell's children), which the SDK's own stdio transport cannot do. The last lines of the
// server's stderr are kept for the one-line report when it fails.
import { type ChildProcess, spawn } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The environment a server gets besides its entry's `env`: enough to find programs and a home, no secrets. */
const INHERITED = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"];

/** A server's message may be large (a file, a page): up to this much is buffered for one line. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Process groups of the servers still running, killed when coder exits however it exits. */
const running = new Set<number>();
let exitHook = false;

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
      child.once("error", (error) => {
        this.child = null;
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        if (child.pid) running.add(child.pid);
        resolve();
      });
      child.once("close", (code, signal) => {
        if (child.pid) running.delete(child.pid);
        this.exitStatus = signal ? `signal ${signal}` : `exit code ${code}`;
        this.child = null;
        this.onclose?.();
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

  /** End stdin, give the server a moment, then end its whole process group. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    const pid = child.pid;
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const wait = (ms: number) => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
    child.stdin?.end();
    await wait(500);
    killGroup(pid, "SIGTERM");
    await wait(1000);
    killGroup(pid, "SIGKILL");
    running.delete(pid);
    this.buffer.clear();
  }
}
