// The kept ranking: what a fresh process needs to rank after a change that moves no
// PageRank, without reading the stored graph (13 MB at 10k files). Written beside the
// stored graph (rank-state.ts) from the same state, read alone:
//
// - a head: each ranked file's version, PageRank vector and out-weight, whether it is
//   a node; the definitions that rank highest (their rank, lines, and the edges into
//   them in the graph's order); every identifier's key (and which are defined);
// - each group of FILES_PER_CHUNK files' identifiers (what they defined and referenced).
//
// A change qualifies when every changed file only adds definitions of names the index
// has never seen and nobody references, adds or drops references to names nobody
// defines, or moves lines (see `quickRank`). Such a change adds self-edges (0.1) and
// nothing else: the PageRank vector is kept when the change provably moves it less
// than PageRank's own stopping criterion (α·last change + 2α·Σ rank of the files
// whose out-edges changed < N·tolerance), and the definitions it feeds are re-ranked
// from their edges in the graph's order, as rank.ts does. Anything else: null, and the
// caller patches the stored graph.
import type { TagCache } from "./cache.ts";
import { cmp, identAt, type RankFile } from "./graph.ts";
import { ALPHA, TOLERANCE } from "./pagerank.ts";
import { importedByName, type RankedEntry, type RankedGraph, type RankGraph, type RankRequest } from "./rank.ts";
import { identKey, REF_STRIDE } from "./tags.ts";

/** Bump when the kept ranking's layout changes (another format is not read). */
export const QUICK_FORMAT = 1;
/** Files per stored group of per-file identifiers. */
const FILES_PER_CHUNK = 256;
/** Up to this many changed files are checked for a kept ranking (more: the stored graph is patched and stored again). */
export const QUICK_MAX_FILES = 7;
/** The weight of a defined, never referenced identifier's self-edge (graph.ts identEdges). */
const SELF_EDGE = 0.1;

/** The kept ranking's values, as written (the head and the per-file groups, all tagged with one generation). */
export interface QuickParts {
  head: Uint8Array;
  chunks: Uint8Array[];
}

type Packed = Int32Array | Float64Array | Uint8Array;
type Kind = "i" | "f" | "u";

function kindOf(a: Packed): Kind {
  return a instanceof Int32Array ? "i" : a instanceof Float64Array ? "f" : "u";
}

/** A JSON head and typed arrays, 8-byte aligned. */
function pack(head: object, arrays: readonly Packed[]): Uint8Array {
  const encoder = new TextEncoder();
  const headBytes = encoder.encode(JSON.stringify({ ...head, arrays: arrays.map((a) => [kindOf(a), a.length]) }));
  let size = align8(8 + headBytes.length);
  for (const a of arrays) size += align8(a.byteLength);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, headBytes.length, true);
  out.set(headBytes, 8);
  let at = align8(8 + headBytes.length);
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += align8(a.byteLength);
  }
  return out;
}

function unpack<H>(blob: Uint8Array): { head: H & { arrays: [Kind, number][] }; arrays: Packed[] } | null {
  const bytes = blob.byteOffset % 8 === 0 ? blob : blob.slice();
  if (bytes.length < 8) return null;
  const length = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(0, true);
  if (8 + length > bytes.length) return null;
  const head = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))) as H & { arrays: [Kind, number][] };
  if (!Array.isArray(head.arrays)) return null;
  let at = align8(8 + length);
  const arrays: Packed[] = [];
  for (const [kind, count] of head.arrays) {
    const per = kind === "f" ? 8 : kind === "i" ? 4 : 1;
    if (at + count * per > bytes.length) return null;
    const offset = bytes.byteOffset + at;
    arrays.push(kind === "f" ? new Float64Array(bytes.buffer, offset, count) : kind === "i" ? new Int32Array(bytes.buffer, offset, count) : new Uint8Array(bytes.buffer, offset, count));
    at += align8(count * per);
  }
  return { head, arrays };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

interface QuickHead {
  format: number;
  key: string;
  gen: string;
  /** Hash of the ranked paths in order. */
  paths: string;
  files: number;
  nodes: number;
  /** PageRank's last change when the vector was computed. */
  change: number;
  /** Every candidate definition ranked above this is among the kept ones (null: every candidate is kept). */
  cut: number | null;
  chunks: number;
  sigs: string;
  names: string;
}

interface ChunkHead {
  format: number;
  gen: string;
  chunk: number;
}

