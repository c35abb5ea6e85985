// The one way coder starts a command that may start others (git and its hooks, lint and test
// commands, /run, plugins' commands): in its own process group, so a timeout, an abort or
// coder's own exit ends the whole group (SIGTERM, then SIGKILL), not just the first process.

/** How long a group gets between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 2_000;

/** After the first process exits, how long coder waits for the output pipes that a left-behind process still holds. */
const PIPE_DRAIN_MS = 1_000;

export interface SpawnOptions {
  cwd: string;
  /** The child's whole environment (default: coder's). */
  env?: Record<string, string | undefined>;
  /** Text written to stdin, then closed (ignored with `inheritStdin`). */
  input?: string | Uint8Array;
  /**
   * The command reads the terminal (`/run` in the REPL). It then stays in coder's process group,
   * so Ctrl-C reaches it as on a shell; a timeout or abort still ends it and its group's children.
   */
  inheritStdin?: boolean;
  /** End the group after this long; the result says `timedOut`. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL (default 2 s). */
  graceMs?: number;
  /** Ending the group on abort, like a timeout. */
  signal?: AbortSignal;
  /** Each chunk of stdout and stderr as it arrives (the result still holds all of it). */
  onOutput?: (text: string) => void;
  /** Keep stdout's bytes as they came too (`stdoutBytes`): an image, or other output that is not text. */
  bytes?: boolean;
}

export interface SpawnResult {
  /** The exit code; 124 after a timeout, 130 after an abort, 127 when the command could not start. */
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** Why the command could not start (not found, not executable); code is then 127. */
  startError?: string;
  /** stdout's bytes, with `bytes: true`. */
  stdoutBytes?: Uint8Array;
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
export async function endGroup(pid: number, exited: Promise<unknown>, graceMs: number = DEFAULT_GRACE_MS): Promise<void> {
  signalGroup(pid, "SIGTERM");
  await Promise.race([exited, Bun.sleep(graceMs)]);
  signalGroup(pid, "SIGKILL");
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
  installExitHook();
  const ownGroup = !options.inheritStdin && process.platform !== "win32";
  let proc: ReturnType<typeof Bun.spawn<"pipe" | "inherit", "pipe", "pipe">>;
  try {
    proc = Bun.spawn(argv, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdin: options.inheritStdin ? "inherit" : "pipe",
      stdout: "pipe",
      stderr: "pipe",
      detached: ownGroup,
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { code: 127, stdout: "", stderr: why, timedOut: false, aborted: false, startError: why };
  }
  const pid = proc.pid;
  if (ownGroup) liveGroups.add(pid);
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
