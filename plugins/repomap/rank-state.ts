// The ranking's graph kept between builds: the identifier index, the edges and the
// PageRank vector of the last ranking, with each ranked file's signature. When a
// few files' tags changed (same files, same chat, imports and mentioned names), the
// graph is patched for the identifiers those files touch and PageRank restarts
// from the stored vector, instead of reading every file's tags, rebuilding the
// index and the graph and iterating from uniform. Kept in the session's memory and
// in the tag cache (one value per context), so a fresh process patches it too.
import type { TagCache } from "./cache.ts";
import { EdgeList, keyOrderOf, patchRankGraph, restoreIndex, slotsOf, type RankFile } from "./graph.ts";
import { rankingSignature } from "./parse.ts";
import { buildRankGraph, graphContext, rankGraph, withImportedNames, type RankedEntry, type RankedGraph, type RankGraph, type RankRequest } from "./rank.ts";
import { encodeQuick, quickRank } from "./rank-quick.ts";
import { decodeRankFile, type FileEntry, type RankSource, type ScanResult } from "./scan.ts";

/** Bump when the stored layout or what the graph is built from changes (also rank.ts LOW_VALUE_PATH and TEST_PATH: each file's factor `into` is stored). */
export const STATE_FORMAT = 8;
/** The signature of a file with no definitions and no references (not ranked unless a chat file). */
const EMPTY_SIG = rankingSignature([], "");
/** Up to this many changed files (or 5% of the files) the kept graph is patched; more are ranked from scratch. */
export const PATCH_MIN_FILES = 64;
/** A patched state is stored again once this many files changed since the stored copy (until then each run re-patches them). */
const SAVE_AFTER = 8;
/**
 * A state larger than this is kept in the session's memory only, not in the cache: about 14 MB
 * at 10k files, it would be some 150 MB, written twice (two contexts), at 100k. Such a repository's
 * fresh process ranks from all tags as before.
 */
export const STORE_MAX_BYTES = 32 * 1024 * 1024;

export interface RankState {
  /** What the edges were built with besides the tags (rankContextKey). */
  key: string;
  /**
   * Each ranked file's version, parallel to graph.paths: its ranking signature ("-"
   * skipped, "" for a file ranked without tags) and in `stats` the stat of its tags
   * (mtime and size; -1 twice without tags). A file whose lines moved keeps its
   * signature but not its stat: its lines are patched too. (Numbers, not text:
   * formatting 10k mtimes cost 20-40 ms of every changed build.)
   */
  sigs: string[];
  stats: Float64Array;
  graph: RankGraph;
  /** PageRank of each file (0: not in the graph). */
  ranks: Float64Array;
  /** Files patched since the copy in the cache. */
  unsaved: number;
  /** Whether graph.context was computed for this state's key (a state read ahead, by the session's warm-up, has none yet). */
  attached: boolean;
}

/** Where a session keeps its state (memory.ts MapMemory). */
export interface RankStateHolder {
  rankState: RankState | null;
}

export interface StateRankInput {
  /** What the edges depend on besides the tags: the chat files, their imports, the mentioned names, the weights, STATE_FORMAT (map.ts rankContextKey). */
  key: string;
  entries: readonly FileEntry[];
  /** The hash of the entries' paths in order (rank-quick.ts listingHash), which the kept ranking is checked by. */
  listing: string;
  scan: ScanResult;
  /** The ranking request (files come from the scan). */
  request: Omit<RankRequest, "files" | "warm">;
  cache: TagCache;
  /** Read and store the state in the cache (false: a cold build's provisional ranking, or no reuse). */
  store: boolean;
  memory?: RankStateHolder;
}

export interface StateRankResult {
  ranked: RankedEntry[];
  /** "patched": from a kept state; "built": from every file's tags. */
  how: "patched" | "built";
  changed: number;
  /** Patched from the kept ranking (rank-quick.ts): the stored graph not read, PageRank's vector kept. */
  kept?: boolean;
}

/**
 * Ranks the scanned files: patches the kept state when only a few files' tags
 * changed, else builds the graph from every file's tags (and keeps it).
 */
