// Ranking definitions for the repo map (pure): a graph from files that reference
// an identifier to files that define it, weighted as Aider weighs it, ranked by
// personalised PageRank, each file's rank spread over its out-edges onto the
// (file, identifier) definitions they point at.
import { buildGraph, cmp, identAt, indexIdentifiers, WEIGHTS, type DefinitionGraph, type EdgeList, type GraphContext, type IdentIndex, type RankFile } from "./graph.ts";
import type { FileImports } from "./imports.ts";
import { personalizedPageRank } from "./pagerank.ts";
import { identKey, REF_STRIDE } from "./tags.ts";

export { EDGES_PER_IDENT, identWeight, WEIGHTS } from "./graph.ts";


/** A RankFile from definitions and reference counts (plain; and as members of unknown receivers), convenient in tests. */
export function rankFile(path: string, defs: readonly { name: string; line: number }[], refs: ReadonlyMap<string, number>, memberRefs: ReadonlyMap<string, number> = new Map()): RankFile {
  const names = [...new Set([...refs.keys(), ...memberRefs.keys()])];
  return { path, defNames: defs.map((d) => d.name), defLines: defs.map((d) => d.line), refs: names.flatMap((name) => [identKey(name), refs.get(name) ?? 0, memberRefs.get(name) ?? 0]) };
}

/**
 * Tests, fixtures, mocks, vendored code and build output: ranked low (edges into
 * them ×WEIGHTS.lowValue) unless a chat file is a test or imports them.
 */
const LOW_VALUE_PATH =
  /(^|\/)(tests?|__tests__|specs?|testing|testdata|test[-_]utils|fixtures?|__fixtures__|__mocks__|mocks?|e2e|evals?|benchmarks?|vendor|vendored|_vendor|third[-_]party|node_modules|bower_components|dist|build|out)\/|(^|\/)[^/]*[._-](test|spec|tests|bench|fixture|mock|stories)\.[^/]+$|(^|\/)(test_[^/]*\.py|conftest\.py)$|_test\.go$/i;
const TEST_PATH = /(^|\/)(tests?|__tests__|specs?|testing|e2e)\/|(^|\/)[^/]*[._-](test|spec|tests)\.[^/]+$|(^|\/)(test_[^/]*\.py|conftest\.py)$|_test\.go$/i;

export function isLowValuePath(path: string): boolean {
  return LOW_VALUE_PATH.test(path);
}

export interface RankRequest {
  /** Every tagged file, chat files included (their references count most). */
  files: readonly RankFile[];
  /** Every listed file (tagged or not), for the name-only tail of the ranking. */
  allFiles: readonly string[];
  chatFiles: ReadonlySet<string>;
  mentionedFiles: ReadonlySet<string>;
  mentionedIdents: ReadonlySet<string>;
  /** Per chat file, the files it imports and the names it takes from each (imports.ts); absent: unknown. */
  imports?: ReadonlyMap<string, FileImports>;
  /** Stop after this many entries (a map never shows more definitions than its budget has tokens). */
  limit?: number;
  /** The previous PageRank vector by path, to start from; replaced by this ranking's (a session's memory). */
  warm?: { ranks: Map<string, number> | null };
}

/** A ranked definition (its line, 0-based) or a file shown by name only. */
export type RankedEntry = { path: string; name: string; line: number } | { path: string; name?: undefined; line?: undefined };

export function rankDefinitions(request: RankRequest): RankedEntry[] {
  const graph = buildRankGraph(request);
  const previous = request.warm?.ranks;
  const { ranked, ranks } = rankGraph(graph, request, previous ? (path) => previous.get(path) : undefined);
  if (request.warm) {
    const next = new Map<string, number>();
    graph.paths.forEach((path, f) => ranks[f]! > 0 && next.set(path, ranks[f]!));
    request.warm.ranks = next;
  }
  return ranked;
}

/** The reference graph of a ranking and what its edges were built with. */
export interface RankGraph {
  /** The ranked files, in the order of the request. */
  paths: string[];
  index: IdentIndex;
  graph: DefinitionGraph;
  context: GraphContext;
  /** Per chat file (by index), the names it imports (added to its references). */
  importedNames: Map<number, string[]>;
  importedFiles: Set<string>;
}

export function buildRankGraph(request: Pick<RankRequest, "files" | "chatFiles" | "mentionedIdents" | "imports">): RankGraph {
  const paths = request.files.map((f) => f.path);
  const { context, importedNames, importedFiles } = graphContext(request, paths);
  const files = request.files.map((file, f) => withImportedNames(file, importedNames.get(f)));
  const index = indexIdentifiers(files);
  return { paths, index, graph: buildGraph(index, paths, context), context, importedNames, importedFiles };
}