/** The ranked paths as one hash (the list a kept ranking is of). */
export function pathsHash(paths: readonly string[]): string {
  return new Bun.CryptoHasher("sha256").update(`${paths.length}\n${paths.join("\n")}`).digest("hex");
}

/**
 * The kept ranking of a state: its graph, its PageRank vector and the ranking made from
 * them (`ranked`: slots as rank.ts computed them). Keeps the top definitions covering
 * at least `lines` lines (and every one tied with the last). Null when a path or a name
 * holds a line break.
 */
export function encodeQuick(state: { key: string; sigs: readonly string[]; stats: Float64Array; graph: RankGraph; ranks: Float64Array }, ranked: Pick<RankedGraph, "slots" | "change">, request: Pick<RankRequest, "imports">, lines: number): QuickParts | null {
  const { paths, index, graph, context } = state.graph;
  // Without any reference the index's rows stand in for references (graph.ts): not what a file's tags hold.
  if (!index.anyReference) return null;
  if (paths.some((p) => p.includes("\n")) || state.sigs.some((s) => s.includes("\n"))) return null;
  const n = paths.length;
  const { src, dst, weight, count } = graph.edges;
  // Out-weights summed in edge order, as rank.ts rankNodes sums them.
  const outWeight = new Float64Array(n);
  const isNode = new Uint8Array(n);
  for (let e = 0; e < count; e++) {
    const from = src[e]!;
    isNode[from] = 1;
    isNode[dst[e]!] = 1;
    outWeight[from] = outWeight[from]! + weight[e]!;
  }
  let nodes = 0;
  for (let f = 0; f < n; f++) nodes += isNode[f]!;
  // The candidate slots (as rank.ts rankGraph takes them), the top ones in rank order.
  const { rank, used } = ranked.slots;
  const fileOf = index.definerList;
  const candidates: number[] = [];
  for (let slot = 0; slot < graph.slotCount; slot++) if (used[slot] && !context.inChat[fileOf[slot]!]) candidates.push(slot);
  const identOf = (slot: number) => identAt(graph.slotBase, slot);
  const order = (a: number, b: number) => rank[b]! - rank[a]! || cmp(paths[fileOf[b]!]!, paths[fileOf[a]!]!) || cmp(index.names[identOf(b)]!, index.names[identOf(a)]!);
  const values = Float64Array.from(candidates, (slot) => rank[slot]!);
  const wantedSlots = Math.min(candidates.length, lines);
  const sortedValues = values.slice().sort();
  const threshold = wantedSlots === 0 ? Infinity : sortedValues[candidates.length - wantedSlots]!;
  const top = candidates.filter((slot) => rank[slot]! >= threshold).sort(order);
  let kept = 0;
  let covered = 0;
  while (kept < top.length && covered < lines) {
    covered += index.definerLineStart[top[kept]! + 1]! - index.definerLineStart[top[kept]!]!;
    kept++;
  }
  while (kept < top.length && rank[top[kept]!] === rank[top[kept - 1]!]) kept++;
  // The highest rank left out (ties with the last kept are all kept).
  let cut = -Infinity;
  if (kept < top.length) cut = rank[top[kept]!]!;
  else for (const slot of candidates) if (rank[slot]! < threshold && rank[slot]! > cut) cut = rank[slot]!;
  top.length = kept;
  const wanted = importedByName(request);
  const slotFile = new Int32Array(kept);
  const slotRank = new Float64Array(kept);
  const slotWanted = new Uint8Array(kept);
  const lineStart = new Int32Array(kept + 1);
  const lineList: number[] = [];
  const inStart = new Int32Array(kept + 1);
  const inSrc: number[] = [];
  const inWeight: number[] = [];
  const names: string[] = [];
  top.forEach((slot, i) => {
    const id = identOf(slot);
    const name = index.names[id]!;
    names.push(name);
    slotFile[i] = fileOf[slot]!;
    slotRank[i] = rank[slot]!;
    slotWanted[i] = wanted.get(name)?.has(paths[fileOf[slot]!]!) ? 1 : 0;
    for (let l = index.definerLineStart[slot]!; l < index.definerLineStart[slot + 1]!; l++) lineList.push(index.definerLines[l]!);
    lineStart[i + 1] = lineList.length;
    const k = slot - graph.slotBase[id]!;
    for (let e = graph.edgeStart[id]!; e < graph.edgeStart[id + 1]!; e++) {
      if (graph.edges.definer[e] !== k) continue;
      inSrc.push(src[e]!);
      inWeight.push(weight[e]!);
    }
    inStart[i + 1] = inSrc.length;
  });
  if (names.some((name) => name.includes("\n"))) return null;
  // Files by rank (the ranking's tail), as rankGraph orders them.
  const byRank = Int32Array.from([...Array(n).keys()].filter((f) => isNode[f]).sort((a, b) => state.ranks[b]! - state.ranks[a]! || cmp(paths[b]!, paths[a]!)));
  const identCount = index.names.length;
  const allKeys = index.keys.slice(0, identCount).sort();
  const defined: number[] = [];
  for (let id = 0; id < identCount; id++) if (index.definerStart[id + 1]! > index.definerStart[id]!) defined.push(index.keys[id]!);
  const definedKeys = Float64Array.from(defined).sort();
  const gen = crypto.randomUUID();
  const chunkCount = Math.ceil(n / FILES_PER_CHUNK);
  const head: QuickHead = {
    format: QUICK_FORMAT,
    key: state.key,
    gen,
    paths: pathsHash(paths),
    files: n,
    nodes,
    change: ranked.change,
    cut: cut === -Infinity ? null : cut,
    chunks: chunkCount,
    sigs: state.sigs.join("\n"),
    names: names.join("\n"),
  };
  const headBytes = pack(head, [state.stats, state.ranks, outWeight, isNode, byRank, slotFile, slotRank, slotWanted, lineStart, Int32Array.from(lineList), inStart, Int32Array.from(inSrc), Float64Array.from(inWeight), allKeys, definedKeys]);
  return { head: headBytes, chunks: fileChunks(state.graph, gen, chunkCount) };
}

