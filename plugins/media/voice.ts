// Recording from the microphone for /voice with whatever is installed: sox's `rec`,
// ALSA's `arecord`, or `ffmpeg`; 16 kHz mono WAV, stopped when the user presses Enter
// (Ctrl-C cancels). ffmpeg also converts the recording when another format is asked for.
import { createInterface } from "node:readline";
import type { Kit } from "../../core/plugin.ts";

type Which = (command: string) => string | null;

export interface Recorder {
  name: string;
  argv(file: string): string[];
  /** Environment the recorder needs (e.g. sox reads its device from AUDIODEV). */
  env?: Record<string, string>;
}

/** The first recorder installed here, or null. */
export function findRecorder(device: string | undefined, which: Which, platform: NodeJS.Platform = process.platform): Recorder | null {
  if (which("rec")) {
    return { name: "rec", argv: (file) => ["rec", "-q", "-c", "1", "-r", "16000", "-b", "16", file], ...(device ? { env: { AUDIODEV: device } } : {}) };
  }
  if (platform === "linux" && which("arecord")) {
    return { name: "arecord", argv: (file) => ["arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", ...(device ? ["-D", device] : []), file] };
  }
  if (which("ffmpeg")) {
    const input =
      platform === "darwin" ? ["-f", "avfoundation", "-i", `:${device ?? "0"}`]
      : platform === "win32" ? ["-f", "dshow", "-i", `audio=${device ?? "default"}`]
      : ["-f", "pulse", "-i", device ?? "default"];
    return { name: "ffmpeg", argv: (file) => ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", ...input, "-ac", "1", "-ar", "16000", "-y", file] };
  }
  return null;
}

export const NO_RECORDER = "No audio recorder found: install sox (for `rec`), alsa-utils (for `arecord`) or ffmpeg, then try /voice again.";

export type Recording = { ok: true } | { ok: false; cancelled: boolean; problem: string };

/** Resolves when the user presses Enter (or stdin ends); `cancel` gives up waiting. */
export function waitForEnter(): { done: Promise<void>; cancel: () => void } {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const done = new Promise<void>((resolve) => {
    rl.once("line", () => resolve());
    rl.once("close", () => resolve());
  });
  return { done, cancel: () => rl.close() };
}

/** What recording needs from the kit: starting the recorder, and reading what it wrote. */
export type RecordKit = Pick<Kit, "start"> & { files: Pick<Kit["files"], "readBytes"> };

/** The most a recording may hold: what OpenAI's transcription endpoint takes (25 MB). */
export const MAX_RECORDING_BYTES = 25 * 1024 * 1024;

/** A recorder that does not finish its file within this long of SIGINT is killed. */
const RECORDER_GRACE_MS = 5_000;

/**
 * Record into `file` until `stop` resolves. A recorder that ends first was interrupted
 * (Ctrl-C reaches it too: the recording is cancelled) or failed (its error is the problem).
 */
export async function record(kit: RecordKit, recorder: Recorder, file: string, stop: Promise<void>): Promise<Recording> {
  let child: ReturnType<Kit["start"]>;
  let stderr = "";
  try {
    // In coder's process group: the terminal's Ctrl-C reaches the recorder and cancels it.
    child = kit.start(recorder.argv(file), { env: { ...process.env, ...recorder.env }, foreground: true, onStderr: (text) => void (stderr = (stderr + text).slice(0, 2000)) });
  } catch (error) {
    return { ok: false, cancelled: false, problem: `could not start ${recorder.name}: ${error instanceof Error ? error.message : String(error)}` };
  }
  const ended = await Promise.race([child.exited.then(() => true), stop.then(() => false)]);
  if (ended) {
    const exit = await child.exited;
    await child.closed;
    if (exit.signal === "SIGINT") return { ok: false, cancelled: true, problem: "Recording cancelled." };
    const why = stderr.trim().split("\n")[0];
    return { ok: false, cancelled: false, problem: `${recorder.name} stopped on its own (exit ${exit.code ?? exit.signal})${why ? `: ${why}` : ""}` };
  }
  // SIGINT lets each recorder finish the file's header; a stuck one is killed.
  await child.stop({ signal: "SIGINT", graceMs: RECORDER_GRACE_MS });
  // A WAV header alone is 44 bytes: anything not longer holds no sound.
  const wrote = kit.files.readBytes(file, { maxBytes: MAX_RECORDING_BYTES });
  if ((wrote.ok ? wrote.bytes.length <= 44 : wrote.missing)) {
    return { ok: false, cancelled: false, problem: `${recorder.name} recorded nothing: check the microphone (--voice-input-device)` };
  }
  return { ok: true };
}

/** How long a conversion may take before ffmpeg (and anything it started) is stopped. */
const CONVERT_TIMEOUT_MS = 120_000;

/** Convert a recording with ffmpeg through kit.spawn (for --voice-format mp3 or webm). */
export async function convert(kit: Pick<Kit, "spawn" | "which">, input: string, output: string): Promise<string | null> {
  if (!kit.which("ffmpeg")) return `--voice-format ${output.split(".").at(-1)} needs ffmpeg to convert the recording: install it, or use --voice-format wav`;
  const r = await kit.spawn(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", input, output], { timeoutMs: CONVERT_TIMEOUT_MS });
  if (r.timedOut) return `ffmpeg did not finish converting the recording within ${CONVERT_TIMEOUT_MS / 1000} s and was stopped`;
  return r.code === 0 ? null : `ffmpeg could not convert the recording: ${r.startError ?? (r.stderr.trim().split("\n")[0] || `exit ${r.code}`)}`;
}
