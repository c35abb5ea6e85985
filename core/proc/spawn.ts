// The one way coder starts a command that may start others (git and its hooks, lint and test
// commands, /run, plugins' commands): in its own process group, so a timeout, an abort or
// coder's own exit ends the whole group (SIGTERM, then SIGKILL), not just the first process.
import type { ChildExit, SpawnOptions as PluginSpawnOptions, RunningChild, SpawnResult, StartOptions } from "../plugin.ts";

export type { ChildExit, RunningChild, SpawnResult, StartOptions };

/** How long a group gets between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 2_000;

/** After the first process exits, how long coder waits for the output pipes that a left-behind process still holds. */
const PIPE_DRAIN_MS = 1_000;

/** `kit.spawn`'s options (core/plugin.ts), with the folder always given. */
export interface SpawnOptions extends PluginSpawnOptions {
  cwd: string;
}

/** Process groups still running, ended with SIGKILL when coder exits however it exits. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pid of liveGroups) signalGroup(pid, "SIGKILL");
  });
}

/** Send `signal` to the process group led by `pid` (to `pid` alone when it has no group of its own). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/**
 * End a process group: SIGTERM, up to `graceMs` for its first process to exit (it may stop its
 * children itself), then SIGKILL to whatever is left of the group (a child that ignores SIGTERM,
 * or outlived its parent).
 */
export async function endGroup(pid: number, exited: Promise<unknown>, graceMs: number = DEFAULT_GRACE_MS, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  signalGroup(pid, signal);
  await Promise.race([exited, Bun.sleep(graceMs)]);
  signalGroup(pid, "SIGKILL");
}

/**
 * Start `argv` with stdout and stderr piped; with `ownGroup`, as the leader of a new process
 * group that coder's exit ends. Throws when it cannot start.
 */
function launch<In extends "pipe" | "inherit" | "ignore">(argv: string[], options: { cwd: string; env?: Record<string, string | undefined> }, stdin: In, ownGroup: boolean) {
  installExitHook();
  const proc = Bun.spawn<In, "pipe", "pipe">(argv, { cwd: options.cwd, env: options.env ?? process.env, stdin, stdout: "pipe", stderr: "pipe", detached: ownGroup });
  if (ownGroup) liveGroups.add(proc.pid);
  return proc;
}

/**
 * Run `argv` (no shell) in its own process group; never throws for a failure to start or a
 * non-zero exit. On timeout or abort the group gets SIGTERM, then SIGKILL after `graceMs`.
 *
 * @example
 * const r = await spawnGroup(["sh", "-c", "npm test"], { cwd: root, timeoutMs: 900_000 });
 * if (r.timedOut) warn("tests timed out");
 */
export async function spawnGroup(argv: string[], options: SpawnOptions): Promise<SpawnResult> {
  if (argv.length === 0) return { code: 127, stdout: "", stderr: "an empty command", timedOut: false, aborted: false, startError: "an empty command" };
  const ownGroup = !options.inheritStdin && process.platform !== "win32";
  let proc: ReturnType<typeof launch<"pipe" | "inherit">>;
  try {
    proc = launch(argv, options, options.inheritStdin ? "inherit" : "pipe", ownGroup);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { code: 127, stdout: "", stderr: why, timedOut: false, aborted: false, startError: why };
  }
  const pid = proc.pid;
  if (proc.stdin && typeof proc.stdin !== "number") {
    try {
      if (options.input !== undefined) proc.stdin.write(options.input);
      await proc.stdin.end();
    } catch {
      // The command closed its stdin early: what it did not read is dropped.
    }
  }
  let timedOut = false;
  let aborted = false;
  let ending: Promise<void> | null = null;
  const end = () => {
    ending ??= ownGroup ? endGroup(pid, proc.exited, options.graceMs) : endSingle(proc, options.graceMs);
    return ending;
  };
  const timer =
    options.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          void end();
        }, options.timeoutMs)
      : undefined;
  const onAbort = () => {
    aborted = true;
    void end();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const decoderOut = new TextDecoder();
  const decoderErr = new TextDecoder();
  const chunks = { out: "", err: "" };
  const outBytes: Uint8Array[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>, which: "out" | "err", decoder: TextDecoder) => {
    const reader = stream.getReader();
    stopReaders.push(() => reader.cancel().catch(() => {}));
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (options.bytes && which === "out") outBytes.push(value);
        const text = decoder.decode(value, { stream: true });
        if (text) {
          chunks[which] += text;
          options.onOutput?.(text);
        }
      }
    } catch {
      // Cancelled after the command ended (a left-behind process held the pipe).
    }
    const rest = decoder.decode();
    if (rest) {
      chunks[which] += rest;
      options.onOutput?.(rest);
    }
  };
  const stopReaders: (() => void)[] = [];
  const pumped = Promise.all([pump(proc.stdout, "out", decoderOut), pump(proc.stderr, "err", decoderErr)]);
  const code = await proc.exited;
  if (timer) clearTimeout(timer);
  options.signal?.removeEventListener("abort", onAbort);
  // A process the command left behind may hold the pipes open: read on briefly, then stop.
  const drained = await Promise.race([pumped.then(() => true), Bun.sleep(PIPE_DRAIN_MS).then(() => false)]);
  if (!drained) for (const stop of stopReaders) stop();
  if (ending) await ending;
  if (ownGroup) {
    if (timedOut || aborted) signalGroup(pid, "SIGKILL");
    liveGroups.delete(pid);
  }
  const bytes = options.bytes ? { stdoutBytes: concatBytes(outBytes) } : {};
  if (timedOut) return { code: 124, stdout: chunks.out, stderr: chunks.err, timedOut, aborted, ...bytes };
  if (aborted) return { code: 130, stdout: chunks.out, stderr: chunks.err, timedOut, aborted, ...bytes };
  return { code, stdout: chunks.out, stderr: chunks.err, timedOut, aborted, ...bytes };
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** A command in coder's own group (it reads the terminal): SIGTERM to it alone, then SIGKILL. */
async function endSingle(proc: { exited: Promise<unknown>; exitCode: number | null; kill(signal?: number | NodeJS.Signals): void }, graceMs: number = DEFAULT_GRACE_MS): Promise<void> {
  proc.kill("SIGTERM");
  await Promise.race([proc.exited, Bun.sleep(graceMs)]);
  if (proc.exitCode === null) proc.kill("SIGKILL");
}