/**
 * What the edges depend on besides the tags: the chat files, their imports, the mentioned names, the low-value paths.
 * `into`: each file's factor as stored with a kept graph (rank-state.ts: its key holds the context), not recomputed.
 */
export function graphContext(request: Pick<RankRequest, "chatFiles" | "mentionedIdents" | "imports">, paths: readonly string[], into?: Float64Array): { context: GraphContext; importedNames: Map<number, string[]>; importedFiles: Set<string> } {
  const { chatFiles } = request;
  const inChat = new Uint8Array(paths.length);
  // A few chat files: the array's own search (a loop over every path runs cold in a fresh process).
  for (const chat of chatFiles) for (let at = paths.indexOf(chat); at >= 0; at = paths.indexOf(chat, at + 1)) inChat[at] = 1;
  const imports = new Map<number, Set<number>>();
  const importedNames = new Map<number, string[]>();
  const importedFiles = new Set<string>();
  if (request.imports && request.imports.size > 0) {
    const indexOf = new Map(paths.map((path, i) => [path, i]));
    for (const [chat, fileImports] of request.imports) {
      const at = indexOf.get(chat);
      if (at === undefined) continue;
      const targets = new Set<number>();
      const names = new Set<string>();
      for (const [file, taken] of fileImports) {
        importedFiles.add(file);
        const target = indexOf.get(file);
        if (target !== undefined) targets.add(target);
        for (const name of taken) names.add(name);
      }
      imports.set(at, targets);
      importedNames.set(at, [...names]);
    }
  }
  if (!into) {
    const testInChat = [...chatFiles].some((path) => TEST_PATH.test(path));
    into = Float64Array.from(paths, (path) => (!testInChat && !importedFiles.has(path) && LOW_VALUE_PATH.test(path) ? WEIGHTS.lowValue : 1));
  }
  return { context: { inChat, mentionedIdents: request.mentionedIdents, imports, into }, importedNames, importedFiles };
}

/**
 * A chat file's references plus the names it imports (a name imported but not
 * tagged as used, e.g. a type in a generic argument, still links the chat file to
 * its definition).
 */
export function withImportedNames(file: RankFile, names: readonly string[] | undefined): RankFile {
  if (!names || names.length === 0) return file;
  const known = new Set<number>();
  for (let p = 0; p + REF_STRIDE <= file.refs.length; p += REF_STRIDE) known.add(file.refs[p]!);
  const extra = [...new Set(names)].map(identKey).filter((key) => !known.has(key));
  if (extra.length === 0) return file;
  const refs = new Float64Array(file.refs.length + extra.length * REF_STRIDE);
  refs.set(Array.from(file.refs));
  extra.forEach((key, i) => refs.set([key, 1, 0], file.refs.length + i * REF_STRIDE));
  return { ...file, refs };
}

/**
 * Ranks the definitions of a graph: PageRank over its files (started from
 * `initial` by path when given: a previous ranking converges in a few
 * iterations), each file's rank spread over its out-edges onto definitions, the
 * chat files' imported definitions first; then files by rank, then every other
 * file by name. Also returns each file's PageRank (0: not in the graph).
 */
export function rankGraph(rg: RankGraph, request: Omit<RankRequest, "files" | "warm">, initial?: (path: string, f: number) => number | undefined): RankedGraph {
  return rankFromNodes(rg, request, rankNodes(request, rg.paths, rg.graph.edges, rg.importedFiles, initial));
}

/**
 * The ranking rankGraph makes from a PageRank vector (by file), without iterating: what a
 * kept ranking stands for (rank-quick.ts keeps the vector when a change cannot move it past
 * PageRank's tolerance).
 */
export function rankFromVector(rg: RankGraph, request: Omit<RankRequest, "files" | "warm">, fileRanks: Float64Array): RankedGraph {
  const nodes = graphNodes(rg.paths, rg.graph.edges);
  return rankFromNodes(rg, request, { ...nodes, ranks: Float64Array.from(nodes.files, (f) => fileRanks[f]!), change: 0 });
}

