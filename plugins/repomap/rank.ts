// Ranking definitions for the repo map (pure): a graph from files that reference
// an identifier to files that define it, weighted as Aider weighs it, ranked by
// personalised PageRank, each file's rank spread over its out-edges onto the
// (file, identifier) definitions they point at.
import { personalizedPageRank } from "./pagerank.ts";
import { identKey } from "./tags.ts";

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

/**
 * How many edges one identifier may add. Aider links every referencing file to
 * every defining file, so a name defined and used everywhere (`get`, `init`)
 * makes the graph grow with the square of the files. Past this bound each
 * referencing file links to its nearest definers by path instead.
 */
export const EDGES_PER_IDENT = 2000;

export function identWeight(ident: string, definerCount: number, mentioned: boolean): number {
  let mul = 1;
  const hasLetter = /[A-Za-z]/.test(ident);
  const snake = ident.includes("_") && hasLetter;
  const kebab = ident.includes("-") && hasLetter;
  const camel = /[A-Z]/.test(ident) && /[a-z]/.test(ident);
  if (mentioned) mul *= 10;
  if ((snake || kebab || camel) && ident.length >= 8) mul *= 10;
  if (ident.startsWith("_")) mul *= 0.1;
  if (definerCount > 5) mul *= 0.1;
  return mul;
}

