// The kept ranking graph (rank-state.ts) patched after an edit gives the map a
// build from scratch gives: on a generated repository in a temp folder (real
// parses, real cache files), one edit at a time, each map compared with the map
// of a fresh cache and a fresh ranking.
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryCacheStore, openCacheStore } from "../../core/edit/cache-store.ts";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { languageFor } from "../../grammars/languages.ts";
import { generateRepo } from "../../scripts/gen-repo.ts";
import { CACHE_NAMESPACE, CACHE_VERSION, TagCache } from "./cache.ts";
import { buildRepoMap, type RepoMapInput, type RepoMapResult } from "./map.ts";
import { MapMemory } from "./memory.ts";
import { removeFirstPythonDef, testInput } from "../../tests/support/repomap-input.ts";
import { EDGES_PER_IDENT, patchRankGraph, SortedKeys, type RankFile } from "./graph.ts";
import { buildRankGraph, graphContext, rankFile, rankGraph, withImportedNames, type RankGraph } from "./rank.ts";
import { decodeState, encodeState, STATE_FORMAT } from "./rank-state.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function listFiles(root: string): string[] {
  return [...new Bun.Glob("**/*").scanSync({ cwd: root, dot: false })].filter((p) => !p.startsWith(".coder/")).sort();
}

function input(root: string, cache: TagCache, chat: string, extra: Partial<RepoMapInput> = {}): RepoMapInput {
  return testInput(root, listFiles(root), cache, { chatFiles: [chat], workers: 0, ...extra });
}

/** The repository's own cache, opened as a fresh process opens it. */
function diskCache(root: string): TagCache {
  return new TagCache(openCacheStore(root, CACHE_NAMESPACE, { version: CACHE_VERSION, warn: () => {} }));
}

/**
 * The map, and the ranking entries it shows. (Further down the ranking, slots
 * whose ranks differ by less than PageRank's tolerance may swap places: the
 * patched ranking starts from the previous vector, a build from scratch from a
 * uniform one. The graphs themselves are compared exactly in the test below.)
 */
function shown(result: RepoMapResult): { map: string } {
  return { map: result.text };
}

/** The map from an empty cache: every file parsed, the graph built from all tags. */
async function fromScratch(root: string, chat: string): Promise<{ map: string }> {
  const cache = new TagCache(memoryCacheStore(CACHE_VERSION));
  const result = await buildRepoMap(input(root, cache, chat));
  expect(result.stats.ranking).toBe("built");
  cache.close();
  return shown(result);
}

