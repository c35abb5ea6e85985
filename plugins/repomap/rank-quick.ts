// The kept ranking: what a fresh process needs to rank after a change that moves no
// PageRank, without reading the stored graph (13 MB at 10k files). Written beside the
// stored graph (rank-state.ts), from the same state, in one transaction; read alone.
//
// - a head: each listed file's stat, version and place among the ranked files, the top
//   definitions (their rank, file, and whether a chat file imports them), the files by
//   PageRank (the ranking's tail), and those definitions' ranking entries as JSON;
// - parts, each tagged with the head's generation (a part of another generation, written
//   by another process in between, is never combined with this head):
//   - per group of ranked files: what each defined and referenced (as the index had it),
//     its PageRank and out-weight, and the top definitions it feeds;
//   - per group of top definitions: the edges into each, in the graph's order (source,
//     its PageRank times the weight, its out-weight);
//   - the index's identifier keys, sorted, in groups, with whether each is defined.
//
// A change qualifies when each changed file only adds definitions of names the index has
// never seen and nobody references, drops definitions of names only it defined and nobody
// references, adds or drops references to names nobody defines, or moves lines (see
// `quickRank`). Such a change adds or drops self-edges (0.1) and nothing else:
// the PageRank vector is kept when the change provably moves it less than PageRank's own
// stopping criterion (α·its last change + 2α·Σ PageRank of the files whose out-edges
// changed < N·tolerance), and the top definitions those files feed are ranked again from
// their edges in the graph's order, by the operations rank.ts applies (rank.ts
// rankFromVector is that ranking; a test compares the two). A definition not kept can only
// rank lower after a self-edge is added; after one is dropped, at most by its file's share
// more, and only what ranks above the kept ones' cut plus that is trusted. Anything else:
// null, and the caller patches the stored graph.
import type { TagCache } from "./cache.ts";
import { cmp, identAt, keyOrderOf, type RankFile } from "./graph.ts";
import { ALPHA, TOLERANCE } from "./pagerank.ts";
import { importedByName, type RankedEntry, type RankedGraph, type RankGraph, type RankRequest } from "./rank.ts";
import type { FileEntry, ScanResult } from "./scan.ts";
import { identKey, REF_STRIDE } from "./tags.ts";

/** Bump when the kept ranking's layout changes (another format is not read). */
export const QUICK_FORMAT = 6;
/** Ranked files per stored group. */
const FILES_PER_PART = 256;
/** Top definitions per stored group of in-edges. */
const SLOTS_PER_PART = 512;
/** Identifier keys per stored group. */
const KEYS_PER_PART = 2048;
/** Up to this many changed files are checked for a kept ranking (more: the stored graph is patched, and stored again). */
export const QUICK_MAX_FILES = 7;
/** The weight of a defined, never referenced identifier's self-edge (graph.ts identEdges). */
const SELF_EDGE = 0.1;

/** Rows `from` .. `to` of compressed-row starts, from 0. */
function shifted(start: Int32Array, from: number, to: number): Int32Array {
  const out = new Int32Array(to - from + 1);
  const base = start[from]!;
  for (let i = 0; i <= to - from; i++) out[i] = start[from + i]! - base;
  return out;
}

/** What is written: the head, and the parts by name. */
export interface QuickParts {
  head: Uint8Array;
  parts: Map<string, Uint8Array>;
}

type Packed = Int32Array | Float64Array | Uint8Array;
type Kind = "i" | "f" | "u";

/** A JSON head, then typed arrays, 8-byte aligned. */
function pack(head: object, arrays: readonly Packed[], tail?: Uint8Array): Uint8Array {
  const encoder = new TextEncoder();
  const kinds = arrays.map((a) => [a instanceof Int32Array ? "i" : a instanceof Float64Array ? "f" : "u", a.length]);
  const headBytes = encoder.encode(JSON.stringify({ ...head, arrays: kinds, tail: tail?.length ?? 0 }));
  let size = align8(8 + headBytes.length);
  for (const a of arrays) size += align8(a.byteLength);
  const out = new Uint8Array(size + (tail?.length ?? 0));
  new DataView(out.buffer).setUint32(0, headBytes.length, true);
  out.set(headBytes, 8);
  let at = align8(8 + headBytes.length);
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += align8(a.byteLength);
  }
  if (tail) out.set(tail, at);
  return out;
}

interface Unpacked<H> {
  head: H;
  arrays: Packed[];
  tail: Uint8Array;
}

