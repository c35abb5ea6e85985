// End to end on dist/coder: the attacks of issue 6 (symlinks out, `..`, absolute
// paths, .git/hooks, read-only files, shell under --yes-always) never write or run
// anything, and the refusal reaches the model; commits and dirty commits hold the
// right contents; "Don't ask again" survives a restart; /undo refuses and undoes.

import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { filesIn, head, isolateGitEnv, log, makeRepo, sh, write } from "./git-helpers.ts";
import { allText, block, engineReadiness, KEY, lastUser, PtyRun, runOnce } from "./safety-harness.ts";

setDefaultTimeout(60_000);
isolateGitEnv();
const notReady = await engineReadiness();
// A binary that cannot run the probe edit is a failure, never a reason to skip these tests.
if (notReady) throw new Error(notReady);
const e2e = test;

const UNDERSTOOD = { text: "Understood; I will not touch that file.", repeat: true };

/** A directory outside every repository, with a file that must never change. */
function outsideDir(): { dir: string; target: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "coder-outside-")));
  const target = join(dir, "target.txt");
  writeFileSync(target, "secret\n");
  return { dir, target };
}

describe("attacks: nothing is written outside, and the model hears why", () => {
  e2e("a symlink inside the repo pointing outside", async () => {
    const { dir, target } = outsideDir();
    const root = makeRepo({ "a.py": "x = 1\n" });
    symlinkSync(target, join(root, "link.txt"));
    symlinkSync(dir, join(root, "linkdir"));
    const reply = block("link.txt", "secret\n", "pwned\n") + block("linkdir/new.txt", "", "pwned\n");
    const r = await runOnce(root, ["--yes-always", "-m", "edit link.txt", "a.py"], [{ text: reply }, UNDERSTOOD]);
    expect(readFileSync(target, "utf8")).toBe("secret\n");
    expect(existsSync(join(dir, "new.txt"))).toBe(false);
    expect(r.requests.length).toBeGreaterThanOrEqual(2);
    const report = lastUser(r.requests[1]);
    expect(report).toContain("link.txt");
    expect(report).toContain("linkdir/new.txt");
    expect(report).toMatch(/outside the repository/);
  });

  e2e("a ../ path", async () => {
    const { dir, target } = outsideDir();
    const root = makeRepo({ "a.py": "x = 1\n" });
    const rel = relative(root, target);
    expect(rel.startsWith("../")).toBe(true);
    const r = await runOnce(root, ["--yes-always", "-m", "edit it", "a.py"], [{ text: block(rel, "secret\n", "pwned\n") + block(`../${dir.split("/").at(-1)}/made.txt`, "", "x\n") }, UNDERSTOOD]);
    expect(readFileSync(target, "utf8")).toBe("secret\n");
    expect(existsSync(join(dir, "made.txt"))).toBe(false);
    expect(lastUser(r.requests[1])).toContain("target.txt");
    expect(lastUser(r.requests[1])).toMatch(/outside the repository|not allowed|Refused/i);
  });

  e2e("an absolute path", async () => {
    const { target } = outsideDir();
    const root = makeRepo({ "a.py": "x = 1\n" });
    const r = await runOnce(root, ["--yes-always", "-m", "edit it", "a.py"], [{ text: block(target, "secret\n", "pwned\n") }, UNDERSTOOD]);
    expect(readFileSync(target, "utf8")).toBe("secret\n");
    expect(lastUser(r.requests[1])).toContain("target.txt");
    expect(lastUser(r.requests[1])).toMatch(/absolute|outside the repository|Refused/i);
  });

  e2e(".git/hooks/pre-commit as an edit target (with a legitimate edit that commits)", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const marker = join(root, "hook-ran");
    const hook = `#!/bin/sh\ntouch ${marker}\n`;
    const reply = block(".git/hooks/pre-commit", "", hook) + block("a.py", "x = 1\n", "x = 2\n");
    const r = await runOnce(root, ["--yes-always", "-m", "set x to 2", "a.py"], [{ text: reply }, { text: "fix: set x to 2", match: "The change:", repeat: true }, UNDERSTOOD]);
    expect(existsSync(join(root, ".git/hooks/pre-commit"))).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\n");
    const reflection = r.requests.find((q) => lastUser(q).includes(".git/hooks/pre-commit"));
    expect(reflection).toBeDefined();
    expect(lastUser(reflection)).toContain(".git/");
  });

  e2e("coder's own records (.coder/commits.json) are not the model's to edit", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    mkdirSync(join(root, ".coder"), { recursive: true });
    const records = JSON.stringify({ version: 1, commits: [] });
    writeFileSync(join(root, ".coder/commits.json"), records);
    const forged = JSON.stringify({ version: 1, commits: [{ hash: head(root), kind: "edit", message: "x", files: [], time: "" }] });
    const r = await runOnce(root, ["--yes-always", "-m", "tidy", "a.py"], [{ text: block(".coder/commits.json", `${records}\n`, `${forged}\n`) }, UNDERSTOOD]);
    expect(readFileSync(join(root, ".coder/commits.json"), "utf8")).toBe(records);
    expect(lastUser(r.requests[1])).toContain(".coder/commits.json");
  });

  e2e("a read-only file edit attempt", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", "CONVENTIONS.md": "# rules\nuse tabs\n" });
    const r = await runOnce(root, ["--yes-always", "--read", "CONVENTIONS.md", "-m", "relax the rules", "a.py"], [{ text: block("CONVENTIONS.md", "use tabs\n", "anything goes\n") }, UNDERSTOOD]);
    expect(readFileSync(join(root, "CONVENTIONS.md"), "utf8")).toBe("# rules\nuse tabs\n");
    expect(lastUser(r.requests[1])).toContain("CONVENTIONS.md is read-only");
    expect(head(root)).toBe(sh(root, ["rev-list", "-1", "HEAD"]).trim());
    expect(log(root)).toEqual(["initial"]);
  });

  e2e("a shell suggestion under --yes-always without a trusted allowShell does not run", async () => {
    const { dir } = outsideDir();
    const root = makeRepo({ "a.py": "x = 1\n" });
    const pwned = join(dir, "pwned");
    const r = await runOnce(root, ["--yes-always", "-m", "clean up", "a.py"], [{ text: `Run this:\n\`\`\`bash\ntouch ${pwned}\n\`\`\`\n` }, UNDERSTOOD]);
    expect(existsSync(pwned)).toBe(false);
    expect(r.stderr + r.stdout).toContain("allowShell");
  });

  e2e("…and runs under --yes-always when the (trusted) global config sets allowShell", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const cfgDir = join(process.env.XDG_CONFIG_HOME!, "coder");
    mkdirSync(cfgDir, { recursive: true });
    writeFileSync(join(cfgDir, "config.json"), JSON.stringify({ allowShell: true }));
    try {
      await runOnce(root, ["--yes-always", "-m", "make a marker", "a.py"], [{ text: "```bash\ntouch shell-ran\n```\n" }, UNDERSTOOD]);
      expect(existsSync(join(root, "shell-ran"))).toBe(true);
    } finally {
      writeFileSync(join(cfgDir, "config.json"), "{}");
    }
  });

  e2e("not interactive and no --yes-always: a file outside the chat is declined and said, at no extra request", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    const r = await runOnce(root, ["-m", "change y", "a.py"], [{ text: block("b.py", "y = 1\n", "y = 2\n") }, UNDERSTOOD]);
    expect(readFileSync(join(root, "b.py"), "utf8")).toBe("y = 1\n");
    expect(r.stderr).toContain("not interactive");
    expect(r.stdout).toContain("Skipped the edit to b.py: edits to b.py (not in the chat) were not allowed");
    expect(r.requests).toHaveLength(1);
    expect(r.code).toBe(0);
  });
});

