import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { currentOwner, ownerRunning, processStartTime, RepoLock } from "./lock.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), "coder-lock-"));
  made.push(dir);
  mkdirSync(join(dir, ".coder"));
  return dir;
}

const lockFile = (root: string) => join(root, ".coder", "write.lock");

describe("who holds a lock", () => {
  test.skipIf(process.platform !== "linux")("a process's start time comes from /proc; a missing process has none", () => {
    expect(processStartTime(process.pid)).toMatch(/^\d+$/);
    expect(processStartTime(2147483646)).toBeNull();
  });

  test("this process runs; the same pid with another start time, another machine or a dead pid does not", () => {
    const self = currentOwner();
    expect(ownerRunning(self)).toBe(true);
    if (self.start !== null) expect(ownerRunning({ ...self, start: `${self.start}0` })).toBe(false);
    expect(ownerRunning({ ...self, host: `${self.host}-elsewhere` })).toBe(false);
    expect(ownerRunning({ ...self, pid: 2147483646 })).toBe(false);
    if (self.boot !== null) expect(ownerRunning({ ...self, boot: "another-boot" })).toBe(false);
  });
});

describe("RepoLock", () => {
  test("is created complete, with its holder and a token, and released leaving nothing behind", async () => {
    const root = repo();
    const lock = new RepoLock(root);
    expect(await lock.acquire(0)).toBe("held");
    const record = JSON.parse(readFileSync(lockFile(root), "utf8"));
    expect(record).toMatchObject({ version: 1, pid: process.pid, host: currentOwner().host });
    expect(record.token).toMatch(/^[0-9a-f-]{36}$/);
    lock.release();
    expect(readdirSync(join(root, ".coder"))).toEqual([]);
  });

  test("a lock its running holder keeps makes a second one wait (named once), then answer busy", async () => {
    const root = repo();
    const first = new RepoLock(root);
    expect(await first.acquire(0)).toBe("held");
    const waits: number[] = [];
    expect(await new RepoLock(root).acquire(120, { onWait: (h) => waits.push(h.pid) })).toBe("busy");
    expect(waits).toEqual([process.pid]);
    first.release();
  });

  test("the abort signal stops the wait", async () => {
    const root = repo();
    const first = new RepoLock(root);
    await first.acquire(0);
    const abort = new AbortController();
    const waiting = new RepoLock(root).acquire(600_000, { signal: abort.signal, onWait: () => abort.abort() });
    expect(await waiting).toBe("aborted");
    first.release();
  });

  for (const [name, plant] of [
    ["empty", (file: string) => writeFileSync(file, "")],
    ["an old-style pid (1)", (file: string) => writeFileSync(file, "1\n")],
    ["a link to a file outside", (file: string) => symlinkSync("/etc/hostname", file)],
    ["coder's format naming pid 1", (file: string) => writeFileSync(file, JSON.stringify({ version: 1, ...currentOwner(), pid: 1, token: "x", created: "" }))],
  ] as const) {
    test(`a lock that binds nobody (${name}) is taken over, saying why`, async () => {
      const root = repo();
      plant(lockFile(root));
      const said: string[] = [];
      const lock = new RepoLock(root);
      expect(await lock.acquire(0, { onTakeOver: (why) => said.push(why) })).toBe("held");
      expect(said).toHaveLength(1);
      expect(JSON.parse(readFileSync(lockFile(root), "utf8")).pid).toBe(process.pid);
      lock.release();
      expect(existsSync(lockFile(root))).toBe(false);
    });
  }

  test("a holder taken over meanwhile does not remove its successor's lock on release", async () => {
    const root = repo();
    const stale = new RepoLock(root);
    await stale.acquire(0);
    writeFileSync(lockFile(root), JSON.stringify({ version: 1, ...currentOwner(), token: "successor", created: new Date().toISOString() }));
    stale.release();
    expect(JSON.parse(readFileSync(lockFile(root), "utf8")).token).toBe("successor");
  });
});

/** A 64 KiB tmpfs for the length of `body` (root on Linux only); false when none can be mounted. */
async function onTinyDisk(body: (dir: string) => Promise<void>): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "coder-full-"));
  made.push(dir);
  if (Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]).exitCode !== 0) return false;
  try {
    await body(dir);
  } finally {
    Bun.spawnSync(["umount", dir]);
  }
  return true;
}

test.skipIf(process.platform !== "linux" || process.getuid?.() !== 0)("on a full disk the lock is not taken and nothing is left behind (no empty lock to block later edits)", async () => {
  const mounted = await onTinyDisk(async (root) => {
    mkdirSync(join(root, ".coder"));
    // Fill the disk to its last block.
    const filler = join(root, "filler");
    writeFileSync(filler, "");
    try {
      for (;;) appendFileSync(filler, Buffer.alloc(4096, 1));
    } catch {
      // full
    }
    await expect(new RepoLock(root).acquire(0)).rejects.toThrow("ENOSPC");
    expect(readdirSync(join(root, ".coder"))).toEqual([]);
    rmSync(filler);
    const lock = new RepoLock(root);
    expect(await lock.acquire(0)).toBe("held");
    lock.release();
  });
  if (!mounted) console.warn("skipped: no tmpfs could be mounted here");
});