function unpack<H extends { format: number; gen: string }>(blob: Uint8Array | null, gen: string | null, count: number): Unpacked<H> | null {
  if (!blob) return null;
  try {
    const bytes = blob.byteOffset % 8 === 0 ? blob : blob.slice();
    if (bytes.length < 8) return null;
    const length = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(0, true);
    if (8 + length > bytes.length) return null;
    const head = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))) as H & { arrays: [Kind, number][]; tail: number };
    if (head.format !== QUICK_FORMAT || (gen !== null && head.gen !== gen) || !Array.isArray(head.arrays) || head.arrays.length !== count) return null;
    let at = align8(8 + length);
    const arrays: Packed[] = [];
    for (const [kind, n] of head.arrays) {
      const per = kind === "f" ? 8 : kind === "i" ? 4 : 1;
      if (at + n * per > bytes.length) return null;
      const offset = bytes.byteOffset + at;
      arrays.push(kind === "f" ? new Float64Array(bytes.buffer, offset, n) : kind === "i" ? new Int32Array(bytes.buffer, offset, n) : new Uint8Array(bytes.buffer, offset, n));
      at += align8(n * per);
    }
    if (at + head.tail > bytes.length) return null;
    return { head, arrays, tail: bytes.subarray(at, at + head.tail) };
  } catch {
    return null;
  }
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

interface QuickHead {
  format: number;
  key: string;
  gen: string;
  /** Hash of the listed paths in order. */
  listing: string;
  /** Ranked paths that are not listed (chat files without tags), after the listed ones. */
  extra: string[];
  /** The mentioned files (PageRank's personalisation besides the context's chat files and names). */
  mentioned: string[];
  files: number;
  nodes: number;
  /** PageRank's last change when the vector was computed. */
  change: number;
  /** Every candidate definition ranked above this is among the kept ones (null: every candidate is). */
  cut: number | null;
  /** First key of each group of keys. */
  keyParts: number[];
  /** Each listed file's version as the scan described it ("\n"-joined: its ranking signature, "-" skipped, "" not described). */
  versions: string;
  /** The tail: the top definitions' names ("\n"-joined UTF-8, this many bytes), then their files' paths. */
  namesBytes: number;
}

/** The groups a kept ranking is stored in, each part named by its kind and number. */
type PartKind = "files" | "in" | "keys";

function partName(kind: PartKind, p: number): string {
  return `${kind}\n${p}`;
}

interface PartHead {
  format: number;
  gen: string;
}

/** A hash of the listed paths in order (also what a chat file's kept imports and the ranking key are checked by: map.ts). */
export function listingHash(files: readonly string[]): string {
  return new Bun.CryptoHasher("sha256").update(`${files.length}\n${files.join("\n")}`).digest("hex");
}

/**
 * The kept ranking of a state: its graph, its PageRank vector and the ranking made from
 * them (`ranked`: the slots as rank.ts computed them), for the listed files `entries` (`listing`:
 * the listingHash of their paths, as the build has it).
 * Keeps the top definitions covering at least `lines` lines (and every one tied with the
 * last). Null when a path or a name holds a line break, or when no file references a
 * defined name (the index's rows then stand in for references).
 */