describe("commits", () => {
  e2e("one commit per reply with only coder's files, the weak model's message and the trailer", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    write(root, "b.py", "y = 'user staged this'\n");
    sh(root, ["add", "b.py"]);
    const r = await runOnce(root, ["-m", "Set x to 2", "a.py"], [{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: "feat: set x to two", match: "The change:", repeat: true }]);
    expect(r.code).toBe(0);
    expect(log(root)).toEqual(["feat: set x to two", "initial"]);
    expect(filesIn(root)).toEqual(["a.py"]);
    expect(sh(root, ["log", "-1", "--format=%B"])).toContain("Co-authored-by: coder (openai/gpt-4.1)");
    expect(sh(root, ["log", "-1", "--format=%an <%ae>"]).trim()).toBe("Test User <test@example.com>");
    expect(sh(root, ["diff", "--cached", "--name-only"]).trim()).toBe("b.py");
    const msgReq = r.requests.find((q) => lastUser(q).includes("The change:"));
    expect(lastUser(msgReq)).toContain("Set x to 2");
    expect(lastUser(msgReq)).toContain("+x = 2");
  });

  e2e("the weak model failing gives a deterministic conventional message", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const r = await runOnce(root, ["-m", "Fix the value of x", "a.py"], [{ text: block("a.py", "x = 1\n", "x = 2\n") }, { status: 400, errorMessage: "no", match: "The change:", repeat: true }]);
    expect(r.code).toBe(0);
    const subject = log(root)[0]!;
    expect(subject).toMatch(/^fix: fix the value of x/);
    expect(subject.length).toBeLessThanOrEqual(72);
  });

  e2e("dirty-commit split: the user's pending change is committed on its own first", async () => {
    const root = makeRepo({ "a.py": "x = 1\ny = 1\n" });
    write(root, "a.py", "x = 1\ny = 1\nz = 'user'\n");
    await runOnce(root, ["-m", "set x to 2", "a.py"], [{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: "feat: set x to 2", match: "The change:", repeat: true }]);
    expect(log(root)).toHaveLength(3);
    const userCommit = sh(root, ["show", "--format=%B", "HEAD~1"]);
    expect(userCommit).toContain("+z = 'user'");
    expect(userCommit).not.toContain("+x = 2");
    expect(userCommit).not.toContain("Co-authored-by");
    const edit = sh(root, ["show", "--format=", "HEAD"]);
    expect(edit).toContain("+x = 2");
    expect(edit).not.toContain("+z = 'user'");
  });

  e2e("commit hooks run and are named; --no-verify skips them and says so", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const hook = join(root, ".git/hooks/pre-commit");
    writeFileSync(hook, `#!/bin/sh\necho run >> "${join(root, ".git/hook-log")}"\n`);
    chmodSync(hook, 0o755);
    const steps = (to: string) => [{ text: block("a.py", to === "2" ? "x = 1\n" : "x = 2\n", `x = ${to}\n`) }, { text: `feat: set x to ${to}`, match: "The change:", repeat: true }];
    const first = await runOnce(root, ["-m", "set x to 2", "a.py"], steps("2"));
    expect(readFileSync(join(root, ".git/hook-log"), "utf8")).toBe("run\n");
    expect(first.stdout + first.stderr).toContain("ran git hooks: pre-commit");
    const second = await runOnce(root, ["--no-verify", "-m", "set x to 3", "a.py"], steps("3"));
    expect(readFileSync(join(root, ".git/hook-log"), "utf8")).toBe("run\n");
    expect(second.stdout + second.stderr).toContain("skipped git hooks (--no-verify): pre-commit");
    expect(log(root)[0]).toBe("feat: set x to 3");
  });

  e2e("without a git identity: said once, and coder's commit uses a local fallback", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const noIdentity = { GIT_AUTHOR_NAME: "", GIT_AUTHOR_EMAIL: "", GIT_COMMITTER_NAME: "", GIT_COMMITTER_EMAIL: "" };
    const r = await runOnce(root, ["-m", "set x to 2", "a.py"], [{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: "feat: set x to 2", match: "The change:", repeat: true }], noIdentity);
    expect(r.code).toBe(0);
    expect(sh(root, ["log", "-1", "--format=%an <%ae>"]).trim()).toBe("coder <coder@noreply.invalid>");
    expect((r.stdout + r.stderr).match(/git has no user\.name/g)?.length).toBe(1);
    expect(Bun.spawnSync(["git", "config", "--local", "--get", "user.name"], { cwd: root, env: process.env }).exitCode).toBe(1);
  });

  e2e("--no-auto-commits still dirty-commits, and leaves the edit uncommitted", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    write(root, "a.py", "x = 1\nz = 'user'\n");
    await runOnce(root, ["--no-auto-commits", "-m", "set x to 2", "a.py"], [{ text: block("a.py", "x = 1\n", "x = 2\n") }, UNDERSTOOD]);
    expect(log(root)).toHaveLength(2);
    expect(sh(root, ["show", "--format=", "HEAD"])).toContain("+z = 'user'");
    expect(sh(root, ["diff"])).toContain("+x = 2");
  });
});

