// The kept ranking (rank-quick.ts): after an edit that moves no PageRank, a fresh
// process ranks from it without reading the stored graph, and its map is the map a
// build from scratch gives; after any other edit it declines and the stored graph is
// patched, with the same map. On a generated repository in a temp folder (real parses,
// real cache files), one edit at a time, each map compared with the map of a fresh
// cache; and with the cache written by another handle in between.
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryCacheStore, openCacheStore } from "../../core/edit/cache-store.ts";
import { languageFor } from "../../grammars/languages.ts";
import { generateRepo } from "../../scripts/gen-repo.ts";
import { removeFirstPythonDef, testInput } from "../../tests/support/repomap-input.ts";
import { CACHE_NAMESPACE, CACHE_VERSION, TagCache } from "./cache.ts";
import { patchRankGraph, type RankFile } from "./graph.ts";
import { ImportResolver } from "./imports.ts";
import { buildRepoMap, type RepoMapInput } from "./map.ts";
import { rankFromVector, withImportedNames } from "./rank.ts";
import { listingHash, quickRank } from "./rank-quick.ts";
import { decodeState, QUICK_MIN_LIMIT } from "./rank-state.ts";
import { MAP_BUDGET } from "./index.ts";
import { rankingSignature } from "./parse.ts";
import { decodeRankFile, statFiles, type ScanResult } from "./scan.ts";

/** The signature of a file with no definitions and no references (rank-state.ts leaves such files out). */
function emptySignature(): string {
  return rankingSignature([], "");
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function listFiles(root: string): string[] {
  return [...new Bun.Glob("**/*").scanSync({ cwd: root, dot: false })].filter((p) => !p.startsWith(".coder/")).sort();
}

function input(root: string, cache: TagCache, chat: string, mentionedFiles: string[] = []): RepoMapInput {
  return testInput(root, listFiles(root), cache, { chatFiles: [chat], mentionedFiles, workers: 0 });
}

/** The repository's own cache, opened as a fresh process opens it. */
function diskCache(root: string): TagCache {
  return new TagCache(openCacheStore(root, CACHE_NAMESPACE, { version: CACHE_VERSION, warn: () => {} }));
}

/** The map from an empty cache: every file parsed, the graph built from all tags. */
async function fromScratch(root: string, chat: string, mentionedFiles: string[] = []): Promise<string> {
  const cache = new TagCache(memoryCacheStore(CACHE_VERSION));
  const result = await buildRepoMap(input(root, cache, chat, mentionedFiles));
  expect(result.stats.ranking).toBe("built");
  cache.close();
  return result.text;
}

/** A map built in a fresh process (a new cache handle): its text, and whether it came from the kept ranking. */
async function fresh(root: string, chat: string, mentionedFiles: string[] = [], cache = diskCache(root)): Promise<{ map: string; kept: boolean; how: string | undefined }> {
  try {
    const result = await buildRepoMap(input(root, cache, chat, mentionedFiles));
    return { map: result.text, kept: result.stats.rankingKept === true, how: result.stats.ranking };
  } finally {
    cache.close();
  }
}

/** A generated repository with a chat file, a file its map shows, and a file nothing references (its PageRank is all but 0). */
function setUp(seed: number): { root: string; chat: string; shownFile: string; leaf: string; called: string[]; ts: string[]; py: string[] } {
  const root = mkdtempSync(join(tmpdir(), "coder-rank-quick-"));
  dirs.push(root);
  generateRepo(root, 400, seed);
  const tagged = listFiles(root).filter((p) => languageFor(p) !== null);
  const chat = tagged.find((p) => p.endsWith(".ts"))!;
  const chatText = readFileSync(join(root, chat), "utf8");
  const called = [...chatText.matchAll(/import \{ (\w+) \} from/g)].map((m) => m[1]!);
  expect(called.length).toBeGreaterThan(2);
  const imported = chatText.match(/import \{ \w+ \} from "(\.[^"]+)"/)![1]!;
  const shownFile = tagged.find((p) => join(root, p).startsWith(join(root, chat, "..", imported) + "."))!;
  const leaf = "pkg0/zz_leaf_module.ts";
  writeFileSync(join(root, leaf), `export function leafEntryPoint(value: number) {\n  return ${called[0]}(value);\n}\n`);
  return { root, chat, shownFile, leaf, called, ts: tagged.filter((p) => p.endsWith(".ts") && p !== chat), py: tagged.filter((p) => p.endsWith(".py")) };
}