export function encodeQuick(entries: readonly FileEntry[], listing: string, versions: readonly string[], state: { key: string; graph: RankGraph; ranks: Float64Array }, ranked: Pick<RankedGraph, "slots" | "change">, request: Pick<RankRequest, "imports" | "mentionedFiles">, lines: number): QuickParts | null {
  const { paths, index, graph, context } = state.graph;
  if (!index.anyReference || paths.some((p) => p.includes("\n")) || versions.length !== entries.length || versions.some((v) => v.includes("\n"))) return null;
  const n = paths.length;
  // Each listed file's place among the ranked files; the ranked files not listed come last.
  const rankedAt = new Map(paths.map((path, f) => [path, f]));
  const entryStats = new Float64Array(2 * entries.length);
  const entryFile = new Int32Array(entries.length).fill(-1);
  let listedRanked = 0;
  entries.forEach((e, i) => {
    entryStats[2 * i] = e.mtime;
    entryStats[2 * i + 1] = e.size;
    const f = rankedAt.get(e.path);
    if (f === undefined) return;
    if (f !== listedRanked) return;
    entryFile[i] = f;
    listedRanked++;
  });
  const extra = paths.slice(listedRanked);
  const listedSet = new Set(entries.map((e) => e.path));
  // Ranked files in listing order, then files not listed: anything else is not this state's list.
  if (extra.some((path) => listedSet.has(path))) return null;
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
  // The candidate slots (as rankGraph takes them), the top ones in rank order.
  const { rank, used } = ranked.slots;
  const fileOf = index.definerList;
  const candidates: number[] = [];
  for (let slot = 0; slot < graph.slotCount; slot++) if (used[slot] && !context.inChat[fileOf[slot]!]) candidates.push(slot);
  const identOf = (slot: number) => identAt(graph.slotBase, slot);
  const order = (a: number, b: number) => rank[b]! - rank[a]! || cmp(paths[fileOf[b]!]!, paths[fileOf[a]!]!) || cmp(index.names[identOf(b)]!, index.names[identOf(a)]!);
  const wantedCount = Math.min(candidates.length, lines);
  const sortedValues = Float64Array.from(candidates, (slot) => rank[slot]!).sort();
  const threshold = wantedCount === 0 ? Infinity : sortedValues[candidates.length - wantedCount]!;
  const top = candidates.filter((slot) => rank[slot]! >= threshold).sort(order);
  let kept = 0;
  let covered = 0;
  while (kept < top.length && covered < lines) {
    covered += index.definerLineStart[top[kept]! + 1]! - index.definerLineStart[top[kept]!]!;
    kept++;
  }
  while (kept > 0 && kept < top.length && rank[top[kept]!] === rank[top[kept - 1]!]) kept++;
  let cut = -Infinity;
  if (kept < top.length) cut = rank[top[kept]!]!;
  else for (const slot of candidates) if (rank[slot]! < threshold && rank[slot]! > cut) cut = rank[slot]!;
  top.length = kept;
  const wanted = importedByName(request);
  const slotFile = new Int32Array(kept);
  const slotRank = new Float64Array(kept);
  const slotWanted = new Uint8Array(kept);
  const entryStart = new Int32Array(kept + 1);
  const entryLines: number[] = [];
  const names: string[] = [];
  const slotPath = new Int32Array(kept);
  const pathTable: string[] = [];
  const pathIndex = new Map<number, number>();
  let inSrc = new Int32Array(0);
  let inTerm = new Float64Array(0);
  let inOut = new Float64Array(0);
  let fedList = new Int32Array(0);
  top.forEach((slot, i) => {
    const name = index.names[identOf(slot)]!;
    const file = fileOf[slot]!;
    slotFile[i] = file;
    slotRank[i] = rank[slot]!;
    slotWanted[i] = wanted.get(name)?.has(paths[file]!) ? 1 : 0;
    names.push(name);
    let at = pathIndex.get(file);
    if (at === undefined) {
      pathIndex.set(file, (at = pathTable.length));
      pathTable.push(paths[file]!);
    }
    slotPath[i] = at;
    for (let l = index.definerLineStart[slot]!; l < index.definerLineStart[slot + 1]!; l++) entryLines.push(index.definerLines[l]!);
    entryStart[i + 1] = entryLines.length;
  });
  // The edges into each kept slot, in the graph's order (one pass over the edges, blocks in order), and
  // for each file the kept slots it feeds.
  const keptOf = new Int32Array(graph.slotCount).fill(-1);
  top.forEach((slot, i) => (keptOf[slot] = i));
  const inStart = new Int32Array(kept + 1);
  const fedStart = new Int32Array(n + 1);
  const identCount = index.names.length;
  const { edgeStart, slotBase } = graph;
  const definer = graph.edges.definer;
  for (let pass = 0; pass < 2; pass++) {
    const inAt = pass === 1 ? inStart.slice(0, kept) : null;
    const fedAt = pass === 1 ? fedStart.slice(0, n) : null;
    for (let id = 0; id < identCount; id++) {
      const base = slotBase[id]!;
      for (let e = edgeStart[id]!; e < edgeStart[id + 1]!; e++) {
        const i = keptOf[base + definer[e]!]!;
        if (i < 0) continue;
        const from = src[e]!;
        if (!inAt || !fedAt) {
          inStart[i + 1] = inStart[i + 1]! + 1;
          fedStart[from + 1] = fedStart[from + 1]! + 1;
          continue;
        }
        const at = inAt[i]!++;
        inSrc[at] = from;
        inTerm[at] = state.ranks[from]! * weight[e]!;
        inOut[at] = outWeight[from]!;
        fedList[fedAt[from]!++] = i;
      }
    }
    if (pass === 0) {
      for (let i = 0; i < kept; i++) inStart[i + 1] = inStart[i + 1]! + inStart[i]!;
      for (let f = 0; f < n; f++) fedStart[f + 1] = fedStart[f + 1]! + fedStart[f]!;
      inSrc = new Int32Array(inStart[kept]!);
      inTerm = new Float64Array(inStart[kept]!);
      inOut = new Float64Array(inStart[kept]!);
      fedList = new Int32Array(fedStart[n]!);
    }
  }
  // Files by rank (the ranking's tail), as rankGraph orders them.
  const byRank = Int32Array.from([...Array(n).keys()].filter((f) => isNode[f]).sort((a, b) => state.ranks[b]! - state.ranks[a]! || cmp(paths[b]!, paths[a]!)));
  const gen = crypto.randomUUID();
  const parts = new Map<string, Uint8Array>();
  const partHead: PartHead = { format: QUICK_FORMAT, gen };
  for (let from = 0, p = 0; from < kept; from += SLOTS_PER_PART, p++) {
    const to = Math.min(kept, from + SLOTS_PER_PART);
    const a = inStart[from]!;
    const b = inStart[to]!;
    const start = shifted(inStart, from, to);
    parts.set(partName("in", p), pack(partHead, [start, inSrc.slice(a, b), inTerm.slice(a, b), inOut.slice(a, b)]));
  }
  const files = fileParts(state.graph, state.ranks, outWeight, isNode, fedStart, fedList);
  if (!files) return null;
  for (const [p, chunk] of files) parts.set(partName("files", p), pack(partHead, chunk));
  // The index's keys, sorted, with how many files define each and whether any references it.
  const ids = keyOrderOf(index);
  const keyParts: number[] = [];
  for (let from = 0; from < identCount; from += KEYS_PER_PART) {
    const slice = ids.subarray(from, Math.min(identCount, from + KEYS_PER_PART));
    keyParts.push(index.keys[slice[0]!]!);
    const keys = new Float64Array(slice.length);
    const definers = new Uint8Array(slice.length);
    const referenced = new Uint8Array(slice.length);
    for (let k = 0; k < slice.length; k++) {
      const id = slice[k]!;
      keys[k] = index.keys[id]!;
      definers[k] = Math.min(255, index.definerStart[id + 1]! - index.definerStart[id]!);
      referenced[k] = index.referencerStart[id + 1]! > index.referencerStart[id]! ? 1 : 0;
    }
    parts.set(partName("keys", keyParts.length - 1), pack(partHead, [keys, definers, referenced]));
  }
  const head: QuickHead = { format: QUICK_FORMAT, key: state.key, gen, listing, extra, mentioned: [...request.mentionedFiles].sort(), files: n, nodes, change: ranked.change, cut: cut === -Infinity ? null : cut, keyParts, namesBytes: 0, versions: versions.join("\n") };
  if (names.some((name) => name.includes("\n"))) return null;
  const namesText = new TextEncoder().encode(names.join("\n"));
  const pathsText = new TextEncoder().encode(pathTable.join("\n"));
  const tail = new Uint8Array(namesText.length + pathsText.length);
  tail.set(namesText);
  tail.set(pathsText, namesText.length);
  head.namesBytes = namesText.length;
  return { head: pack(head, [entryStats, entryFile, slotFile, slotRank, slotWanted, entryStart, Int32Array.from(entryLines), slotPath, byRank], tail), parts };
}

