import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { completeRequest, createKit, kitFiles, plainFiles, runCommand } from "./kit.ts";
import { gitIgnores, listRepoFiles } from "../git/git.ts";
import type { ModelEvent } from "../plugin.ts";

test("completeRequest assembles text and tool calls; a retry voids what came before", async () => {
  const events: ModelEvent[] = [
    { type: "text", text: "lost" },
    { type: "retry", attempt: 1, delayMs: 0, reason: "429" },
    { type: "text", text: "Hel" },
    { type: "text", text: "lo" },
    { type: "tool-call", index: 1, id: "b", name: "create_file", argumentsDelta: '{"p"' },
    { type: "tool-call", index: 0, id: "a", name: "edit_file", argumentsDelta: "{}" },
    { type: "tool-call", index: 1, argumentsDelta: ":1}" },
    { type: "finish", reason: "tool_calls" },
  ];
  const adapter = { async *stream() { yield* events; } };
  const reply = await completeRequest(adapter, { model: "m", messages: [], stream: true, env: {} }, new AbortController().signal);
  expect(reply).toEqual({
    text: "Hello",
    toolCalls: [
      { id: "a", name: "edit_file", arguments: "{}" },
      { id: "b", name: "create_file", arguments: '{"p":1}' },
    ],
    finishReason: "tool_calls",
  });
});

test("runCommand: argv or shell, input, exit codes, no throw for a missing program", async () => {
  const cwd = tmpdir();
  expect(await runCommand(["sh", "-c", "cat; exit 3"], { cwd, input: "in" })).toEqual({ code: 3, stdout: "in", stderr: "" });
  expect((await runCommand("echo $((1+2))", { cwd })).stdout.trim()).toBe("3");
  expect((await runCommand(["/no/such/program"], { cwd })).code).not.toBe(0);
});

test("plainFiles refuses paths outside the root and symlinks out", async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-")));
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-out-")));
  writeFileSync(join(root, "a.txt"), "A");
  writeFileSync(join(outside, "secret"), "S");
  symlinkSync(join(outside, "secret"), join(root, "link"));
  const files = plainFiles(root, async () => ["a.txt"]);
  expect(await files.read("a.txt")).toBe("A");
  expect(await files.read("../secret")).toBeNull();
  expect(await files.read("link")).toBeNull();
  expect(() => files.absolute("../x")).toThrow("outside the repository");
  expect(existsSync(files.absolute("a.txt"))).toBe(true);
});