test("after an edit that moves no PageRank the kept ranking gives the map a build from scratch gives; after any other edit the graph is patched, with the same map", async () => {
  const { root, chat, shownFile, leaf, called, ts, py } = setUp(11);
  const first = await fresh(root, chat);
  expect(first.how).toBe("built");
  expect(first.map).toEqual(await fromScratch(root, chat));

  const edits: { what: string; apply: () => void; kept: boolean }[] = [
    {
      what: "a new name nobody references, in a file nothing references",
      apply: () => appendFileSync(join(root, leaf), "\nexport function leafSecondHelper(value: number) {\n  return value;\n}\n"),
      kept: true,
    },
    {
      // Its definitions' lines move: the map shows them at their new lines.
      what: "a reference to a name nobody defines, at the top of a file the map shows",
      apply: () => writeFileSync(join(root, shownFile), "notDefinedAnywhereCall();\n\n" + readFileSync(join(root, shownFile), "utf8")),
      kept: true,
    },
    {
      what: "a second new name in the same file, and a reference to another name nobody defines",
      apply: () => appendFileSync(join(root, leaf), "\nexport function leafThirdHelper(value: number) {\n  return alsoNotDefinedCall(value);\n}\n"),
      kept: true,
    },
    {
      // The file's PageRank is not negligible: the kept vector is not taken.
      what: "a new name nobody references, in a file the map shows",
      apply: () => appendFileSync(join(root, shownFile), "\nexport function shownFileNewHelper(value: number) {\n  return value;\n}\n"),
      kept: false,
    },
    {
      what: "a definition of a name the chat file calls (a second definer, with referencers)",
      apply: () => appendFileSync(join(root, ts[10]!), `\nexport function ${called[1]}(value: number) {\n  return value;\n}\n`),
      kept: false,
    },
    {
      what: "a definition removed",
      apply: () => removeFirstPythonDef(join(root, py[5]!)),
      kept: false,
    },
    {
      what: "a reference added to a defined name, in the file nothing references",
      apply: () => appendFileSync(join(root, leaf), `\nexport function leafFourthHelper(value: number) {\n  return ${called[2]}(value);\n}\n`),
      kept: false,
    },
    { what: "a file deleted", apply: () => unlinkSync(join(root, ts[30]!)), kept: false },
    {
      // What a one-shot run after a revert meets: the stored state has a name the file no longer defines.
      what: "a name nobody references dropped and another added in its place",
      apply: () => writeFileSync(join(root, leaf), readFileSync(join(root, leaf), "utf8").replace("leafSecondHelper", "leafRenamedHelper")),
      kept: true,
    },
    {
      // After the graph was built and stored again: the kept ranking is its.
      what: "a new name nobody references, after the graph was stored again",
      apply: () => appendFileSync(join(root, leaf), "\nexport function leafFifthHelper(value: number) {\n  return value;\n}\n"),
      kept: true,
    },
  ];
  for (const edit of edits) {
    edit.apply();
    const built = await fresh(root, chat);
    expect({ edit: edit.what, kept: built.kept }).toEqual({ edit: edit.what, kept: edit.kept });
    expect({ edit: edit.what, map: built.map }).toEqual({ edit: edit.what, map: await fromScratch(root, chat) });
  }
}, 240_000);

