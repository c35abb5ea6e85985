// A file changed while the model answered (the user saved it in an editor) must never have that
// change undone by the reply: end to end on the built binary against the fake server, which
// makes the change once the request has arrived, before it answers.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { BINARY, block, lastUser, mainRequests, makeRepo, type Repo, runCoder, serverPerTest } from "./engine-harness.ts";

const server = serverPerTest();

/** A reply step that first saves `text` as `path` (the user's change while the model answers). */
const editedMeanwhile = (repo: Repo, path: string, text: string) => async () => repo.write(path, text);

const listing = (path: string, content: string) => `${path}\n\`\`\`python\n${content}\`\`\`\n`;

describe.skipIf(!existsSync(BINARY))("a file changed while the model answered (dist/coder)", () => {
  test("whole: a listing written from the shown text is merged onto a change to other lines, which stays", async () => {
    const repo = makeRepo({ "a.py": "x = 1\ny = 1\nz = 1\n" });
    const s = await server([{ text: listing("a.py", "x = 2\ny = 1\nz = 1\n"), waitFor: editedMeanwhile(repo, "a.py", "x = 1\ny = 1\nz = 99\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--edit-format", "whole", "-m", "set x to 2", "a.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\ny = 1\nz = 99\n");
    expect(r.stdout + r.stderr).toContain("a.py changed while the model answered: its edit was merged onto that change, so check the change");
    expect(mainRequests(s).length).toBe(1);
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("whole: a listing that changes the same lines is not written; the model gets them as they are now and its next listing lands", async () => {
    const repo = makeRepo({ "a.py": "x = 1\ny = 1\nz = 1\n" });
    const s = await server([
      { text: listing("a.py", "x = 1\ny = 1\nz = 2\n"), waitFor: editedMeanwhile(repo, "a.py", "x = 1\ny = 1\nz = 99\n") },
      { text: listing("a.py", "x = 1\ny = 1\nz = 99\nw = 2\n") },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--edit-format", "whole", "-m", "set z to 2", "a.py"]);
    const requests = mainRequests(s);
    expect(requests.length).toBe(2);
    const report = lastUser(requests[1]);
    expect(report).toContain("changed while you were answering");
    expect(report).toContain("z = 99");
    expect(r.stdout + r.stderr).toContain("Did not edit a.py");
    // The retry, written from the current text, keeps the user's change.
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 1\ny = 1\nz = 99\nw = 2\n");
  });

  test("diff: a SEARCH that quotes lines changed while the model answered never lands approximately over that change", async () => {
    // The file is already dirty when the request is sent (z = 2, not committed); the user changes z again while the model answers.
    const repo = makeRepo({ "a.py": "def f():\n    x = 1\n    y = 1\n    z = 1\n    return x + y + z\n" });
    repo.write("a.py", "def f():\n    x = 1\n    y = 1\n    z = 2\n    return x + y + z\n");
    const s = await server([
      {
        text: block("a.py", "    x = 1\n    y = 1\n    z = 2\n    return x + y + z\n", "    x = 5\n    y = 1\n    z = 2\n    return x + y + z\n"),
        waitFor: editedMeanwhile(repo, "a.py", "def f():\n    x = 1\n    y = 1\n    z = 3\n    return x + y + z\n"),
      },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--max-reflections", "0", "-m", "set x to 5", "a.py"]);
    expect(repo.read("a.py")).toBe("def f():\n    x = 1\n    y = 1\n    z = 3\n    return x + y + z\n");
    expect(r.stdout + r.stderr).toContain("changed while it answered");
  });
});