/**
 * Per group of ranked files, each file's: the keys it defines; its references (key, then the plain and
 * member counts as 32-bit floats: null when one is not exactly that); its out-edges' weights in the
 * graph's order, with the place and key of each self-edge; its PageRank, out-weight, whether it is a
 * node; the kept slots it feeds.
 */
function fileParts(rg: RankGraph, ranks: Float64Array, outWeight: Float64Array, isNode: Uint8Array, fedStart: Int32Array, fedList: Int32Array): Map<number, Packed[]> | null {
  const { index, paths, graph } = rg;
  const n = paths.length;
  const identCount = index.names.length;
  const { definerStart, definerList, referencerStart, referencerFile, referencerRefs, referencerMembers, keys } = index;
  const { edgeStart } = graph;
  const { src, dst, weight } = graph.edges;
  // Row starts per file (counted), then the rows filled in identifier order (the graph's order for edges).
  const defStart = new Int32Array(n + 1);
  const refStart = new Int32Array(n + 1);
  const outStart = new Int32Array(n + 1);
  const selfStart = new Int32Array(n + 1);
  for (let e = 0; e < definerStart[identCount]!; e++) defStart[definerList[e]! + 1]! += 1;
  for (let e = 0; e < referencerStart[identCount]!; e++) refStart[referencerFile[e]! + 1]! += 1;
  for (let e = 0; e < edgeStart[identCount]!; e++) {
    outStart[src[e]! + 1]! += 1;
    if (src[e] === dst[e]) selfStart[src[e]! + 1]! += 1;
  }
  for (let f = 0; f < n; f++) {
    defStart[f + 1] = defStart[f + 1]! + defStart[f]!;
    refStart[f + 1] = refStart[f + 1]! + refStart[f]!;
    outStart[f + 1] = outStart[f + 1]! + outStart[f]!;
    selfStart[f + 1] = selfStart[f + 1]! + selfStart[f]!;
  }
  const defKeys = new Float64Array(defStart[n]!);
  const refKeys = new Float64Array(refStart[n]!);
  const refCounts = new Float32Array(2 * refStart[n]!);
  const outWeights = new Float64Array(outStart[n]!);
  const selfAt = new Int32Array(selfStart[n]!);
  const selfKey = new Float64Array(selfStart[n]!);
  const defAt = defStart.slice(0, n);
  const refAt = refStart.slice(0, n);
  const outAt = outStart.slice(0, n);
  const selfNext = selfStart.slice(0, n);
  for (let id = 0; id < identCount; id++) {
    const key = keys[id]!;
    for (let e = definerStart[id]!; e < definerStart[id + 1]!; e++) defKeys[defAt[definerList[e]!]!++] = key;
    for (let e = referencerStart[id]!; e < referencerStart[id + 1]!; e++) {
      const at = refAt[referencerFile[e]!]!++;
      refKeys[at] = key;
      refCounts[2 * at] = referencerRefs[e]!;
      refCounts[2 * at + 1] = referencerMembers[e]!;
      if (refCounts[2 * at] !== referencerRefs[e] || refCounts[2 * at + 1] !== referencerMembers[e]) return null;
    }
    for (let e = edgeStart[id]!; e < edgeStart[id + 1]!; e++) {
      const from = src[e]!;
      const at = outAt[from]!++;
      outWeights[at] = weight[e]!;
      if (from === dst[e]) {
        const s = selfNext[from]!++;
        selfAt[s] = at - outStart[from]!;
        selfKey[s] = key;
      }
    }
  }
  const rows = shifted;
  const parts = new Map<number, Packed[]>();
  for (let from = 0, p = 0; from < n; from += FILES_PER_PART, p++) {
    const to = Math.min(n, from + FILES_PER_PART);
    const counts = refCounts.slice(2 * refStart[from]!, 2 * refStart[to]!);
    parts.set(p, [
      rows(defStart, from, to),
      defKeys.slice(defStart[from]!, defStart[to]!),
      rows(refStart, from, to),
      refKeys.slice(refStart[from]!, refStart[to]!),
      new Uint8Array(counts.buffer, counts.byteOffset, counts.byteLength),
      rows(fedStart, from, to),
      fedList.slice(fedStart[from]!, fedStart[to]!),
      ranks.slice(from, to),
      outWeight.slice(from, to),
      isNode.slice(from, to),
      rows(outStart, from, to),
      outWeights.slice(outStart[from]!, outStart[to]!),
      rows(selfStart, from, to),
      selfAt.slice(selfStart[from]!, selfStart[to]!),
      selfKey.slice(selfStart[from]!, selfStart[to]!),
    ]);
  }
  return parts;
}

