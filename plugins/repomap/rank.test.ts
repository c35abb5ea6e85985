import { expect, test } from "bun:test";
import type { RankFile } from "./graph.ts";
import { EDGES_PER_IDENT, identWeight, nthSmallest, rankDefinitions, rankFile } from "./rank.ts";

const defsOf = (...names: string[]) => names.map((name, line) => ({ name, line }));
const refsOf = (...names: string[]) => new Map(names.map((n) => [n, 1]));

function rank(files: RankFile[], options: { chat?: string[]; idents?: string[]; mentioned?: string[]; all?: string[] } = {}) {
  return rankDefinitions({
    files,
    allFiles: options.all ?? files.map((f) => f.path),
    chatFiles: new Set(options.chat ?? []),
    mentionedFiles: new Set(options.mentioned ?? []),
    mentionedIdents: new Set(options.idents ?? []),
  });
}

const position = (ranked: ReturnType<typeof rank>, name: string) => ranked.findIndex((e) => e.name === name);

test("a definition referenced from a chat file outranks an unreferenced one", () => {
  const files = [
    rankFile("app/main.py", defsOf("main"), refsOf("load_settings")),
    rankFile("lib/settings.py", defsOf("load_settings"), new Map()),
    rankFile("lib/unused.py", defsOf("forgotten_helper"), new Map()),
  ];
  const ranked = rank(files, { chat: ["app/main.py"] });
  expect(position(ranked, "load_settings")).toBeGreaterThanOrEqual(0);
  expect(position(ranked, "load_settings")).toBeLessThan(position(ranked, "forgotten_helper"));
  // Chat files are never in the ranking.
  expect(ranked.some((e) => e.path === "app/main.py")).toBe(false);
});

test("a mentioned identifier pulls its file up", () => {
  const files = [
    rankFile("a.ts", defsOf("alpha"), refsOf("renderWidget", "parseConfig")),
    rankFile("b.ts", defsOf("beta"), refsOf("renderWidget", "parseConfig")),
    rankFile("widget.ts", defsOf("renderWidget"), new Map()),
    rankFile("config.ts", defsOf("parseConfig"), new Map()),
  ];
  const plain = rank(files);
  const mentioned = rank(files, { idents: ["parseConfig"] });
  expect(position(mentioned, "parseConfig")).toBe(0);
  // Without the mention the two are tied by weight and ordered by path (descending, as Aider sorts).
  expect(position(plain, "renderWidget")).toBe(0);
});

test("a mentioned file and a path component naming a mentioned identifier are personalised", () => {
  const files = [
    rankFile("x.ts", defsOf("xx"), refsOf("fromLeft", "fromRight")),
    rankFile("left.ts", defsOf("fromLeft"), refsOf("leftHelper")),
    rankFile("right.ts", defsOf("fromRight"), refsOf("rightHelper")),
    rankFile("l2.ts", defsOf("leftHelper"), new Map()),
    rankFile("r2.ts", defsOf("rightHelper"), new Map()),
  ];
  const byFile = rank(files, { mentioned: ["right.ts"] });
  expect(position(byFile, "rightHelper")).toBeLessThan(position(byFile, "leftHelper"));
  const byIdent = rank(files, { idents: ["left"] });
  expect(position(byIdent, "leftHelper")).toBeLessThan(position(byIdent, "rightHelper"));
});

test("weights follow Aider: long compound names ×10, private and widely defined names ×0.1", () => {
  expect(identWeight("parse_config", 1, false)).toBe(10);
  expect(identWeight("parseConfig", 1, false)).toBe(10);
  expect(identWeight("parse-config", 1, false)).toBe(10);
  expect(identWeight("parse", 1, false)).toBe(1);
  expect(identWeight("parse", 1, true)).toBe(10);
  expect(identWeight("_parse", 1, false)).toBeCloseTo(0.1);
  expect(identWeight("parse", 6, false)).toBeCloseTo(0.1);
  expect(identWeight("_parse_config_value", 6, true)).toBeCloseTo(10 * 10 * 0.1 * 0.1);
});

test("files without tags and files only in the graph follow the ranked definitions by name", () => {
  const files = [rankFile("a.py", defsOf("alpha"), refsOf("beta")), rankFile("b.py", defsOf("beta"), new Map())];
  const ranked = rank(files, { all: ["a.py", "b.py", "README.md", "docs/guide.md"] });
  const names = ranked.filter((e) => e.name === undefined).map((e) => e.path);
  expect(names).toContain("README.md");
  expect(names).toContain("docs/guide.md");
  expect(ranked.findIndex((e) => e.path === "README.md")).toBeGreaterThan(position(ranked, "beta"));
});

test("a name defined and used everywhere adds a bounded number of edges", () => {
  // 400 files each define and reference `get`: Aider would add 160,000 edges.
  const files = Array.from({ length: 400 }, (_, i) => rankFile(`pkg${i % 20}/f${i}.ts`, defsOf(`get`, `own${i}`), refsOf("get")));
  const started = performance.now();
  const ranked = rank(files);
  expect(ranked.length).toBeGreaterThan(400);
  expect(EDGES_PER_IDENT).toBeLessThan(400 * 400);
  // Not a timing assertion: the ranking simply has to finish and include every `own` definition.
  expect(ranked.filter((e) => e.name?.startsWith("own")).length).toBe(400);
  expect(performance.now() - started).toBeGreaterThan(0);
});

