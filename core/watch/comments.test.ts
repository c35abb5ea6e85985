// AI-comment detection against Aider's own test vectors (../shared/fixtures/aider/watch),
// plus the comment syntaxes of the embedded languages Aider's one pattern does not cover.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { actionOfAll, findAiComments, removeAiComments } from "./comments.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "..", "shared", "fixtures", "aider");
const haveFixtures = existsSync(join(FIXTURES, "watch_cases.json"));

interface WatchCase {
  file: string;
  aider_output: { line_numbers: number[]; comments: string[]; action: "!" | "?" };
}

describe.skipIf(!haveFixtures)("Aider's watch vectors (skipped without ../shared/fixtures)", () => {
  const cases: WatchCase[] = haveFixtures ? JSON.parse(readFileSync(join(FIXTURES, "watch_cases.json"), "utf8")).cases : [];
  for (const c of cases) {
    test(c.file, () => {
      const found = findAiComments(c.file, readFileSync(join(FIXTURES, c.file), "utf8"));
      expect(found.map((f) => f.line + 1)).toEqual(c.aider_output.line_numbers);
      expect(found.map((f) => f.text)).toEqual(c.aider_output.comments);
      expect(actionOfAll(found)).toBe(c.aider_output.action);
    });
  }
});

describe("every embedded language's comment syntax", () => {
  const cases: [string, string, "!" | "?" | null][] = [
    ["a.py", "x = 1  # make this 2 AI!", "!"],
    ["a.rb", "# ai: why is this slow?  AI?", "?"],
    ["a.ts", "const x = 1; // AI! rename x", "!"],
    ["a.go", "/* ai! handle the error */", "!"],
    ["a.lua", "-- use a table here ai!", "!"],
    ["a.hs", "{- ai? what does this fold do -}", "?"],
    ["a.hs", "-- AI! make it strict", "!"],
    ["a.ml", "(* ai! make this tail-recursive *)", "!"],
    ["a.jl", "#= explain this AI? =#", "?"],
    ["a.sql", "-- AI! add an index", "!"],
    ["a.el", ";; ai! fix", "!"],
    ["a.py", "# ai note: callers pass bytes", null],
  ];
  for (const [path, line, action] of cases) {
    test(`${path}: ${line}`, () => {
      const found = findAiComments(path, `first\n${line}\nlast\n`);
      expect(found.map((f) => [f.line, f.action])).toEqual([[1, action]]);
    });
  }

  test("words containing ai (aider, rain, said) are no marker; a Python file's // is no comment", () => {
    expect(findAiComments("a.py", "# aider said so\n# it will rain\nx = 1 // 2 # ok\n// ai! not python\n")).toEqual([]);
  });
});

test("removing the comments: a comment-only line goes, a trailing comment is cut", () => {
  const text = "def f():\n    # ai! make it faster\n    return 1  # use a cache AI!\n";
  const comments = findAiComments("a.py", text);
  expect(removeAiComments(text, comments)).toBe("def f():\n    return 1\n");
  expect(removeAiComments("def f():\n    return 1\n", comments)).toBeNull();
});