export interface QuickRanking {
  ranked: RankedEntry[];
  changed: number;
  /** The rank of each definition listed, in order (as rank.ts computed them: tests compare them). */
  listedRanks: number[];
}

export interface QuickInput {
  key: string;
  /** The listing's hash (listingHash of the entries' paths). */
  listing: string;
  cache: TagCache;
  entries: readonly FileEntry[];
  scan: ScanResult;
  /** A changed file's tags now, or null. */
  tagsOf: (path: string) => RankFile | null;
  request: Omit<RankRequest, "files" | "warm">;
}

/** The signature of a file with no definitions and no references (rank-state.ts: not ranked unless a chat file). */
export type EmptySignature = string;

/**
 * The ranking from the kept one when the change qualifies (see the file's head), else
 * null ("none": no kept ranking of this format, this context and a limit this large). It is what rank.ts gives over the patched graph from the kept PageRank vector:
 * the same slots, those the change feeds computed again from their edges in order.
 */
export function quickRank(input: QuickInput, emptySig: EmptySignature): QuickRanking | "none" | null {
  const { request, cache, entries, scan } = input;
  const read = unpack<QuickHead>(cache.getRankQuick(input.key), null, 9);
  // None of this format: the caller stores its state's.
  if (!read || read.head.key !== input.key) return "none";
  const { head } = read;
  // Other mentioned files personalise PageRank otherwise: the kept vector is not this ranking's.
  const mentioned = [...request.mentionedFiles].sort();
  if (!Array.isArray(head.mentioned) || mentioned.length !== head.mentioned.length || mentioned.some((path, i) => path !== head.mentioned[i])) return null;
  const [entryStats, entryFile, slotFile, slotRank, slotWanted, entryStart, entryLines, slotPath, byRank] = read.arrays as [Float64Array, Int32Array, Int32Array, Float64Array, Uint8Array, Int32Array, Int32Array, Int32Array, Int32Array];
  if (entryStats.length !== 2 * entries.length || entryFile.length !== entries.length || entryStart.length !== slotFile.length + 1) return null;
  // Kept for a smaller limit (another budget): none for this one; the caller stores its state's.
  if (head.cut !== null && entryStart[slotFile.length]! < (request.limit ?? Infinity)) return "none";
  const chat = request.chatFiles;
  // The changed files: another stat or another version (as the patched path compares them).
  const versions = typeof head.versions === "string" ? head.versions.split("\n") : [];
  if (versions.length !== entries.length) return null;
  const changed: number[] = [];
  const changedPath = new Map<number, string>();
  let listedRanked = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const f = entryFile[i]!;
    if (f >= 0) listedRanked++;
    const described = scan.files.get(e.path);
    const version = described === undefined ? "" : described.skipped ? "-" : described.sig;
    if (entryStats[2 * i] === e.mtime && entryStats[2 * i + 1] === e.size && version === versions[i]) continue;
    // Ranked then and now, and not a chat file: anything else changes the list or the context.
    const rankedNow = described !== undefined && (chat.has(e.path) || (!described.skipped && described.sig !== emptySig));
    if (f < 0 && !rankedNow) continue;
    if (f < 0 || !rankedNow || chat.has(e.path) || changed.length >= QUICK_MAX_FILES) return null;
    changed.push(f);
    changedPath.set(f, e.path);
  }
  if (listedRanked + head.extra.length !== head.files || input.listing !== head.listing) return null;
  // The parts read so far, by kind and number, each read once: null when missing or of another generation.
  const parts = new Map<string, Packed[] | null>();
  const partOf = (kind: PartKind, p: number, arity: number): Packed[] | null => {
    const name = partName(kind, p);
    let part = parts.get(name);
    if (part === undefined) parts.set(name, (part = unpack<PartHead>(cache.getRankQuickPart(input.key, name), head.gen, arity)?.arrays ?? null));
    return part;
  };
  // Each changed file's tags now and as the kept state had them.
  const now = new Map<number, RankFile>();
  const newNames: { file: number; name: string }[] = [];
  const newKeys = new Map<number, number>();
  const refsNow = new Set<number>();
  const refChanged = new Set<number>();
  const info = new Map<number, { rank: number; out: number; node: boolean; fed: Int32Array; outs: Float64Array; selfAt: Int32Array; selfKey: Float64Array }>();
  /** Names a changed file no longer defines (each only that file's, and referenced by no one: checked below), by file. */
  const removed = new Map<number, Set<number>>();
  for (const f of changed) {
    const file = input.tagsOf(changedPath.get(f)!);
    if (!file) return null;
    now.set(f, file);
    const p = Math.floor(f / FILES_PER_PART);
    const part = partOf("files", p, 15);
    if (!part) return null;
    const [defStart, defKeys, refStart, refKeys, countBytes, fedStart, fedList, ranks, outWeight, isNode, outStart, outWeights, selfStart, selfAt, selfKey] = part as [Int32Array, Float64Array, Int32Array, Float64Array, Uint8Array, Int32Array, Int32Array, Float64Array, Float64Array, Uint8Array, Int32Array, Float64Array, Int32Array, Int32Array, Float64Array];
    const counts = new Float32Array(countBytes.buffer, countBytes.byteOffset, countBytes.byteLength >> 2);
    const at = f - p * FILES_PER_PART;
    if (at + 1 >= defStart.length) return null;
    info.set(f, { rank: ranks[at]!, out: outWeight[at]!, node: isNode[at] === 1, fed: fedList.subarray(fedStart[at]!, fedStart[at + 1]!), outs: outWeights.subarray(outStart[at]!, outStart[at + 1]!), selfAt: selfAt.subarray(selfStart[at]!, selfStart[at + 1]!), selfKey: selfKey.subarray(selfStart[at]!, selfStart[at + 1]!) });
    const oldDefs = new Set(defKeys.subarray(defStart[at]!, defStart[at + 1]!));
    const oldRefs = new Map<number, number>();
    for (let r = refStart[at]!; r < refStart[at + 1]!; r++) oldRefs.set(refKeys[r]!, r);
    const keys = file.defKeys?.length === file.defNames.length ? file.defKeys : Float64Array.from(file.defNames, identKey);
    const defsNow = new Set(keys);
    // A definition removed: only of a name this file alone defined and nobody references (its self-edge goes).
    for (const key of oldDefs) {
      if (defsNow.has(key)) continue;
      if (!removed.has(f)) removed.set(f, new Set());
      removed.get(f)!.add(key);
    }
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (oldDefs.has(key)) continue;
      const by = newKeys.get(key);
      // A new name two changed files define: two definers in one block.
      if (by !== undefined && by !== f) return null;
      if (by !== undefined) continue;
      newKeys.set(key, f);
      newNames.push({ file: f, name: file.defNames[i]! });
    }
    for (let q = 0; q + REF_STRIDE <= file.refs.length; q += REF_STRIDE) {
      const key = file.refs[q]!;
      refsNow.add(key);
      const r = oldRefs.get(key);
      if (r === undefined || counts[2 * r] !== file.refs[q + 1] || counts[2 * r + 1] !== file.refs[q + 2]) refChanged.add(key);
      oldRefs.delete(key);
    }
    for (const key of oldRefs.keys()) refChanged.add(key);
  }
  // A new name: never seen by the index (its block comes last) and referenced by no one.
  // A reference added, dropped or counted anew: only to a name nobody defines (no edge either way).
  const lookup = (key: number): { known: boolean; definers: number; referenced: boolean } | null => {
    let lo = 0;
    let hi = head.keyParts.length - 1;
    if (hi < 0 || key < head.keyParts[0]!) return { known: false, definers: 0, referenced: false };
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (head.keyParts[mid]! <= key) lo = mid;
      else hi = mid - 1;
    }
    const part = partOf("keys", lo, 3);
    if (!part) return null;
    const [keys, definers, referenced] = part as [Float64Array, Uint8Array, Uint8Array];
    let a = 0;
    let b = keys.length - 1;
    while (a <= b) {
      const mid = (a + b) >> 1;
      if (keys[mid] === key) return { known: true, definers: definers[mid]!, referenced: referenced[mid] === 1 };
      if (keys[mid]! < key) a = mid + 1;
      else b = mid - 1;
    }
    return { known: false, definers: 0, referenced: false };
  };
  for (const key of newKeys.keys()) {
    const found = lookup(key);
    if (!found || found.known || refsNow.has(key)) return null;
  }
  for (const key of refChanged) {
    const found = lookup(key);
    if (!found || found.definers > 0 || newKeys.has(key)) return null;
  }
  for (const keys of removed.values()) {
    for (const key of keys) {
      const found = lookup(key);
      if (!found || found.definers !== 1 || found.referenced || refsNow.has(key) || newKeys.has(key)) return null;
    }
  }
  // A removed name's self-edge leaves its file's out-edges: their weights summed again in the graph's
  // order without it. Each new name adds one self-edge, after every other block (a patch numbers new
  // names last), in the order a patch numbers them.
  const newOut = new Map<number, number>();
  for (const [file, keys] of removed) {
    const { outs, selfAt, selfKey } = info.get(file)!;
    const skip = new Set<number>();
    for (let k = 0; k < selfAt.length; k++) if (keys.has(selfKey[k]!)) skip.add(selfAt[k]!);
    let sum = 0;
    let left = 0;
    for (let e = 0; e < outs.length; e++) {
      if (skip.has(e)) continue;
      sum = sum + outs[e]!;
      left++;
    }
    // No out-edge left: the file may stop being a node.
    if (left === 0 && !newNames.some((n) => n.file === file)) return null;
    newOut.set(file, sum);
  }
  for (const { file } of newNames) {
    if (!info.get(file)!.node) return null;
    newOut.set(file, (newOut.get(file) ?? info.get(file)!.out) + SELF_EDGE);
  }
  // PageRank kept: the change moves it less than its own stopping criterion.
  let moved = 0;
  for (const f of newOut.keys()) moved += info.get(f)!.rank;
  if (!(ALPHA * head.change + 2 * ALPHA * moved < head.nodes * TOLERANCE)) return null;
  // The top definitions a file with a new out-weight feeds: ranked again from their edges, in order.
  const kept = slotFile.length;
  const decoder = new TextDecoder();
  const names = kept === 0 ? [] : decoder.decode(read.tail.subarray(0, head.namesBytes)).split("\n");
  const pathTable = kept === 0 ? [] : decoder.decode(read.tail.subarray(head.namesBytes)).split("\n");
  if (entryStart.length !== kept + 1 || names.length !== kept || slotPath.length !== kept || entryLines.length !== entryStart[kept]) return null;
  // A removed name's definition is no longer a candidate.
  const gone = new Uint8Array(kept);
  for (const [file, keys] of removed) for (let i = slotFile.indexOf(file); i >= 0; i = slotFile.indexOf(file, i + 1)) if (keys.has(identKey(names[i]!))) gone[i] = 1;
  // Every candidate not kept ranked at most `cut`; a file whose out-weight shrank (a self-edge removed) feeds
  // its definitions more: trusted now is only what ranks above `cut` plus the most that can add.
  let rise = 0;
  for (const [f, out] of newOut) if (out < info.get(f)!.out) rise += info.get(f)!.rank * (info.get(f)!.out / out - 1);
  const cut = head.cut === null ? -Infinity : rise === 0 ? head.cut : head.cut + rise * (1 + 1e-6) + Math.abs(head.cut) * 1e-12;
  const rankOf = slotRank.slice();
  const moving = new Set<number>();
  for (const f of newOut.keys()) {
    for (const i of info.get(f)!.fed) {
      if (gone[i]) continue;
      const p = Math.floor(i / SLOTS_PER_PART);
      const part = partOf("in", p, 4);
      if (!part) return null;
      const [start, src, term, out] = part as [Int32Array, Int32Array, Float64Array, Float64Array];
      const at = i - p * SLOTS_PER_PART;
      let rank = 0;
      for (let e = start[at]!; e < start[at + 1]!; e++) rank = rank + term[e]! / (newOut.get(src[e]!) ?? out[e]!);
      if (slotWanted[i] && rank > 0) rank = rank + 1;
      rankOf[i] = rank;
      moving.add(i);
    }
  }
  // A ranked file's path: a kept definition's from the table; another's through the listing (ranked files are listed in order).
  const pathOfFile = (f: number): string => (f >= listedRanked ? head.extra[f - listedRanked]! : entries[entryFile.indexOf(f)]!.path);
  type Item = { rank: number; file: number; path: string; name: string; slot: number };
  const itemOf = (i: number): Item => ({ rank: rankOf[i]!, file: slotFile[i]!, path: pathTable[slotPath[i]!]!, name: names[i]!, slot: i });
  // rank.ts's order: rank, then path, then name, each descending.
  const compare = (a: Item, b: Item) => b.rank - a.rank || cmp(b.path, a.path) || cmp(b.name, a.name);
  // The slots whose rank changed are taken out of the kept order and put back; the new names' slots put in.
  const placed: Item[] = [];
  for (const i of moving) if (rankOf[i] !== slotRank[i] && !gone[i]) placed.push(itemOf(i));
  const isMoving = gone;
  for (const item of placed) isMoving[item.slot] = 1;
  for (const { file, name } of newNames) {
    const rank = 0 + (info.get(file)!.rank * SELF_EDGE) / newOut.get(file)!;
    if (rank > cut) placed.push({ rank, file, path: pathOfFile(file), name, slot: -1 });
  }
  placed.sort(compare);
  // The kept order (a slot whose rank changed left out) merged with the placed slots, as rankGraph lists
  // them: a slot at a time until the limit; a changed file's lines from its tags now.
  const limit = request.limit ?? Infinity;
  const ranked: RankedEntry[] = [];
  const listedRanks: number[] = [];
  const isChanged = new Uint8Array(head.files);
  for (const f of now.keys()) isChanged[f] = 1;
  let next = 0;
  let p = 0;
  // The next placed slot's rank (-Infinity when none is left): a kept slot ranked above it is listed as kept.
  let bar = placed.length > 0 ? placed[0]!.rank : -Infinity;
  for (;;) {
    while (next < kept && isMoving[next]) next++;
    let item: Item | null = null;
    if (p < placed.length) {
      const r = next < kept ? rankOf[next]! : -Infinity;
      if (next >= kept || r < bar || (r === bar && compare(itemOf(next), placed[p]!) > 0)) item = placed[p]!;
    } else if (next >= kept) break;
    if (ranked.length >= limit) return { ranked, changed: changed.length, listedRanks };
    // Below the cut, definitions not kept may rank higher.
    const rank = item ? item.rank : rankOf[next]!;
    if (!(rank > cut)) return null;
    listedRanks.push(rank);
    if (item) {
      p++;
      bar = p < placed.length ? placed[p]!.rank : -Infinity;
      const tags = now.get(item.file);
      if (tags) {
        for (let i = 0; i < tags.defNames.length; i++) if (tags.defNames[i] === item.name) ranked.push({ path: item.path, name: item.name, line: tags.defLines[i]! });
      } else for (let e = entryStart[item.slot]!; e < entryStart[item.slot + 1]!; e++) ranked.push({ path: item.path, name: item.name, line: entryLines[e]! });
      continue;
    }
    const slot = next++;
    const path = pathTable[slotPath[slot]!]!;
    const name = names[slot]!;
    if (isChanged[slotFile[slot]!]) {
      const tags = now.get(slotFile[slot]!)!;
      for (let i = 0; i < tags.defNames.length; i++) if (tags.defNames[i] === name) ranked.push({ path, name, line: tags.defLines[i]! });
    } else {
      const end = entryStart[slot + 1]!;
      for (let e = entryStart[slot]!; e < end; e++) ranked.push({ path, name, line: entryLines[e]! });
    }
  }
  // Every candidate ranked and the limit not reached: then files by rank, then every other file by name (as rankGraph).
  if (ranked.length < limit && cut !== -Infinity) return null;
  const included = new Set(ranked.map((e) => e.path));
  for (const path of [...Array.from(byRank, pathOfFile), ...[...request.allFiles].sort()]) {
    if (ranked.length >= limit) break;
    if (included.has(path) || chat.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  return { ranked, changed: changed.length, listedRanks };
}
