// The working tree mid-refactor, through dist/coder: tracked paths that cannot be there now
// (a tracked file's folder turned into a file, a folder turned into a link loop) leave the
// repo map with those files missing, in every kind of build (cold, warm, one file changed, a
// session's second map), and a chat file turned into a folder, a pipe or a link loop is named
// in a one-line warning on each request instead of being sent as a file yet to create; a file
// an unfinished write left that became a pipe is not opened by the next start's recovery.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeServer } from "./support/fake-server.ts";
import { BINARY, block, lastUser, mainRequests, makeRepo, removeRepos, runCoder, serverWith, type Repo } from "./engine-harness.ts";
import { SCRIPT, startRepl } from "./support/repl.ts";

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

const SOURCES = {
  "main.py": "from foo.bar import alpha_value\nfrom util import helper_value\n\ndef main_entry():\n    return alpha_value() + helper_value()\n",
  "foo/bar.py": "def alpha_value():\n    return 1\n",
  "foo/baz.py": "def beta_value():\n    return 2\n",
  "util.py": "def helper_value():\n    return 3\n",
  "lib/store.py": "class StoreRoom:\n    def keep_item(self, item):\n        return item\n",
};

/** `coder map` in the repository (no model needed); a run that hangs is killed, and fails the exit code. */
function map(repo: Repo, ...args: string[]) {
  const r = Bun.spawnSync([BINARY, "map", ...args], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, NO_COLOR: "1" }, timeout: 60_000, killSignal: "SIGKILL" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** The tracked folder foo/ replaced by a file of the same name: foo/bar.py and foo/baz.py cannot be there now. */
function folderBecomesFile(repo: Repo): void {
  rmSync(join(repo.root, "foo"), { recursive: true });
  writeFileSync(join(repo.root, "foo"), "not a folder any more\n");
}

/** The map holds the files still there and none of foo/. */
function expectMapWithoutFoo(out: { code: number; stdout: string; stderr: string }): void {
  expect(out.stderr).toBe("");
  expect(out.code).toBe(0);
  expect(out.stdout).toContain("lib/store.py:\n│class StoreRoom:");
  expect(out.stdout).toContain("util.py:\n│def helper_value():");
  expect(out.stdout).not.toContain("foo/");
}

describe.skipIf(!existsSync(BINARY))("tracked paths that cannot be there now (dist/coder)", () => {
  test("coder map leaves out files under a folder now a file: cold, warm, one file changed, and through a link loop", () => {
    const cold = makeRepo(SOURCES);
    folderBecomesFile(cold);
    expectMapWithoutFoo(map(cold, "main.py"));

    const warm = makeRepo(SOURCES);
    expect(map(warm, "main.py").stdout).toContain("foo/bar.py:\n│def alpha_value():");
    folderBecomesFile(warm);
    expectMapWithoutFoo(map(warm, "main.py"));
    // And again, from the cache the first of these stored.
    expectMapWithoutFoo(map(warm, "main.py"));

    const changed = makeRepo(SOURCES);
    expect(map(changed, "main.py").code).toBe(0);
    folderBecomesFile(changed);
    changed.write("lib/store.py", SOURCES["lib/store.py"] + "\ndef fresh_shelf():\n    return 4\n");
    const out = map(changed, "main.py");
    expectMapWithoutFoo(out);
    expect(out.stdout).toContain("def fresh_shelf():");

    // A folder turned into a link to itself: lstat of a file under it fails with ELOOP.
    const loop = makeRepo(SOURCES);
    expect(map(loop, "main.py").code).toBe(0);
    rmSync(join(loop.root, "foo"), { recursive: true });
    symlinkSync("foo", join(loop.root, "foo"));
    expectMapWithoutFoo(map(loop, "main.py"));
  }, 120_000);

  test("coder -m sends the map without the files under a folder now a file, and no warning", async () => {
    const repo = makeRepo(SOURCES);
    folderBecomesFile(repo);
    const s = await serverWith([{ model: "gpt-4.1", text: "Seen." }]);
    servers.push(s);
    const r = await runCoder(repo, s, ["-m", "what does main_entry return?", "main.py"]);
    expect(r.stderr).not.toContain("repomap");
    expect(r.code).toBe(0);
    const [request] = mainRequests(s);
    const sent = JSON.stringify(request.messages);
    expect(sent).toContain("def helper_value():");
    expect(sent).toContain("class StoreRoom:");
    expect(sent).not.toContain("foo/bar.py");
    expect(lastUser(request)).toContain("what does main_entry return?");
  }, 60_000);
});

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("a REPL session while the working tree changes shape (dist/coder)", () => {
  test("a chat file turned into a folder, a pipe or a link loop is named on each request and when added again; the second /map survives a folder now a file", async () => {
    const repo = makeRepo({ ...SOURCES, "a.py": "A_MARKER = 1\n", "b.py": "B_MARKER = 2\n", "c.py": "C_MARKER = 3\n" });
    const s = await serverWith([{ model: "gpt-4.1", text: "Noted.", repeat: true }]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--no-pretty", "a.py", "b.py", "c.py", "main.py"]);
    await repl.waitFor("> ");
    repl.type("/map");
    await repl.waitFor("foo/bar.py:");
    await repl.waitFor("> ");

    rmSync(join(repo.root, "a.py"));
    mkdirSync(join(repo.root, "a.py"));
    writeFileSync(join(repo.root, "a.py", "inner.py"), "def inner_part():\n    return 0\n");
    rmSync(join(repo.root, "b.py"));
    Bun.spawnSync(["mkfifo", join(repo.root, "b.py")]);
    rmSync(join(repo.root, "c.py"));
    symlinkSync("c.py", join(repo.root, "c.py"));
    folderBecomesFile(repo);

    repl.type("/map");
    await repl.waitFor("util.py:");
    await repl.waitFor("> ");
    repl.type("look again");
    await repl.waitFor("Noted.");
    await repl.waitFor("> ");
    // Added again, each is refused with the reason, in one line naming the file.
    repl.type("/drop a.py b.py c.py");
    await repl.waitFor("> ");
    repl.type("/add a.py b.py c.py");
    await repl.waitFor("c.py goes through a symlink loop");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);

    const screen = repl.output.replace(/\r?\n/g, " ");
    expect(screen).toContain("a.py is left out of this request: a.py is a directory, not a regular file");
    expect(screen).toContain("b.py is left out of this request: b.py is a pipe (FIFO), not a regular file");
    expect(screen).toContain("c.py is left out of this request: c.py cannot be read: its symbolic links loop");
    expect(screen).toContain("Cannot add a.py: a.py is a directory");
    expect(screen).toContain("Cannot add b.py: b.py is not a regular file");
    expect(screen).not.toContain("provide failed");
    const secondMap = repl.output.slice(repl.output.lastIndexOf("> /map"));
    expect(secondMap).not.toContain("foo/bar.py");
    const [request] = mainRequests(s);
    expect(JSON.stringify(request.messages)).toContain("class StoreRoom:");
    expect(JSON.stringify(request.messages)).not.toContain("foo/bar.py");
  }, 120_000);
});

describe.skipIf(!existsSync(BINARY))("an unfinished write meets a changed working tree (dist/coder)", () => {
  test("a written file that became a pipe is not read by the next start: it is left alone as changed since", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    const hook = join(repo.root, ".git", "hooks", "pre-commit");
    writeFileSync(hook, "#!/bin/sh\necho 'hook says no' >&2\nexit 1\n", { mode: 0o755 });
    const s = await serverWith([{ model: "gpt-4.1", text: `Both.\n${block("a.py", "x = 1\n", "x = 2\n")}\n${block("b.py", "y = 1\n", "y = 2\n")}` }, { model: "gpt-4.1", text: "Hello.", repeat: true }]);
    servers.push(s);
    const failed = await runCoder(repo, s, ["--yes-always", "-m", "set both", "a.py", "b.py"]);
    expect(failed.code).toBe(1);
    expect(existsSync(join(repo.root, ".coder", "pending.json"))).toBe(true);
    rmSync(hook);
    rmSync(join(repo.root, "b.py"));
    Bun.spawnSync(["mkfifo", join(repo.root, "b.py")]);

    const next = await runCoder(repo, s, ["-m", "anything", "a.py"]);
    expect(next.code).toBe(2);
    expect(next.stderr).toContain("a.py was written. (b.py changed since and is left alone.)");
    expect(repo.read("a.py")).toBe("x = 2\n");
  }, 120_000);
});