describe("interactive (in a pseudo-terminal)", () => {
  e2e("\"Don't ask again\" is remembered across two runs", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n", ".gitignore": ".coder/\n" });
    const steps = [{ text: block("b.py", "y = 1\n", "y = 2\n") }, UNDERSTOOD];
    const first = await PtyRun.start(root, ["a.py"], steps);
    await first.pty.waitFor("> ");
    first.pty.type("change y\r");
    const at = await first.pty.waitFor("Allow edits to b.py");
    await first.pty.waitFor("(D)on't ask again [Yes]: ", at);
    first.pty.type("d");
    await first.pty.waitFor("Skipped the edit to b.py", at);
    const req1 = await first.finish();
    expect(readFileSync(join(root, "b.py"), "utf8")).toBe("y = 1\n");
    expect(JSON.parse(readFileSync(join(root, ".coder/gate.json"), "utf8")).remembered[0].key).toBe("edit:b.py");
    expect(req1).toHaveLength(1); // a "no" is the user's decision: no repair request

    const second = await PtyRun.start(root, ["a.py"], steps);
    await second.pty.waitFor("> ");
    second.pty.type("change y again\r");
    await second.pty.waitFor("Skipped the edit to b.py");
    const req2 = await second.finish();
    expect(second.pty.text).not.toContain("Allow edits to b.py");
    expect(readFileSync(join(root, "b.py"), "utf8")).toBe("y = 1\n");
    expect(req2).toHaveLength(1);
  });

  e2e("/undo of a commit that created a file, then /undo refuses a commit coder did not make", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", ".gitignore": ".coder/\n" });
    const base = head(root);
    const steps = [{ text: block("a.py", "x = 1\n", "x = 2\n") + block("new_mod.py", "", "def f():\n    return 1\n") }, { text: "feat: add new_mod", match: "The change:", repeat: true }];
    const run = await PtyRun.start(root, ["--yes-always", "a.py"], steps);
    await run.pty.waitFor("> ");
    run.pty.type("add new_mod\r");
    let at = await run.pty.waitFor(/Commit [0-9a-f]{7}/);
    expect(existsSync(join(root, "new_mod.py"))).toBe(true);
    run.pty.type("/undo\r");
    at = await run.pty.waitFor("Undid", at);
    await run.pty.waitFor("> ", at);
    expect(existsSync(join(root, "new_mod.py"))).toBe(false);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\n");
    expect(head(root)).toBe(base);
    run.pty.type("/undo\r");
    await run.pty.waitFor("not made by coder", at);
    await run.finish();
    expect(head(root)).toBe(base);
  });

  e2e("/run needs no confirmation (the user typed it); a failure offers a fix that reaches the model", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", ".gitignore": ".coder/\n" });
    const run = await PtyRun.start(root, ["a.py"], [{ text: "I see the failure; nothing to edit.", repeat: true }]);
    await run.pty.waitFor("> ");
    run.pty.type("/run echo boom-123 && exit 3\r");
    const at = await run.pty.waitFor("Ask the model to fix");
    run.pty.type(KEY.enter);
    await run.pty.waitFor("nothing to edit", at);
    const requests = await run.finish();
    expect(run.pty.text).toContain("Exit code 3.");
    expect(lastUser(requests[0])).toContain("boom-123");
    expect(lastUser(requests[0])).toContain("exit code 3");
  });

  async function coderCommit(root: string): Promise<void> {
    await runOnce(root, ["-m", "set x to 2", "a.py"], [{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: "feat: set x to 2", match: "The change:", repeat: true }]);
    expect(log(root)[0]).toBe("feat: set x to 2");
  }

  async function undoIn(root: string): Promise<string> {
    const run = await PtyRun.start(root, [], [UNDERSTOOD]);
    await run.pty.waitFor("> ");
    run.pty.type("/undo\r");
    const at = await run.pty.waitFor("Not undoing");
    await run.pty.waitFor("> ", at);
    await run.finish();
    return run.pty.text.slice(at - 1);
  }

  e2e("/undo refuses when the file changed since coder's commit (across sessions)", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", ".gitignore": ".coder/\n" });
    await coderCommit(root);
    const before = head(root);
    write(root, "a.py", "x = 3  # typed after\n");
    expect(await undoIn(root)).toContain("a.py changed since");
    expect(head(root)).toBe(before);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 3  # typed after\n");
  });

  e2e("/undo refuses a commit already pushed to its upstream", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", ".gitignore": ".coder/\n" });
    await coderCommit(root);
    const remote = realpathSync(mkdtempSync(join(tmpdir(), "coder-remote-")));
    sh(remote, ["init", "-q", "--bare"]);
    sh(root, ["remote", "add", "origin", remote]);
    sh(root, ["push", "-q", "-u", "origin", "main"]);
    const before = head(root);
    expect(await undoIn(root)).toContain("already pushed to origin/main");
    expect(head(root)).toBe(before);
  });

  e2e("/undo refuses a merge commit", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", ".gitignore": ".coder/\n" });
    await coderCommit(root);
    sh(root, ["checkout", "-q", "-b", "side", "HEAD~1"]);
    write(root, "s.py", "s = 1\n");
    sh(root, ["add", "s.py"]);
    sh(root, ["commit", "-q", "-m", "side"]);
    sh(root, ["checkout", "-q", "main"]);
    sh(root, ["merge", "-q", "--no-edit", "side"]);
    const merge = head(root);
    // Even if coder's record named the merge, /undo must refuse it.
    const recFile = join(root, ".coder/commits.json");
    const rec = JSON.parse(readFileSync(recFile, "utf8"));
    rec.commits.push({ hash: merge, kind: "edit", message: "merge", files: [], time: "" });
    writeFileSync(recFile, JSON.stringify(rec));
    expect(await undoIn(root)).toContain("merge commit");
    expect(head(root)).toBe(merge);
  });
});