export function rankWithState(input: StateRankInput): StateRankResult {
  const { request, scan } = input;
  const key = input.key;
  let state = input.memory?.rankState?.key === key ? input.memory.rankState : null;
  if (!state && input.store) {
    // A fresh process: the kept ranking when the change moves no PageRank (rank-quick.ts), else the stored graph.
    const quick = quickRank({ key, listing: input.listing, cache: input.cache, entries: input.entries, scan, request, tagsOf: (path) => tagsOf(path, scan, input.cache) }, EMPTY_SIG);
    if (quick && quick !== "none") return { ranked: quick.ranked, how: "patched", changed: quick.changed, kept: true };
    state = loadState(input.cache, key, request);
    // A stored state without a kept ranking (another layout's): stored again with one.
    if (state && quick === "none") state.unsaved = SAVE_AFTER;
  }
  const listed = rankedList(input);
  if (state && !state.attached) attach(state, request);
  if (state && samePaths(state.graph.paths, listed.paths)) {
    const changed = new Map<number, RankFile>();
    const limit = Math.max(PATCH_MIN_FILES, Math.floor(listed.paths.length / 20));
    let usable = true;
    for (let f = 0; f < listed.paths.length && usable; f++) {
      if (state.sigs[f] === listed.sigs[f] && state.stats[2 * f] === listed.stats[2 * f] && state.stats[2 * f + 1] === listed.stats[2 * f + 1]) continue;
      const file = tagsOf(listed.paths[f]!, scan, input.cache);
      if (!file || changed.size >= limit) usable = false;
      else changed.set(f, withImportedNames(file, state.graph.importedNames.get(f)));
    }
    const patched = !usable ? null : changed.size === 0 ? state.graph : patch(state.graph, changed);
    if (patched) {
      const previous = state.ranks;
      const result = rankGraph(patched, request, (_, f) => (previous[f]! > 0 ? previous[f] : undefined));
      const { ranked, ranks } = result;
      keep(input, { key, sigs: listed.sigs, stats: listed.stats, graph: patched, ranks, unsaved: state.unsaved + changed.size, attached: true }, result);
      return { ranked, how: "patched", changed: changed.size };
    }
  }
  // From every file's tags, in listing order.
  const byPath = new Map<string, RankSource>();
  for (const source of scan.rankFiles()) byPath.set(source.file.path, source);
  const files: RankFile[] = [];
  const sigs: string[] = [];
  const stats: number[] = [];
  const chat = request.chatFiles;
  for (const entry of input.entries) {
    const source = byPath.get(entry.path);
    if (!source) continue;
    const { file, skipped } = source;
    // A chat file stays even without tags: its imports still link it to what it uses.
    if (!chat.has(file.path) && (skipped || (file.defNames.length === 0 && file.refs.length === 0))) continue;
    files.push(file);
    sigs.push(versionOf(scan, entry));
    stats.push(entry.mtime, entry.size);
  }
  const tagged = new Set(files.map((f) => f.path));
  for (const path of request.imports?.keys() ?? []) {
    if (tagged.has(path)) continue;
    tagged.add(path);
    files.push({ path, defNames: [], defLines: [], refs: [] });
    sigs.push("");
    stats.push(-1, -1);
  }
  const graph = buildRankGraph({ ...request, files });
  // In a session, the last ranking (of another context) is still a closer start than uniform.
  const previous = input.memory?.rankState ?? null;
  const warm = previous ? new Map(previous.graph.paths.map((path, f) => [path, previous.ranks[f]!])) : null;
  const result = rankGraph(graph, request, warm ? (path) => (warm.get(path)! > 0 ? warm.get(path) : undefined) : undefined);
  const { ranked, ranks } = result;
  keep(input, { key, sigs, stats: Float64Array.from(stats), graph, ranks, unsaved: Infinity, attached: true }, result);
  return { ranked, how: "built", changed: files.length };
}

function patch(graph: RankGraph, changed: Map<number, RankFile>): RankGraph | null {
  const patched = patchRankGraph(graph.index, graph.graph, graph.paths, graph.context, changed);
  return patched ? { ...graph, ...patched } : null;
}

/**
 * Keeps the state in the session's memory, and in the cache once it has drifted from the stored
 * copy, with its kept ranking (`ranked`: this state's ranking, for rank-quick.ts).
 */
