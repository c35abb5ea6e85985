import { expect, test } from "bun:test";
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCapped, readHead } from "./read.ts";

const dir = () => mkdtempSync(join(tmpdir(), "coder-read-"));

test("a regular file under the cap is read whole, with its mode", () => {
  const d = dir();
  writeFileSync(join(d, "a"), "hello", { mode: 0o640 });
  const r = readCapped(join(d, "a"), { maxBytes: 5 });
  expect(r.ok && new TextDecoder().decode(r.bytes)).toBe("hello");
  expect(r.ok && r.mode).toBe(0o640);
});

test("over the cap: refused with the size, naming the file and the cap", () => {
  const d = dir();
  writeFileSync(join(d, "a"), "hello!");
  const r = readCapped(join(d, "a"), { maxBytes: 5, name: ".env", capName: "--max-file-size" });
  expect(r).toMatchObject({ ok: false, reason: "too-large" });
  expect(!r.ok && r.message).toContain(".env is 6 bytes, over the 5 bytes limit (--max-file-size)");
});

test("links to /dev/zero and /dev/stdin, and a FIFO, are refused without reading", () => {
  const d = dir();
  symlinkSync("/dev/zero", join(d, "zero"));
  symlinkSync("/dev/stdin", join(d, "stdin"));
  Bun.spawnSync(["mkfifo", join(d, "fifo")]);
  for (const name of ["zero", "stdin", "fifo"]) {
    const r = readCapped(join(d, name), { maxBytes: 1024, name });
    expect(r).toMatchObject({ ok: false, reason: "not-regular" });
    expect(!r.ok && r.message).toContain(`${name} is a`);
    expect(readHead(join(d, name), 16)).toBeNull();
  }
});

test("a missing file is its own reason", () => {
  expect(readCapped(join(dir(), "nope"), { maxBytes: 10 })).toMatchObject({ ok: false, reason: "missing" });
});

test("a path that cannot be there now is missing (under a file, a name too long); a link loop is named as one", () => {
  const d = dir();
  writeFileSync(join(d, "plain"), "x");
  for (const path of [join(d, "plain", "inner.ts"), join(d, `${"n".repeat(300)}.ts`)]) {
    expect(readCapped(path, { maxBytes: 10, name: "f.ts" })).toEqual({ ok: false, reason: "missing", message: "f.ts does not exist" });
  }
  symlinkSync("loop", join(d, "loop"));
  expect(readCapped(join(d, "loop"), { maxBytes: 10, name: "loop" })).toEqual({ ok: false, reason: "unreadable", message: "loop cannot be read: its symbolic links loop" });
});