/** Each group of files' identifiers as the index has them: the keys each defines, and each reference's key and counts. */
function fileChunks(rg: RankGraph, gen: string, chunkCount: number): Uint8Array[] {
  const { index, paths } = rg;
  const n = paths.length;
  const defCount = new Int32Array(n + 1);
  const refCount = new Int32Array(n + 1);
  const identCount = index.names.length;
  for (let e = 0; e < index.definerStart[identCount]!; e++) defCount[index.definerList[e]! + 1]! += 1;
  for (let e = 0; e < index.referencerStart[identCount]!; e++) refCount[index.referencerFile[e]! + 1]! += 1;
  for (let f = 0; f < n; f++) {
    defCount[f + 1] = defCount[f + 1]! + defCount[f]!;
    refCount[f + 1] = refCount[f + 1]! + refCount[f]!;
  }
  const defKeys = new Float64Array(defCount[n]!);
  const refs = new Float64Array(refCount[n]! * REF_STRIDE);
  const defAt = defCount.slice(0, n);
  const refAt = refCount.slice(0, n);
  for (let id = 0; id < identCount; id++) {
    const key = index.keys[id]!;
    for (let e = index.definerStart[id]!; e < index.definerStart[id + 1]!; e++) defKeys[defAt[index.definerList[e]!]!++] = key;
    for (let e = index.referencerStart[id]!; e < index.referencerStart[id + 1]!; e++) {
      const at = refAt[index.referencerFile[e]!]!++ * REF_STRIDE;
      refs[at] = key;
      refs[at + 1] = index.referencerRefs[e]!;
      refs[at + 2] = index.referencerMembers[e]!;
    }
  }
  const chunks: Uint8Array[] = [];
  for (let c = 0; c < chunkCount; c++) {
    const from = c * FILES_PER_CHUNK;
    const to = Math.min(n, from + FILES_PER_CHUNK);
    const head: ChunkHead = { format: QUICK_FORMAT, gen, chunk: c };
    const defStart = Int32Array.from(defCount.subarray(from, to + 1), (v) => v - defCount[from]!);
    const refStart = Int32Array.from(refCount.subarray(from, to + 1), (v) => v - refCount[from]!);
    chunks.push(pack(head, [defStart, defKeys.slice(defCount[from]!, defCount[to]!), refStart, refs.slice(refCount[from]! * REF_STRIDE, refCount[to]! * REF_STRIDE)]));
  }
  return chunks;
}