test("a kept ranking is not taken for other mentioned files (another personalisation of PageRank)", async () => {
  const { root, chat, leaf, ts } = setUp(15);
  expect((await fresh(root, chat)).how).toBe("built");
  appendFileSync(join(root, leaf), "\nexport function leafSecondHelper(value: number) {\n  return value;\n}\n");
  const mentioned = await fresh(root, chat, [ts[40]!]);
  expect(mentioned.kept).toBe(false);
  expect(mentioned.map).toEqual(await fromScratch(root, chat, [ts[40]!]));
  // Without the mention, as stored: taken.
  appendFileSync(join(root, leaf), "\nexport function leafThirdHelper(value: number) {\n  return value;\n}\n");
  expect((await fresh(root, chat)).kept).toBe(true);
}, 240_000);

test("a kept ranking whose parts are of another generation (another process wrote in between) is not combined: the graph is patched, with the map from scratch", async () => {
  const { root, chat, leaf } = setUp(12);
  expect((await fresh(root, chat)).how).toBe("built");
  // Another writer's head over this state's parts: the same head with another generation.
  let cache = diskCache(root);
  const heads = cache.store.entries("graphs-quick");
  expect(heads.size).toBe(1);
  const [key, head] = [...heads][0]! as [string, Uint8Array];
  // The head is 8 bytes of length, then its JSON (ASCII up to the generation).
  const json = new TextDecoder().decode(head.subarray(8, 408));
  const gen = /"gen":"([0-9a-f-]{36})"/.exec(json)![1]!;
  const other = head.slice();
  other.set(new TextEncoder().encode(crypto.randomUUID()), 8 + json.indexOf(gen));
  expect(new TextDecoder().decode(other.subarray(8, 408))).not.toContain(gen);
  cache.store.put("graphs-quick", key, other);
  cache.close();
  appendFileSync(join(root, leaf), "\nexport function leafSecondHelper(value: number) {\n  return value;\n}\n");
  const mixed = await fresh(root, chat);
  expect(mixed.kept).toBe(false);
  expect(mixed.how).toBe("patched");
  expect(mixed.map).toEqual(await fromScratch(root, chat));
  // The head as it was: the parts agree with it again, and the kept ranking is used.
  cache = diskCache(root);
  cache.store.put("graphs-quick", key, head);
  cache.close();
  appendFileSync(join(root, leaf), "\nexport function leafThirdHelper(value: number) {\n  return value;\n}\n");
  const agreed = await fresh(root, chat);
  expect(agreed.kept).toBe(true);
  expect(agreed.map).toEqual(await fromScratch(root, chat));
}, 240_000);

test("two cache handles writing one cache in turn: each map is the map from scratch, whichever state the other stored", async () => {
  const { root, chat, leaf, ts } = setUp(13);
  const a = diskCache(root);
  const b = diskCache(root);
  try {
    const build = async (cache: TagCache) => {
      const result = await buildRepoMap(input(root, cache, chat));
      return { map: result.text, kept: result.stats.rankingKept === true };
    };
    expect((await build(a)).map).toEqual(await fromScratch(root, chat));
    appendFileSync(join(root, leaf), "\nexport function leafSecondHelper(value: number) {\n  return value;\n}\n");
    // B ranks from the kept ranking A stored.
    const fromB = await build(b);
    expect(fromB.kept).toBe(true);
    expect(fromB.map).toEqual(await fromScratch(root, chat));
    // B stores a new state (a file added: built from every file's tags); A, opened before, reads it.
    writeFileSync(join(root, "pkg0/added_module.ts"), `export function addedModuleEntry(value: number) {\n  return value;\n}\n`);
    expect((await build(b)).map).toEqual(await fromScratch(root, chat));
    appendFileSync(join(root, leaf), "\nexport function leafThirdHelper(value: number) {\n  return value;\n}\n");
    const fromA = await build(a);
    expect(fromA.kept).toBe(true);
    expect(fromA.map).toEqual(await fromScratch(root, chat));
    // And back: A's edit that the kept ranking cannot take (a definition others reference), then B.
    appendFileSync(join(root, ts[10]!), `\nexport function leafSecondHelper(value: number) {\n  return value;\n}\n`);
    expect((await build(a)).map).toEqual(await fromScratch(root, chat));
    appendFileSync(join(root, leaf), "\nexport function leafFourthHelper(value: number) {\n  return value;\n}\n");
    expect((await build(b)).map).toEqual(await fromScratch(root, chat));
  } finally {
    a.close();
    b.close();
  }
}, 240_000);

