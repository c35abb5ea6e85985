// The built-in syntax check through the binary: an edit that leaves a file unparseable
// is sent back with the report (no --lint-cmd needed), a file that was already broken is
// not blamed, --no-auto-lint turns it off, and a per-language lintCmd runs only on its files.
import { describe, expect, test } from "bun:test";
import { block, lastUser, mainRequests, makeRepo, runCoder, serverPerTest } from "./engine-harness.ts";

const server = serverPerTest();
const APP = "def total(items):\n    return sum(items)\n";

describe("the built-in syntax check", () => {
  test("a Python edit that leaves a syntax error is repaired on the second request, whose text holds the report", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([
      { text: block("app.py", "    return sum(items)\n", "    if items\n        return sum(items)\n    return 0\n") },
      { text: block("app.py", "    if items\n", "    if items:\n") },
    ]);
    const r = await runCoder(repo, s, ["--json", "-m", "return 0 for no items", "app.py"]);
    expect(r.code).toBe(0);
    const requests = mainRequests(s);
    expect(requests).toHaveLength(2);
    const report = lastUser(requests[1]);
    expect(report).toContain("app.py does not parse as python:");
    expect(report).toContain("app.py:2: syntax error");
    expect(report).toContain("█2│    if items");
    expect(report).toContain(" 1│def total(items):");
    expect(repo.read("app.py")).toBe("def total(items):\n    if items:\n        return sum(items)\n    return 0\n");
    const lint = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type === "lint");
    expect(lint.map((e) => [e.command, e.ok])).toEqual([["syntax check", false]]);
  });

  test("a file that was already broken is not blamed for its old error", async () => {
    const broken = "def a(:\n    pass\n\ndef b():\n    return 1\n";
    const repo = makeRepo({ "old.py": broken });
    const s = await server([{ text: block("old.py", "    return 1\n", "    return 2\n") }]);
    const r = await runCoder(repo, s, ["-m", "return 2 from b", "old.py"]);
    expect(r.code).toBe(0);
    expect(mainRequests(s)).toHaveLength(1);
    expect(repo.read("old.py")).toBe(broken.replace("return 1", "return 2"));
  });

  test("--no-auto-lint leaves a broken edit alone", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: block("app.py", "    return sum(items)\n", "    return sum(items\n") }]);
    const r = await runCoder(repo, s, ["--no-auto-lint", "-m", "break it", "app.py"]);
    expect(r.code).toBe(0);
    expect(mainRequests(s)).toHaveLength(1);
  });

  test("a per-language lintCmd runs on that language's files only, after the syntax check", async () => {
    const repo = makeRepo({ "app.py": APP, "util.js": "export const one = 1;\n" });
    repo.write(".coder.json", JSON.stringify({ lintCmd: { python: "echo PYLINT >> lint.log; echo", javascript: "echo JSLINT >> lint.log; echo" } }));
    repo.git("add", "-A");
    repo.git("commit", "-qm", "config");
    const s = await server([{ text: block("util.js", "export const one = 1;\n", "export const one = 2;\n") }]);
    const r = await runCoder(repo, s, ["--trust", "-m", "two", "util.js"]);
    expect(r.code).toBe(0);
    expect(repo.read("lint.log")).toBe("JSLINT\n");
  });
});
