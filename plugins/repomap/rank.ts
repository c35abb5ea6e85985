// Ranking definitions for the repo map (pure): a graph from files that reference
// an identifier to files that define it, weighted as Aider weighs it, ranked by
// personalised PageRank, each file's rank spread over its out-edges onto the
// (file, identifier) definitions they point at.
import { buildGraph, cmp, indexIdentifiers, type DefinitionGraph, type EdgeList, type IdentIndex } from "./graph.ts";
import { personalizedPageRank } from "./pagerank.ts";
import { identKey } from "./tags.ts";

export { EDGES_PER_IDENT, identWeight } from "./graph.ts";

export interface RankFile {
  path: string;
  /** Definition names and their 0-based lines (parallel arrays; a name may repeat). */
  defNames: readonly string[];
  defLines: readonly number[];
  /** Referenced identifiers (unique) as [identKey(name), count] pairs. */
  refPairs: ArrayLike<number>;
}

/** A RankFile from definitions and a reference count map (convenient in tests). */
export function rankFile(path: string, defs: readonly { name: string; line: number }[], refs: ReadonlyMap<string, number>): RankFile {
  return { path, defNames: defs.map((d) => d.name), defLines: defs.map((d) => d.line), refPairs: [...refs].flatMap(([name, count]) => [identKey(name), count]) };
}

export interface RankRequest {
  /** Every tagged file, chat files included (their references count most). */
  files: readonly RankFile[];
  /** Every listed file (tagged or not), for the name-only tail of the ranking. */
  allFiles: readonly string[];
  chatFiles: ReadonlySet<string>;
  mentionedFiles: ReadonlySet<string>;
  mentionedIdents: ReadonlySet<string>;
  /** Stop after this many entries (a map never shows more definitions than its budget has tokens). */
  limit?: number;
}

/** A ranked definition (its line, 0-based) or a file shown by name only. */
export type RankedEntry = { path: string; name: string; line: number } | { path: string; name?: undefined; line?: undefined };

export function rankDefinitions(request: RankRequest): RankedEntry[] {
  const { files, chatFiles } = request;
  const paths = files.map((f) => f.path);
  const inChat = Uint8Array.from(paths, (path) => (chatFiles.has(path) ? 1 : 0));
  const index = indexIdentifiers(files);
  const graph = buildGraph(index, paths, inChat, request.mentionedIdents);
  const nodes = rankNodes(request, paths, graph.edges);
  const slots = rankSlots(index, graph, nodes);
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

interface RankedNodes {
  /** Edge endpoints as node numbers (graph nodes are the files that have an edge, as in Aider's graph). */
  src: Int32Array;
  paths: string[];
  ranks: Float64Array;
}

function rankNodes(request: RankRequest, paths: readonly string[], edges: EdgeList): RankedNodes {
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
  const ranks = personalizedPageRank(nodePaths.length, { src, dst, weight, count: edges.count }, personalization(request, nodePaths));
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

/** Aider's personalisation: chat files, mentioned files, and files whose path parts name a mentioned identifier. */
function personalization(request: RankRequest, nodePaths: readonly string[]): Float64Array | null {
  if (request.chatFiles.size === 0 && request.mentionedFiles.size === 0 && request.mentionedIdents.size === 0) return null;
  const vector = new Float64Array(nodePaths.length);
  let any = false;
  nodePaths.forEach((path, node) => {
    let value = 0;
    if (request.chatFiles.has(path)) value += 1;
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