/** Whether a sorted array holds `value` (binary search). */
function hasSorted(sorted: Float64Array, value: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = sorted[mid]!;
    if (at === value) return true;
    if (at < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

export interface QuickInput {
  key: string;
  cache: TagCache;
  /** The ranked files now (rank-state.ts rankedList). */
  listed: { paths: string[]; sigs: string[]; stats: Float64Array };
  /** A changed file's tags now, or null. */
  tagsOf: (path: string) => RankFile | null;
  request: Omit<RankRequest, "files" | "warm">;
}

/**
 * The ranking from the kept one when the change qualifies (see the file's head), or
 * null. Equal to what rank.ts gives over the patched graph from the kept PageRank
 * vector: the same slots, each computed from its edges in the graph's order.
 */
export function quickRank(input: QuickInput): { ranked: RankedEntry[]; changed: number } | null {
  const { listed, request, cache } = input;
  const blob = cache.getRankQuick(input.key);
  if (!blob) return null;
  let read;
  try {
    read = unpack<QuickHead>(blob);
  } catch {
    return null;
  }
  if (!read) return null;
  const { head, arrays } = read;
  if (head.format !== QUICK_FORMAT || head.key !== input.key || arrays.length !== 15 || head.files !== listed.paths.length) return null;
  const [stats, ranks, outWeight, isNode, byRank, slotFile, slotRank, slotWanted, lineStart, lineList, inStart, inSrc, inWeight, allKeys, definedKeys] = arrays as [Float64Array, Float64Array, Float64Array, Uint8Array, Int32Array, Int32Array, Float64Array, Uint8Array, Int32Array, Int32Array, Int32Array, Int32Array, Float64Array, Float64Array, Float64Array];
  const n = head.files;
  const cut = head.cut ?? -Infinity;
  if (stats.length !== 2 * n || ranks.length !== n || outWeight.length !== n || isNode.length !== n) return null;
  const sigs = n === 0 ? [] : head.sigs.split("\n");
  if (sigs.length !== n) return null;
  // The changed files (same list of files, by its hash).
  const changed: number[] = [];
  for (let f = 0; f < n; f++) {
    if (sigs[f] === listed.sigs[f] && stats[2 * f] === listed.stats[2 * f] && stats[2 * f + 1] === listed.stats[2 * f + 1]) continue;
    if (changed.length >= QUICK_MAX_FILES) return null;
    changed.push(f);
  }
  if (pathsHash(listed.paths) !== head.paths) return null;
  const { paths } = listed;
  const chat = request.chatFiles;
  // Each changed file's tags now and as the kept state had them.
  const chunks = new Map<number, Packed[]>();
  const now = new Map<number, RankFile>();
  const newNames: { file: number; name: string }[] = [];
  const newKeys = new Map<number, number>();
  const refsNow = new Set<number>();
  const refChanged = new Set<number>();
  let twice = false;
  for (const f of changed) {
    if (chat.has(paths[f]!) || sigs[f] === "-" || sigs[f] === "" || listed.sigs[f] === "-" || listed.sigs[f] === "") return null;
    const file = input.tagsOf(paths[f]!);
    if (!file) return null;
    now.set(f, file);
    const c = Math.floor(f / FILES_PER_CHUNK);
    let chunk = chunks.get(c);
    if (!chunk) {
      const value = cache.getRankQuickChunk(input.key, c);
      const got = value ? unpack<ChunkHead>(value) : null;
      // A group of another generation (another process stored a state in between): not combined.
      if (!got || got.head.format !== QUICK_FORMAT || got.head.gen !== head.gen || got.head.chunk !== c || got.arrays.length !== 4) return null;
      chunk = got.arrays;
      chunks.set(c, chunk);
    }
    const [defStart, defKeys, refStart, refs] = chunk as [Int32Array, Float64Array, Int32Array, Float64Array];
    const at = f - c * FILES_PER_CHUNK;
    if (at + 1 >= defStart.length || at + 1 >= refStart.length) return null;
    const oldDefs = new Set(defKeys.subarray(defStart[at]!, defStart[at + 1]!));
    const oldRefs = new Map<number, [number, number]>();
    for (let r = refStart[at]!; r < refStart[at + 1]!; r++) oldRefs.set(refs[r * REF_STRIDE]!, [refs[r * REF_STRIDE + 1]!, refs[r * REF_STRIDE + 2]!]);
    const keys = file.defKeys?.length === file.defNames.length ? file.defKeys : Float64Array.from(file.defNames, identKey);
    const defsNow = new Set(keys);
    // A definition removed: its edges go (rebuilt by a patch).
    for (const key of oldDefs) if (!defsNow.has(key)) return null;
    file.defNames.forEach((name, i) => {
      const key = keys[i]!;
      if (oldDefs.has(key)) return;
      const by = newKeys.get(key);
      // A new name two changed files define: two definers in one block (a patch rebuilds it).
      if (by !== undefined && by !== f) twice = true;
      if (by !== undefined) return;
      newKeys.set(key, f);
      newNames.push({ file: f, name });
    });
    for (let p = 0; p + REF_STRIDE <= file.refs.length; p += REF_STRIDE) {
      const key = file.refs[p]!;
      refsNow.add(key);
      const old = oldRefs.get(key);
      if (!old || old[0] !== file.refs[p + 1] || old[1] !== file.refs[p + 2]) refChanged.add(key);
      oldRefs.delete(key);
    }
    for (const key of oldRefs.keys()) refChanged.add(key);
  }
  // A new name: never seen by the index (its block comes last) and referenced by no one.
  if (twice) return null;
  for (const key of newKeys.keys()) if (hasSorted(allKeys, key) || refsNow.has(key)) return null;
  // A reference added, dropped or counted anew: only to names nobody defines (no edge either way).
  for (const key of refChanged) if (hasSorted(definedKeys, key) || newKeys.has(key)) return null;
  // Each new name adds one self-edge: its file's out-weight grows, in the order the patch numbers them.
  const newOut = new Map<number, number>();
  for (const { file } of newNames) {
    if (!isNode[file]) return null;
    newOut.set(file, (newOut.get(file) ?? outWeight[file]!) + SELF_EDGE);
  }
  // PageRank kept: the change moves it less than its own stopping criterion.
  let moved = 0;
  for (const f of newOut.keys()) moved += ranks[f]!;
  if (!(ALPHA * head.change + 2 * ALPHA * moved < head.nodes * TOLERANCE)) return null;
  const out = (f: number) => newOut.get(f) ?? outWeight[f]!;
  // The kept definitions, those fed by a file whose out-weight changed ranked again from their edges.
  const names = slotFile.length === 0 ? [] : head.names.split("\n");
  if (names.length !== slotFile.length) return null;
  const entries: { rank: number; file: number; name: string; slot: number }[] = [];
  for (let i = 0; i < slotFile.length; i++) entries.push({ rank: slotRank[i]!, file: slotFile[i]!, name: names[i]!, slot: i });
  for (const f of newOut.keys()) {
    for (let e = inSrc.indexOf(f); e >= 0; e = inSrc.indexOf(f, e + 1)) {
      const i = identAt(inStart, e);
      let rank = 0;
      for (let k = inStart[i]!; k < inStart[i + 1]!; k++) rank = rank + (ranks[inSrc[k]!]! * inWeight[k]!) / out(inSrc[k]!);
      if (slotWanted[i] && rank > 0) rank = rank + 1;
      entries[i]!.rank = rank;
      // Later edges of the same slot are already counted.
      e = inStart[i + 1]! - 1;
    }
  }
  // The new names' slots: one self-edge each.
  for (const { file, name } of newNames) {
    const rank = 0 + (ranks[file]! * SELF_EDGE) / out(file);
    if (rank > cut) entries.push({ rank, file, name, slot: -1 });
  }
  entries.sort((a, b) => b.rank - a.rank || cmp(paths[b.file]!, paths[a.file]!) || cmp(b.name, a.name));
  // Lines: a changed file's from its tags now, in the file's order; others as kept.
  const linesOf = (entry: (typeof entries)[number]): number[] => {
    const file = now.get(entry.file);
    if (file) return file.defNames.flatMap((name, i) => (name === entry.name ? [file.defLines[i]!] : []));
    return Array.from(lineList.subarray(lineStart[entry.slot]!, lineStart[entry.slot + 1]!));
  };
  const limit = request.limit ?? Infinity;
  const ranked: RankedEntry[] = [];
  const included = new Set<string>();
  let complete = false;
  for (const entry of entries) {
    if (ranked.length >= limit) {
      complete = true;
      break;
    }
    // Below the cut, definitions not kept may rank higher.
    if (!(entry.rank > cut)) return null;
    const path = paths[entry.file]!;
    for (const line of linesOf(entry)) ranked.push({ path, name: entry.name, line });
    included.add(path);
  }
  if (!complete && cut !== -Infinity && ranked.length < limit) return null;
  // Then files by rank, then every other file by name (as rankGraph).
  if (ranked.length < limit) {
    for (const path of [...Array.from(byRank, (f) => paths[f]!), ...[...request.allFiles].sort()]) {
      if (ranked.length >= limit) break;
      if (included.has(path) || chat.has(path)) continue;
      included.add(path);
      ranked.push({ path });
    }
  }
  return { ranked, changed: changed.length };
}
