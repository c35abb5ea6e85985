// The stdio transport for a local MCP server, started through `kit.start`: in its own process
// group, so the whole group (an `npx` wrapper's node, a shell's children, a helper the server
// forked) ends when the transport closes, when the server's first process exits on its own, and
// when coder exits however it exits (normal exit, an error, SIGINT/SIGTERM/SIGHUP), which the
// SDK's own stdio transport cannot do. Waits for the pipes are bounded: a helper that holds them
// never hangs coder. The last lines of the server's stderr are kept for the one-line report when it fails.
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Kit, RunningChild } from "../../core/plugin.ts";

/** The environment a server gets besides its entry's `env`: enough to find programs and a home, no secrets. */
const INHERITED = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"];

/** A server's message may be large (a file, a page): up to this much is buffered for one line. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** After SIGTERM, how long a group gets before SIGKILL. */
const GRACE_MS = 1000;
/** After its stdin closed, how long a server gets to leave on its own. */
const LEAVE_MS = 500;

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
  private child: RunningChild | null = null;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  /** How the process ended, once it has: "exit code 1", "signal SIGKILL". */
  exitStatus: string | null = null;
  private closedOnce = false;

  constructor(
    private readonly params: StdioParams,
    private readonly start_: Kit["start"],
  ) {}

  /** The last lines the server wrote on stderr. */
  stderrTail(lines = 3): string {
    return this.child?.stderrTail(lines) ?? "";
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  async start(): Promise<void> {
    const env: Record<string, string> = {};
    for (const key of INHERITED) if (process.env[key] !== undefined) env[key] = process.env[key] as string;
    const child = this.start_([this.params.command, ...this.params.args], {
      env: { ...env, ...this.params.env },
      ...(this.params.cwd ? { cwd: this.params.cwd } : {}),
      stdin: "pipe",
      onStdout: (chunk) => this.received(chunk),
    });
    this.child = child;
    // The first process ended (crashed, or was told to): kit.start ends what it started and
    // bounds the wait for the pipes; the connection hears of it once.
    void child.exited.then((exit) => {
      this.exitStatus = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    });
    void child.closed.then(() => this.finish());
  }

  private received(chunk: Uint8Array): void {
    try {
      this.buffer.append(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
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
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.child || this.exitStatus) throw new Error("the server is not running");
    try {
      await this.child.write(serializeMessage(message));
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
  }

  /** End stdin and give the server a moment to leave; then its whole group ends (SIGTERM, then SIGKILL), all within a few seconds. */
  async close(): Promise<void> {
    const child = this.child;
    if (child) {
      child.endInput();
      await Promise.race([child.exited, sleep(LEAVE_MS)]);
      // Still running after its stdin closed: the group is told to stop, and whatever is left is killed.
      await child.stop({ graceMs: GRACE_MS });
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
