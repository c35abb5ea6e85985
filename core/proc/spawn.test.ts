import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGroup, startGroup } from "./spawn.ts";

/** True while the process is alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200 && alive(pid); i++) await Bun.sleep(25);
  return !alive(pid);
}

test("a timeout ends the command's children too, even one that ignores SIGTERM", async () => {
  const dir = mkdtempSync(join(tmpdir(), "coder-spawn-"));
  const script = `trap '' TERM; sh -c 'trap "" TERM; echo $$ > ${dir}/child; while :; do sleep 1; done' & echo started; wait`;
  const r = await spawnGroup(["sh", "-c", script], { cwd: dir, timeoutMs: 300, graceMs: 200 });
  expect(r.timedOut).toBe(true);
  expect(r.code).toBe(124);
  expect(r.stdout).toContain("started");
  const child = Number(readFileSync(join(dir, "child"), "utf8"));
  expect(await gone(child)).toBe(true);
});

test("an abort ends the group like a timeout", async () => {
  const dir = mkdtempSync(join(tmpdir(), "coder-spawn-"));
  const controller = new AbortController();
  const run = spawnGroup(["sh", "-c", `sleep 300 & echo $! > ${dir}/child; wait`], { cwd: dir, signal: controller.signal });
  for (let i = 0; i < 200 && !existsSync(join(dir, "child")); i++) await Bun.sleep(10);
  controller.abort();
  const r = await run;
  expect(r.aborted).toBe(true);
  expect(await gone(Number(readFileSync(join(dir, "child"), "utf8")))).toBe(true);
});

test("a background process holding the output pipe does not keep the result waiting", async () => {
  const dir = mkdtempSync(join(tmpdir(), "coder-spawn-"));
  const r = await spawnGroup(["sh", "-c", `setsid sleep 30 & echo $! > ${dir}/child; echo done`], { cwd: dir });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("done");
  process.kill(Number(readFileSync(join(dir, "child"), "utf8")), "SIGKILL");
});

test("input reaches stdin; output is streamed and kept; a missing program is code 127", async () => {
  const seen: string[] = [];
  const r = await spawnGroup(["sh", "-c", "cat; echo err >&2; exit 3"], { cwd: tmpdir(), input: "hello\n", onOutput: (t) => seen.push(t) });
  expect(r).toMatchObject({ code: 3, stdout: "hello\n", stderr: "err\n", timedOut: false });
  expect(seen.join("")).toContain("hello");
  expect((await spawnGroup(["/no/such/program"], { cwd: tmpdir() })).code).toBe(127);
});

describe("spawnGroup bytes", () => {
  test("bytes: true keeps stdout's bytes as they came (not UTF-8), beside the decoded text", async () => {
    const raw = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x80];
    const printf = raw.map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("");
    const r = await spawnGroup(["sh", "-c", `printf '${printf}'`], { cwd: tmpdir(), bytes: true });
    expect(r.code).toBe(0);
    expect([...r.stdoutBytes!]).toEqual(raw);
    // Without it there are none (the text alone cannot give them back: 0xff is not UTF-8).
    const plain = await spawnGroup(["sh", "-c", `printf '${printf}'`], { cwd: tmpdir() });
    expect(plain.stdoutBytes).toBeUndefined();
    expect([...new TextEncoder().encode(plain.stdout)]).not.toEqual(raw);
  });
});

describe("startGroup (kit.start)", () => {
  test("stdin and stdout are piped both ways while it runs; stderr is kept for the report", async () => {
    const seen: string[] = [];
    const child = startGroup(["sh", "-c", "echo oops >&2; while read line; do echo \"got $line\"; done"], { cwd: tmpdir(), stdin: "pipe", onStdout: (b) => seen.push(new TextDecoder().decode(b)) });
    await child.write("one\n");
    await child.write(new TextEncoder().encode("two\n"));
    for (let i = 0; i < 200 && !seen.join("").includes("got two"); i++) await Bun.sleep(10);
    expect(seen.join("")).toBe("got one\ngot two\n");
    child.endInput();
    expect(await child.exited).toEqual({ code: 0, signal: null });
    await child.closed;
    expect(child.stderrTail()).toBe("oops");
    await expect(child.write("three\n")).rejects.toThrow("is not reading its input");
  });

  test("stop ends the whole group, SIGKILL for a process that ignores SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-start-"));
    const child = startGroup(["sh", "-c", `sh -c 'trap "" TERM; echo $$ > ${dir}/child; while :; do sleep 1; done' & wait`], { cwd: dir });
    for (let i = 0; i < 200 && !existsSync(join(dir, "child")); i++) await Bun.sleep(10);
    const grandchild = Number(readFileSync(join(dir, "child"), "utf8"));
    const exit = await child.stop({ graceMs: 200 });
    expect(exit.signal).toBe("SIGTERM");
    expect(await gone(grandchild)).toBe(true);
  });

  test("when its first process exits on its own, what it started goes too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-start-"));
    const child = startGroup(["sh", "-c", `sleep 300 & echo $! > ${dir}/child; exit 3`], { cwd: dir });
    expect((await child.exited).code).toBe(3);
    await child.closed;
    expect(await gone(Number(readFileSync(join(dir, "child"), "utf8")))).toBe(true);
  });

  test("stop({ signal }) sends that signal first (a recorder finishes its file on SIGINT); a missing program throws naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-start-"));
    const child = startGroup(["sh", "-c", `trap 'echo finished > ${dir}/out; exit 0' INT; echo ready; while :; do sleep 0.05; done`], { cwd: dir, onStdout: () => {} });
    await Bun.sleep(200);
    expect(await child.stop({ signal: "SIGINT", graceMs: 5000 })).toEqual({ code: 0, signal: null });
    expect(readFileSync(join(dir, "out"), "utf8")).toBe("finished\n");
    expect(() => startGroup(["/no/such/program"], { cwd: dir })).toThrow("could not start /no/such/program");
  });
});
