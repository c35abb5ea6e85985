// Choosing a recorder, recording until Enter (a stub recorder that writes a WAV), and the
// clear messages when a recorder fails, is cancelled, or records nothing.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wav } from "./testdata/make.ts";
import { type SpawnOptions, type StartOptions, spawnGroup, startGroup } from "../../core/proc/spawn.ts";
import { capReader } from "../../core/boot/kit.ts";
import { convert, findRecorder, record } from "./voice.ts";

const has = (...tools: string[]) => (command: string) => (tools.includes(command) ? `/usr/bin/${command}` : null);

/** What record() uses of the kit: the real starter and capped reader. */
const kit = { start: (argv: string[], o?: StartOptions) => startGroup(argv, { ...o, cwd: tmpdir() }), files: { readBytes: capReader(tmpdir(), 1 << 20) } };

/** Resolves once `file` exists (a stub says it is ready by creating it). */
async function appears(file: string): Promise<void> {
  while (!existsSync(file)) await Bun.sleep(10);
}

/** A recorder stub: a shell script run with the output file as its last argument. */
function stub(body: string): { name: string; argv: (file: string) => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "coder-rec-"));
  const path = join(dir, "recorder");
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return { name: "recorder", argv: (file) => [path, file] };
}

describe("findRecorder", () => {
  test("sox's rec, then arecord (Linux), then ffmpeg; each with the device asked for", () => {
    const rec = findRecorder("hw:1", has("rec", "arecord", "ffmpeg"), "linux")!;
    expect(rec.argv("/t/r.wav")).toEqual(["rec", "-q", "-c", "1", "-r", "16000", "-b", "16", "/t/r.wav"]);
    expect(rec.env).toEqual({ AUDIODEV: "hw:1" });
    expect(findRecorder("hw:1", has("arecord", "ffmpeg"), "linux")!.argv("/t/r.wav")).toEqual(["arecord", "-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-D", "hw:1", "/t/r.wav"]);
    expect(findRecorder(undefined, has("arecord", "ffmpeg"), "darwin")!.argv("/t/r.wav")).toContain("avfoundation");
    expect(findRecorder(undefined, has("ffmpeg"), "linux")!.argv("/t/r.wav")).toEqual(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "pulse", "-i", "default", "-ac", "1", "-ar", "16000", "-y", "/t/r.wav"]);
    expect(findRecorder(undefined, has(), "linux")).toBeNull();
  });
});

describe("record", () => {
  const fixture = join(mkdtempSync(join(tmpdir(), "coder-wav-")), "hello.wav");
  writeFileSync(fixture, wav(0.25));

  test("records until told to stop; the recorder finishes its file on SIGINT", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-out-"));
    const recorder = stub(`trap 'cp "${fixture}" "$1"; exit 0' INT\ntouch "${dir}/ready"\nwhile :; do sleep 0.05; done`);
    const file = join(dir, "r.wav");
    const recording = record(kit, recorder, file, appears(join(dir, "ready")));
    expect(await recording).toEqual({ ok: true });
    expect(readFileSync(file)).toEqual(readFileSync(fixture));
  });

  test("a recorder that fails at once: its error, first line", async () => {
    const recorder = stub('echo "no such device: hw:9" >&2; echo more >&2; exit 1');
    const result = await record(kit, recorder, join(tmpdir(), "never.wav"), new Promise(() => {}));
    expect(result).toEqual({ ok: false, cancelled: false, problem: "recorder stopped on its own (exit 1): no such device: hw:9" });
  });

  test("Ctrl-C reaches the recorder too: the recording is cancelled", async () => {
    const recorder = stub("kill -INT $$; sleep 5");
    expect(await record(kit, recorder, join(tmpdir(), "never.wav"), new Promise(() => {}))).toEqual({ ok: false, cancelled: true, problem: "Recording cancelled." });
  });

  test("a recording with no sound in it is refused, naming the microphone option", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-out-"));
    const recorder = stub(`trap 'printf RIFF > "$1"; exit 0' INT\ntouch "${dir}/ready"\nwhile :; do sleep 0.05; done`);
    const file = join(dir, "r.wav");
    const result = await record(kit, recorder, file, appears(join(dir, "ready")));
    expect(existsSync(file)).toBe(true);
    expect(result).toEqual({ ok: false, cancelled: false, problem: "recorder recorded nothing: check the microphone (--voice-input-device)" });
  });

  test("another format needs ffmpeg, and says so", async () => {
    expect(await convert({ which: has(), spawn: (argv: string[]) => spawnGroup(argv, { cwd: tmpdir() }) }, "/t/r.wav", "/t/r.mp3")).toBe("--voice-format mp3 needs ffmpeg to convert the recording: install it, or use --voice-format wav");
  });

  test("ffmpeg converts through kit.spawn (a stub on PATH): the output written, a failure's first stderr line said", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-ffmpeg-"));
    // The stub copies its input (the argument after -i) to its last argument, or fails on "bad".
    writeFileSync(join(dir, "ffmpeg"), '#!/bin/sh\nfor a; do last="$a"; done\nwhile [ "$1" != "-i" ]; do shift; done\ncase "$2" in *bad*) echo "Invalid data found when processing input" >&2; exit 1 ;; esac\ncp "$2" "$last"\n');
    chmodSync(join(dir, "ffmpeg"), 0o755);
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}` };
    const calls: string[][] = [];
    const kit = { which: has("ffmpeg"), spawn: (argv: string[], o?: Omit<SpawnOptions, "cwd">) => (calls.push(argv), spawnGroup(argv, { ...o, cwd: dir, env })) };
    writeFileSync(join(dir, "r.wav"), wav(0.1));
    expect(await convert(kit, join(dir, "r.wav"), join(dir, "r.mp3"))).toBeNull();
    expect(readFileSync(join(dir, "r.mp3"))).toEqual(readFileSync(join(dir, "r.wav")));
    expect(calls[0]!.slice(0, 1)).toEqual(["ffmpeg"]);
    writeFileSync(join(dir, "bad.wav"), "x");
    expect(await convert(kit, join(dir, "bad.wav"), join(dir, "bad.mp3"))).toBe("ffmpeg could not convert the recording: Invalid data found when processing input");
  });
});
