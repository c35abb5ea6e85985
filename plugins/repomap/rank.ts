// Ranking definitions for the repo map (pure): a graph from files that reference
// an identifier to files that define it, weighted as Aider weighs it, ranked by
// personalised PageRank, each file's rank spread over its out-edges onto the
// (file, identifier) definitions they point at.
import { buildGraph, cmp, indexIdentifiers, WEIGHTS, type DefinitionGraph, type EdgeList, type IdentIndex, type RankFile } from "./graph.ts";
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
  const { chatFiles } = request;
  const paths = request.files.map((f) => f.path);
  const inChat = Uint8Array.from(paths, (path) => (chatFiles.has(path) ? 1 : 0));
  const { files, imports, importedFiles } = withImports(request, paths);
  const testInChat = [...chatFiles].some((path) => TEST_PATH.test(path));
  const into = Float64Array.from(paths, (path) => (!testInChat && !importedFiles.has(path) && LOW_VALUE_PATH.test(path) ? WEIGHTS.lowValue : 1));
  const index = indexIdentifiers(files);
  const graph = buildGraph(index, paths, { inChat, mentionedIdents: request.mentionedIdents, imports, into });
  const nodes = rankNodes(request, paths, graph.edges, importedFiles);
  const slots = rankSlots(index, graph, nodes);
  promoteImported(request, paths, index, graph, slots.rank);
  const limit = request.limit ?? Infinity;

  // Definitions by rank (chat files left out), ties broken as Aider's reverse sort does.
  let order: number[] = [];
  for (let slot = 0; slot < graph.slotCount; slot++) if (slots.used[slot] && !inChat[slots.file[slot]!]) order.push(slot);
  if (order.length > limit * 2) {
    // Only the top `limit` slots can be shown: cut at that rank before the full sort.
    const values = Float64Array.from(order, (slot) => slots.rank[slot]!).sort();
    const threshold = values[values.length - limit]!;
    order = order.filter((slot) => slots.rank[slot]! >= threshold);
  }
  order.sort((a, b) => {
    const diff = slots.rank[b]! - slots.rank[a]!;
    if (diff !== 0) return diff;
    return cmp(paths[slots.file[b]!]!, paths[slots.file[a]!]!) || cmp(index.names[slots.ident[b]!]!, index.names[slots.ident[a]!]!);
  });

  const ranked: RankedEntry[] = [];
  const included = new Set<string>();
  for (const slot of order) {
    if (ranked.length >= limit) return ranked;
    const file = files[slots.file[slot]!]!;
    const ident = index.names[slots.ident[slot]!]!;
    for (let d = 0; d < file.defNames.length; d++) {
      if (file.defNames[d] === ident) ranked.push({ path: file.path, name: ident, line: file.defLines[d]! });
    }
    included.add(file.path);
  }
  // Then files in the graph by rank, then every other file, by name only.
  const byRank = nodes.paths.map((path, node) => ({ path, rank: nodes.ranks[node]! })).sort((a, b) => b.rank - a.rank || cmp(b.path, a.path));
  for (const path of [...byRank.map((n) => n.path), ...[...request.allFiles].sort()]) {
    if (ranked.length >= limit) break;
    if (included.has(path) || chatFiles.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  return ranked;
}

/**
 * The chat files' imports as file indices, and each chat file's references plus
 * the names it imports (a name imported but not tagged as used, e.g. a type in a
 * generic argument, still links the chat file to its definition).
 */
function withImports(request: RankRequest, paths: readonly string[]): { files: readonly RankFile[]; imports: Map<number, Set<number>>; importedFiles: Set<string> } {
  const imports = new Map<number, Set<number>>();
  const importedFiles = new Set<string>();
  if (!request.imports || request.imports.size === 0) return { files: request.files, imports, importedFiles };
  const indexOf = new Map(paths.map((path, i) => [path, i]));
  const files = [...request.files];
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
    const file = files[at]!;
    const known = new Set<number>();
    for (let p = 0; p + REF_STRIDE <= file.refs.length; p += REF_STRIDE) known.add(file.refs[p]!);
    const extra = [...names].map(identKey).filter((key) => !known.has(key));
    if (extra.length === 0) continue;
    const refs = new Float64Array(file.refs.length + extra.length * REF_STRIDE);
    refs.set(Array.from(file.refs));
    extra.forEach((key, i) => refs.set([key, 1, 0], file.refs.length + i * REF_STRIDE));
    files[at] = { ...file, refs };
  }
  return { files, imports, importedFiles };
}

