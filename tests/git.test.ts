// core/git/git.ts in real temp repositories: root, file lists, commits (edit, dirty,
// pending), attribution, identity fallback, hooks, the record, /undo and its refusals.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findRepoRoot, GitRepo, listRepoFiles, offerRepository, plainIndexPath, trackedStateFiles } from "../core/git/git.ts";
import { filesIn, head, isolateGitEnv, log, makeRepo, sh, write } from "./git-helpers.ts";

const savedEnv = { ...process.env };
beforeAll(() => {
  isolateGitEnv();
});
afterAll(() => {
  process.env = savedEnv;
});

async function open(root: string, notes: string[] = []): Promise<GitRepo> {
  const repo = await GitRepo.open(root, { notify: (_level, text) => notes.push(text) });
  if (!repo) throw new Error("no repo");
  return repo;
}

describe("root and files", () => {
  test("findRepoRoot finds the top from a subdirectory, null outside", async () => {
    const root = makeRepo({ "src/a.ts": "a\n" });
    expect(await findRepoRoot(join(root, "src"))).toBe(root);
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "coder-nogit-")));
    expect(await findRepoRoot(outside)).toBeNull();
  });

  test("offerRepository creates a repository only when the user agrees", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "coder-nogit-")));
    expect(await offerRepository(dir, async () => false)).toBeNull();
    expect(existsSync(join(dir, ".git"))).toBe(false);
    const repo = await offerRepository(dir, async (q) => q.includes("not a git repository"));
    expect(repo?.root).toBe(dir);
    expect(await findRepoRoot(dir)).toBe(dir);
    let asked = false;
    expect((await offerRepository(dir, async () => (asked = true)))?.root).toBe(dir);
    expect(asked).toBe(false);
  });

  test("listRepoFiles lists tracked files, applies .coderignore, refreshes when the index changes", async () => {
    const root = makeRepo({ "src/a.ts": "a\n", "src/b.ts": "b\n", "vendor/x.js": "x\n", "weird name ü.txt": "w\n" });
    expect(await listRepoFiles(root)).toEqual(["src/a.ts", "src/b.ts", "vendor/x.js", "weird name ü.txt"]);
    write(root, "untracked.ts", "u\n");
    expect(await listRepoFiles(root)).not.toContain("untracked.ts");
    sh(root, ["add", "untracked.ts"]);
    expect(await listRepoFiles(root)).toContain("untracked.ts");
    write(root, ".coderignore", "vendor/\n*.txt\n");
    const files = await listRepoFiles(root);
    expect(files).not.toContain("vendor/x.js");
    expect(files).not.toContain("weird name ü.txt");
    expect(files).toContain("src/a.ts");
  });

  test("plainIndexPath names the index git names, and only where git would not put it elsewhere", () => {
    const root = makeRepo({ "a.ts": "a\n" });
    const asked = sh(root, ["rev-parse", "--path-format=absolute", "--git-path", "index"]).trim();
    expect(plainIndexPath(root)).toBe(asked);
    // A worktree's .git is a file: git is asked.
    const tree = join(realpathSync(mkdtempSync(join(tmpdir(), "coder-wt-"))), "wt");
    sh(root, ["worktree", "add", "-q", tree]);
    expect(plainIndexPath(tree)).toBeNull();
    // A variable that moves the index: git is asked.
    process.env.GIT_INDEX_FILE = join(root, "other-index");
    try {
      expect(plainIndexPath(root)).toBeNull();
    } finally {
      delete process.env.GIT_INDEX_FILE;
    }
    // A repository with nothing added has no index yet.
    const fresh = realpathSync(mkdtempSync(join(tmpdir(), "coder-fresh-")));
    sh(fresh, ["init", "-q"]);
    expect(plainIndexPath(fresh)).toBeNull();
    // Not a repository at all.
    expect(plainIndexPath(realpathSync(mkdtempSync(join(tmpdir(), "coder-nogit-"))))).toBeNull();
  });

  test("listRepoFiles lists a worktree's files, and refreshes when its index changes (git is asked where the index is)", async () => {
    const root = makeRepo({ "a.ts": "a\n" });
    const tree = join(realpathSync(mkdtempSync(join(tmpdir(), "coder-wt-"))), "wt");
    sh(root, ["worktree", "add", "-q", tree]);
    expect(await listRepoFiles(tree)).toEqual(["a.ts"]);
    write(tree, "b.ts", "b\n");
    sh(tree, ["add", "b.ts"]);
    expect(await listRepoFiles(tree)).toEqual(["a.ts", "b.ts"]);
    // The main repository's index did not change: its listing is its own.
    expect(await listRepoFiles(root)).toEqual(["a.ts"]);
  });

  test("the check of .coder and the first listing of a plain repository are one git call; a changed index is listed again", async () => {
    const root = makeRepo({ "a.ts": "a\n", ".coder/planted.json": "{}\n", "b/c.ts": "c\n" });
    // Every git the code starts is logged by a shim first on the PATH.
    const bin = realpathSync(mkdtempSync(join(tmpdir(), "coder-shim-")));
    const log = join(bin, "calls.log");
    const real = Bun.which("git")!;
    writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, "git"), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
    try {
      const [tracked, files] = await Promise.all([trackedStateFiles(root), listRepoFiles(root)]);
      expect(tracked).toEqual([".coder/planted.json"]);
      expect(files).toEqual([".coder/planted.json", "a.ts", "b/c.ts"]);
      expect(calls()).toEqual(["ls-files -z --cached"]);
      // The same index: nothing runs.
      expect(await listRepoFiles(root)).toEqual(files);
      expect(await trackedStateFiles(root)).toEqual(tracked);
      expect(calls()).toHaveLength(1);
      // Another index: listed again, for both.
      sh(root, ["rm", "-q", "--cached", ".coder/planted.json"]);
      expect(await trackedStateFiles(root)).toEqual([]);
      expect(await listRepoFiles(root)).toEqual(["a.ts", "b/c.ts"]);
      expect(calls().filter((c) => c.startsWith("ls-files"))).toHaveLength(2);
    } finally {
      process.env.PATH = path;
    }
  });

  test("a .git folder git does not take as a repository is not listed by it: the folder is walked as before", async () => {
    // An empty .git folder: git looks further up and finds no repository.
    const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-nogit-")));
    mkdirSync(join(root, ".git"));
    write(root, "a.py", "1\n");
    expect(await listRepoFiles(root)).toEqual(["a.py"]);
    // A .git folder with HEAD and an index that git cannot read: listed by walking, as when git is asked first.
    writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(root, ".git", "index"), "not an index");
    write(root, "b.py", "2\n");
    expect(await listRepoFiles(root)).toEqual(["a.py", "b.py"]);
  });

  test("without git: walks the directory, skipping .git, node_modules, dot-dirs and .gitignore'd paths", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-nogit-")));
    write(root, "a.py", "1\n");
    write(root, "pkg/b.py", "2\n");
    write(root, "node_modules/m/index.js", "3\n");
    write(root, ".venv/lib.py", "4\n");
    write(root, "build/out.js", "5\n");
    write(root, ".gitignore", "build/\n");
    expect(await listRepoFiles(root)).toEqual([".gitignore", "a.py", "pkg/b.py"]);
  });

  test("isIgnored follows .gitignore but never ignores a tracked file", async () => {
    const root = makeRepo({ "keep.log": "tracked\n" });
    write(root, ".gitignore", "*.log\n");
    const repo = await open(root);
    expect(repo.isIgnored("other.log")).toBe(true);
    expect(repo.isIgnored("keep.log")).toBe(false);
    expect(repo.isIgnored("src/x.ts")).toBe(false);
  });

  test("isDirty sees modified, staged and untracked files", async () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    const repo = await open(root);
    expect(await repo.isDirty("a.txt")).toBe(false);
    write(root, "a.txt", "changed\n");
    write(root, "new.txt", "n\n");
    write(root, "b.txt", "staged\n");
    sh(root, ["add", "b.txt"]);
    expect(await repo.isDirty("a.txt")).toBe(true);
    expect(await repo.isDirty("b.txt")).toBe(true);
    expect(await repo.isDirty("new.txt")).toBe(true);
    expect((await repo.dirtyFiles()).sort()).toEqual(["a.txt", "b.txt", "new.txt"]);
  });
});

