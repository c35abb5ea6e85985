// The pure parts of `coder eval`: reading git log, the default filter, the seeded sample and
// shards, the comparison of results, and the tally of a child's events.
import { describe, expect, test } from "bun:test";
import { emptyTally, tallyRun } from "./child.ts";
import { isTaskFile, parseLog, parseShard, qualifies, sample, shardOf } from "./history.ts";
import { changedLines, equivalent, lineF1 } from "./score.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);

describe("history", () => {
  const log = [
    `\x1e${A} ${B}\nadd a multiplication function to calc\n\nWith a body.\n\x1f`,
    `:100644 100644 ${"1".repeat(40)} ${"2".repeat(40)} M\tcalc.py`,
    `:100644 100644 ${"1".repeat(40)} ${"2".repeat(40)} M\ttests/test_calc.py`,
    "3\t0\tcalc.py",
    "1\t0\ttests/test_calc.py",
    `\x1e${B} ${C}\nremove the old module entirely\x1f`,
    `:100644 000000 ${"1".repeat(40)} ${"0".repeat(40)} D\told.py`,
    "0\t12\told.py",
    `\x1e${C}\nroot commit of the project\x1f`,
    `:000000 100644 ${"0".repeat(40)} ${"1".repeat(40)} A\tx.py`,
    "1\t0\tx.py",
  ].join("\n");

  test("parseLog reads message, parent, task files and the others; a deleted source file or a root commit is no task", () => {
    const commits = parseLog(log);
    expect(commits.map((c) => c.sha)).toEqual([A, B]);
    expect(commits[0]).toMatchObject({ parent: B, message: "add a multiplication function to calc\n\nWith a body.", subject: "add a multiplication function to calc", files: ["calc.py"], others: [{ path: "tests/test_calc.py", deleted: false }], changed: 3 });
    expect(commits[1]!.files).toEqual([]);
    expect(commits.map(qualifies)).toEqual([true, false]);
  });

  test("the default filter: source files only, at most 3, at most 80 lines, 4 words of subject", () => {
    expect(["src/a.ts", "lib/b.py", "x.go"].every(isTaskFile)).toBe(true);
    expect(["a.test.ts", "tests/a.py", "test_a.py", "a_test.go", "package-lock.json", "README.md", "dist/a.js", "a.min.js", "FooTest.java"].some(isTaskFile)).toBe(false);
    const base = { id: "", sha: A, parent: B, message: "", others: [], subject: "one two three four", files: ["a.py"], changed: 80 };
    expect(qualifies(base)).toBe(true);
    expect(qualifies({ ...base, changed: 81 })).toBe(false);
    expect(qualifies({ ...base, subject: "one two three" })).toBe(false);
    expect(qualifies({ ...base, files: ["a.py", "b.py", "c.py", "d.py"] })).toBe(false);
  });

  test("the sample is seeded (same seed, same tasks, in their order) and shards partition it", () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const one = sample(items, 10, 7);
    expect(sample(items, 10, 7)).toEqual(one);
    expect(sample(items, 10, 8)).not.toEqual(one);
    expect([...one].sort((a, b) => a - b)).toEqual(one);
    expect(sample(items, undefined, 1)).toEqual(items);
    const slices = [1, 2, 3].map((i) => shardOf(one, [i, 3]));
    expect(slices.flat().sort((a, b) => a - b)).toEqual(one);
    expect(slices.map((s) => s.length)).toEqual([4, 3, 3]);
    expect(parseShard("2/3")).toEqual([2, 3]);
    expect(parseShard("0/3")).toContain("between 1 and N");
    expect(parseShard("x")).toContain("I/N");
  });
});

describe("score", () => {
  test("equivalent: the same tree with other whitespace and comments; not when a token differs", async () => {
    const real = "def add(a, b):\n    return a + b\n";
    expect(await equivalent("m.py", "def add(a,b):   # sum\n    return a+b\n", real)).toBe(true);
    expect(await equivalent("m.py", "def add(a, b):\n    return a - b\n", real)).toBe(false);
    expect(await equivalent("m.py", "def add(a, b):\n    return 'a + b'\n", real)).toBe(false);
    expect(await equivalent("g.ts", "export const x = { a: 1 }; // note\n", "export const x = {a:1};\n")).toBe(true);
    expect(await equivalent("g.ts", "export const x = 'a b';\n", "export const x = 'a  b';\n")).toBe(false);
    expect(await equivalent("notes.txt", "a  b\n", "a b")).toBe(true);
    expect(await equivalent("m.py", null, null)).toBe(true);
    expect(await equivalent("m.py", null, real)).toBe(false);
  });

  test("changed lines and their F1", () => {
    const diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    expect(changedLines(diff)).toEqual(["-b", "+c"]);
    expect(lineF1(["-b", "+c"], ["-b", "+c"])).toBe(1);
    expect(lineF1([], [])).toBe(1);
    expect(lineF1(["-b"], [])).toBe(0);
    expect(lineF1(["-b", "+d"], ["-b", "+c"])).toBeCloseTo(0.5);
    expect(lineF1(["+c", "+c"], ["+c"])).toBeCloseTo(2 / 3);
  });
});

describe("tally", () => {
  const run = (events: Record<string, unknown>[], code = 0) => tallyRun(emptyTally(), { events, code, aborted: false, stderr: "" });
  const reply = (cost: number, costKnown = true) => ({ type: "reply", usage: { promptTokens: 10, completionTokens: 2 }, cost, ...(costKnown ? {} : { costKnown: false }) });

  test("edits, reflections, tokens and cost add up; a reply reflected without an edit is malformed", () => {
    const t = run([reply(0.5), { type: "reflection", n: 1, reason: "bad block" }, reply(0.25), { type: "edit", status: "failed" }, { type: "reflection", n: 2 }, reply(0.25), { type: "edit", status: "applied" }, { type: "edit", status: "skipped" }, { type: "end", exitCode: 0 }]);
    expect(t).toMatchObject({ applied: 1, failed: 1, refused: 1, reflections: 2, replies: 3, malformed: 1, tokensIn: 30, tokensOut: 6, cost: 1, error: null, clean: true });
  });

  test("a reply that asked for files, which coder then added, is not malformed", () => {
    const t = run([reply(0), { type: "reflection", n: 1, reason: "I added README.md to the chat: its content is above now. Go on with my request." }, reply(0), { type: "edit", status: "applied" }, { type: "end", exitCode: 0 }]);
    expect(t).toMatchObject({ malformed: 0, reflections: 1, applied: 1 });
  });

  test("an unknown price makes the cost unknown; an error before any reply is the model's; no end event is coder's failure", () => {
    expect(run([reply(0, false), { type: "end", exitCode: 0 }]).cost).toBeNull();
    expect(run([{ type: "error", message: "401 unauthorized", code: 1 }, { type: "end", exitCode: 1 }], 1)).toMatchObject({ modelError: true, clean: true, error: "401 unauthorized" });
    expect(run([{ type: "start" }], 134)).toMatchObject({ clean: false, modelError: false, error: "coder exited with code 134" });
  });
});