/**
 * The definitions a chat file imports by name come first (in rank order): what a
 * chat file uses is what its reader needs beside it. Ranks sum to 1, so +1 puts
 * a slot ahead of every other.
 */
function promoteImported(request: RankRequest, paths: readonly string[], index: IdentIndex, graph: DefinitionGraph, rank: Float64Array): void {
  if (!WEIGHTS.importedFirst || !request.imports || request.imports.size === 0) return;
  const wanted = new Map<string, Set<string>>();
  for (const fileImports of request.imports.values()) {
    for (const [file, names] of fileImports) {
      for (const name of names) {
        let files = wanted.get(name);
        if (!files) wanted.set(name, (files = new Set()));
        files.add(file);
      }
    }
  }
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

interface RankedNodes {
  /** Edge endpoints as node numbers (graph nodes are the files that have an edge, as in Aider's graph). */
  src: Int32Array;
  paths: string[];
  ranks: Float64Array;
}

function rankNodes(request: RankRequest, paths: readonly string[], edges: EdgeList, importedFiles: ReadonlySet<string>): RankedNodes {
  const nodeOf = new Int32Array(paths.length).fill(-1);
  const nodePaths: string[] = [];
  const src = new Int32Array(edges.count);
  const dst = new Int32Array(edges.count);
  const nodeFor = (file: number) => {
    if (nodeOf[file] === -1) {
      nodeOf[file] = nodePaths.length;
      nodePaths.push(paths[file]!);
    }
    return nodeOf[file]!;
  };
  for (let e = 0; e < edges.count; e++) {
    src[e] = nodeFor(edges.src[e]!);
    dst[e] = nodeFor(edges.dst[e]!);
  }
  const weight = edges.weight.subarray(0, edges.count);
  const previous = request.warm?.ranks;
  const initial = previous ? Float64Array.from(nodePaths, (path) => previous.get(path) ?? 1 / nodePaths.length) : undefined;
  const ranks = personalizedPageRank(nodePaths.length, { src, dst, weight, count: edges.count }, personalization(request, nodePaths, importedFiles), { initial });
  if (request.warm) request.warm.ranks = new Map(nodePaths.map((path, node) => [path, ranks[node]!]));
  return { src, paths: nodePaths, ranks };
}

/** Each node's rank spread over its out-edges onto (defining file, identifier) slots. */
function rankSlots(index: IdentIndex, graph: DefinitionGraph, nodes: RankedNodes): { rank: Float64Array; used: Uint8Array; file: Int32Array; ident: Int32Array } {
  const { edges, slotBase, slotCount } = graph;
  const outWeight = new Float64Array(nodes.paths.length);
  for (let e = 0; e < edges.count; e++) outWeight[nodes.src[e]!] = outWeight[nodes.src[e]!]! + edges.weight[e]!;
  const rank = new Float64Array(slotCount);
  const used = new Uint8Array(slotCount);
  for (let e = 0; e < edges.count; e++) {
    const slot = edges.slot[e]!;
    const from = nodes.src[e]!;
    rank[slot] = rank[slot]! + (nodes.ranks[from]! * edges.weight[e]!) / outWeight[from]!;
    used[slot] = 1;
  }
  const file = new Int32Array(slotCount);
  const ident = new Int32Array(slotCount);
  for (let id = 0; id < index.names.length; id++) {
    for (let k = index.definerStart[id]!; k < index.definerStart[id + 1]!; k++) {
      const slot = slotBase[id]! + k - index.definerStart[id]!;
      file[slot] = index.definerList[k]!;
      ident[slot] = id;
    }
  }
  return { rank, used, file, ident };
}

/** Personalisation of a file a chat file imports (a chat file: 1). */
const IMPORTED_PERSONALISATION = 0;

/** Aider's personalisation: chat files, mentioned files, and files whose path parts name a mentioned identifier. */
function personalization(request: RankRequest, nodePaths: readonly string[], importedFiles?: ReadonlySet<string>): Float64Array | null {
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