function rankFromNodes(rg: RankGraph, request: Omit<RankRequest, "files" | "warm">, nodes: RankedNodes): RankedGraph {
  const { chatFiles } = request;
  const { paths, index, graph, context } = rg;
  const slots = rankSlots(index, graph, nodes);
  promoteImported(request, paths, index, graph, slots.rank);
  const limit = request.limit ?? Infinity;

  // Definitions by rank (chat files left out), ties broken as Aider's reverse sort does.
  // A slot is its definer entry (slotBase is definerStart): its file is definerList[slot].
  const fileOf = index.definerList;
  // The candidates in typed arrays (not a JS array of every slot: ~100k at 10k files).
  const candidates = new Int32Array(graph.slotCount);
  const values = new Float64Array(graph.slotCount);
  let count = 0;
  for (let slot = 0; slot < graph.slotCount; slot++) {
    if (!slots.used[slot] || context.inChat[fileOf[slot]!]) continue;
    candidates[count] = slot;
    values[count++] = slots.rank[slot]!;
  }
  // Only the top `limit` slots can be shown: cut at that rank before the full sort.
  const threshold = count > limit * 2 ? nthSmallest(values.subarray(0, count), count - limit) : -Infinity;
  const order: number[] = [];
  for (let i = 0; i < count; i++) if (slots.rank[candidates[i]!]! >= threshold) order.push(candidates[i]!);
  // The identifier of each slot kept (by binary search: not a pass over every slot).
  const identOf = new Int32Array(graph.slotCount);
  for (const slot of order) identOf[slot] = identAt(graph.slotBase, slot);
  order.sort((a, b) => {
    const diff = slots.rank[b]! - slots.rank[a]!;
    if (diff !== 0) return diff;
    return cmp(paths[fileOf[b]!]!, paths[fileOf[a]!]!) || cmp(index.names[identOf[b]!]!, index.names[identOf[a]!]!);
  });

  const ranked: RankedEntry[] = [];
  const included = new Set<string>();
  const fileRanks = new Float64Array(paths.length);
  nodes.files.forEach((f, node) => (fileRanks[f] = nodes.ranks[node]!));
  for (const slot of order) {
    if (ranked.length >= limit) return { ranked, ranks: fileRanks, slots, change: nodes.change };
    const path = paths[fileOf[slot]!]!;
    const ident = index.names[identOf[slot]!]!;
    // The definition's lines in the file, in the file's order.
    for (let l = index.definerLineStart[slot]!; l < index.definerLineStart[slot + 1]!; l++) ranked.push({ path, name: ident, line: index.definerLines[l]! });
    included.add(path);
  }
  // Then files in the graph by rank, then every other file, by name only.
  const byRank = nodes.files.map((f, node) => ({ path: paths[f]!, rank: nodes.ranks[node]! })).sort((a, b) => b.rank - a.rank || cmp(b.path, a.path));
  for (const path of [...byRank.map((n) => n.path), ...[...request.allFiles].sort()]) {
    if (ranked.length >= limit) break;
    if (included.has(path) || chatFiles.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  return { ranked, ranks: fileRanks, slots, change: nodes.change };
}

/** A ranking, each file's PageRank, each slot's rank (promotions added) and whether an edge feeds it, and PageRank's last change (L1). */
export interface RankedGraph {
  ranked: RankedEntry[];
  ranks: Float64Array;
  slots: { rank: Float64Array; used: Uint8Array };
  change: number;
}

/** The value a sort would put at `n` (0-based, ascending): quickselect, reordering `values` in place (no full sort of every slot). */
export function nthSmallest(values: Float64Array, n: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (n <= j) hi = j;
    else if (n >= i) lo = i;
    else return values[n]!;
  }
  return values[n]!;
}

/**
 * The definitions a chat file imports by name come first (in rank order): what a
 * chat file uses is what its reader needs beside it. Ranks sum to 1, so +1 puts
 * a slot ahead of every other.
 */
function promoteImported(request: Pick<RankRequest, "imports">, paths: readonly string[], index: IdentIndex, graph: DefinitionGraph, rank: Float64Array): void {
  const wanted = importedByName(request);
  for (const [name, files] of wanted) {
    const id = index.idOf(name);
    if (id < 0 || index.names[id] !== name) continue;
    for (let k = index.definerStart[id]!; k < index.definerStart[id + 1]!; k++) {
      if (files.has(paths[index.definerList[k]!]!)) {
        const slot = graph.slotBase[id]! + k - index.definerStart[id]!;
        if (rank[slot]! > 0) rank[slot] = rank[slot]! + 1;
      }
    }
  }
}

/** The names chat files import, each with the files they are imported from: the definitions promoteImported puts first (none when that is off). */
export function importedByName(request: Pick<RankRequest, "imports">): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>();
  if (!WEIGHTS.importedFirst || !request.imports) return wanted;
  for (const fileImports of request.imports.values()) {
    for (const [file, names] of fileImports) {
      for (const name of names) {
        let files = wanted.get(name);
        if (!files) wanted.set(name, (files = new Set()));
        files.add(file);
      }
    }
  }
  return wanted;
}

interface RankedNodes {
  /** The files that have an edge (the graph's nodes, as in Aider's graph), in file order. */
  files: number[];
  /** Edge endpoints as node numbers. */
  src: Int32Array;
  /** Each node's total out-weight. */
  outWeight: Float64Array;
  ranks: Float64Array;
  /** The L1 change of PageRank's last iteration. */
  change: number;
}

