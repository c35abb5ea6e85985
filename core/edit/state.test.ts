import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendState, readState, removeState, stateFolder, statePath, StateFileError, writeState } from "./state.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), "coder-state-"));
  made.push(dir);
  return dir;
}

/** A repository root and a file outside it that a planted link points at. */
function planted(): { root: string; victim: string } {
  const root = temp();
  const victim = join(temp(), "victim");
  writeFileSync(victim, "mine\n");
  return { root, victim };
}

describe("the one writer under .coder/", () => {
  test("a .coder folder it makes ignores itself: git add -A in the repository tracks nothing under it", () => {
    const root = temp();
    const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
    git("init", "-q");
    writeFileSync(join(root, "a.txt"), "a\n");
    writeState(root, "cache/repomap/tags.sqlite", "x");
    git("add", "-A");
    const tracked = new TextDecoder().decode(git("ls-files").stdout).trim().split("\n");
    expect(tracked).toEqual(["a.txt"]);
    // An existing .gitignore there (the user's, or one coder made before) is left as it is.
    writeFileSync(join(root, ".coder", ".gitignore"), "mine\n");
    writeState(root, "web/page.md", "# page\n");
    expect(readFileSync(join(root, ".coder", ".gitignore"), "utf8")).toBe("mine\n");
  });

  test("writes text and bytes atomically, making the folders, leaving no temp file", () => {
    const root = temp();
    const file = writeState(root, "web/page.md", "# page\n");
    expect(file).toBe(join(root, ".coder", "web", "page.md"));
    expect(readFileSync(file, "utf8")).toBe("# page\n");
    writeState(root, "pastes/a.png", new Uint8Array([137, 80, 78, 71]));
    expect([...readFileSync(join(root, ".coder/pastes/a.png"))]).toEqual([137, 80, 78, 71]);
    expect(readdirSync(join(root, ".coder/web"))).toEqual(["page.md"]);
  });

  test("a link at the file is refused by name, and its target is untouched", () => {
    const { root, victim } = planted();
    mkdirSync(join(root, ".coder/web"), { recursive: true });
    symlinkSync(victim, join(root, ".coder/web/page.md"));
    expect(() => writeState(root, "web/page.md", "evil")).toThrow(new StateFileError(".coder/web/page.md is a symlink; coder never writes its records through a link (delete it)"));
    expect(readFileSync(victim, "utf8")).toBe("mine\n");
  });

  test("a linked folder at any depth is refused, and nothing lands in its target", () => {
    const { root } = planted();
    const outside = temp();
    mkdirSync(join(root, ".coder/cache"), { recursive: true });
    symlinkSync(outside, join(root, ".coder/cache/mcp"));
    expect(() => writeState(root, "cache/mcp/tools.json", "{}")).toThrow(".coder/cache/mcp is a symlink");
    expect(readdirSync(outside)).toEqual([]);
    expect(() => stateFolder(root, "cache/mcp")).toThrow(".coder/cache/mcp is a symlink");
  });

  test("appending refuses a link and a hard-linked record", () => {
    const { root, victim } = planted();
    mkdirSync(join(root, ".coder"), { recursive: true });
    symlinkSync(victim, join(root, ".coder/input.history"));
    expect(() => appendState(root, "input.history", "line\n")).toThrow(".coder/input.history is a symlink");
    rmSync(join(root, ".coder/input.history"));
    linkSync(victim, join(root, ".coder/input.history"));
    expect(() => appendState(root, "input.history", "line\n")).toThrow(".coder/input.history has other hard links");
    expect(readFileSync(victim, "utf8")).toBe("mine\n");
  });

  test("a database path is checked with its -wal/-shm siblings", () => {
    const { root, victim } = planted();
    expect(statePath(root, "cache/repomap/tags.sqlite", ["-wal"])).toBe(join(root, ".coder/cache/repomap/tags.sqlite"));
    symlinkSync(victim, join(root, ".coder/cache/repomap/tags.sqlite-wal"));
    expect(() => statePath(root, "cache/repomap/tags.sqlite", ["-wal"])).toThrow(".coder/cache/repomap/tags.sqlite-wal is a symlink");
  });

  test("a path leaving .coder/ is refused", () => {
    const root = temp();
    expect(() => writeState(root, "../a.py", "x")).toThrow("../a.py is not a path inside .coder/");
    expect(() => writeState(root, "/etc/passwd", "x")).toThrow("is not a path inside .coder/");
    expect(existsSync(join(root, "a.py"))).toBe(false);
  });

  test("removing takes away a link itself, never its target, and makes nothing", () => {
    const { root, victim } = planted();
    removeState(root, "acp/x.json");
    expect(existsSync(join(root, ".coder"))).toBe(false);
    mkdirSync(join(root, ".coder"));
    symlinkSync(victim, join(root, ".coder/write.lock"));
    removeState(root, "write.lock");
    expect(() => lstatSync(join(root, ".coder/write.lock"))).toThrow();
    expect(readFileSync(victim, "utf8")).toBe("mine\n");
  });

  test("reading gives a plain file's bytes, never a link's target, a device's endless bytes or a file over the cap", () => {
    const { root, victim } = planted();
    writeState(root, "cache/p/list.json", "[1]");
    expect(new TextDecoder().decode(readState(root, "cache/p/list.json", 100)!)).toBe("[1]");
    expect(readState(root, "cache/p/list.json", 2)).toBeNull();
    expect(readState(root, "cache/p/none.json", 100)).toBeNull();
    symlinkSync(victim, join(root, ".coder/cache/p/linked.json"));
    expect(readState(root, "cache/p/linked.json", 100)).toBeNull();
    symlinkSync("/dev/zero", join(root, ".coder/cache/p/zero.json"));
    expect(readState(root, "cache/p/zero.json", 100)).toBeNull();
  });
});