function keep(input: StateRankInput, state: RankState, ranked: RankedGraph): void {
  if (!input.store) {
    if (input.memory) input.memory.rankState = null;
    return;
  }
  if (input.memory) input.memory.rankState = state;
  if (state.unsaved >= SAVE_AFTER) {
    // Each edge alone stores 20 bytes (source, target, weight, definer): a state past the cap is not encoded at all.
    const encoded = state.graph.graph.edges.count * 20 > STORE_MAX_BYTES ? null : encodeState(state);
    if (encoded && encoded.byteLength <= STORE_MAX_BYTES) input.cache.putRankState(state.key, encoded, quickOf(input, state, ranked));
    state.unsaved = 0;
  }
}

/** Definitions' lines a kept ranking covers beyond the request's limit: a later ranking that moves some down still fills its limit. */
const QUICK_SPARE_LINES = 512;
/**
 * The least limit a kept ranking is made for: that of the largest map a context window's share
 * gives (index.ts MAP_BUDGET, 4,096 tokens: 8,192 lines). A kept ranking made for a smaller
 * limit is none to a larger one, so builds of two budgets in turn (a session at 1,024 tokens,
 * then `coder map` at 4,096) each stored the state again (0.4-0.8 s and up to ~240 MB peak at 10k
 * files); made for this one, it serves both.
 */
export const QUICK_MIN_LIMIT = 8_192;

/** The kept ranking of a state being stored (rank-quick.ts), or null (no limit: nothing to cut at). */
function quickOf(input: StateRankInput, state: RankState, ranked: RankedGraph): ReturnType<typeof encodeQuick> {
  if (input.request.limit === undefined || !Number.isFinite(input.request.limit)) return null;
  const limit = Math.max(input.request.limit, QUICK_MIN_LIMIT);
  const versions = input.entries.map((entry) => versionOf(input.scan, entry));
  return encodeQuick(input.entries, input.listing, versions, state, ranked, input.request, Math.max(limit + QUICK_SPARE_LINES, Math.ceil(limit * 1.25)));
}

/** A file's ranking signature as the kept graph records it ("-" skipped; "" when not described); its stat is kept beside it. */
function versionOf(scan: ScanResult, entry: FileEntry): string {
  const described = scan.files.get(entry.path);
  if (!described) return "";
  return described.skipped ? "-" : described.sig;
}

/** The files a ranking covers, in listing order, as the scan describes them (without reading their tags). */
function rankedList(input: StateRankInput): { paths: string[]; sigs: string[]; stats: Float64Array } {
  const paths: string[] = [];
  const sigs: string[] = [];
  const stats = new Float64Array(2 * (input.entries.length + (input.request.imports?.size ?? 0)));
  const chat = input.request.chatFiles;
  const seen = new Set<string>();
  for (const entry of input.entries) {
    const described = input.scan.files.get(entry.path);
    if (!described) continue;
    if (!chat.has(entry.path) && (described.skipped || described.sig === EMPTY_SIG)) continue;
    stats[2 * paths.length] = entry.mtime;
    stats[2 * paths.length + 1] = entry.size;
    paths.push(entry.path);
    sigs.push(versionOf(input.scan, entry));
    seen.add(entry.path);
  }
  for (const path of input.request.imports?.keys() ?? []) {
    if (seen.has(path)) continue;
    seen.add(path);
    stats[2 * paths.length] = -1;
    stats[2 * paths.length + 1] = -1;
    paths.push(path);
    sigs.push("");
  }
  return { paths, sigs, stats: stats.subarray(0, 2 * paths.length) };
}

/** A changed file's tags: parsed now, else from the cache. */
function tagsOf(path: string, scan: ScanResult, cache: TagCache): RankFile | null {
  if (!scan.files.has(path)) return { path, defNames: [], defLines: [], refs: [] };
  const row = scan.fresh.get(path) ?? cache.rankRow(path);
  if (!row) return null;
  if (row.skipped) return { path, defNames: [], defLines: [], refs: [] };
  return decodeRankFile(row);
}