test("after each edit (definition added, removed, renamed; file deleted, added) the patched ranking gives the map a build from scratch gives", async () => {
  const root = mkdtempSync(join(tmpdir(), "coder-rank-state-"));
  dirs.push(root);
  // Large enough that common member names exceed the edge bound (their edges go to the nearest definers).
  generateRepo(root, 400, 7);
  const tagged = listFiles(root).filter((p) => languageFor(p) !== null);
  const chat = tagged.find((p) => p.endsWith(".ts"))!;
  const ts = tagged.filter((p) => p.endsWith(".ts") && p !== chat);
  const py = tagged.filter((p) => p.endsWith(".py"));
  // A name the chat file calls and some other file defines: adding a second definer moves edges.
  const chatText = readFileSync(join(root, chat), "utf8");
  const called = [...chatText.matchAll(/import \{ (\w+) \} from/g)].map((m) => m[1]!);
  expect(called.length).toBeGreaterThan(2);
  // A file the chat file imports: the map shows its definitions first.
  const imported = chatText.match(/import \{ \w+ \} from "(\.[^"]+)"/)![1]!;
  const target = tagged.find((p) => join(root, p).startsWith(join(root, chat, "..", imported) + "."))!;

  // First build: everything parsed, the graph built and stored.
  let cache = diskCache(root);
  const first = await buildRepoMap(input(root, cache, chat));
  expect(first.stats.ranking).toBe("built");
  cache.close();
  expect(shown(first)).toEqual(await fromScratch(root, chat));

  const edits: { what: string; apply: () => void; how: "patched" | "built" | "reused" }[] = [
    {
      what: "a definition added (a name the chat file calls, so a second definer)",
      apply: () => appendFileSync(join(root, ts[10]!), `\nexport function ${called[0]}(value: number) {\n  return value;\n}\n`),
      how: "patched",
    },
    {
      // Same names: the ranking is reused and relined; the kept graph is not touched.
      what: "lines moved in a file the map shows",
      apply: () => writeFileSync(join(root, target), "// moved\n// down\n" + readFileSync(join(root, target), "utf8")),
      how: "reused",
    },
    {
      // Patched from the graph kept before the lines moved: that file's lines must be the new ones.
      what: "a new name defined",
      apply: () => appendFileSync(join(root, ts[20]!), "\nexport function freshlyAddedHelper(value: number) {\n  return value;\n}\n"),
      how: "patched",
    },
    {
      what: "a definition removed",
      apply: () => removeFirstPythonDef(join(root, py[5]!)),
      how: "patched",
    },
    {
      what: "a definition renamed (in a file the chat file imports)",
      apply: () => {
        const text = readFileSync(join(root, target), "utf8");
        writeFileSync(join(root, target), text.replace(/export (function|class) (\w+)/, "export $1 $2Renamed"));
      },
      how: "patched",
    },
    {
      what: "the chat file edited (a reference added)",
      apply: () => appendFileSync(join(root, chat), `\nexport function chatAddition(value: number) {\n  return ${called[1]}(value);\n}\n`),
      how: "patched",
    },
    { what: "a file deleted", apply: () => unlinkSync(join(root, ts[30]!)), how: "built" },
    {
      what: "a file added",
      apply: () => writeFileSync(join(root, "pkg0/added_module.ts"), `export function addedModuleEntry(value: number) {\n  return ${called[1]}(value);\n}\n`),
      how: "built",
    },
  ];
  for (const edit of edits) {
    edit.apply();
    // A fresh process: the stored graph, patched.
    cache = diskCache(root);
    const patched = await buildRepoMap(input(root, cache, chat));
    cache.close();
    expect({ edit: edit.what, how: patched.stats.ranking }).toEqual({ edit: edit.what, how: edit.how });
    expect({ edit: edit.what, ...shown(patched) }).toEqual({ edit: edit.what, ...(await fromScratch(root, chat)) });
  }
}, 180_000);

test("within a session the graph is patched in memory, edit after edit, and stays equal to a build from scratch", async () => {
  const root = mkdtempSync(join(tmpdir(), "coder-rank-state-"));
  dirs.push(root);
  generateRepo(root, 200, 3);
  const tagged = listFiles(root).filter((p) => languageFor(p) !== null);
  const chat = tagged.find((p) => p.endsWith(".py"))!;
  const cache = diskCache(root);
  let memory = new MapMemory();
  try {
    const build = () => buildRepoMap(input(root, cache, chat, { memory }));
    expect((await build()).stats.ranking).toBe("built");
    // A second session (a new process): its first map comes from the map cache; its
    // warm-up reads the stored graph ahead, which the map after the edit patches.
    memory.close();
    memory = new MapMemory();
    expect((await build()).fromCache).toBe(true);
    await memory.warmUp(cache, EMBEDDED_ASSETS, root, [chat]);
    expect(memory.rankState?.attached).toBe(false);
    for (let i = 0; i < 3; i++) {
      appendFileSync(join(root, chat), `\n\ndef session_added_${i}(value):\n    return value\n`);
      const rebuilt = await build();
      expect(rebuilt.stats.ranking).toBe("patched");
      expect(memory.rankState?.attached).toBe(true);
      expect(shown(rebuilt)).toEqual(await fromScratch(root, chat));
    }
  } finally {
    memory.close();
    cache.close();
  }
}, 120_000);

