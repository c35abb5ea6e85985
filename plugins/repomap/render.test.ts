import { expect, test } from "bun:test";
import type { RankedEntry } from "./rank.ts";
import { MapRenderer, PrefixTooShort, estimateTokens, fitToBudget, renderExcerpt, shownFiles, splitLines } from "./render.ts";

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

// ─── The per-file rendering and the fit with known estimates, against the whole-text forms ───

/** A seeded generator (the same cases on every run). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** What the renderer gave before its blocks were cut one by one: the whole text, each line cut at 100 UTF-16 units. */
function renderWhole(entries: readonly RankedEntry[], chat: ReadonlySet<string>, text: (path: string) => string | null, headers: (path: string, lines: ReadonlySet<number>) => [number, number][]): string {
  const byFile = shownFiles(entries, chat);
  let out = "";
  for (const path of [...byFile.keys()].sort()) {
    const lois = byFile.get(path);
    if (!lois) {
      out += "\n" + path + "\n";
      continue;
    }
    const unique = [...new Set(lois)].sort((a, b) => a - b);
    const source = text(path);
    out += "\n" + path + ":\n" + (source === null ? "" : renderExcerpt(splitLines(source), unique, headers(path, new Set(unique))));
  }
  return out
    .split("\n")
    .map((line) => (line.length > 100 ? line.slice(0, 100) : line))
    .join("\n");
}

/** Files with huge lines, multibyte text (shown after "│", a surrogate pair across the 100th unit), CRLF, a long path, an unreadable file. */
function sampleFiles(): Map<string, string | null> {
  const files = new Map<string, string | null>();
  const emoji = "😀";
  files.set("a/huge.py", `def huge():\n    x = "${"y".repeat(5000)}"\n    return x\n\nclass Wide:\n    ${"z".repeat(94)}${emoji}${emoji} = 1\n`);
  files.set("a/multi.ts", `export function 名前() {\n  return "${"漢字".repeat(80)}";\n}\nexport const ${"é".repeat(85)}${emoji} = 2;\n`);
  files.set("b/crlf.js", "function one() {\r\n  return 1;\r\n}\r\n\r\nfunction two() {\r\n  return 2;\r\n}\r\n");
  files.set(`${"deep/".repeat(25)}path.py`, "def deep():\n    pass\n");
  files.set("c/gone.py", null);
  files.set("c/plain.py", Array.from({ length: 40 }, (_, i) => (i % 5 === 0 ? `def f${i}():` : `    v${i} = ${"w".repeat(i * 4)}`)).join("\n") + "\n");
  return files;
}

test("the renderer's blocks, each with its lines cut, give the text the whole-text cut gives: huge lines, multibyte text, long paths", () => {
  const files = sampleFiles();
  const lineCount = (path: string) => Math.max(1, splitLines(files.get(path) ?? "x").length);
  const headers = (path: string, lines: ReadonlySet<number>): [number, number][] => [...lines].filter((l) => l > 0 && l % 3 === 0).map((l) => [Math.max(0, l - 2), l - 1] as [number, number]).filter(([a]) => a < lineCount(path));
  const text = (path: string) => files.get(path) ?? null;
  const paths = [...files.keys(), "notes.txt", "chat.py"];
  const next = random(7);
  for (let round = 0; round < 60; round++) {
    const entries: RankedEntry[] = Array.from({ length: 1 + Math.floor(next() * 30) }, () => {
      const path = paths[Math.floor(next() * paths.length)]!;
      return path === "notes.txt" || next() < 0.15 ? { path } : { path, name: "n", line: Math.floor(next() * lineCount(path)) };
    });
    const chat = new Set(["chat.py"]);
    const renderer = new MapRenderer({ text, headers });
    // Twice: the second rendering comes from the kept blocks.
    for (let i = 0; i < 2; i++) expect(renderer.render(entries, chat)).toBe(renderWhole(entries, chat, text, headers));
  }
});

test("fitting with known estimates takes the same steps to the same map, rendering only the prefix it ends at", () => {
  const next = random(11);
  for (let round = 0; round < 80; round++) {
    const entries: RankedEntry[] = Array.from({ length: Math.floor(next() * 600) }, (_, i) => ({ path: `f${i % 97}.py`, name: `n${i}`, line: i }));
    // Renderings of irregular size: the estimates are not monotone in the prefix length.
    const sizes = entries.map(() => 20 + Math.floor(next() * 400));
    const render = (prefix: readonly RankedEntry[]) => prefix.map((e, i) => `${e.name} ${"x".repeat(sizes[i]!)}`).join("\n");
    const count = (text: string) => Math.ceil(text.length / 3.7);
    const budget = 64 + Math.floor(next() * 8000);
    const learned = new Map<number, number>();
    const plain = fitToBudget(entries, budget, render, count, { known: () => undefined, learned: (n, t) => learned.set(n, t) });
    expect(fitToBudget(entries, budget, render, count)).toEqual(plain);
    // Everything known: one rendering, of the prefix the search ends at.
    const rendered: number[] = [];
    const counting = (prefix: readonly RankedEntry[]) => (rendered.push(prefix.length), render(prefix));
    const known = fitToBudget(entries, budget, counting, count, { known: (n) => learned.get(n), learned: () => {} });
    expect(known).toEqual(plain);
    expect(rendered).toEqual([plain.entries]);
    // Some known: the same again.
    const some = fitToBudget(entries, budget, render, count, { known: (n) => (n % 2 === 0 ? learned.get(n) : undefined), learned: () => {} });
    expect(some).toEqual(plain);
  }
});

test("a fit over the first part of a list is the fit over the whole, or PrefixTooShort when a step goes past it", () => {
  const next = random(5);
  let short = 0;
  for (let round = 0; round < 120; round++) {
    const entries: RankedEntry[] = Array.from({ length: 1 + Math.floor(next() * 500) }, (_, i) => ({ path: `f${i}.py`, name: `n${i}`, line: i }));
    const render = (prefix: readonly RankedEntry[]) => prefix.map((e) => `${e.name}${"y".repeat(e.line! % 37)}`).join("\n");
    const count = (text: string) => Math.ceil(text.length / 4);
    const budget = 16 + Math.floor(next() * 3000);
    const whole = fitToBudget(entries, budget, render, count);
    const part = entries.slice(0, Math.floor(next() * (entries.length + 1)));
    if (whole.furthest > part.length) {
      expect(() => fitToBudget(part, budget, render, count, undefined, entries.length)).toThrow(PrefixTooShort);
      short++;
    } else expect(fitToBudget(part, budget, render, count, undefined, entries.length)).toEqual(whole);
  }
  expect(short).toBeGreaterThan(10);
  expect(short).toBeLessThan(110);
});