describe("commits", () => {
  test("commitEdits commits only coder's files, with a trailer, and records it", async () => {
    const root = makeRepo({ "app.py": "print(1)\n", "other.py": "x = 1\n" });
    const repo = await open(root);
    write(root, "other.py", "x = 2  # the user's own work\n");
    sh(root, ["add", "other.py"]); // staged by the user: must stay staged, uncommitted
    write(root, "app.py", "print(2)\n");
    write(root, "new_mod.py", "def f():\n    return 1\n");
    const out = await repo.commitEdits(["app.py", "new_mod.py"], { message: "feat: print two and add new_mod", model: "openai/gpt-4.1" });
    expect(out.status).toBe("committed");
    expect(filesIn(root).sort()).toEqual(["app.py", "new_mod.py"]);
    const body = sh(root, ["log", "-1", "--format=%B"]);
    expect(body).toStartWith("feat: print two and add new_mod\n");
    expect(body).toContain("Co-authored-by: coder (openai/gpt-4.1) <");
    expect(sh(root, ["log", "-1", "--format=%an <%ae>"]).trim()).toBe("Test User <test@example.com>");
    expect(sh(root, ["diff", "--cached", "--name-only"]).trim()).toBe("other.py");
    const rec = repo.coderCommits().at(-1)!;
    expect(rec.hash).toBe(head(root));
    expect(rec.kind).toBe("edit");
    expect(rec.files).toContainEqual({ path: "new_mod.py", created: true, deleted: false });
    expect(existsSync(join(root, ".coder/commits.json"))).toBe(true);
  });

  test("commitEdits falls back to a deterministic message when none or a useless one is given", async () => {
    const root = makeRepo({ "calc.py": "def add(a, b):\n    return a - b\n" });
    const repo = await open(root);
    write(root, "calc.py", "def add(a, b):\n    return a + b\n");
    const out = await repo.commitEdits(["calc.py"], { message: "Update", request: "Fix the bug in add: it subtracts.", model: "m" });
    expect(out.status).toBe("committed");
    const subject = log(root)[0]!;
    expect(subject).toMatch(/^fix: /);
    expect(subject.length).toBeLessThanOrEqual(72);
    expect(subject).toContain("fix the bug in add");
  });

  test("commitEdits with nothing changed commits nothing", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const repo = await open(root);
    const before = head(root);
    expect((await repo.commitEdits(["a.txt"], { message: "feat: x", model: "m" })).status).toBe("nothing");
    expect(head(root)).toBe(before);
  });

  test("a deleted file is committed as a deletion", async () => {
    const root = makeRepo({ "a.txt": "a\n", "gone.txt": "bye\n" });
    const repo = await open(root);
    unlinkSync(join(root, "gone.txt"));
    const out = await repo.commitEdits(["gone.txt"], { model: "m" });
    expect(out.status).toBe("committed");
    expect(sh(root, ["ls-files"]).trim()).toBe("a.txt");
    expect(log(root)[0]).toBe("chore: remove gone.txt");
  });

  test("works in a repository without commits yet, and /undo refuses the first commit", async () => {
    const root = makeRepo({});
    const repo = await open(root);
    write(root, "first.py", "x = 1\n");
    const out = await repo.commitEdits(["first.py"], { message: "feat: add first module", model: "m" });
    expect(out.status).toBe("committed");
    expect(log(root)).toEqual(["feat: add first module"]);
    const res = await repo.undo();
    expect(res.ok).toBe(false);
    expect(res.message).toContain("first commit");
  });

  test("paths are literal, never pathspec patterns", async () => {
    const root = makeRepo({ "a.py": "a\n", "b.py": "b\n" });
    const repo = await open(root);
    write(root, "a.py", "A\n");
    write(root, "b.py", "B\n");
    write(root, "*.py", "star\n");
    const out = await repo.commitEdits(["*.py"], { message: "feat: add the star file", model: "m" });
    expect(out.status).toBe("committed");
    expect(filesIn(root)).toEqual(["*.py"]);
    expect((await repo.dirtyFiles()).sort()).toEqual(["a.py", "b.py"]);
  });

  test("attribution author / committer / none", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const repo = await open(root);
    write(root, "a.txt", "1\n");
    await repo.commitEdits(["a.txt"], { message: "feat: one", model: "m", attribution: "author" });
    expect(sh(root, ["log", "-1", "--format=%an|%cn|%B"]).trim()).toBe("Test User (coder)|Test User|feat: one");
    write(root, "a.txt", "2\n");
    await repo.commitEdits(["a.txt"], { message: "feat: two", model: "m", attribution: "committer" });
    expect(sh(root, ["log", "-1", "--format=%an|%cn"]).trim()).toBe("Test User|Test User (coder)");
    write(root, "a.txt", "3\n");
    await repo.commitEdits(["a.txt"], { message: "feat: three", model: "m", attribution: "none" });
    expect(sh(root, ["log", "-1", "--format=%an|%cn|%B"]).trim()).toBe("Test User|Test User|feat: three");
    expect(repo.coderCommits().length).toBe(3);
  });

  test("commitDirty commits the user's pending changes on their own, then the edit commit holds only the model's change", async () => {
    const root = makeRepo({ "m.py": "a = 1\nb = 2\n" });
    const repo = await open(root);
    write(root, "m.py", "a = 1\nb = 2\nc = 3  # user\n");
    write(root, "fresh.py", "user's new file\n");
    const dirty = await repo.commitDirty(["m.py", "fresh.py"]);
    expect(dirty.status).toBe("committed");
    expect(filesIn(root).sort()).toEqual(["fresh.py", "m.py"]);
    expect(sh(root, ["log", "-1", "--format=%B"])).not.toContain("Co-authored-by");
    write(root, "m.py", "a = 10\nb = 2\nc = 3  # user\n");
    await repo.commitEdits(["m.py"], { message: "refactor: set a to ten", model: "m" });
    const diff = sh(root, ["show", "--format=", "HEAD"]);
    expect(diff).toContain("-a = 1\n+a = 10");
    expect(diff).not.toContain("+c = 3");
    expect(repo.coderCommits().map((c) => c.kind)).toEqual(["dirty", "edit"]);
    expect((await repo.commitDirty(["m.py"])).status).toBe("nothing");
  });

  test("a file ignored before coder's first write stays ignored after .gitignore changes, and no dirty commit saves it", async () => {
    const root = makeRepo({ "a.py": "a\n", ".gitignore": ".env\nbuild/\n" });
    write(root, ".env", "SECRET=1\n");
    write(root, "build/out.js", "x\n");
    const repo = await open(root);
    expect(repo.isIgnored(".env")).toBe(true);
    repo.freezeIgnored(); // what the file store does before its first write
    // The rules change (the model's edit, allowed): what was ignored at the start stays so.
    write(root, ".gitignore", "");
    expect(repo.isIgnored(".env")).toBe(true);
    expect(repo.isIgnored("build/out.js")).toBe(true);
    expect(repo.isIgnored("a.py")).toBe(false);
    write(root, ".env", "SECRET=1\nDEBUG=1\n");
    const dirty = await repo.commitDirty([".env", "build/out.js"]);
    expect(dirty.status).toBe("nothing");
    expect(sh(root, ["log", "--all", "-p"])).not.toContain("SECRET");
  });

  test("committedTexts gives HEAD's text of the files with uncommitted changes only", async () => {
    const root = makeRepo({ "a.py": "x = 30\n", "b.py": "y = 1\n" });
    const repo = await open(root);
    write(root, "a.py", "x = 60\n");
    write(root, "new.py", "z\n");
    expect([...(await repo.committedTexts(["a.py", "b.py", "new.py"]))]).toEqual([["a.py", "x = 30\n"]]);
  });

  test("without an identity: says so once and commits with a local fallback, config untouched", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const saved = { ...process.env };
    isolateGitEnv(false);
    try {
      const notes: string[] = [];
      const repo = await open(root, notes);
      write(root, "a.txt", "b\n");
      const out = await repo.commitEdits(["a.txt"], { message: "feat: b", model: "m" });
      expect(out.status).toBe("committed");
      write(root, "a.txt", "c\n");
      await repo.commitEdits(["a.txt"], { message: "feat: c", model: "m" });
      expect(notes.filter((n) => n.includes("user.name")).length).toBe(1);
      expect(sh(root, ["log", "-1", "--format=%an <%ae>"]).trim()).toBe("coder <coder@noreply.invalid>");
      const cfg = Bun.spawnSync(["git", "config", "--get", "user.name"], { cwd: root, env: process.env });
      expect(cfg.exitCode).toBe(1);
    } finally {
      process.env = saved;
    }
  });

  test("hooks run unless verify is false, and coder says which", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const hook = join(root, ".git/hooks/pre-commit");
    writeFileSync(hook, "#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/hook-ran\"\nexit 1\n");
    chmodSync(hook, 0o755);
    const notes: string[] = [];
    const repo = await open(root, notes);
    write(root, "a.txt", "b\n");
    const failed = await repo.commitEdits(["a.txt"], { message: "feat: b", model: "m" });
    expect(failed.status).toBe("failed");
    if (failed.status === "failed") expect(failed.message).toContain("pre-commit");
    expect(existsSync(join(root, ".git/hook-ran"))).toBe(true);
    const ok = await repo.commitEdits(["a.txt"], { message: "feat: b", model: "m", verify: false });
    expect(ok.status).toBe("committed");
    if (ok.status === "committed") expect(ok.hooks).toContain("skipped git hooks (--no-verify): pre-commit");
  });

  test("commitPending commits tracked changes with the given, written or fallback message", async () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    const prompts: string[] = [];
    const repo = await GitRepo.open(root, {
      writeMessage: async (messages) => {
        prompts.push(messages.map((m) => m.content).join("\n"));
        return "```\nfeat: change a and b\n```";
      },
    });
    write(root, "a.txt", "A\n");
    write(root, "junk.tmp", "untracked\n");
    expect(await repo!.commitPending("docs: my words")).toMatchObject({ ok: true });
    expect(log(root)[0]).toBe("docs: my words");
    write(root, "b.txt", "B\n");
    expect((await repo!.commitPending()).ok).toBe(true);
    expect(log(root)[0]).toBe("feat: change a and b");
    expect(prompts[0]).toContain("+B");
    expect(sh(root, ["status", "--porcelain"]).trim()).toBe("?? junk.tmp");
    expect((await repo!.commitPending()).ok).toBe(false);
  });

  test("ensureGitignore asks once and appends .coder/", async () => {
    const root = makeRepo({ ".gitignore": "node_modules" });
    const repo = await open(root);
    expect(await repo.ensureGitignore(async () => false)).toBe("declined");
    expect(await repo.ensureGitignore(async () => true)).toBe("added");
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe("node_modules\n.coder/\n");
    let asked = false;
    expect(await repo.ensureGitignore(async () => (asked = true))).toBe("present");
    expect(asked).toBe(false);
  });
});