/** A seeded generator (xorshift), so that a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Every identifier's definers (with lines), referencers (with counts) and edges, by name and path: what two graphs must share. */
function canonical(rg: RankGraph): Map<string, string> {
  const { index, graph, paths } = rg;
  const out = new Map<string, string>();
  for (let id = 0; id < index.names.length; id++) {
    const definers: string[] = [];
    for (let e = index.definerStart[id]!; e < index.definerStart[id + 1]!; e++) {
      definers.push(`${paths[index.definerList[e]!]}@${[...index.definerLines.subarray(index.definerLineStart[e]!, index.definerLineStart[e + 1]!)].join(",")}`);
    }
    const referencers: string[] = [];
    for (let e = index.referencerStart[id]!; e < index.referencerStart[id + 1]!; e++) {
      referencers.push(`${paths[index.referencerFile[e]!]}×${index.referencerRefs[e]}+${index.referencerMembers[e]}`);
    }
    const edges: string[] = [];
    for (let e = graph.edgeStart[id]!; e < graph.edgeStart[id + 1]!; e++) {
      const slotFile = index.definerList[index.definerStart[id]! + graph.edges.definer[e]!]!;
      edges.push(`${paths[graph.edges.src[e]!]}→${paths[graph.edges.dst[e]!]} ${graph.edges.weight[e]} into ${paths[slotFile]}`);
    }
    // Only referenced nowhere-defined identifiers may be absent from one side: they add nothing.
    if (definers.length === 0) continue;
    out.set(`${index.keys[id]}`, `${index.names[id]}\n${definers.join(" ")}\n${referencers.join(" ")}\n${edges.sort().join("\n")}`);
  }
  return out;
}

test("a patched graph has exactly the identifiers, rows and edges of a graph built from the new tags, and PageRank agrees within its tolerance", () => {
  const next = random(42);
  const pool = Array.from({ length: 300 }, (_, i) => (i < 12 ? ["get", "run", "update", "init", "close", "apply", "render", "handle", "toString", "process", "load", "save"][i]! : `name${i}_${i % 7 === 0 ? "snake_case_long" : "x"}`));
  const pick = () => pool[Math.floor(next() ** 2 * pool.length)]!;
  const makeFile = (path: string): RankFile => {
    const defs = Array.from({ length: 2 + Math.floor(next() * 8) }, (_, line) => ({ name: next() < 0.3 ? pool[Math.floor(next() * 12)]! : pick(), line: line * 3 }));
    const refs = new Map<string, number>();
    const members = new Map<string, number>();
    for (let i = 0; i < 5 + next() * 25; i++) {
      const name = pick();
      if (next() < 0.4) members.set(name, (members.get(name) ?? 0) + 1);
      else refs.set(name, (refs.get(name) ?? 0) + 1);
    }
    return rankFile(path, defs, refs, members);
  };
  const paths = Array.from({ length: 400 }, (_, i) => `src/m${i % 9}/f${i}${i % 13 === 0 ? ".test.ts" : ".ts"}`);
  const files = paths.map(makeFile);
  const chat = paths[5]!;
  const imports = new Map([[chat, new Map([[paths[10]!, new Set([files[10]!.defNames[0]!])], [paths[11]!, new Set(["neverDefinedAnywhere"])]])]]);
  const request = { chatFiles: new Set([chat]), mentionedIdents: new Set(["name40_x"]), imports, allFiles: paths, mentionedFiles: new Set<string>() };
  let graph = buildRankGraph({ ...request, files });
  // Bounded identifiers are part of the test: common names with more edges than the bound allows.
  expect([...canonical(graph).values()].some((rows) => rows.split("\n").length - 3 > EDGES_PER_IDENT / 4)).toBe(true);
  let ranks = rankGraph(graph, request).ranks;
  for (let round = 0; round < 12; round++) {
    const changed = new Map<number, RankFile>();
    // Round 7 changes more files than a patch searches for one by one (graph.ts NATIVE_SEARCH_FILES).
    const count = round === 7 ? 12 : 1 + Math.floor(next() * 4);
    for (let n = 0; n < count; n++) {
      const f = round === 3 ? 5 : Math.floor(next() * paths.length);
      // Sometimes a file loses every definition, or defines a name nobody defined before.
      const file = next() < 0.2 ? rankFile(paths[f]!, [], new Map([[pick(), 1]])) : makeFile(paths[f]!);
      if (next() < 0.3) {
        file.defNames = [...file.defNames, `brandNew${round}_${n}`];
        file.defLines = [...file.defLines, 100];
      }
      if (next() < 0.3) file.defLines = file.defLines.map((l) => l + 1);
      files[f] = file;
      changed.set(f, withImportedNames(file, graph.importedNames.get(f)));
    }
    const patched = patchRankGraph(graph.index, graph.graph, graph.paths, graph.context, changed);
    expect(patched).not.toBeNull();
    graph = { ...graph, ...patched! };
    const scratch = buildRankGraph({ ...request, files });
    expect(canonical(graph)).toEqual(canonical(scratch));
    // PageRank from the previous vector and from uniform: the same fixed point, within tolerance.
    const previous = ranks;
    const warm = rankGraph(graph, request, (_, f) => (previous[f]! > 0 ? previous[f] : undefined));
    const cold = rankGraph(scratch, request);
    let difference = 0;
    for (let f = 0; f < paths.length; f++) difference += Math.abs(warm.ranks[f]! - cold.ranks[f]!);
    expect(difference).toBeLessThan(paths.length * 1e-6 * 20);
    ranks = warm.ranks;
  }
});

