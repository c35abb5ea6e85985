// Commit messages: the weak model's prompt, cleaning its reply, and the deterministic fallback.

import { describe, expect, test } from "bun:test";
import { cleanCommitMessage, commitMessagePrompt, fallbackCommitMessage } from "../core/git/git.ts";

const CC = /^(feat|fix|refactor|docs|test|chore|style|perf|build|ci)(\([^)]*\))?!?: \S/;

describe("commitMessagePrompt", () => {
  test("carries the request and the diff, asks for one conventional line", () => {
    const msgs = commitMessagePrompt("add a --verbose flag", "+const verbose = true;");
    expect(msgs.map((m) => m.role)).toEqual(["system", "user"]);
    expect(msgs[0]!.content).toContain("72");
    expect(msgs[1]!.content).toContain("add a --verbose flag");
    expect(msgs[1]!.content).toContain("+const verbose = true;");
  });
  test("truncates a huge diff", () => {
    const msgs = commitMessagePrompt("x", "+a\n".repeat(50_000));
    expect(msgs[1]!.content.length).toBeLessThan(30_000);
    expect(msgs[1]!.content).toContain("diff truncated");
  });
});

describe("cleanCommitMessage", () => {
  test.each([
    ["feat: add verbose flag", "feat: add verbose flag"],
    ["```\nfix(parser): handle empty input.\n```", "fix(parser): handle empty input"],
    ['"refactor: Split the loader"', "refactor: split the loader"],
    ["Commit message: docs: explain the gate", "docs: explain the gate"],
    ["\n\nfeat!: drop node 16\n\nbody text", "feat!: drop node 16"],
    ["Here is the commit message:\n\nfix(api): reject empty names", "fix(api): reject empty names"],
    ["docs: README explains the gate", "docs: README explains the gate"],
    ["chore: WRITE hello.txt", "chore: WRITE hello.txt"],
    ["feat: API keys come from .env", "feat: API keys come from .env"],
  ])("%p -> %p", (raw, want) => {
    expect(cleanCommitMessage(raw)).toBe(want);
  });
  test("adds a type when the model forgot it", () => {
    expect(cleanCommitMessage("Fix crash when the config is empty")).toBe("fix: fix crash when the config is empty");
  });
  test("rejects empty or generic replies", () => {
    for (const raw of ["", "   \n", "update", "chore: update", "feat: changes", "```\n```"]) expect(cleanCommitMessage(raw)).toBeNull();
  });
  test("never longer than 72 characters, cut at a word", () => {
    const out = cleanCommitMessage(`feat: ${"implement the very long feature ".repeat(5)}`)!;
    expect(out.length).toBeLessThanOrEqual(72);
    expect(out).not.toEndWith(" ");
    expect(out).toMatch(CC);
  });
});

describe("fallbackCommitMessage", () => {
  test("uses an imperative request", () => {
    expect(fallbackCommitMessage(["src/calc.py"], [{ path: "src/calc.py", added: 1, removed: 1 }], "Please fix the off-by-one in range_sum.")).toBe(
      "fix: fix the off-by-one in range_sum in calc.py",
    );
    expect(fallbackCommitMessage(["cli.ts"], [{ path: "cli.ts", added: 9, removed: 0 }], "add a --json flag")).toBe("feat: add a --json flag in cli.ts");
  });
  test("without a usable request: describes the change from the files", () => {
    expect(fallbackCommitMessage(["lib/new.py"], [{ path: "lib/new.py", added: 3, removed: 0, created: true }], "")).toBe("feat: add new.py");
    expect(fallbackCommitMessage(["old.py"], [{ path: "old.py", added: 0, removed: 5, deleted: true }], "hmm?")).toBe("chore: remove old.py");
    expect(fallbackCommitMessage(["README.md"], [{ path: "README.md", added: 2, removed: 1 }], "")).toBe("docs: update README.md (+2 -1)");
    expect(fallbackCommitMessage(["tests/test_x.py", "tests/test_y.py"], [{ path: "tests/test_x.py", added: 2, removed: 0 }, { path: "tests/test_y.py", added: 1, removed: 1 }], "")).toBe(
      "test: update test_x.py and 1 more file (+3 -1)",
    );
  });
  test("always one conventional line of at most 72 characters", () => {
    const requests = ["", "?", "make the thing in the module that handles all of the many complicated configuration loading paths much faster and simpler", "Refactor everything\nsecond line"];
    const paths = [["a.ts"], ["a/very/long/path/to/some/deeply/nested/module/with/a/long/name/component_factory_impl.ts"], ["x.go", "y.go", "z.go"]];
    for (const r of requests)
      for (const p of paths) {
        const out = fallbackCommitMessage(p, p.map((path) => ({ path, added: 1, removed: 0 })), r);
        expect(out).toMatch(CC);
        expect(out.length).toBeLessThanOrEqual(72);
        expect(out).not.toContain("\n");
      }
  });
});
