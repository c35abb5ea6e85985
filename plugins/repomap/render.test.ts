import { expect, test } from "bun:test";
import type { RankedEntry } from "./rank.ts";
import { MapRenderer, estimateTokens, fitToBudget, renderExcerpt, splitLines } from "./render.ts";

const CODE = ["import os", "", "class Store:", "    def __init__(self):", "        self.items = []", "        self.total = 0", "", "    def add(self, item):", "        self.items.append(item)", "", "def helper():", "    return 1"];

test("an excerpt shows lines of interest and their scope headers, with ⋮ for the rest", () => {
  // `add` at line 7 inside `Store` (header line 2); Store's own header starts at line 2.
  const text = renderExcerpt(CODE, [7], [[2, 3], [7, 8]]);
  expect(text).toBe("⋮\n│class Store:\n⋮\n│    def add(self, item):\n⋮\n");
});

test("one-line gaps are closed and a blank line after a shown line is kept", () => {
  const text = renderExcerpt(CODE, [2, 4], []);
  // Line 3 closes the gap between 2 and 4.
  expect(text).toBe("⋮\n│class Store:\n│    def __init__(self):\n│        self.items = []\n⋮\n");
  const withBlank = renderExcerpt(CODE, [8], []);
  expect(withBlank).toBe("⋮\n│        self.items.append(item)\n│\n⋮\n");
});

test("no leading ⋮ when the first line is shown", () => {
  expect(renderExcerpt(CODE, [0], [])).toBe("│import os\n│\n⋮\n");
});

test("splitLines drops the final newline like Python's splitlines", () => {
  expect(splitLines("a\nb\n")).toEqual(["a", "b"]);
  expect(splitLines("a\r\nb")).toEqual(["a", "b"]);
  expect(splitLines("")).toEqual([]);
});

test("the renderer lists files in path order, name-only files without a colon, and cuts lines at 100 characters", () => {
  const long = "x".repeat(150);
  const renderer = new MapRenderer({
    text: (path) => (path === "b.py" ? `def ${long}():\n    pass\n` : "def a():\n    pass\n"),
    headers: () => [],
  });
  const entries: RankedEntry[] = [{ path: "b.py", name: long, line: 0 }, { path: "notes.txt" }, { path: "a.py", name: "a", line: 0 }, { path: "chat.py", name: "c", line: 0 }];
  const out = renderer.render(entries, new Set(["chat.py"]));
  expect(out).toBe(`\na.py:\n│def a():\n⋮\n\nb.py:\n│def ${"x".repeat(95)}\n⋮\n\nnotes.txt\n`);
});

test("fitting picks the largest prefix under the budget, or one within 15% of it", () => {
  const entries: RankedEntry[] = Array.from({ length: 400 }, (_, i) => ({ path: `f${String(i).padStart(3, "0")}.py` }));
  const render = (prefix: readonly RankedEntry[]) => prefix.map((e) => e.path).join("\n");
  const count = (text: string) => Math.ceil(text.length / 4);
  const fitted = fitToBudget(entries, 500, render, count);
  expect(fitted.tokens).toBeLessThanOrEqual(500 * 1.15);
  expect(fitted.tokens).toBeGreaterThanOrEqual(500 * 0.85);
  // Everything fits: the whole list.
  const all = fitToBudget(entries.slice(0, 10), 5000, render, count);
  expect(all.entries).toBe(10);
});

test("token estimates sample long texts and are exact for short ones", () => {
  const count = (text: string) => text.length;
  expect(estimateTokens("short", count)).toBe(5);
  const long = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n");
  expect(Math.abs(estimateTokens(long, count) - long.length) / long.length).toBeLessThan(0.05);
});
