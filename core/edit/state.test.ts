import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { appendState, makeTempFolder, outputFolderAt, readState, removeState, reopenTempFolder, stateFolder, statePath, StateFileError, writeState } from "./state.ts";

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

describe("kit.tempFolder: writes confined to the folder", () => {
  test("write makes folders and replaces whole; .., absolute paths and a linked folder on the way are refused, nothing written outside", () => {
    const outside = temp();
    const folder = makeTempFolder("t/e st");
    made.push(folder.path);
    expect(basename(folder.path)).toMatch(/^coder-t_e_st-[A-Za-z0-9]{6}$/);
    expect(folder.path).toBe(realpathSync(folder.path));
    expect(folder.write("a/b/c.txt", "one")).toBe(join(folder.path, "a", "b", "c.txt"));
    folder.write("a/b/c.txt", new Uint8Array([0x74, 0x77, 0x6f]));
    expect(readFileSync(join(folder.path, "a/b/c.txt"), "utf8")).toBe("two");
    expect(readdirSync(join(folder.path, "a/b"))).toEqual(["c.txt"]);
    expect(() => folder.write("../escape.txt", "x")).toThrow(StateFileError);
    expect(() => folder.write(join(outside, "abs.txt"), "x")).toThrow("is not a path inside");
    symlinkSync(outside, join(folder.path, "out"));
    expect(() => folder.write("out/x.txt", "x")).toThrow("out is a symlink");
    expect(() => folder.copyIn(join(folder.path, "a/b/c.txt"), "out/y.txt")).toThrow("out is a symlink");
    expect(readdirSync(outside)).toEqual([]);
  });

  test("a link planted at a name written is replaced, its target untouched", () => {
    const outside = temp();
    writeFileSync(join(outside, "victim"), "keep");
    const folder = makeTempFolder("t");
    made.push(folder.path);
    symlinkSync(join(outside, "victim"), join(folder.path, "test.py"));
    folder.write("test.py", "new");
    expect(lstatSync(join(folder.path, "test.py")).isFile()).toBe(true);
    expect(readFileSync(join(folder.path, "test.py"), "utf8")).toBe("new");
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("keep");
  });

  test("copyIn copies a folder (modes kept, top-level skips left out, links not copied) or one file over a link", () => {
    const source = temp();
    writeFileSync(join(source, "run.sh"), "#!/bin/sh\n");
    chmodSync(join(source, "run.sh"), 0o755);
    mkdirSync(join(source, "src/.meta"), { recursive: true });
    writeFileSync(join(source, "src/.meta/kept.txt"), "deep skip names are kept");
    chmodSync(join(source, "src"), 0o555);
    mkdirSync(join(source, ".meta"));
    writeFileSync(join(source, ".meta/example"), "the answer");
    symlinkSync("/etc/passwd", join(source, "link"));
    const folder = makeTempFolder("t");
    made.push(folder.path);
    expect(folder.copyIn(source, "task", { skip: [".meta"] })).toBe(join(folder.path, "task"));
    expect(readdirSync(join(folder.path, "task")).sort()).toEqual(["run.sh", "src"]);
    expect(statSync(join(folder.path, "task/run.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(folder.path, "task/src/.meta/kept.txt"), "utf8")).toBe("deep skip names are kept");
    expect(statSync(join(folder.path, "task/src")).mode & 0o777).toBe(0o555);
    chmodSync(join(source, "src"), 0o755);
    chmodSync(join(folder.path, "task/src"), 0o755);
    const outside = temp();
    writeFileSync(join(outside, "victim"), "keep");
    symlinkSync(join(outside, "victim"), join(folder.path, "task/one.txt"));
    folder.copyIn(join(source, ".meta/example"), "task/one.txt");
    expect(readFileSync(join(folder.path, "task/one.txt"), "utf8")).toBe("the answer");
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("keep");
  });

  test("remove(rel) removes a file, a folder, or a link itself; remove() the whole folder", () => {
    const outside = temp();
    writeFileSync(join(outside, "victim"), "keep");
    const folder = makeTempFolder("t");
    made.push(folder.path);
    folder.write("d/f.txt", "x");
    folder.write("g.txt", "y");
    symlinkSync(outside, join(folder.path, "l"));
    folder.remove("l");
    folder.remove("d");
    folder.remove("missing/too");
    expect(() => folder.remove("../x")).toThrow(StateFileError);
    expect(readdirSync(folder.path)).toEqual(["g.txt"]);
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("keep");
    folder.remove();
    expect(existsSync(folder.path)).toBe(false);
  });

  test("reopenTempFolder: only a real folder of that prefix directly in the temp folder", () => {
    const folder = makeTempFolder("reo");
    made.push(folder.path);
    expect(reopenTempFolder("reo", folder.path)?.path).toBe(folder.path);
    expect(reopenTempFolder("other", folder.path)).toBeNull();
    const elsewhere = join(temp(), basename(folder.path));
    mkdirSync(elsewhere);
    expect(reopenTempFolder("reo", elsewhere)).toBeNull();
    const link = join(dirname(folder.path), `coder-reo-link${process.pid}`);
    symlinkSync(folder.path, link);
    made.push(link);
    expect(reopenTempFolder("reo", link)).toBeNull();
    reopenTempFolder("reo", folder.path)!.remove();
    expect(existsSync(folder.path)).toBe(false);
  });
});

describe("kit.outputFolder: a folder the user named", () => {
  test("made on the first write; write replaces whole, append adds with one write; a link or hard link at a name is refused", () => {
    const base = temp();
    const out = outputFolderAt(join(base, "runs/one"));
    expect(out.path).toBe(join(base, "runs/one"));
    out.write("run.json", "{}\n");
    out.append("tasks.jsonl", "a\n");
    out.append("tasks.jsonl", "b\n");
    out.write("run.json", "{ }\n");
    expect(readFileSync(join(out.path, "tasks.jsonl"), "utf8")).toBe("a\nb\n");
    expect(readdirSync(out.path).sort()).toEqual(["run.json", "tasks.jsonl"]);
    writeFileSync(join(base, "victim"), "keep");
    symlinkSync(join(base, "victim"), join(out.path, "summary.json"));
    expect(() => out.write("summary.json", "x")).toThrow("summary.json is a symlink");
    expect(() => out.append("summary.json", "x")).toThrow("summary.json is a symlink");
    linkSync(join(base, "victim"), join(out.path, "hard.jsonl"));
    expect(() => out.append("hard.jsonl", "x")).toThrow("has other hard links");
    expect(() => out.write("../x", "x")).toThrow(StateFileError);
    expect(readFileSync(join(base, "victim"), "utf8")).toBe("keep");
  });

  test("under .coder/ every folder on the way is checked: a linked eval folder is refused", () => {
    const root = temp();
    const outside = temp();
    mkdirSync(join(root, ".coder"));
    symlinkSync(outside, join(root, ".coder", "eval"));
    expect(() => outputFolderAt(join(root, ".coder/eval/run1")).write("run.json", "{}")).toThrow(".coder/eval is a symlink");
    expect(readdirSync(outside)).toEqual([]);
  });
});