/** argv for a command line through the platform shell. */
export function shellArgv(command: string): string[] {
  return process.platform === "win32" ? ["cmd", "/c", command] : ["sh", "-c", command];
}

/** How much of a started command's stderr is kept for `stderrTail`. */
const STDERR_KEPT = 4_000;

/**
 * Start `argv` and keep it running: stdin piped or closed, stdout and stderr streamed to the
 * callbacks. In its own process group unless `foreground`; when its first process exits (on its
 * own or told to), the rest of its group is ended too and the pipes get a bounded wait, so a
 * helper it left behind neither lives on nor hangs coder. Throws when it cannot start.
 *
 * @example
 * const child = startGroup(["my-server", "--stdio"], { cwd: root, stdin: "pipe", onStdout: (b) => feed(b) });
 * await child.write("hello\n");
 * await child.stop();
 */
export function startGroup(argv: string[], options: StartOptions & { cwd: string }): RunningChild {
  if (argv.length === 0) throw new Error("an empty command");
  const ownGroup = !options.foreground && process.platform !== "win32";
  let proc: ReturnType<typeof launch<"pipe" | "ignore">>;
  try {
    proc = launch(argv, options, options.stdin === "pipe" ? "pipe" : "ignore", ownGroup);
  } catch (error) {
    throw new Error(`could not start ${argv[0]}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const pid = proc.pid;
  let stderrText = "";
  const pumpOut = (async () => {
    try {
      for await (const chunk of proc.stdout) options.onStdout?.(chunk);
    } catch {
      // The pipe was given up on after the exit.
    }
  })();
  const pumpErr = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of proc.stderr) {
        const text = decoder.decode(chunk, { stream: true });
        stderrText = (stderrText + text).slice(-STDERR_KEPT);
        if (text) options.onStderr?.(text);
      }
    } catch {
      // As above.
    }
  })();
  const pipes = Promise.all([pumpOut, pumpErr]).then(() => {});
  const exited: Promise<ChildExit> = proc.exited.then(() => ({ code: proc.exitCode, signal: typeof proc.signalCode === "string" ? proc.signalCode : null }));
  const closed = exited.then(async () => {
    // What the first process started goes with it; its pipes get a bounded wait.
    if (ownGroup) await endGroup(pid, pipes, PIPE_DRAIN_MS);
    const drained = await Promise.race([pipes.then(() => true), Bun.sleep(PIPE_DRAIN_MS).then(() => false)]);
    if (!drained) {
      void proc.stdout.cancel().catch(() => {});
      void proc.stderr.cancel().catch(() => {});
    }
    if (ownGroup) liveGroups.delete(pid);
  });
  const signal = (sig: string) => {
    if (ownGroup) signalGroup(pid, sig as NodeJS.Signals);
    else if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig as NodeJS.Signals);
  };
  let inputOpen = options.stdin === "pipe";
  return {
    pid,
    exited,
    closed,
    async write(data) {
      const sink = proc.stdin;
      if (!inputOpen || !sink || typeof sink === "number" || proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${argv[0]} is not reading its input (it has ended or its input is closed)`);
      try {
        sink.write(data);
        await sink.flush();
      } catch (error) {
        inputOpen = false;
        throw new Error(`${argv[0]} stopped reading its input: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    endInput() {
      const sink = proc.stdin;
      if (!inputOpen || !sink || typeof sink === "number") return;
      inputOpen = false;
      try {
        void Promise.resolve(sink.end()).catch(() => {});
      } catch {
        // Already closed by the other side.
      }
    },
    kill: (sig = "SIGTERM") => signal(sig),
    async stop(stopOptions = {}) {
      const grace = stopOptions.graceMs ?? DEFAULT_GRACE_MS;
      const first = (stopOptions.signal ?? "SIGTERM") as NodeJS.Signals;
      if (proc.exitCode === null && proc.signalCode === null) {
        if (ownGroup) await endGroup(pid, exited, grace, first);
        else {
          proc.kill(first);
          await Promise.race([exited, Bun.sleep(grace)]);
          if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
        }
      }
      await closed;
      return exited;
    },
    stderrTail: (lines = 3) => stderrText.trimEnd().split("\n").slice(-lines).join(" | ").slice(-400),
  };
}