function samePaths(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ─── Stored form: a JSON head (paths, signatures, names) and typed arrays, 8-byte aligned ───

type ArrayField = "stats" | "keyOrder" | "into" | "pathOrder" | "keys" | "definerStart" | "definerList" | "definerLineStart" | "definerLines" | "referencerStart" | "referencerFile" | "referencerRefs" | "referencerMembers" | "edgeStart" | "src" | "dst" | "weight" | "definer" | "ranks";
const INT_FIELDS: readonly ArrayField[] = ["keyOrder", "pathOrder", "definerStart", "definerList", "definerLineStart", "definerLines", "referencerStart", "referencerFile", "edgeStart", "src", "dst", "definer"];
/** Reference counts: whole numbers, stored as 32-bit floats when each one is exactly that (half the bytes to read). */
const COUNT_FIELDS: readonly ArrayField[] = ["referencerRefs", "referencerMembers"];
const FIELDS: readonly ArrayField[] = ["stats", "keyOrder", "into", "pathOrder", "keys", "definerStart", "definerList", "definerLineStart", "definerLines", "referencerStart", "referencerFile", "referencerRefs", "referencerMembers", "edgeStart", "src", "dst", "weight", "definer", "ranks"];

interface StoredHead {
  format: number;
  key: string;
  anyReference: boolean;
  /** Whether COUNT_FIELDS are stored as 32-bit floats. */
  countsF32: boolean;
  /** Element counts of FIELDS, then byte lengths of the paths, signatures and names ("\n"-joined UTF-8: far cheaper to read than JSON). */
  lengths: number[];
  texts: number[];
}

/** The stored form; null when a path holds a line break (listed paths are "\n"-joined). */
export function encodeState(state: RankState): Uint8Array | null {
  if (state.graph.paths.some((path) => path.includes("\n"))) return null;
  const { index, graph } = state.graph;
  const count = graph.edges.count;
  const arrays: Record<ArrayField, Int32Array | Float64Array | Float32Array> = {
    stats: state.stats,
    // The ids by key: read back, keys are found by binary search (no key index rebuilt).
    keyOrder: keyOrderOf(index),
    // What the context gives each file (a function of the paths and the key): not recomputed when read.
    into: state.graph.context.into.length === state.graph.paths.length ? state.graph.context.into : new Float64Array(0),
    pathOrder: graph.pathOrder ?? new Int32Array(0),
    keys: index.keys,
    definerStart: index.definerStart,
    definerList: index.definerList,
    definerLineStart: index.definerLineStart,
    definerLines: index.definerLines,
    referencerStart: index.referencerStart,
    referencerFile: index.referencerFile,
    referencerRefs: index.referencerRefs,
    referencerMembers: index.referencerMembers,
    edgeStart: graph.edgeStart,
    src: graph.edges.src.subarray(0, count),
    dst: graph.edges.dst.subarray(0, count),
    weight: graph.edges.weight.subarray(0, count),
    definer: graph.edges.definer.subarray(0, count),
    ranks: state.ranks,
  };
  const countsF32 = COUNT_FIELDS.every((f) => (arrays[f] as Float64Array).every((n) => Math.fround(n) === n));
  if (countsF32) for (const f of COUNT_FIELDS) arrays[f] = Float32Array.from(arrays[f] as Float64Array);
  const encoder = new TextEncoder();
  const texts = [state.graph.paths, state.sigs, index.names].map((list) => encoder.encode(list.join("\n")));
  const head: StoredHead = {
    format: STATE_FORMAT,
    key: state.key,
    anyReference: index.anyReference,
    countsF32,
    lengths: FIELDS.map((f) => arrays[f].length),
    texts: texts.map((t) => t.length),
  };
  const headBytes = encoder.encode(JSON.stringify(head));
  const headSpace = align8(8 + headBytes.length);
  let size = headSpace;
  for (const t of texts) size += align8(t.length);
  for (const f of FIELDS) size += align8(arrays[f].byteLength);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, headBytes.length, true);
  out.set(headBytes, 8);
  let at = headSpace;
  for (const t of texts) {
    out.set(t, at);
    at += align8(t.length);
  }
  for (const f of FIELDS) {
    const a = arrays[f];
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += align8(a.byteLength);
  }
  return out;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

/** The stored state of this context, or null (missing, unreadable, another format). */
function loadState(cache: TagCache, key: string, request: Omit<RankRequest, "files" | "warm">): RankState | null {
  const blob = cache.getRankState(key);
  if (!blob) return null;
  try {
    return decodeState(blob, key, request);
  } catch {
    return null;
  }
}

/**
 * The state stored last, read ahead (a session's warm-up: the map after the first
 * edit then reads nothing); its edges' context is attached when a build of that
 * context uses it.
 */
export function loadLatestState(cache: TagCache): RankState | null {
  const latest = cache.latestRankState();
  if (!latest) return null;
  try {
    return decodeState(latest.state, latest.key, null);
  } catch {
    return null;
  }
}

/** Computes what the edges were built with (the key says it is this request's context). */
function attach(state: RankState, request: Pick<RankRequest, "chatFiles" | "mentionedIdents" | "imports">): void {
  const stored = state.graph.context.into;
  Object.assign(state.graph, graphContext(request, state.graph.paths, stored.length === state.graph.paths.length ? stored : undefined));
  state.attached = true;
}

export function decodeState(blob: Uint8Array, key: string, request: Pick<RankRequest, "chatFiles" | "mentionedIdents" | "imports"> | null): RankState | null {
  const bytes = blob.byteOffset % 8 === 0 ? blob : blob.slice();
  if (bytes.length < 8) return null;
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(0, true);
  const head = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headLength))) as StoredHead;
  if (head.format !== STATE_FORMAT || head.key !== key || head.lengths.length !== FIELDS.length || head.texts.length !== 3) return null;
  let at = align8(8 + headLength);
  const decoder = new TextDecoder();
  // Counts from the arrays: paths (and signatures) one per rank, names one per identifier.
  const counts = [head.lengths[FIELDS.indexOf("ranks")]!, head.lengths[FIELDS.indexOf("ranks")]!, head.lengths[FIELDS.indexOf("definerStart")]! - 1];
  const [paths, sigs, names] = head.texts.map((length, i) => {
    const text = decoder.decode(bytes.subarray(at, at + length));
    at += align8(length);
    return counts[i] === 0 ? [] : text.split("\n");
  }) as [string[], string[], string[]];
  const arrays = {} as Record<ArrayField, Int32Array | Float64Array>;
  FIELDS.forEach((f, i) => {
    const length = head.lengths[i]!;
    const f32 = head.countsF32 && COUNT_FIELDS.includes(f);
    const bytesPer = INT_FIELDS.includes(f) || f32 ? 4 : 8;
    if (at + length * bytesPer > bytes.length) throw new Error("truncated rank state");
    const offset = bytes.byteOffset + at;
    // Counts widened by the typed arrays' own conversion.
    arrays[f] = f32 ? new Float64Array(new Float32Array(bytes.buffer, offset, length)) : bytesPer === 4 ? new Int32Array(bytes.buffer, offset, length) : new Float64Array(bytes.buffer, offset, length);
    at += align8(length * bytesPer);
  });
  const ints = (f: ArrayField) => arrays[f] as Int32Array;
  const floats = (f: ArrayField) => arrays[f] as Float64Array;
  const identCount = names.length;
  if (sigs.length !== paths.length || ints("definerStart").length !== identCount + 1 || ints("edgeStart").length !== identCount + 1 || floats("ranks").length !== paths.length || floats("stats").length !== 2 * paths.length) return null;
  const index = restoreIndex({
    names,
    keys: floats("keys"),
    definerStart: ints("definerStart"),
    definerList: ints("definerList"),
    definerLineStart: ints("definerLineStart"),
    definerLines: ints("definerLines"),
    referencerStart: ints("referencerStart"),
    referencerFile: ints("referencerFile"),
    referencerRefs: floats("referencerRefs"),
    referencerMembers: floats("referencerMembers"),
    anyReference: head.anyReference,
  }, ints("keyOrder"));
  const edges = new EdgeList(0);
  edges.src = ints("src");
  edges.dst = ints("dst");
  edges.weight = floats("weight");
  edges.definer = ints("definer");
  edges.count = edges.src.length;
  const into = floats("into").length === paths.length ? floats("into") : undefined;
  // Until attached, an empty context but for the stored factors (nothing else reads it before).
  const { context, importedNames, importedFiles } = request ? graphContext(request, paths, into) : { context: { inChat: new Uint8Array(0), mentionedIdents: new Set<string>(), imports: new Map(), into: into ?? new Float64Array(0) }, importedNames: new Map(), importedFiles: new Set<string>() };
  const graph: RankGraph = { paths, index, graph: { edges, edgeStart: ints("edgeStart"), pathOrder: ints("pathOrder").length === paths.length ? ints("pathOrder") : null, ...slotsOf(index) }, context, importedNames, importedFiles };
  return { key, sigs, stats: floats("stats"), graph, ranks: floats("ranks"), unsaved: 0, attached: request !== null };
}