describe("undo", () => {
  async function edited(): Promise<{ root: string; repo: GitRepo; base: string }> {
    const root = makeRepo({ "app.py": "v = 1\n" });
    const base = head(root);
    const repo = await open(root);
    write(root, "app.py", "v = 2\n");
    write(root, "lib/new.py", "created = True\n");
    const out = await repo.commitEdits(["app.py", "lib/new.py"], { message: "feat: bump v and add lib", model: "m" });
    expect(out.status).toBe("committed");
    return { root, repo, base };
  }

  test("undoes coder's commit: restores files, deletes created ones, moves HEAD back", async () => {
    const { root, repo, base } = await edited();
    const res = await repo.undo();
    expect(res.ok).toBe(true);
    expect(res.message).toContain("deleted lib/new.py");
    expect(head(root)).toBe(base);
    expect(readFileSync(join(root, "app.py"), "utf8")).toBe("v = 1\n");
    expect(existsSync(join(root, "lib/new.py"))).toBe(false);
    // The .coder folder coder made ignores itself: nothing of coder's shows as untracked.
    expect(sh(root, ["status", "--porcelain", "--untracked-files=all"]).trim()).toBe("");
    expect(repo.coderCommits().at(-1)!.undone).toBe(true);
    const again = await repo.undo();
    expect(again.ok).toBe(false);
    expect(again.message).toContain("not made by coder");
  });

  test("restores a file the commit deleted", async () => {
    const root = makeRepo({ "keep.py": "k = 1\n", "old.py": "o = 1\n" });
    const base = head(root);
    const repo = await open(root);
    unlinkSync(join(root, "old.py"));
    write(root, "keep.py", "k = 2\n");
    await repo.commitEdits(["old.py", "keep.py"], { message: "refactor: drop old.py", model: "m" });
    expect((await repo.undo()).ok).toBe(true);
    expect(readFileSync(join(root, "old.py"), "utf8")).toBe("o = 1\n");
    expect(readFileSync(join(root, "keep.py"), "utf8")).toBe("k = 1\n");
    expect(head(root)).toBe(base);
    expect(await repo.dirtyFiles()).toEqual([]);
  });

  test("keeps the user's other staged work staged", async () => {
    const root = makeRepo({ "a.py": "a\n", "b.py": "b\n" });
    const repo = await open(root);
    write(root, "a.py", "A\n");
    await repo.commitEdits(["a.py"], { message: "feat: capital a", model: "m" });
    write(root, "b.py", "user's staged b\n");
    sh(root, ["add", "b.py"]);
    expect((await repo.undo()).ok).toBe(true);
    expect(sh(root, ["diff", "--cached", "--name-only"]).trim()).toBe("b.py");
    expect(readFileSync(join(root, "b.py"), "utf8")).toBe("user's staged b\n");
  });

  test("works across sessions: a new GitRepo reads the record", async () => {
    const { root, base } = await edited();
    const fresh = await open(root);
    expect((await fresh.undo()).ok).toBe(true);
    expect(head(root)).toBe(base);
  });

  test("refuses a commit coder did not make", async () => {
    const { root, repo } = await edited();
    write(root, "user.txt", "mine\n");
    sh(root, ["add", "user.txt"]);
    sh(root, ["commit", "-q", "-m", "user work"]);
    const before = head(root);
    const res = await repo.undo();
    expect(res.ok).toBe(false);
    expect(res.message).toContain('"user work" was not made by coder');
    expect(res.message).toContain("git revert");
    expect(head(root)).toBe(before);
  });

  test("refuses a dirty commit (the user's own changes)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const repo = await open(root);
    write(root, "a.txt", "user\n");
    await repo.commitDirty(["a.txt"]);
    const res = await repo.undo();
    expect(res.ok).toBe(false);
    expect(res.message).toContain("your own pending changes");
  });

  test("refuses when a file changed since the commit", async () => {
    const { root, repo } = await edited();
    const before = head(root);
    write(root, "app.py", "v = 3  # user kept typing\n");
    const res = await repo.undo();
    expect(res.ok).toBe(false);
    expect(res.message).toContain("app.py changed since");
    expect(head(root)).toBe(before);
    expect(readFileSync(join(root, "app.py"), "utf8")).toBe("v = 3  # user kept typing\n");
  });

  test("refuses a commit already pushed to its upstream", async () => {
    const { root, repo } = await edited();
    const remote = realpathSync(mkdtempSync(join(tmpdir(), "coder-remote-")));
    sh(remote, ["init", "-q", "--bare"]);
    sh(root, ["remote", "add", "origin", remote]);
    sh(root, ["push", "-q", "-u", "origin", "main"]);
    const res = await repo.undo();
    expect(res.ok).toBe(false);
    expect(res.message).toContain("already pushed to origin/main");
  });

  test("refuses a merge commit", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const repo = await open(root);
    sh(root, ["checkout", "-q", "-b", "side"]);
    write(root, "s.txt", "side\n");
    sh(root, ["add", "s.txt"]);
    sh(root, ["commit", "-q", "-m", "side"]);
    sh(root, ["checkout", "-q", "main"]);
    write(root, "a.txt", "main\n");
    await repo.commitEdits(["a.txt"], { message: "feat: main change", model: "m" });
    sh(root, ["merge", "-q", "--no-edit", "side"]);
    // Pretend coder made the merge: the record names it, the refusal must still come.
    const merge = head(root);
    const rec = repo.coderCommits();
    mkdirSync(join(root, ".coder"), { recursive: true });
    writeFileSync(join(root, ".coder/commits.json"), JSON.stringify({ version: 1, commits: [...rec, { hash: merge, kind: "edit", message: "merge", files: [], time: "" }] }));
    const res = await repo.undo();
    expect(res.ok).toBe(false);
    expect(res.message).toContain("merge commit");
    expect(head(root)).toBe(merge);
  });
});