export function rankDefinitions(request: RankRequest): RankedEntry[] {
  const { files, chatFiles, mentionedIdents } = request;
  const paths = files.map((f) => f.path);
  const inChat = Uint8Array.from(paths, (path) => (chatFiles.has(path) ? 1 : 0));

  // Identifiers as integers; definers[id] lists each defining file once.
  const identIds = new Map<number, number>();
  const identNames: string[] = [];
  const definers: number[][] = [];
  for (let f = 0; f < files.length; f++) {
    for (const name of files[f]!.defNames) {
      const key = identKey(name);
      let id = identIds.get(key);
      if (id === undefined) {
        id = identNames.length;
        identIds.set(key, id);
        identNames.push(name);
        definers.push([f]);
      } else {
        const list = definers[id]!;
        if (list[list.length - 1] !== f) list.push(f);
      }
    }
  }
  const identCount = identNames.length;
  const refFiles: (number[] | undefined)[] = new Array(identCount);
  const refCounts: (number[] | undefined)[] = new Array(identCount);
  let anyReference = false;
  for (let f = 0; f < files.length; f++) {
    const pairs = files[f]!.refPairs;
    for (let r = 0; r + 1 < pairs.length; r += 2) {
      const id = identIds.get(pairs[r]!);
      if (id === undefined) continue;
      anyReference = true;
      (refFiles[id] ??= []).push(f);
      (refCounts[id] ??= []).push(pairs[r + 1]!);
    }
  }
  if (!anyReference) {
    for (let id = 0; id < identCount; id++) {
      refFiles[id] = [...definers[id]!];
      refCounts[id] = definers[id]!.map(() => 1);
    }
  }

  // One slot per (definer, ident): the unit that collects rank.
  const slotBase = new Int32Array(identCount + 1);
  for (let id = 0; id < identCount; id++) slotBase[id + 1] = slotBase[id]! + definers[id]!.length;
  const slotCount = slotBase[identCount]!;

  const edges = new EdgeList();
  for (let id = 0; id < identCount; id++) {
    if (refFiles[id]) continue;
    const defining = definers[id]!;
    for (let k = 0; k < defining.length; k++) edges.add(defining[k]!, defining[k]!, 0.1, slotBase[id]! + k);
  }
  for (let id = 0; id < identCount; id++) {
    const referencers = refFiles[id];
    if (!referencers) continue;
    const counts = refCounts[id]!;
    const ident = identNames[id]!;
    const defining = definers[id]!;
    const base = slotBase[id]!;
    const mul = identWeight(ident, defining.length, mentionedIdents.has(ident));
    const bounded = defining.length > 5 && referencers.length * defining.length > EDGES_PER_IDENT;
    const perReferencer = Math.max(1, Math.floor(EDGES_PER_IDENT / referencers.length));
    if (bounded) defining.sort((a, b) => cmp(paths[a]!, paths[b]!));
    for (let r = 0; r < referencers.length; r++) {
      const referencer = referencers[r]!;
      const weight = mul * (inChat[referencer] ? 50 : 1) * Math.sqrt(counts[r]!);
      if (bounded) {
        for (const k of nearestByPath(paths, defining, paths[referencer]!, perReferencer)) edges.add(referencer, defining[k]!, weight, base + k);
      } else {
        for (let k = 0; k < defining.length; k++) edges.add(referencer, defining[k]!, weight, base + k);
      }
    }
  }

  // Graph nodes are the files that have an edge, as in Aider's graph.
  const nodeOf = new Int32Array(files.length).fill(-1);
  const nodeFile: number[] = [];
  const src = new Int32Array(edges.count);
  const dst = new Int32Array(edges.count);
  for (let e = 0; e < edges.count; e++) {
    const from = edges.src[e]!;
    const to = edges.dst[e]!;
    if (nodeOf[from] === -1) {
      nodeOf[from] = nodeFile.length;
      nodeFile.push(from);
    }
    if (nodeOf[to] === -1) {
      nodeOf[to] = nodeFile.length;
      nodeFile.push(to);
    }
    src[e] = nodeOf[from]!;
    dst[e] = nodeOf[to]!;
  }
  const weight = edges.weight.subarray(0, edges.count);
  const nodePaths = nodeFile.map((f) => paths[f]!);
  const ranks = personalizedPageRank(nodeFile.length, { src, dst, weight, count: edges.count }, personalization(request, nodePaths));

  // Spread each node's rank over its out-edges onto (definer, ident) slots.
  const outWeight = new Float64Array(nodeFile.length);
  for (let e = 0; e < edges.count; e++) outWeight[src[e]!] = outWeight[src[e]!]! + weight[e]!;
  const slotRank = new Float64Array(slotCount);
  const slotUsed = new Uint8Array(slotCount);
  for (let e = 0; e < edges.count; e++) {
    const slot = edges.slot[e]!;
    slotRank[slot] = slotRank[slot]! + (ranks[src[e]!]! * weight[e]!) / outWeight[src[e]!]!;
    slotUsed[slot] = 1;
  }
  const slotFile = new Int32Array(slotCount);
  const slotIdent = new Int32Array(slotCount);
  for (let id = 0; id < identCount; id++) {
    const defining = definers[id]!;
    for (let k = 0; k < defining.length; k++) {
      slotFile[slotBase[id]! + k] = defining[k]!;
      slotIdent[slotBase[id]! + k] = id;
    }
  }
  const limit = request.limit ?? Infinity;
  let order: number[] = [];
  for (let slot = 0; slot < slotCount; slot++) if (slotUsed[slot] && !inChat[slotFile[slot]!]) order.push(slot);
  if (order.length > limit * 2) {
    // Only the top `limit` slots can be shown: cut at that rank before the full sort.
    const values = Float64Array.from(order, (slot) => slotRank[slot]!).sort();
    const threshold = values[values.length - limit]!;
    order = order.filter((slot) => slotRank[slot]! >= threshold);
  }
  order.sort((a, b) => {
    const diff = slotRank[b]! - slotRank[a]!;
    if (diff !== 0) return diff;
    return cmp(paths[slotFile[b]!]!, paths[slotFile[a]!]!) || cmp(identNames[slotIdent[b]!]!, identNames[slotIdent[a]!]!);
  });

  const ranked: RankedEntry[] = [];
  const included = new Set<string>();
  for (const slot of order) {
    if (ranked.length >= limit) break;
    const f = slotFile[slot]!;
    const path = paths[f]!;
    const ident = identNames[slotIdent[slot]!]!;
    const file = files[f]!;
    for (let d = 0; d < file.defNames.length; d++) {
      if (file.defNames[d] === ident) ranked.push({ path, name: ident, line: file.defLines[d]! });
    }
    included.add(path);
  }
  if (ranked.length >= limit) return ranked;
  const byNodeRank = nodePaths.map((path, node) => ({ path, rank: ranks[node]! })).sort((a, b) => b.rank - a.rank || cmp(b.path, a.path));
  for (const { path } of byNodeRank) {
    if (included.has(path) || chatFiles.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  for (const path of [...request.allFiles].sort()) {
    if (included.has(path) || chatFiles.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  return ranked;
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

/** Positions of up to `k` definers whose paths share the longest prefix with `path` (definers sorted by path). */
function nearestByPath(paths: readonly string[], sortedDefiners: readonly number[], path: string, k: number): number[] {
  let lo = 0;
  let hi = sortedDefiners.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (paths[sortedDefiners[mid]!]! < path) lo = mid + 1;
    else hi = mid;
  }
  const picked: number[] = [];
  let left = lo - 1;
  let right = lo;
  while (picked.length < k && (left >= 0 || right < sortedDefiners.length)) {
    const leftShare = left >= 0 ? commonPrefix(paths[sortedDefiners[left]!]!, path) : -1;
    const rightShare = right < sortedDefiners.length ? commonPrefix(paths[sortedDefiners[right]!]!, path) : -1;
    if (rightShare >= leftShare) picked.push(right++);
    else picked.push(left--);
  }
  return picked;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

class EdgeList {
  src = new Int32Array(1024);
  dst = new Int32Array(1024);
  weight = new Float64Array(1024);
  slot = new Int32Array(1024);
  count = 0;

  add(src: number, dst: number, weight: number, slot: number): void {
    if (this.count === this.src.length) {
      const size = this.count * 2;
      const grow = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
        const b = make(size);
        b.set(a);
        return b;
      };
      this.src = grow(this.src, (n) => new Int32Array(n));
      this.dst = grow(this.dst, (n) => new Int32Array(n));
      this.weight = grow(this.weight, (n) => new Float64Array(n));
      this.slot = grow(this.slot, (n) => new Int32Array(n));
    }
    this.src[this.count] = src;
    this.dst[this.count] = dst;
    this.weight[this.count] = weight;
    this.slot[this.count] = slot;
    this.count++;
  }
}