test("a graph stored after patches and read back (its keys in stored order and its files' factors) patches on to the graph built from the new tags", () => {
  const next = random(7);
  const pool = Array.from({ length: 120 }, (_, i) => (i < 6 ? ["get", "run", "update", "init", "load", "save"][i]! : `helper${i}_${i % 5 === 0 ? "snake_case_long" : "x"}`));
  const pick = () => pool[Math.floor(next() ** 2 * pool.length)]!;
  const makeFile = (path: string, extra: string[] = []): RankFile => {
    const defs = [...Array.from({ length: 1 + Math.floor(next() * 6) }, () => pick()), ...extra].map((name, line) => ({ name, line: line * 4 }));
    const refs = new Map<string, number>();
    for (let i = 0; i < 3 + next() * 12; i++) refs.set(pick(), 1 + Math.floor(next() * 3));
    return rankFile(path, defs, refs);
  };
  // Tests and vendored files get a low factor: the stored factors must be the computed ones.
  const paths = Array.from({ length: 150 }, (_, i) => (i % 11 === 0 ? `vendor/v${i}.ts` : i % 7 === 0 ? `src/m${i % 4}/f${i}.test.ts` : `src/m${i % 4}/f${i}.ts`));
  const files = paths.map((p) => makeFile(p));
  const chat = paths[3]!;
  const request = { chatFiles: new Set([chat]), mentionedIdents: new Set<string>(), imports: new Map([[chat, new Map([[paths[22]!, new Set([files[22]!.defNames[0]!])]])]]), allFiles: paths, mentionedFiles: new Set<string>() };
  let graph = buildRankGraph({ ...request, files });
  let ranks = rankGraph(graph, request).ranks;
  const patchSome = (round: number) => {
    const changed = new Map<number, RankFile>();
    for (let n = 0; n < 2; n++) {
      const f = Math.floor(next() * paths.length);
      // New names each round: the key table grows past what was stored.
      files[f] = makeFile(paths[f]!, Array.from({ length: 5 }, (_, i) => `storedRound${round}_${n}_${i}`));
      changed.set(f, withImportedNames(files[f]!, graph.importedNames.get(f)));
    }
    const patched = patchRankGraph(graph.index, graph.graph, graph.paths, graph.context, changed);
    expect(patched).not.toBeNull();
    graph = { ...graph, ...patched! };
    ranks = rankGraph(graph, request, (_, f) => (ranks[f]! > 0 ? ranks[f] : undefined)).ranks;
  };
  for (let round = 0; round < 6; round++) {
    patchSome(round);
    // Stored and read back, as a fresh process reads it.
    const stats = Float64Array.from({ length: 2 * paths.length }, (_, i) => (i % 2 ? 100 + i : 1.7e12 + i + 0.25));
    const blob = encodeState({ key: "context", sigs: paths.map((_, i) => `sig${i}`), stats, graph, ranks, unsaved: 0, attached: true })!;
    const read = decodeState(blob, "context", request)!;
    expect(read).not.toBeNull();
    expect(read.sigs).toEqual(paths.map((_, i) => `sig${i}`));
    expect([...read.stats]).toEqual([...stats]);
    expect([...read.graph.context.into]).toEqual([...graphContext(request, paths).context.into]);
    expect([...read.graph.context.inChat]).toEqual(paths.map((p) => (p === chat ? 1 : 0)));
    // Keys found through their stored order, not a rebuilt key index; counts read back exactly.
    expect(read.graph.index.lookup).toBeInstanceOf(SortedKeys);
    for (const file of files) for (const name of file.defNames) expect(read.graph.index.idOf(name)).toBe(graph.index.idOf(name));
    expect([...read.graph.index.referencerRefs]).toEqual([...graph.index.referencerRefs]);
    expect(canonical(read.graph)).toEqual(canonical(graph));
    expect(decodeState(blob, "another context", request)).toBeNull();
    graph = read.graph;
    ranks = read.ranks;
    patchSome(100 + round);
    expect(canonical(graph)).toEqual(canonical(buildRankGraph({ ...request, files })));
  }
});