function rankNodes(request: Omit<RankRequest, "files" | "warm">, paths: readonly string[], edges: EdgeList, importedFiles: ReadonlySet<string>, initial?: (path: string, f: number) => number | undefined): RankedNodes {
  const { files, src, dst, outWeight } = graphNodes(paths, edges);
  const weight = edges.weight.subarray(0, edges.count);
  const nodePaths = files.map((f) => paths[f]!);
  let start: Float64Array | undefined;
  if (initial) {
    start = new Float64Array(files.length);
    for (let node = 0; node < files.length; node++) start[node] = initial(paths[files[node]!]!, files[node]!) ?? 1 / files.length;
  }
  const report = { change: 0 };
  const ranks = personalizedPageRank(files.length, { src, dst, weight, count: edges.count }, personalization(request, nodePaths, importedFiles), { initial: start, outWeight, report });
  return { files, src, outWeight, ranks, change: report.change };
}

/** The graph's nodes (the files with an edge), edge endpoints as node numbers, each node's out-weight. */
function graphNodes(paths: readonly string[], edges: EdgeList): { files: number[]; src: Int32Array; dst: Int32Array; outWeight: Float64Array } {
  // One pass over the edges: which files have one, and each file's out-weight.
  const isNode = new Uint8Array(paths.length);
  const outByFile = new Float64Array(paths.length);
  // The arrays in locals: a fresh process runs these loops in the interpreter, where each
  // property read per edge counts.
  const { src: edgeSrc, dst: edgeDst, weight: edgeWeight, count: edgeCount } = edges;
  for (let e = 0; e < edgeCount; e++) {
    const from = edgeSrc[e]!;
    isNode[from] = 1;
    isNode[edgeDst[e]!] = 1;
    outByFile[from] = outByFile[from]! + edgeWeight[e]!;
  }
  const files: number[] = [];
  for (let f = 0; f < paths.length; f++) if (isNode[f]) files.push(f);
  let src = edges.src.subarray(0, edges.count);
  let dst = edges.dst.subarray(0, edges.count);
  let outWeight = outByFile;
  // Node numbers are file numbers when every file has an edge (the usual case): no copy.
  if (files.length < paths.length) {
    const nodeOf = new Int32Array(paths.length).fill(-1);
    outWeight = new Float64Array(files.length);
    files.forEach((f, node) => {
      nodeOf[f] = node;
      outWeight[node] = outByFile[f]!;
    });
    src = new Int32Array(edges.count);
    dst = new Int32Array(edges.count);
    for (let e = 0; e < edges.count; e++) {
      src[e] = nodeOf[edges.src[e]!]!;
      dst[e] = nodeOf[edges.dst[e]!]!;
    }
  }
  return { files, src, dst, outWeight };
}

/** Each node's rank spread over its out-edges onto (defining file, identifier) slots. */
function rankSlots(index: IdentIndex, graph: DefinitionGraph, nodes: RankedNodes): { rank: Float64Array; used: Uint8Array } {
  const { edges, edgeStart, slotBase, slotCount } = graph;
  const { outWeight, src, ranks } = nodes;
  const { definer, weight } = edges;
  const rank = new Float64Array(slotCount);
  const used = new Uint8Array(slotCount);
  const identCount = index.names.length;
  for (let id = 0; id < identCount; id++) {
    const base = slotBase[id]!;
    const end = edgeStart[id + 1]!;
    for (let e = edgeStart[id]!; e < end; e++) {
      const slot = base + definer[e]!;
      const from = src[e]!;
      rank[slot] = rank[slot]! + (ranks[from]! * weight[e]!) / outWeight[from]!;
      used[slot] = 1;
    }
  }
  return { rank, used };
}

/** Personalisation of a file a chat file imports (a chat file: 1). */
const IMPORTED_PERSONALISATION = 0;

/** Aider's personalisation: chat files, mentioned files, and files whose path parts name a mentioned identifier. */
function personalization(request: Omit<RankRequest, "files" | "warm">, nodePaths: readonly string[], importedFiles?: ReadonlySet<string>): Float64Array | null {
  if (request.chatFiles.size === 0 && request.mentionedFiles.size === 0 && request.mentionedIdents.size === 0) return null;
  const vector = new Float64Array(nodePaths.length);
  let any = false;
  nodePaths.forEach((path, node) => {
    let value = 0;
    if (request.chatFiles.has(path)) value += 1;
    if (importedFiles?.has(path)) value += IMPORTED_PERSONALISATION;
    if (request.mentionedFiles.has(path)) value = Math.max(value, 1);
    if (request.mentionedIdents.size > 0) {
      const parts = path.split("/");
      const base = parts[parts.length - 1]!;
      const dot = base.lastIndexOf(".");
      const candidates = [...parts, dot > 0 ? base.slice(0, dot) : base];
      if (candidates.some((part) => request.mentionedIdents.has(part))) value += 1;
    }
    if (value > 0) any = true;
    vector[node] = value;
  });
  return any ? vector : null;
}
