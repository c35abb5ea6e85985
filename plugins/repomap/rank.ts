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

  // Identifiers as integers (an open-addressing table on their 53-bit keys);
  // definers and referencers in compressed rows: flat typed arrays + offsets.
  let totalDefs = 0;
  let totalRefs = 0;
  for (const file of files) {
    totalDefs += file.defNames.length;
    totalRefs += file.refPairs.length >> 1;
  }
  const index = new KeyIndex(totalDefs);
  const identNames: string[] = [];
  const defIdent = new Int32Array(totalDefs);
  const lastDefiner = new Int32Array(totalDefs).fill(-1);
  const definerCount = new Int32Array(totalDefs + 1);
  let d = 0;
  for (let f = 0; f < files.length; f++) {
    const names = files[f]!.defNames;
    for (let i = 0; i < names.length; i++, d++) {
      const name = names[i]!;
      const id = index.get(identKey(name), identNames.length);
      if (id === identNames.length) identNames.push(name);
      defIdent[d] = id;
      if (lastDefiner[id] !== f) {
        lastDefiner[id] = f;
        definerCount[id] = definerCount[id]! + 1;
      }
    }
  }
  const identCount = identNames.length;
  const definerStart = new Int32Array(identCount + 1);
  for (let id = 0; id < identCount; id++) definerStart[id + 1] = definerStart[id]! + definerCount[id]!;
  const definerList = new Int32Array(definerStart[identCount]!);
  const fill = definerStart.slice(0, identCount);
  lastDefiner.fill(-1);
  d = 0;
  for (let f = 0; f < files.length; f++) {
    const n = files[f]!.defNames.length;
    for (let i = 0; i < n; i++, d++) {
      const id = defIdent[d]!;
      if (lastDefiner[id] !== f) {
        lastDefiner[id] = f;
        definerList[fill[id]!++] = f;
      }
    }
  }
  const definersOf = (id: number) => definerList.subarray(definerStart[id]!, definerStart[id + 1]!);

  // Referencing files per identifier (only identifiers defined somewhere).
  const refIdent = new Int32Array(totalRefs).fill(-1);
  const referencerCount = new Int32Array(identCount + 1);
  let anyReference = false;
  let r = 0;
  for (let f = 0; f < files.length; f++) {
    const pairs = files[f]!.refPairs;
    for (let p = 0; p + 1 < pairs.length; p += 2, r++) {
      const id = index.find(pairs[p]!);
      if (id < 0) continue;
      anyReference = true;
      refIdent[r] = id;
      referencerCount[id] = referencerCount[id]! + 1;
    }
  }
  const referencerStart = new Int32Array(identCount + 1);
  let referencerFile: Int32Array;
  let referencerRefs: Float64Array;
  if (anyReference) {
    for (let id = 0; id < identCount; id++) referencerStart[id + 1] = referencerStart[id]! + referencerCount[id]!;
    referencerFile = new Int32Array(referencerStart[identCount]!);
    referencerRefs = new Float64Array(referencerStart[identCount]!);
    const at = referencerStart.slice(0, identCount);
    r = 0;
    for (let f = 0; f < files.length; f++) {
      const pairs = files[f]!.refPairs;
      for (let p = 0; p + 1 < pairs.length; p += 2, r++) {
        const id = refIdent[r]!;
        if (id < 0) continue;
        referencerFile[at[id]!] = f;
        referencerRefs[at[id]!++] = pairs[p + 1]!;
      }
    }
  } else {
    // No references at all: every definer references its own names once (as Aider does).
    referencerStart.set(definerStart);
    referencerFile = definerList;
    referencerRefs = new Float64Array(definerList.length).fill(1);
  }
  const hasReferencers = (id: number) => referencerStart[id + 1]! > referencerStart[id]!;

  // One slot per (definer, ident): the unit that collects rank.
  const slotBase = new Int32Array(identCount + 1);
  for (let id = 0; id < identCount; id++) slotBase[id + 1] = slotBase[id]! + definerStart[id + 1]! - definerStart[id]!;
  const slotCount = slotBase[identCount]!;

  // Count the edges first so the edge arrays are allocated once.
  let edgeCount = 0;
  for (let id = 0; id < identCount; id++) {
    const definers = definerStart[id + 1]! - definerStart[id]!;
    const referencers = referencerStart[id + 1]! - referencerStart[id]!;
    if (referencers === 0) edgeCount += definers;
    else if (definers > 5 && referencers * definers > EDGES_PER_IDENT) edgeCount += referencers * Math.min(definers, Math.max(1, Math.floor(EDGES_PER_IDENT / referencers)));
    else edgeCount += referencers * definers;
  }
  const edges = new EdgeList(edgeCount);
  for (let id = 0; id < identCount; id++) {
    if (hasReferencers(id)) continue;
    const defining = definersOf(id);
    for (let k = 0; k < defining.length; k++) edges.add(defining[k]!, defining[k]!, 0.1, slotBase[id]! + k);
  }
  for (let id = 0; id < identCount; id++) {
    if (!hasReferencers(id)) continue;
    const referencers = referencerFile.subarray(referencerStart[id]!, referencerStart[id + 1]!);
    const counts = referencerRefs.subarray(referencerStart[id]!, referencerStart[id + 1]!);
    const ident = identNames[id]!;
    const defining = definersOf(id);
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
    const defining = definersOf(id);
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
function nearestByPath(paths: readonly string[], sortedDefiners: ArrayLike<number>, path: string, k: number): number[] {
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
  readonly src: Int32Array;
  readonly dst: Int32Array;
  readonly weight: Float64Array;
  readonly slot: Int32Array;
  count = 0;

  constructor(capacity: number) {
    this.src = new Int32Array(capacity);
    this.dst = new Int32Array(capacity);
    this.weight = new Float64Array(capacity);
    this.slot = new Int32Array(capacity);
  }

  add(src: number, dst: number, weight: number, slot: number): void {
    const i = this.count++;
    this.src[i] = src;
    this.dst[i] = dst;
    this.weight[i] = weight;
    this.slot[i] = slot;
  }
}

/** Identifier keys → dense ids: open addressing on a Float64Array (several times cheaper than a Map here). */
class KeyIndex {
  readonly #keys: Float64Array;
  readonly #ids: Int32Array;
  readonly #mask: number;

  constructor(expected: number) {
    let capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    this.#keys = new Float64Array(capacity);
    this.#ids = new Int32Array(capacity).fill(-1);
    this.#mask = capacity - 1;
  }

  #slot(key: number): number {
    let i = Math.imul(key >>> 0, 0x9e3779b1) & this.#mask;
    while (this.#ids[i] !== -1 && this.#keys[i] !== key) i = (i + 1) & this.#mask;
    return i;
  }

  /** The id of `key`, or -1. */
  find(key: number): number {
    return this.#ids[this.#slot(key)]!;
  }

  /** The id of `key`, inserting it as `next` when absent. */
  get(key: number, next: number): number {
    const i = this.#slot(key);
    if (this.#ids[i] === -1) {
      this.#keys[i] = key;
      this.#ids[i] = next;
    }
    return this.#ids[i]!;
  }
}