test("a graph stored in another layout (STATE_FORMAT) is not read: the ranking is built again", () => {
  const files = ["a.ts", "b.ts"].map((path, i) => rankFile(path, [{ name: `fn${i}`, line: 0 }], new Map([[`fn${1 - i}`, 1]])));
  const request = { chatFiles: new Set<string>(), mentionedIdents: new Set<string>(), imports: new Map(), allFiles: ["a.ts", "b.ts"], mentionedFiles: new Set<string>() };
  const graph = buildRankGraph({ ...request, files });
  const ranks = rankGraph(graph, request).ranks;
  const blob = encodeState({ key: "k", sigs: ["x", "y"], stats: new Float64Array([1, 2, 3, 4]), graph, ranks, unsaved: 0, attached: true })!;
  expect(decodeState(blob, "k", request)).not.toBeNull();
  // The head says which layout: an older one (6 kept each file's stat in its signature's text) is dropped.
  const headLength = new DataView(blob.buffer, blob.byteOffset, 8).getUint32(0, true);
  const head = new TextDecoder().decode(blob.subarray(8, 8 + headLength));
  const older = head.replace(`"format":${STATE_FORMAT}`, `"format":${STATE_FORMAT - 1}`);
  expect(older).not.toBe(head);
  const stale = blob.slice();
  stale.set(new TextEncoder().encode(older), 8);
  expect(decodeState(stale, "k", request)).toBeNull();
});

test("a patch that moves a file's lines, or adds one name to it, leaves its other identifiers' rows and edges as a build from the new tags has them", () => {
  // A common name (defined in many files, referenced by more: past the edge bound) and a few rare ones.
  const paths = Array.from({ length: 80 }, (_, i) => `src/d${i % 6}/f${i}.ts`);
  const fileAt = (i: number, shift = 0, extra: string[] = []): RankFile =>
    rankFile(
      paths[i]!,
      [...(i % 2 === 0 ? ["get"] : []), `rare${i}`, `helper_${i % 9}_long_name`, ...extra].map((name, k) => ({ name, line: k * 3 + shift })),
      new Map([["get", 1 + (i % 3)], [`rare${(i + 1) % paths.length}`, 1], [`helper_${(i + 4) % 9}_long_name`, 2]]),
    );
  const files = paths.map((_, i) => fileAt(i));
  const request = { chatFiles: new Set([paths[1]!]), mentionedIdents: new Set<string>(), imports: new Map(), allFiles: paths, mentionedFiles: new Set<string>() };
  let graph = buildRankGraph({ ...request, files });
  expect([...canonical(graph).values()].some((rows) => rows.split("\n").length - 3 > EDGES_PER_IDENT / 40)).toBe(true);
  for (const [step, change] of [
    [0, () => fileAt(10, 7)],
    [1, () => fileAt(10, 7, ["addedName"])],
    [2, () => fileAt(11, 0, ["get"])],
    [3, () => fileAt(12, 2, [])],
  ] as const) {
    const f = [10, 10, 11, 12][step]!;
    files[f] = change();
    const patched = patchRankGraph(graph.index, graph.graph, graph.paths, graph.context, new Map([[f, files[f]!]]));
    expect(patched).not.toBeNull();
    graph = { ...graph, ...patched! };
    expect({ step, graph: canonical(graph) }).toEqual({ step, graph: canonical(buildRankGraph({ ...request, files })) });
    expect(rankGraph(graph, request).ranked).toEqual(rankGraph(buildRankGraph({ ...request, files }), request).ranked);
  }
});
