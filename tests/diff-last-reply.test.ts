// End to end on dist/coder (REPL in a pseudo-terminal): /diff shows what the last reply
// changed — its commit with auto-commits, its uncommitted change with --no-auto-commits
// (not coder's last commit, which may be an older reply's), and without git too.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { FakeStep } from "./support/fake-server.ts";
import { BINARY, block, makeRepo, type Repo, removeRepos, runCoder, serverWith } from "./engine-harness.ts";
import { PtyRun } from "./safety-harness.ts";

afterEach(() => removeRepos());

const COMMIT_MESSAGE: FakeStep = { text: "feat: change a value", match: "The change:", repeat: true };

const envOf = (repo: Repo) => ({ HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" });

/** One request in the REPL, then /diff; returns what /diff printed. */
async function requestThenDiff(repo: Repo, args: string[], reply: string): Promise<string> {
  const run = await PtyRun.start(repo.root, args, [COMMIT_MESSAGE, { text: reply }], envOf(repo));
  await run.pty.waitFor("> ");
  run.pty.type("set y to 2\r");
  let at = await run.pty.waitFor(/Applied|applied/);
  at = await run.pty.waitFor("> ", at);
  // The "> " above may be the live box's input line while the commit is still being made: then
  // /diff is queued and runs when the reply ends. Its echo marks where its own output starts.
  run.pty.type("/diff\r");
  at = await run.pty.waitFor("> /diff\n", at);
  at = await run.pty.waitFor("+y = 2", at);
  await run.pty.waitFor("> ", at);
  await run.finish();
  return run.pty.text.slice(run.pty.text.lastIndexOf("/diff"));
}

/** A coder commit of an earlier reply (x = 1 → x = 2), made by a one-shot run. */
async function earlierCoderCommit(repo: Repo): Promise<void> {
  const s = await serverWith([{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") }]);
  try {
    const r = await runCoder(repo, s, ["-m", "set x to 2", "a.py"]);
    expect(r.code).toBe(0);
  } finally {
    await s.stop();
  }
  expect(repo.git("log", "--format=%s").split("\n").filter(Boolean).length).toBe(2);
}

describe.skipIf(!existsSync(BINARY))("/diff shows what the last reply changed", () => {
  test("--no-auto-commits: the reply's uncommitted change, not coder's last commit", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    await earlierCoderCommit(repo);
    const shown = await requestThenDiff(repo, ["--no-auto-commits", "b.py"], block("b.py", "y = 1\n", "y = 2\n"));
    expect(shown).toContain("not committed");
    expect(shown).toContain("-y = 1");
    expect(shown).toContain("+y = 2");
    expect(shown).not.toContain("x = 2");
    expect(repo.git("log", "--format=%s").split("\n").filter(Boolean).length).toBe(2);
    expect(repo.git("diff", "--name-only").trim()).toBe("b.py");
  });

  test("with auto-commits: the reply's commit", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    await earlierCoderCommit(repo);
    const shown = await requestThenDiff(repo, ["b.py"], block("b.py", "y = 1\n", "y = 2\n"));
    expect(shown).toMatch(/commit [0-9a-f]{7} feat: change a value/);
    expect(shown).toContain("+y = 2");
    expect(shown).not.toContain("x = 2");
  });

  test("--no-git: the reply's change (there is no commit to show)", async () => {
    const repo = makeRepo({ "b.py": "y = 1\n" });
    const shown = await requestThenDiff(repo, ["--no-git", "b.py"], block("b.py", "y = 1\n", "y = 2\n"));
    expect(shown).toContain("not committed");
    expect(shown).toContain("+y = 2");
    expect(shown).not.toContain("Not in a git repository");
  });
});