test("runCommand: a timeout ends the shell's children too, and says so", async () => {
  const dir = mkdtempSync(join(tmpdir(), "coder-kit-run-"));
  const r = await runCommand(`sleep 300 & echo $! > ${dir}/child; wait`, { cwd: dir, timeoutMs: 300 });
  expect(r.code).toBe(124);
  expect(r.stderr).toContain("timed out after 0.3 s; the command and the processes it started were stopped");
  const child = Number(readFileSync(join(dir, "child"), "utf8"));
  let alive = true;
  for (let i = 0; i < 200 && alive; i++) {
    try {
      process.kill(child, 0);
      alive = !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${child}/stat`, "utf8"));
    } catch {
      alive = false;
    }
    if (alive) await Bun.sleep(10);
  }
  expect(alive).toBe(false);
});

test("kit.files.readBytes: the capped reader, refusing a link to /dev/zero and a file over the cap", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-")));
  writeFileSync(join(root, "a.bin"), "12345");
  symlinkSync("/dev/zero", join(root, "zero"));
  const files = plainFiles(root, async () => [], 4);
  expect(files.readBytes!("a.bin", { maxBytes: 5 })).toMatchObject({ ok: true });
  expect(files.readBytes!("a.bin")).toMatchObject({ ok: false, missing: false, problem: "a.bin is 5 bytes, over the 4 bytes limit (--max-file-size) for files coder reads" });
  expect(files.readBytes!("zero")).toMatchObject({ ok: false, problem: "zero is a character device, not a regular file; coder reads only regular files" });
  expect(files.readBytes!("nope")).toMatchObject({ ok: false, missing: true });
});

describe("kit.files: globs and ignore rules", () => {
  /** A repository with tracked, untracked, git-ignored and .coderignore'd files. */
  function repo(): string {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-ign-")));
    const files: Record<string, string> = {
      ".gitignore": "*.log\nbuild/\n",
      ".coderignore": "secret/\n",
      "src/a.ts": "a\n",
      "src/deep/b.test.ts": "b\n",
      "tracked.log": "kept\n",
      "app.log": "noise\n",
      "build/out.js": "x\n",
      "secret/key.txt": "k\n",
      "notes.txt": "n\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const git = (...args: string[]) => Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root });
    git("init", "-q");
    git("add", ".");
    git("add", "-f", "tracked.log");
    git("commit", "-qm", "init");
    return root;
  }

  const filesOf = (root: string, git = true) => {
    const list = () => listRepoFiles(root, { git });
    return kitFiles(root, join(root, "src"), { files: plainFiles(root, list), listAll: list, ...(git ? { gitIgnores: (rel: string) => gitIgnores(root, rel) } : {}) });
  };

  test("glob: the listing's files (tracked, not .coderignore'd) that match, in the one glob syntax", async () => {
    const files = filesOf(repo());
    expect(await files.glob("src/**/*.ts")).toEqual(["src/a.ts", "src/deep/b.test.ts"]);
    expect(await files.glob("./*.{log,txt}")).toEqual(["notes.txt", "tracked.log"]);
    expect(await files.glob("**/*.txt")).toEqual(["notes.txt"]);
    expect(files.matches("src/*.ts", "src/deep/b.test.ts")).toBe(false);
    expect(files.matches("src/**/*.test.ts", "src/deep/b.test.ts")).toBe(true);
  });

  test("ignored: .coderignore, git's rules for untracked files, .git itself; a tracked file is never git-ignored", async () => {
    const files = filesOf(repo());
    expect(await files.ignored("app.log")).toBe(true);
    expect(await files.ignored("new.log")).toBe(true);
    expect(await files.ignored("build/out.js")).toBe(true);
    expect(await files.ignored("secret/key.txt")).toBe(true);
    expect(await files.ignored(".git/config")).toBe(true);
    expect(await files.ignored("tracked.log")).toBe(false);
    expect(await files.ignored("src/a.ts")).toBe(false);
    expect(await files.ignored("src/new.ts")).toBe(false);
    await expect(files.ignored("../elsewhere.txt")).rejects.toThrow("is outside the repository");
  });

  test("in a repository git itself answers: the user's own excludes file counts too", async () => {
    const root = repo();
    writeFileSync(join(root, "..", "global-ignore"), "*.secret\n");
    Bun.spawnSync(["git", "config", "core.excludesFile", join(root, "..", "global-ignore")], { cwd: root });
    expect(await filesOf(root).ignored("api.secret")).toBe(true);
    expect(await filesOf(root, false).ignored("api.secret")).toBe(false);
  });

  test("without git, the .gitignore files decide alone", async () => {
    const root = repo();
    const files = filesOf(root, false);
    expect(await files.ignored("tracked.log")).toBe(true);
    expect(await files.ignored("notes.txt")).toBe(false);
    expect(await files.glob("*.log")).toEqual([]);
  });

  test("a .coderignore that is not a regular file is refused, naming it", async () => {
    const root = repo();
    rmSync(join(root, ".coderignore"));
    mkdirSync(join(root, ".coderignore"));
    await expect(filesOf(root).ignored("notes.txt")).rejects.toThrow(".coderignore");
  });
});

test("kit.writeOutput: a file the user named, relative to cwd, replaced whole; a link at that name is refused, its target untouched", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-out-")));
  const cwd = join(root, "sub");
  const unavailable = () => {
    throw new Error("not in this test");
  };
  const kit = createKit({
    version: "0.0.0",
    root,
    cwd,
    matcher: { rungs: [], replace: unavailable, explain: unavailable },
    reports: { failedEdits: unavailable },
    countTokens: (t) => t.length,
    files: plainFiles(root, async () => []),
    registry: { adapterFor: unavailable, modelInfo: unavailable },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    readOption: unavailable,
    env: {},
  });
  expect(kit.writeOutput("out/report.html", "<p>one</p>")).toBe(join(cwd, "out", "report.html"));
  expect(kit.writeOutput("out/report.html", "<p>two</p>")).toBe(join(cwd, "out", "report.html"));
  expect(readFileSync(join(cwd, "out", "report.html"), "utf8")).toBe("<p>two</p>");
  expect(readdirSync(join(cwd, "out"))).toEqual(["report.html"]);
  writeFileSync(join(root, "victim"), "keep");
  symlinkSync(join(root, "victim"), join(cwd, "out", "link.html"));
  expect(() => kit.writeOutput(join(cwd, "out", "link.html"), "x")).toThrow("link.html is a symlink");
  expect(readFileSync(join(root, "victim"), "utf8")).toBe("keep");
  expect(lstatSync(join(cwd, "out", "link.html")).isSymbolicLink()).toBe(true);
});
