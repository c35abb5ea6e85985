// The built-in syntax check: every embedded grammar finds a syntax error in a broken
// sample and none in a clean one; only the problems an edit introduced count; the report
// marks the bad line and shows the scope it sits in.
import { describe, expect, test } from "bun:test";
import { SAMPLES } from "./check.ts";
import { EMBEDDED_ASSETS } from "./embedded.ts";
import { LANGUAGES } from "./languages.ts";
import { GrammarLoader } from "./runtime.ts";
import { introducedProblems, renderSyntaxReport, syntaxProblems } from "./syntax.ts";

const loader = new GrammarLoader(EMBEDDED_ASSETS);

describe("every embedded grammar", () => {
  for (const spec of LANGUAGES) {
    test(`${spec.name}: a clean sample has no problem, an unclosed parenthesis has one`, async () => {
      const file = spec.filenames?.[0] ?? `sample${spec.extensions[0]}`;
      const clean = await syntaxProblems(loader, file, SAMPLES[spec.name] as string);
      expect(clean?.problems).toEqual([]);
      const broken = `${spec.name === "php" ? "<?php\n" : ""}x = (((\n`;
      const found = await syntaxProblems(loader, file, broken);
      expect(found?.language).toBe(spec.name);
      expect(found?.problems.length).toBeGreaterThan(0);
    });
  }
  test("a file no grammar covers is not checked", async () => {
    expect(await syntaxProblems(loader, "notes.txt", "((((")).toBeNull();
  });
});

const BROKEN = "class Shop:\n    def total(self):\n        if self.items\n            return 1\n        return 0\n\n\ndef other():\n    return 2\n";

test("the report names the line, marks it and shows its enclosing scopes", async () => {
  const found = await syntaxProblems(loader, "shop.py", BROKEN);
  expect(found?.problems.map((p) => p.line + 1)).toEqual([3]);
  const report = renderSyntaxReport("shop.py", "python", BROKEN, found!.problems);
  expect(report).toBe(["shop.py does not parse as python:", "shop.py:3: syntax error", "", " 1│class Shop:", " 2│    def total(self):", "█3│        if self.items", "  ⋮"].join("\n"));
});

test("a MISSING node is reported by what is missing", async () => {
  const c = await syntaxProblems(loader, "a.c", "int f() {\n  return 1\n}\n");
  expect(c?.problems.map((p) => [p.line + 1, p.what])).toEqual([[2, "missing ;"]]);
  const js = await syntaxProblems(loader, "a.js", "const x = [1, 2;\n");
  expect(js?.problems.map((p) => p.what)).toEqual(["missing ]"]);
});

describe("only the problems an edit introduced", () => {
  test("a file that was already broken the same way is not blamed", async () => {
    const before = BROKEN;
    const after = BROKEN.replace("return 2", "return 3");
    const old = await syntaxProblems(loader, "shop.py", before);
    const now = await syntaxProblems(loader, "shop.py", after);
    expect(introducedProblems(after, now!.problems, before, old!.problems)).toEqual([]);
  });

  test("a new problem in an already broken file is", async () => {
    const before = BROKEN;
    const after = BROKEN.replace("def other():", "def other(:");
    const old = await syntaxProblems(loader, "shop.py", before);
    const now = await syntaxProblems(loader, "shop.py", after);
    const fresh = introducedProblems(after, now!.problems, before, old!.problems);
    expect(fresh.map((p) => after.split("\n")[p.line])).toEqual(["def other(:"]);
  });

  test("a created file has nothing to compare with: every problem counts", async () => {
    const now = await syntaxProblems(loader, "new.py", "def f(:\n");
    expect(introducedProblems("def f(:\n", now!.problems, null, [])).toHaveLength(now!.problems.length);
  });
});

test("the syntax check and the repo map share one runtime and one compiled grammar per thread", async () => {
  // Each loader is its own (the check's, the map's), but a second copy of a grammar's WebAssembly
  // would cost its memory again: the Language is the same object, whichever loader asks first.
  const spec = LANGUAGES.find((l) => l.name === "python")!;
  const mapLoader = new GrammarLoader(EMBEDDED_ASSETS);
  const [checked, mapped] = await Promise.all([loader.parser(spec), mapLoader.load(spec)]);
  expect(mapped.language).toBe(checked.language);
  expect((await new GrammarLoader(EMBEDDED_ASSETS).parser(spec)).language).toBe(checked.language);
});