test("the kept ranking is, entry for entry, what rank.ts makes of the patched graph from the kept PageRank vector", async () => {
  const { root, chat, shownFile } = setUp(14);
  expect((await fresh(root, chat)).how).toBe("built");
  let cache = diskCache(root);
  const before = new Set(cache.store.entries("rankings").keys());
  const graphs = [...cache.store.entries("graphs")];
  expect(graphs.length).toBe(1);
  const [key, blob] = graphs[0]! as [string, Uint8Array];
  cache.close();
  // Two files: a new name in a Python file of small but not negligible PageRank (the definitions it
  // feeds are ranked again, their ranks change), a reference to a name nobody defines at the top of
  // a file the map shows (its lines move).
  // In that file, a definition of a name only it defines and nobody references is renamed too.
  const kept = decodeState(blob, key, null)!;
  const { index: keptIndex } = kept.graph;
  const droppable = (f: number): string | undefined =>
    readFileSync(join(root, kept.graph.paths[f]!), "utf8")
      .match(/^def (\w+)\(/gm)
      ?.map((m) => m.slice(4, -1))
      .find((name) => {
        const id = keptIndex.idOf(name);
        return id >= 0 && keptIndex.definerStart[id + 1]! - keptIndex.definerStart[id]! === 1 && keptIndex.referencerStart[id + 1] === keptIndex.referencerStart[id];
      });
  const candidates = kept.graph.paths.map((path, f) => ({ path, f, rank: kept.ranks[f]! })).filter((c) => c.path.endsWith(".py") && c.rank > 1e-9 && c.rank < 2e-5 && droppable(c.f));
  expect(candidates.length).toBeGreaterThan(0);
  const chosen = candidates.sort((x, y) => y.rank - x.rank)[0]!;
  const small = chosen.path;
  const dropped = droppable(chosen.f)!;
  // Renamed (its body's references stay), and a new name added.
  writeFileSync(join(root, small), readFileSync(join(root, small), "utf8").replace(`def ${dropped}(`, `def ${dropped}_renamed(`) + "\n\ndef quick_added_helper(value):\n    return value\n");
  writeFileSync(join(root, shownFile), "notDefinedAnywhereCall();\n\n" + readFileSync(join(root, shownFile), "utf8"));
  const built = await fresh(root, chat);
  expect(built.kept).toBe(true);
  cache = diskCache(root);
  try {
    const stored = [...cache.store.entries("rankings")].filter(([k]) => !before.has(k));
    expect(stored.length).toBe(1);
    const columns = JSON.parse(stored[0]![1] as string) as { p: string[]; n: string[]; l: number[] };
    const got = columns.p.map((path, i) => (columns.l[i]! < 0 ? { path } : { path, name: columns.n[i]!, line: columns.l[i]! }));
    // The oracle: the stored graph, patched with the two files' tags, ranked from its own vector.
    const files = listFiles(root);
    const resolver = new ImportResolver({ files, read: (path) => readFileSync(join(root, path), "utf8") });
    const request = { allFiles: statFiles(root, files).map((e) => e.path), chatFiles: new Set([chat]), mentionedFiles: new Set<string>(), mentionedIdents: new Set<string>(), imports: new Map([[chat, resolver.importsOf(chat)]]), limit: 2048 };
    const state = decodeState(blob, key, request)!;
    const changed = new Map<number, RankFile>();
    for (const path of [small, shownFile]) {
      const f = state.graph.paths.indexOf(path);
      changed.set(f, withImportedNames(decodeRankFile(cache.rankRow(path)!), state.graph.importedNames.get(f)));
    }
    const patched = patchRankGraph(state.graph.index, state.graph.graph, state.graph.paths, state.graph.context, changed)!;
    const oracle = rankFromVector({ ...state.graph, ...patched }, request, state.ranks);
    // The map stores the first part of its ranking (what its fit can use).
    expect(got.length).toBeGreaterThan(50);
    expect(got).toEqual(oracle.ranked.slice(0, got.length));
    // And each listed definition's rank, to the bit: the kept ranking read directly (the scan as the cache describes it).
    const meta = cache.fileMeta();
    const described = new Map<string, { sig: string; skipped: string }>();
    for (const path of files) {
      const m = meta.get(path);
      if (m) described.set(path, { sig: m.sig, skipped: m.skipped });
    }
    const scan = { files: described } as unknown as ScanResult;
    // Further down than the map's limit (the kept definitions cover it and a quarter more).
    const deeper = { ...request, limit: 2500 };
    const entries = statFiles(root, files);
    const quick = quickRank({ key, listing: listingHash(entries.map((e) => e.path)), cache, entries, scan, request: deeper, tagsOf: (path) => decodeRankFile(cache.rankRow(path)!) }, emptySignature());
    if (!quick || quick === "none") throw new Error("the kept ranking was not taken");
    const deep = rankFromVector({ ...state.graph, ...patched }, deeper, state.ranks);
    expect(quick.ranked).toEqual(deep.ranked);
    const { index } = patched;
    const listed: number[] = [];
    let last = "";
    for (const entry of deep.ranked) {
      if (entry.line === undefined || `${entry.path}\0${entry.name}` === last) continue;
      last = `${entry.path}\0${entry.name}`;
      const id = index.idOf(entry.name);
      const f = state.graph.paths.indexOf(entry.path);
      let slot = -1;
      for (let k = index.definerStart[id]!; k < index.definerStart[id + 1]!; k++) if (index.definerList[k] === f) slot = k;
      listed.push(deep.slots.rank[slot]!);
    }
    expect(quick.listedRanks).toEqual(listed);
  } finally {
    cache.close();
  }
}, 240_000);

test("a kept ranking stored by a build of a small budget serves a fresh build of a larger one (up to the largest a window's share gives): the state is not stored again, and the map is the map from scratch", async () => {
  const { root, chat, leaf } = setUp(16);
  // The largest budget a context window's share gives: its limit is within what every kept ranking covers.
  expect(QUICK_MIN_LIMIT).toBeGreaterThanOrEqual(2 * MAP_BUDGET.share.max);
  const build = async (budget: number) => {
    const cache = diskCache(root);
    try {
      const result = await buildRepoMap({ ...input(root, cache, chat), budget });
      const states = [...cache.store.entries("graphs").values()] as Uint8Array[];
      return { map: result.text, kept: result.stats.rankingKept === true, how: result.stats.ranking, state: states[0] };
    } finally {
      cache.close();
    }
  };
  const scratch = async (budget: number) => {
    const cache = new TagCache(memoryCacheStore(CACHE_VERSION));
    const text = (await buildRepoMap({ ...input(root, cache, chat), budget })).text;
    cache.close();
    return text;
  };
  // A small budget's limit (200 lines) cuts the kept definitions well inside this repository's.
  const small = await build(100);
  expect(small.how).toBe("built");
  for (const [n, budget] of [[1, 2048], [2, 100], [3, 4096]] as const) {
    appendFileSync(join(root, leaf), `\nexport function leafBudgetHelper${n}(value: number) {\n  return value;\n}\n`);
    const larger = await build(budget);
    expect({ budget, kept: larger.kept }).toEqual({ budget, kept: true });
    // The state stored by the first build, as it was.
    expect(Bun.hash(larger.state!)).toBe(Bun.hash(small.state!));
    expect(larger.map).toEqual(await scratch(budget));
  }
}, 240_000);
