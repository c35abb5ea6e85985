// End to end on dist/coder, as a misbehaving model would reply (issue 9, items 5, 6 and
// the `*` path of 11): a whole-file listing whose path line is odd or absent, a diff cut
// off mid-hunk, a block whose path line is `*`. The files on disk must stay as they were,
// and the next request must tell the model what was refused and why.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isolateGitEnv, log, makeRepo } from "./git-helpers.ts";
import { block, engineReadiness, lastUser, runOnce } from "./safety-harness.ts";

setDefaultTimeout(60_000);
isolateGitEnv();
const notReady = await engineReadiness();
// A binary that cannot run the probe edit is a failure, never a reason to skip these tests.
if (notReady) throw new Error(notReady);
const e2e = test;

const APP = 'def greet(name):\n    return f"Hello, {name}"\n\n\nif __name__ == "__main__":\n    print(greet("Ada"))\n';
const UNDERSTOOD = { text: "Understood: that was only an example, no change is needed.", repeat: true };
const COMMIT_MESSAGE = { text: "docs: add meeting notes", match: "The change:", repeat: true };
const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

describe("issue 9.5: a whole-file listing never lands on the wrong file", () => {
  e2e("a path line with a space names a new file, not the only chat file", async () => {
    const root = makeRepo({ "app.py": APP });
    const reply = "Here are the notes:\n\nnotes/meeting notes.md\n```markdown\n# Meeting\n\n- ship it\n```\n";
    const r = await runOnce(root, ["--edit-format", "whole", "--yes-always", "-m", "write meeting notes", "app.py"], [{ text: reply }, UNDERSTOOD]);
    expect(read(root, "app.py")).toBe(APP);
    expect(r.requests.length).toBe(2);
    const told = lastUser(r.requests[1]);
    expect(told).toContain("no file path before its opening fence");
    expect(told).toContain("notes/meeting notes.md");
    expect(told).toContain("does not look like app.py");
    expect(log(root)).toEqual(["initial"]);
  });

  e2e("a path line over 250 characters goes to that path (gated), never over the only chat file", async () => {
    const root = makeRepo({ "app.py": APP });
    const long = `${"docs/".repeat(50)}notes.md`;
    expect(long.length).toBeGreaterThan(250);
    const r = await runOnce(root, ["--edit-format", "whole", "--yes-always", "-m", "write notes", "app.py"], [{ text: `${long}\n\`\`\`markdown\n# Notes\n\`\`\`\n` }, COMMIT_MESSAGE]);
    expect(r.code).toBe(0);
    expect(read(root, "app.py")).toBe(APP);
    expect(read(root, long)).toBe("# Notes\n");
  });

  e2e("an example fence in prose (no path line) is not written over the only chat file: read as prose, no repair round trip (issue 22)", async () => {
    const root = makeRepo({ "app.py": APP });
    const reply = "You can call it like this:\n\n```python\nprint(greet(\"Grace\"))\n```\n";
    const r = await runOnce(root, ["--edit-format", "whole", "--yes-always", "-m", "how do I call greet?", "app.py"], [{ text: reply }, UNDERSTOOD]);
    expect(r.code).toBe(0);
    expect(read(root, "app.py")).toBe(APP);
    expect(r.requests.length).toBe(1);
    expect(r.stdout + r.stderr).toContain("read as an example, nothing written");
    expect(log(root)).toEqual(["initial"]);
  });

  e2e("an unlabelled listing that keeps most of the only chat file still goes to it", async () => {
    const root = makeRepo({ "app.py": APP });
    const next = APP.replace('print(greet("Ada"))', 'print(greet("Grace"))');
    const r = await runOnce(root, ["--edit-format", "whole", "-m", "greet Grace", "app.py"], [{ text: `Here it is:\n\n\`\`\`python\n${next}\`\`\`\n` }, COMMIT_MESSAGE]);
    expect(r.code).toBe(0);
    expect(read(root, "app.py")).toBe(next);
  });
});

describe("issue 9.6: a diff cut off mid-hunk is refused, not applied", () => {
  const FILE = "one\ntwo\nthree\nfour\nfive\nsix\n";
  const cut = "```diff\n--- list.txt\n+++ list.txt\n@@ ... @@\n one\n-two\n+TWO\n three\n-four\n-five";

  e2e("udiff, finish_reason length and an unclosed fence: nothing applied, the model told the diff was cut off", async () => {
    const root = makeRepo({ "list.txt": FILE });
    const r = await runOnce(root, ["--edit-format", "udiff", "-m", "shout two", "list.txt"], [{ text: cut, finishReason: "length" }, UNDERSTOOD]);
    expect(read(root, "list.txt")).toBe(FILE);
    expect(lastUser(r.requests[1])).toContain("never closed, so its last hunk may be incomplete. Nothing from this reply was applied");
    expect(log(root)).toEqual(["initial"]);
  });

  e2e("udiff, a bare diff (no fence) cut by the output limit: nothing applied", async () => {
    const root = makeRepo({ "list.txt": FILE });
    const bare = "--- list.txt\n+++ list.txt\n@@ ... @@\n one\n-two\n+TWO\n three\n-four\n-five";
    const r = await runOnce(root, ["--edit-format", "udiff", "-m", "shout two", "list.txt"], [{ text: bare, finishReason: "length" }, UNDERSTOOD]);
    expect(read(root, "list.txt")).toBe(FILE);
    expect(lastUser(r.requests[1])).toContain("cut off by the output limit in the middle of its diff");
  });

  e2e("patch, cut before *** End Patch with finish_reason length: nothing applied", async () => {
    const root = makeRepo({ "list.txt": FILE });
    const patch = "*** Begin Patch\n*** Update File: list.txt\n@@\n one\n-two\n+TWO\n three\n-four\n-five";
    const r = await runOnce(root, ["--edit-format", "patch", "-m", "shout two", "list.txt"], [{ text: patch, finishReason: "length" }, UNDERSTOOD]);
    expect(read(root, "list.txt")).toBe(FILE);
    expect(lastUser(r.requests[1])).toContain("no `*** End Patch` line");
  });
});

describe("issue 9.11: a block whose path line is `*`", () => {
  e2e("is refused, not applied to the previous block's file", async () => {
    const root = makeRepo({ "app.py": APP, "b.py": "x = 1\n" });
    const reply = block("b.py", "x = 1\n", "x = 2\n") + "\n*\n```\n<<<<<<< SEARCH\nx = 2\n=======\nx = 3\n>>>>>>> REPLACE\n```\n";
    const r = await runOnce(root, ["--yes-always", "-m", "bump x everywhere", "app.py", "b.py"], [{ text: reply }, UNDERSTOOD]);
    expect(read(root, "b.py")).toBe("x = 1\n");
    expect(read(root, "app.py")).toBe(APP);
    expect(lastUser(r.requests[1])).toContain("`*` is not a file path");
    expect(readdirSync(root).filter((f) => ![".git", ".coder", ".gitignore"].includes(f)).sort()).toEqual(["app.py", "b.py"]);
    expect(existsSync(join(root, "*"))).toBe(false);
  });
});