test("the limit cuts the ranking", () => {
  const files = Array.from({ length: 50 }, (_, i) => rankFile(`f${i}.py`, defsOf(`def_${i}`), refsOf(`def_${(i + 1) % 50}`)));
  const ranked = rankDefinitions({ files, allFiles: files.map((f) => f.path), chatFiles: new Set(), mentionedFiles: new Set(), mentionedIdents: new Set(), limit: 10 });
  expect(ranked.length).toBe(10);
  // On uneven ranks the cut (at the limit's rank, before the sort) keeps exactly the unlimited ranking's head.
  const uneven = Array.from({ length: 60 }, (_, i) => rankFile(`g${i}.py`, defsOf(`def_${i}`, `aux_${i}`), refsOf(`def_${(i * 7) % 60}`, `def_${(i * 13) % 60}`, `aux_${i % 5}`)));
  const request = { files: uneven, allFiles: uneven.map((f) => f.path), chatFiles: new Set([uneven[3]!.path]), mentionedFiles: new Set<string>(), mentionedIdents: new Set<string>() };
  const all = rankDefinitions(request);
  for (const limit of [1, 7, 25, 50]) expect(rankDefinitions({ ...request, limit })).toEqual(all.slice(0, limit));
});

test("a member reference on an unknown receiver counts less than a plain one", () => {
  const files = [
    rankFile("app.ts", defsOf("main"), refsOf("renderPage"), new Map([["renderWidget", 1]])),
    rankFile("page.ts", defsOf("renderPage"), new Map()),
    rankFile("widget.ts", defsOf("renderWidget"), new Map()),
  ];
  const ranked = rank(files, { chat: ["app.ts"] });
  expect(position(ranked, "renderPage")).toBeLessThan(position(ranked, "renderWidget"));
  // The same two as plain references tie, and the tie goes to the later path (Aider's order).
  const plain = rank([files[0]!, files[1]!, files[2]!].map((f, i) => (i === 0 ? rankFile("app.ts", defsOf("main"), refsOf("renderPage", "renderWidget")) : f)), { chat: ["app.ts"] });
  expect(position(plain, "renderWidget")).toBeLessThan(position(plain, "renderPage"));
});

test("a chat file's imports: its names link only to the imported file and come first; tests rank low", () => {
  const files = [
    rankFile("src/app.ts", defsOf("main"), refsOf("parseConfig", "formatDate")),
    rankFile("src/config.ts", defsOf("parseConfig"), new Map()),
    rankFile("legacy/config.ts", defsOf("parseConfig"), new Map()),
    rankFile("src/dates.ts", defsOf("formatDate"), new Map()),
    rankFile("tests/dates.ts", defsOf("formatDate"), new Map()),
  ];
  const ranked = rankDefinitions({
    files,
    allFiles: files.map((f) => f.path),
    chatFiles: new Set(["src/app.ts"]),
    mentionedFiles: new Set(),
    mentionedIdents: new Set(),
    imports: new Map([["src/app.ts", new Map([["src/config.ts", new Set(["parseConfig"])]])]]),
  });
  const at = (path: string, name: string) => ranked.findIndex((e) => e.path === path && e.name === name);
  expect(at("src/config.ts", "parseConfig")).toBe(0);
  // Not imported: the other parseConfig gets no edge from the chat file, so no rank.
  expect(at("legacy/config.ts", "parseConfig")).toBe(-1);
  expect(at("src/dates.ts", "formatDate")).toBeLessThan(at("tests/dates.ts", "formatDate"));
});

test("a chat file importing more definers of a name than the edge bound allows: the ranking stays finite and exact", () => {
  // 60 files define `get` and 60 others call it: past EDGES_PER_IDENT, each caller links to its nearest 32 definers.
  const definers = Array.from({ length: 60 }, (_, i) => rankFile(`lib/store${String(i).padStart(2, "0")}.ts`, defsOf("get", `storeHelper${i}`), new Map()));
  const callers = Array.from({ length: 60 }, (_, i) => rankFile(`app/caller${i}.ts`, defsOf(`caller${i}`), refsOf("get")));
  const chat = rankFile("lib/main.ts", defsOf("main"), refsOf("get", "storeHelper59"));
  const files = [chat, ...definers, ...callers];
  const ranked = rankDefinitions({
    files,
    allFiles: files.map((f) => f.path),
    chatFiles: new Set(["lib/main.ts"]),
    mentionedFiles: new Set(),
    mentionedIdents: new Set(),
    // Imports every definer (as a Go or Java package's files are).
    imports: new Map([["lib/main.ts", new Map(definers.map((f) => [f.path, new Set<string>()]))]]),
  });
  // The one name the chat file uses from a single definer ranks first; all 60 `get`s are linked (past the bound of 32).
  expect(ranked[0]).toEqual({ path: "lib/store59.ts", name: "storeHelper59", line: 1 });
  expect(ranked.filter((e) => e.name === "get").length).toBe(60);
});

test("nthSmallest picks what a sort puts at each position, repeats included", () => {
  let x = 7;
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const size of [1, 2, 5, 100, 1001]) {
    const values = Float64Array.from({ length: size }, () => Math.floor(next() * 20) / 4);
    const sorted = values.slice().sort();
    for (const n of [0, size >> 1, size - 1]) expect(nthSmallest(values.slice(), n)).toBe(sorted[n]!);
  }
});
