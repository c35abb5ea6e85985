// Shown commands (lint, tests, `/run`, a suggested shell command) in the editor's own terminals
// (`terminal/create`) when the client offers them: the command's card embeds the terminal, so
// the editor shows its output live; coder waits for the exit, reads the output (what the model
// gets, as from a local run) and releases the terminal. A cancel or a timeout kills it first.
// The gate decided before: the terminal is only where the approved command runs.
import * as acp from "@agentclientprotocol/sdk";
import { stopNote } from "../boot/kit.ts";
import type { CommandRunner, ShownResult } from "../chat/types.ts";
import { messageOf } from "../plugins/registry.ts";
import { shellArgv } from "../proc/spawn.ts";

/**
 * The most output a client terminal keeps (its tail): far more than reaches the model (a
 * failure's report keeps 8,000 characters, core/chat/checks.ts `clip`), so a terminal run
 * sends the model what a local run would.
 */
export const TERMINAL_OUTPUT_BYTES = 1024 * 1024;

/** What the runner needs of its session. */
export interface TerminalHost {
  client: acp.AgentContext;
  sessionId: string;
  /** The repository root: where every command runs. */
  root: string;
  /** Resolves once every update so far is sent (the command's card is out before its terminal is made). */
  sent(): Promise<void>;
  /** The card of the command under way embeds this terminal; resolves once that update is sent. */
  show(terminalId: string): Promise<void>;
  log(level: "info" | "warn", text: string): void;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

/** Shown commands through the client's `terminal/*` methods. */
export function terminalRunner(host: TerminalHost): CommandRunner {
  return async (run): Promise<ShownResult> => {
    const { client, sessionId } = host;
    await host.sent();
    if (run.signal?.aborted) return { code: 130, stdout: "", stderr: stopNote({ timedOut: false, aborted: true }), stopped: true };
    const [command, ...args] = shellArgv(run.command);
    let terminal: acp.TerminalHandle;
    try {
      terminal = await client.createTerminal({ sessionId, command: command!, args, cwd: host.root, outputByteLimit: TERMINAL_OUTPUT_BYTES });
    } catch (error) {
      const refused = `the editor did not run \`${run.command}\`: ${clientReason(error)}`;
      host.log("warn", refused);
      return { code: 127, stdout: "", stderr: "", refused };
    }
    await host.show(terminal.id);
    let timedOut = false;
    let aborted = false;
    let killed: Promise<unknown> | null = null;
    const kill = () => {
      killed ??= terminal.kill().catch((error: unknown) => host.log("warn", `could not stop \`${run.command}\` in the editor's terminal: ${clientReason(error)}`));
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, run.timeoutMs);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    if (run.signal?.aborted) onAbort();
    else run.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const exit = await terminal.waitForExit();
      clearTimeout(timer);
      run.signal?.removeEventListener("abort", onAbort);
      await killed;
      const { output, truncated } = await terminal.currentOutput();
      const stdout = `${truncated ? "... (the editor's terminal kept only the end of the output)\n" : ""}${output}`;
      run.onOutput?.(stdout);
      const code = timedOut ? 124 : aborted ? 130 : (exit.exitCode ?? (exit.signal ? 128 + (SIGNAL_NUMBERS[exit.signal] ?? 0) : 1));
      return { code, stdout, stderr: stopNote({ timedOut, aborted }, run.timeoutMs), ...(aborted ? { stopped: true } : {}) };
    } catch (error) {
      return { code: 127, stdout: "", stderr: "", refused: `the editor's terminal failed while running \`${run.command}\`: ${clientReason(error)}` };
    } finally {
      clearTimeout(timer);
      run.signal?.removeEventListener("abort", onAbort);
      await terminal.release().catch((error: unknown) => host.log("info", `could not release the editor's terminal ${terminal.id}: ${clientReason(error)}`));
    }
  };
}

/** What a client's error says: its message and, when it sent any, its data. */
export function clientReason(error: unknown): string {
  if (!(error instanceof acp.RequestError)) return messageOf(error);
  const data = error.data === undefined ? "" : typeof error.data === "string" ? error.data : JSON.stringify(error.data);
  return data && !error.message.includes(data) ? `${error.message} (${data})` : error.message;
}
