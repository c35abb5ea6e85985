// The reference graph of the repo map (pure): identifiers interned to integers,
// definers and referencers of each identifier in compressed rows, and the
// weighted edges from referencing to defining files, with Aider's weights and a
// bound on what one very common name may add.
import { identKey, REF_STRIDE } from "./tags.ts";

export interface RankFile {
  path: string;
  /** Definition names and their 0-based lines (parallel arrays; a name may repeat). */
  defNames: readonly string[];
  defLines: readonly number[];
  /** Referenced identifiers (unique) as [identKey(name), plain count, member count] triples (tags.ts REF_STRIDE). */
  refs: ArrayLike<number>;
  /** identKey of each definition name (filled in by the ranking on first use). */
  defKeys?: Float64Array;
}

/**
 * How many edges one identifier may add. Aider links every referencing file to
 * every defining file, so a name defined and used everywhere (`get`, `init`)
 * makes the graph grow with the square of the files. Past this bound each
 * referencing file links to its nearest definers by path instead.
 */
export const EDGES_PER_IDENT = 2000;

export function identWeight(ident: string, definerCount: number, mentioned: boolean): number {
  let mul = 1;
  if (mentioned) mul *= 10;
  if (ident.length >= 8 && isCompound(ident)) mul *= 10;
  if (ident.startsWith("_")) mul *= 0.1;
  if (definerCount > 5) mul *= 0.1;
  return mul;
}

/** A snake_case, kebab-case or camelCase name (one character scan: this runs for every identifier). */
function isCompound(ident: string): boolean {
  let upper = false;
  let lower = false;
  let joiner = false;
  for (let i = 0; i < ident.length; i++) {
    const c = ident.charCodeAt(i);
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
    else if (c === 95 || c === 45) joiner = true;
  }
  return (upper && lower) || (joiner && (upper || lower));
}

/** A file's definition names as identKeys, computed once per RankFile (a session keeps its RankFiles). */
function defKeysOf(file: RankFile): Float64Array {
  if (!file.defKeys || file.defKeys.length !== file.defNames.length) file.defKeys = Float64Array.from(file.defNames, identKey);
  return file.defKeys;
}

/**
 * Every identifier defined or referenced somewhere, with its defining files (and
 * the lines of each definition) and its referencing files, in compressed rows
 * ordered by file. Identifiers only referenced (`names[id]` is "") add no edge;
 * they are kept so that a file that starts defining one is linked to its
 * referencers without reading every file again (see patchRankGraph).
 */
export interface IdentIndex {
  /** The defined spelling of each identifier ("" while it is only referenced). */
  names: string[];
  /** identKey of each identifier. */
  keys: Float64Array;
  /** The id of a defined identifier, or -1. */
  idOf(name: string): number;
  definerStart: Int32Array;
  definerList: Int32Array;
  /** Lines of definer entry e (its name may be defined more than once in the file) are definerLines[definerLineStart[e] .. definerLineStart[e + 1]]. */
  definerLineStart: Int32Array;
  definerLines: Int32Array;
  referencerStart: Int32Array;
  referencerFile: Int32Array;
  /** How often each referencing file references the identifier plainly or qualified, and as a member of an unknown receiver. */
  referencerRefs: Float64Array;
  referencerMembers: Float64Array;
  /** Whether any file references a defined identifier (else every definer stands as its own referencer, as Aider does). */
  anyReference: boolean;
  /** Keys → ids (kept for patching). */
  lookup: KeyLookup;
}

/** Identifier keys → ids (KeyIndex; SortedKeys for a stored index). */
export interface KeyLookup {
  /** The id of `key`, or -1. */
  find(key: number): number;
  /** Adds `key` as `id` (absent keys only). */
  insert(key: number, id: number): void;
}

/** One identifier's rows: definers (ascending file) with their lines, referencers (ascending file) with their counts. */
interface IdentRows {
  definers: number[];
  /**
   * Each definer's lines: an unchanged file's as its range in the old index's definerLines
   * (lineFrom .. lineTo; no copy per entry: rows of common names hold thousands), a changed
   * file's (lineFrom -1) in `fresh`.
   */
  lineFrom: number[];
  lineTo: number[];
  fresh: Map<number, number[]>;
  referencers: Int32Array;
  refs: Float64Array;
  members: Float64Array;
}

/** A patch's row of one identifier before its referencers are assembled: the old entries' range, and the changed files' new entries. */
interface PendingRows extends Omit<IdentRows, "referencers" | "refs" | "members"> {
  from: number;
  to: number;
  added: { file: number; refs: number; members: number }[];
}

export function indexIdentifiers(files: readonly RankFile[]): IdentIndex {
  let totalDefs = 0;
  let totalRefs = 0;
  for (const file of files) {
    totalDefs += file.defNames.length;
    totalRefs += Math.floor(file.refs.length / REF_STRIDE);
  }
  const lookup = new KeyIndex(totalDefs + totalRefs);
  const names: string[] = [];
  const keyList: number[] = [];
  const intern = (key: number, name: string): number => {
    const id = lookup.get(key, names.length);
    if (id === names.length) {
      names.push(name);
      keyList.push(key);
    } else if (name && !names[id]) names[id] = name;
    return id;
  };
  // Definitions: each (file, identifier) once, its lines in the file's order.
  const defIdent = new Int32Array(totalDefs);
  const maxIds = totalDefs + totalRefs + 1;
  const lastDefiner = new Int32Array(maxIds).fill(-1);
  const definerCount = new Int32Array(maxIds);
  let d = 0;
  for (let f = 0; f < files.length; f++) {
    const defNames = files[f]!.defNames;
    const keys = defKeysOf(files[f]!);
    for (let i = 0; i < defNames.length; i++, d++) {
      const id = intern(keys[i]!, defNames[i]!);
      defIdent[d] = id;
      if (lastDefiner[id] !== f) {
        lastDefiner[id] = f;
        definerCount[id] = definerCount[id]! + 1;
      }
    }
  }
  // References (every referenced identifier, defined or not).
  const refIdent = new Int32Array(totalRefs);
  let r = 0;
  for (let f = 0; f < files.length; f++) {
    const refs = files[f]!.refs;
    for (let p = 0; p + REF_STRIDE <= refs.length; p += REF_STRIDE, r++) refIdent[r] = intern(refs[p]!, "");
  }
  const identCount = names.length;
  const referencerCount = new Int32Array(identCount);
  let anyReference = false;
  for (let i = 0; i < r; i++) {
    const id = refIdent[i]!;
    referencerCount[id] = referencerCount[id]! + 1;
    if (definerCount[id]! > 0) anyReference = true;
  }

  const definerStart = new Int32Array(identCount + 1);
  for (let id = 0; id < identCount; id++) definerStart[id + 1] = definerStart[id]! + definerCount[id]!;
  const entryCount = definerStart[identCount]!;
  const definerList = new Int32Array(entryCount);
  const defEntry = new Int32Array(totalDefs);
  const lineCount = new Int32Array(entryCount + 1);
  const fill = definerStart.slice(0, identCount);
  const lastEntry = new Int32Array(identCount);
  lastDefiner.fill(-1);
  d = 0;
  for (let f = 0; f < files.length; f++) {
    const n = files[f]!.defNames.length;
    for (let i = 0; i < n; i++, d++) {
      const id = defIdent[d]!;
      if (lastDefiner[id] !== f) {
        lastDefiner[id] = f;
        lastEntry[id] = fill[id]!;
        definerList[fill[id]!++] = f;
      }
      defEntry[d] = lastEntry[id]!;
      lineCount[lastEntry[id]!] = lineCount[lastEntry[id]!]! + 1;
    }
  }
  const definerLineStart = new Int32Array(entryCount + 1);
  for (let e = 0; e < entryCount; e++) definerLineStart[e + 1] = definerLineStart[e]! + lineCount[e]!;
  const definerLines = new Int32Array(totalDefs);
  const lineFill = definerLineStart.slice(0, entryCount);
  d = 0;
  for (let f = 0; f < files.length; f++) {
    const lines = files[f]!.defLines;
    for (let i = 0; i < lines.length; i++, d++) definerLines[lineFill[defEntry[d]!]!++] = lines[i]!;
  }

  const referencerStart = new Int32Array(identCount + 1);
  let referencerFile: Int32Array;
  let referencerRefs: Float64Array;
  let referencerMembers: Float64Array;
  if (anyReference) {
    for (let id = 0; id < identCount; id++) referencerStart[id + 1] = referencerStart[id]! + referencerCount[id]!;
    referencerFile = new Int32Array(referencerStart[identCount]!);
    referencerRefs = new Float64Array(referencerStart[identCount]!);
    referencerMembers = new Float64Array(referencerStart[identCount]!);
    const at = referencerStart.slice(0, identCount);
    r = 0;
    for (let f = 0; f < files.length; f++) {
      const refs = files[f]!.refs;
      for (let p = 0; p + REF_STRIDE <= refs.length; p += REF_STRIDE, r++) {
        const id = refIdent[r]!;
        referencerFile[at[id]!] = f;
        referencerMembers[at[id]!] = refs[p + 2]!;
        referencerRefs[at[id]!++] = refs[p + 1]!;
      }
    }
  } else {
    // No reference to anything defined: every definer references its own names once (as Aider does).
    referencerStart.set(definerStart);
    referencerFile = definerList.slice();
    referencerRefs = new Float64Array(entryCount).fill(1);
    referencerMembers = new Float64Array(entryCount);
  }
  return makeIndex({ names, keys: Float64Array.from(keyList), definerStart, definerList, definerLineStart, definerLines, referencerStart, referencerFile, referencerRefs, referencerMembers, anyReference, lookup });
}

function makeIndex(fields: Omit<IdentIndex, "idOf">): IdentIndex {
  const { lookup, definerStart } = fields;
  return {
    ...fields,
    idOf(name: string): number {
      const id = lookup.find(identKey(name));
      return id >= 0 && id + 1 < definerStart.length && definerStart[id + 1]! > definerStart[id]! ? id : -1;
    },
  };
}

/** The key index of stored keys (a stored index keeps only the keys). */
export function lookupOf(keys: Float64Array, spare = 0): KeyIndex {
  const lookup = new KeyIndex(keys.length + spare);
  for (let id = 0; id < keys.length; id++) lookup.get(keys[id]!, id);
  return lookup;
}

/**
 * An index from stored rows (rank-state.ts), its keys found through their stored order
 * (`keyOrder`: ids sorted by key) when it is one, else by a key index rebuilt from them
 * (~15-30 ms at 70k keys in a fresh process).
 */
export function restoreIndex(fields: Omit<IdentIndex, "idOf" | "lookup">, keyOrder?: Int32Array): IdentIndex {
  const lookup = keyOrder && keyOrder.length === fields.keys.length ? new SortedKeys(fields.keys, keyOrder) : lookupOf(fields.keys);
  return makeIndex({ ...fields, lookup });
}

/** An index's ids sorted by key, to store (restoreIndex reads keys through it). */
export function keyOrderOf(index: Pick<IdentIndex, "keys" | "lookup">): Int32Array {
  const sorted = index.keys.slice().sort();
  return Int32Array.from(sorted, (key) => index.lookup.find(key));
}

/** Keys found by binary search in their stored order; keys added later (a patch's new names) in a small KeyIndex. */
export class SortedKeys implements KeyLookup {
  readonly #keys: Float64Array;
  readonly #order: Int32Array;
  #added: KeyIndex | null = null;

  constructor(keys: Float64Array, order: Int32Array) {
    this.#keys = keys;
    this.#order = order;
  }

  find(key: number): number {
    const keys = this.#keys;
    const order = this.#order;
    let lo = 0;
    let hi = order.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = keys[order[mid]!]!;
      if (at === key) return order[mid]!;
      if (at < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return this.#added ? this.#added.find(key) : -1;
  }

  insert(key: number, id: number): void {
    (this.#added ??= new KeyIndex(16)).insert(key, id);
  }
}

/**
 * Edge weights beyond Aider's (see the README's "Ranking"; measured with the
 * repomap-quality bench section).
 */
export const WEIGHTS = {
  /** A reference from a chat file (Aider's ×50). */
  chat: 50,
  /** A chat file's reference resolved through its imports: edges only to the imported definers, ×this. */
  imported: 10,
  /** A chat file's reference to a name none of its imports defines (when its imports are known): a global, a built-in, a guess. */
  unresolved: 0.1,
  /** A reference as a member of an unknown receiver (`x.get()`), against a plain or qualified one. */
  member: 0.1,
  /** Edges into tests, fixtures, vendored and build output (when no chat file is a test). */
  lowValue: 0.1,
  /** Whether the definitions a chat file imports by name are listed first (off only to measure the weights alone). */
  importedFirst: true,
};

/** What the edges depend on besides the identifiers. */
export interface GraphContext {
  /** 1 for chat files. */
  inChat: Uint8Array;
  mentionedIdents: ReadonlySet<string>;
  /** Per chat file (by index), the files it imports, when its imports were read. */
  imports: ReadonlyMap<number, ReadonlySet<number>>;
  /** Per file, a factor on the edges into it (tests, vendored code: low). */
  into: Float64Array;
}

/**
 * The graph's edges, grouped by identifier: those of `id` are edgeStart[id] ..
 * edgeStart[id + 1] - 1 (so that a change to one identifier's rows replaces only
 * its block). Each edge feeds one slot, a (defining file, identifier) pair:
 * slotBase[id] + the edge's `definer` (its position in the identifier's definer row).
 */
export interface DefinitionGraph {
  edges: EdgeList;
  edgeStart: Int32Array;
  /** Each file's place in path order, when the edges needed it (kept for patching). */
  pathOrder: Int32Array | null;
  /** Slots of identifier `id` are slotBase[id] .. slotBase[id + 1] - 1, one per definer in definerList order: slotBase is the index's definerStart, so a slot is its definer entry (rank.ts relies on it). */
  slotBase: Int32Array;
  slotCount: number;
}

/** Per-build scratch of the edge builder: each file's place in path order (for the bounded identifiers' nearest definers), computed when first needed. */
class EdgeScratch {
  #order: Int32Array | null;
  readonly importedDefiners: number[] = [];
  readonly #paths: readonly string[];

  constructor(paths: readonly string[], order: Int32Array | null = null) {
    this.#paths = paths;
    this.#order = order;
  }

  /** The order if it was needed (or given). */
  get computedOrder(): Int32Array | null {
    return this.#order;
  }

  get order(): Int32Array {
    if (!this.#order) {
      const paths = this.#paths;
      const order = new Int32Array(paths.length);
      const sorted = paths.map((_, i) => i).sort((a, b) => cmp(paths[a]!, paths[b]!));
      sorted.forEach((file, place) => (order[file] = place));
      this.#order = order;
    }
    return this.#order;
  }
}

/** How many edges identifier `id` adds (an estimate when a chat file's imports are involved). */
function edgeEstimate(index: IdentIndex, id: number): number {
  const definers = index.definerStart[id + 1]! - index.definerStart[id]!;
  const referencers = index.referencerStart[id + 1]! - index.referencerStart[id]!;
  if (referencers === 0) return definers;
  if (definers > 5 && referencers * definers > EDGES_PER_IDENT) return referencers * Math.min(definers, Math.max(1, Math.floor(EDGES_PER_IDENT / referencers)));
  return referencers * definers;
}

/** One slot per definer entry, in definer order: the slots of an identifier start where its definer row does. */
export function slotsOf(index: Pick<IdentIndex, "definerStart">): { slotBase: Int32Array; slotCount: number } {
  return { slotBase: index.definerStart, slotCount: index.definerStart[index.definerStart.length - 1]! };
}

export function buildGraph(index: IdentIndex, paths: readonly string[], context: GraphContext): DefinitionGraph {
  const identCount = index.names.length;
  // Count the edges first so the edge arrays are usually allocated once (a chat
  // file's imports may add more: the list then grows).
  let edgeCount = 0;
  for (let id = 0; id < identCount; id++) edgeCount += edgeEstimate(index, id);
  const edges = new EdgeList(edgeCount);
  const edgeStart = new Int32Array(identCount + 1);
  const scratch = new EdgeScratch(paths);
  for (let id = 0; id < identCount; id++) {
    edgeStart[id] = edges.count;
    identEdges(id, index, paths, context, edges, scratch);
  }
  edgeStart[identCount] = edges.count;
  return { edges, edgeStart, pathOrder: scratch.computedOrder, ...slotsOf(index) };
}

/** The edges of one identifier, from its rows alone (and the context). */
function identEdges(id: number, index: IdentIndex, paths: readonly string[], context: GraphContext, edges: EdgeList, scratch: EdgeScratch): void {
  const { definerStart, definerList, referencerStart, referencerFile, referencerRefs, referencerMembers } = index;
  const { inChat, mentionedIdents, imports, into } = context;
  const defining = definerList.subarray(definerStart[id]!, definerStart[id + 1]!);
  if (defining.length === 0) return;
  if (referencerStart[id + 1]! === referencerStart[id]!) {
    // Defined, never referenced: a small self-edge keeps it in the ranking.
    for (let k = 0; k < defining.length; k++) edges.add(defining[k]!, defining[k]!, 0.1, k);
    return;
  }
  const referencers = referencerFile.subarray(referencerStart[id]!, referencerStart[id + 1]!);
  const counts = referencerRefs.subarray(referencerStart[id]!, referencerStart[id + 1]!);
  const members = referencerMembers.subarray(referencerStart[id]!, referencerStart[id + 1]!);
  const ident = index.names[id]!;
  const mentioned = mentionedIdents.has(ident);
  const mul = identWeight(ident, defining.length, mentioned);
  const bounded = defining.length > 5 && referencers.length * defining.length > EDGES_PER_IDENT;
  const perReferencer = Math.max(1, Math.floor(EDGES_PER_IDENT / referencers.length));
  // Bounded: definer positions in path order, for the nearest definers by path.
  let byPath: number[] = [];
  let sortedDefiners: number[] = [];
  if (bounded) {
    const order = scratch.order;
    byPath = Array.from(defining, (_, k) => k).sort((a, b) => order[defining[a]!]! - order[defining[b]!]!);
    sortedDefiners = byPath.map((k) => defining[k]!);
  }
  const importedDefiners = scratch.importedDefiners;
  for (let r = 0; r < referencers.length; r++) {
    const referencer = referencers[r]!;
    // Only member calls of a common name (`x.get()` with `get` defined in many
    // files), outside the chat: they say nothing about which definer is meant.
    if (counts[r] === 0 && bounded && !inChat[referencer]) continue;
    const imported = inChat[referencer] ? imports.get(referencer) : undefined;
    let factor = inChat[referencer] ? WEIGHTS.chat : 1;
    if (imported) {
      // Resolved through the chat file's imports: only the imported definers, however common the
      // name; a name the chat file defines itself is its own (no edge to another file's).
      importedDefiners.length = 0;
      let local = false;
      for (let k = 0; k < defining.length; k++) {
        if (defining[k] === referencer) local = true;
        else if (imported.has(defining[k]!)) importedDefiners.push(k);
      }
      if (local && importedDefiners.length === 0) continue;
      if (importedDefiners.length > 0) {
        const weight = identWeight(ident, importedDefiners.length, mentioned) * factor * WEIGHTS.imported * Math.sqrt(counts[r]! + members[r]!);
        for (const k of importedDefiners) edges.add(referencer, defining[k]!, weight, k);
        continue;
      }
      factor *= WEIGHTS.unresolved;
    }
    const weight = mul * factor * (Math.sqrt(counts[r]!) + WEIGHTS.member * Math.sqrt(members[r]!));
    if (bounded) {
      for (const at of nearestByPath(paths, sortedDefiners, paths[referencer]!, perReferencer)) {
        const k = byPath[at]!;
        edges.add(referencer, defining[k]!, weight * into[defining[k]!]!, k);
      }
    } else {
      for (let k = 0; k < defining.length; k++) edges.add(referencer, defining[k]!, weight * into[defining[k]!]!, k);
    }
  }
}

/** Up to this many changed files, a patch finds their old entries by one native search per file and array. */
const NATIVE_SEARCH_FILES = 8;

/** A changed file's tags, by its position in the ranked files (the list itself unchanged). */
export type ChangedFiles = ReadonlyMap<number, RankFile>;

/**
 * Brings an index and its graph up to date after some files' tags changed (the
 * list of files and the context the same): only the identifiers those files
 * define or reference, before or after, get new rows and new edges; every other
 * identifier's rows and edges are copied. The result has the same rows and, per
 * identifier, the same edges in the same order as indexIdentifiers + buildGraph
 * over the new tags (identifiers new to the index are numbered after the others,
 * which changes nothing but the order of the blocks). Null when the change turns
 * the "no reference at all" case on or off (then rebuild).
 */
export function patchRankGraph(index: IdentIndex, graph: DefinitionGraph, paths: readonly string[], context: GraphContext, changed: ChangedFiles): { index: IdentIndex; graph: DefinitionGraph } | null {
  if (!index.anyReference) return null;
  const isChanged = new Uint8Array(paths.length);
  for (const f of changed.keys()) isChanged[f] = 1;
  const pending = new Map<number, PendingRows>();
  const rowsOf = (id: number): PendingRows => {
    let row = pending.get(id);
    if (!row) {
      const old = id < index.names.length;
      row = { definers: [], lineFrom: [], lineTo: [], fresh: new Map(), from: old ? index.referencerStart[id]! : 0, to: old ? index.referencerStart[id + 1]! : 0, added: [] };
      const { definerStart, definerList, definerLineStart } = index;
      if (old) {
        // The unchanged files' entries (the changed files' are added below).
        for (let e = definerStart[id]!; e < definerStart[id + 1]!; e++) {
          if (isChanged[definerList[e]!]) continue;
          row.definers.push(definerList[e]!);
          row.lineFrom.push(definerLineStart[e]!);
          row.lineTo.push(definerLineStart[e + 1]!);
        }
      }
      pending.set(id, row);
    }
    return row;
  };
  // What the changed files defined and referenced before.
  if (changed.size <= NATIVE_SEARCH_FILES) {
    // A few files: the typed arrays' own search (a loop here would run cold in a fresh process, ~20 ms).
    for (const f of changed.keys()) {
      for (let e = index.definerList.indexOf(f); e >= 0; e = index.definerList.indexOf(f, e + 1)) rowsOf(identAt(index.definerStart, e));
      for (let e = index.referencerFile.indexOf(f); e >= 0; e = index.referencerFile.indexOf(f, e + 1)) rowsOf(identAt(index.referencerStart, e));
    }
  } else {
    for (let e = 0; e < index.definerList.length; e++) if (isChanged[index.definerList[e]!]) rowsOf(identAt(index.definerStart, e));
    for (let e = 0; e < index.referencerFile.length; e++) if (isChanged[index.referencerFile[e]!]) rowsOf(identAt(index.referencerStart, e));
  }
  // And now: new identifiers are numbered after the stored ones.
  const names = index.names.slice();
  const keys: number[] = [];
  const lookup = index.lookup;
  const intern = (key: number, name: string): number => {
    let id = lookup.find(key);
    if (id < 0) {
      id = names.length;
      lookup.insert(key, id);
      names.push(name);
      keys.push(key);
    } else if (name && !names[id]) names[id] = name;
    return id;
  };
  for (const f of [...changed.keys()].sort((a, b) => a - b)) {
    const file = changed.get(f)!;
    const defKeys = defKeysOf(file);
    const seen = new Map<number, PendingRows>();
    for (let i = 0; i < file.defNames.length; i++) {
      const id = intern(defKeys[i]!, file.defNames[i]!);
      const row = rowsOf(id);
      if (!seen.has(id)) {
        seen.set(id, row);
        insertSorted(row.definers, f, (at) => {
          row.lineFrom.splice(at, 0, -1);
          row.lineTo.splice(at, 0, -1);
        });
        row.fresh.set(f, []);
      }
      row.fresh.get(f)!.push(file.defLines[i]!);
    }
    for (let p = 0; p + REF_STRIDE <= file.refs.length; p += REF_STRIDE) {
      const row = rowsOf(intern(file.refs[p]!, ""));
      if (!row.added.some((a) => a.file === f)) row.added.push({ file: f, refs: file.refs[p + 1]!, members: file.refs[p + 2]! });
    }
  }
  const changedFiles = [...changed.keys()].sort((a, b) => a - b);
  const rows = new Map<number, IdentRows>();
  for (const [id, row] of pending) rows.set(id, { definers: row.definers, lineFrom: row.lineFrom, lineTo: row.lineTo, fresh: row.fresh, ...mergeReferencers(index, row, changedFiles) });
  // A changed file touches many identifiers whose rows it leaves as they were (its other
  // definitions and references): those are copied with the unchanged ones. One whose definers
  // and referencers are the same (only lines moved) keeps its edges: an identifier's edges are a
  // function of those rows, its name and the context alone (identEdges), and rebuilding the rows
  // of common names (thousands of referencers, nearest definers by path) was most of a patch.
  const sameEdges = new Set<number>();
  for (const [id, row] of rows) {
    if (id >= index.names.length || names[id] !== index.names[id] || !sameEdgeRows(index, id, row)) continue;
    if (sameLines(index, id, row)) rows.delete(id);
    else sameEdges.add(id);
  }
  // Reassemble the compressed rows: runs of unchanged identifiers copied in one
  // go, changed ones from their new rows (identifiers new to the index are all changed).
  const identCount = names.length;
  const oldCount = index.names.length;
  const rowOf: (IdentRows | undefined)[] = new Array(identCount);
  for (const [id, row] of rows) rowOf[id] = row;
  const affected = [...rows.keys()].sort((a, b) => a - b);
  /** Runs of unchanged identifiers [from, to) between the changed ones. */
  const runs: [number, number][] = [];
  let next = 0;
  for (const id of affected) {
    if (id > next) runs.push([next, Math.min(id, oldCount)]);
    next = id + 1;
  }
  if (next < oldCount) runs.push([next, oldCount]);
  const definerStart = new Int32Array(identCount + 1);
  const referencerStart = new Int32Array(identCount + 1);
  // Unchanged runs: the stored starts shifted; changed identifiers: their new rows' lengths.
  // (The arrays in locals: a fresh process runs these loops in the interpreter.)
  const oldDefinerStart = index.definerStart;
  const oldReferencerStart = index.referencerStart;
  for (let id = 0, r = 0; id < identCount; ) {
    const row = rowOf[id];
    if (row) {
      definerStart[id + 1] = definerStart[id]! + row.definers.length;
      referencerStart[id + 1] = referencerStart[id]! + row.referencers.length;
      id++;
      continue;
    }
    const [from, to] = runs[r++]!;
    const definerShift = definerStart[from]! - oldDefinerStart[from]!;
    const referencerShift = referencerStart[from]! - oldReferencerStart[from]!;
    for (let i = from + 1; i <= to; i++) {
      definerStart[i] = oldDefinerStart[i]! + definerShift;
      referencerStart[i] = oldReferencerStart[i]! + referencerShift;
    }
    id = to;
  }
  const entryCount = definerStart[identCount]!;
  const definerList = new Int32Array(entryCount);
  const definerLineStart = new Int32Array(entryCount + 1);
  const referencerFile = new Int32Array(referencerStart[identCount]!);
  const referencerRefs = new Float64Array(referencerStart[identCount]!);
  const referencerMembers = new Float64Array(referencerStart[identCount]!);
  // Definer entries and their line offsets, in identifier order.
  let lineCount = 0;
  const copyDefiners = (from: number, to: number) => {
    const oldFrom = index.definerStart[from]!;
    const oldTo = index.definerStart[to]!;
    const at = definerStart[from]!;
    definerList.set(index.definerList.subarray(oldFrom, oldTo), at);
    const oldLineStart = index.definerLineStart;
    const shift = lineCount - oldLineStart[oldFrom]!;
    const delta = at - oldFrom;
    for (let e = oldFrom; e < oldTo; e++) definerLineStart[e + delta] = oldLineStart[e]! + shift;
    lineCount += oldLineStart[oldTo]! - oldLineStart[oldFrom]!;
  };
  const copyReferencers = (from: number, to: number) => {
    const oldFrom = index.referencerStart[from]!;
    const oldTo = index.referencerStart[to]!;
    const at = referencerStart[from]!;
    referencerFile.set(index.referencerFile.subarray(oldFrom, oldTo), at);
    referencerRefs.set(index.referencerRefs.subarray(oldFrom, oldTo), at);
    referencerMembers.set(index.referencerMembers.subarray(oldFrom, oldTo), at);
  };
  let run = 0;
  const lineSources: [number, number, number][] = [];
  for (let id = 0; id < identCount; ) {
    const row = rowOf[id];
    if (!row) {
      const [from, to] = runs[run++]!;
      lineSources.push([index.definerLineStart[index.definerStart[from]!]!, index.definerLineStart[index.definerStart[to]!]!, lineCount]);
      copyDefiners(from, to);
      copyReferencers(from, to);
      id = to;
      continue;
    }
    const at = definerStart[id]!;
    row.definers.forEach((f, k) => {
      definerList[at + k] = f;
      definerLineStart[at + k] = lineCount;
      lineCount += row.lineFrom[k]! >= 0 ? row.lineTo[k]! - row.lineFrom[k]! : row.fresh.get(f)!.length;
    });
    const refAt = referencerStart[id]!;
    referencerFile.set(row.referencers, refAt);
    referencerRefs.set(row.refs, refAt);
    referencerMembers.set(row.members, refAt);
    id++;
  }
  definerLineStart[entryCount] = lineCount;
  const definerLines = new Int32Array(lineCount);
  for (const [from, to, at] of lineSources) definerLines.set(index.definerLines.subarray(from, to), at);
  for (const id of affected) {
    const row = rows.get(id)!;
    const old = index.definerLines;
    for (let k = 0, out = definerLineStart[definerStart[id]!]!; k < row.definers.length; k++) {
      const from = row.lineFrom[k]!;
      if (from < 0) for (const line of row.fresh.get(row.definers[k]!)!) definerLines[out++] = line;
      else for (let l = from; l < row.lineTo[k]!; l++) definerLines[out++] = old[l]!;
    }
  }
  let anyReference = false;
  for (let id = 0; id < identCount && !anyReference; id++) anyReference = referencerStart[id + 1]! > referencerStart[id]! && definerStart[id + 1]! > definerStart[id]!;
  if (!anyReference) return null;
  const allKeys = new Float64Array(identCount);
  allKeys.set(index.keys.subarray(0, oldCount));
  allKeys.set(keys, oldCount);
  const patched = makeIndex({ names, keys: allKeys, definerStart, definerList, definerLineStart, definerLines, referencerStart, referencerFile, referencerRefs, referencerMembers, anyReference, lookup });

  // Edges: runs of unchanged identifiers' blocks copied, changed ones rebuilt.
  const edges = new EdgeList(graph.edges.count + affected.reduce((n, id) => n + edgeEstimate(patched, id), 0));
  const edgeStart = new Int32Array(identCount + 1);
  const scratch = new EdgeScratch(paths, graph.pathOrder);
  run = 0;
  for (let id = 0; id < identCount; ) {
    if (!rowOf[id]) {
      const [from, to] = runs[run++]!;
      const oldEdgeStart = graph.edgeStart;
      const shift = edges.count - oldEdgeStart[from]!;
      for (let i = from; i < to; i++) edgeStart[i] = oldEdgeStart[i]! + shift;
      edges.append(graph.edges, graph.edgeStart[from]!, graph.edgeStart[to]!);
      id = to;
      continue;
    }
    edgeStart[id] = edges.count;
    if (sameEdges.has(id)) edges.append(graph.edges, graph.edgeStart[id]!, graph.edgeStart[id + 1]!);
    else identEdges(id, patched, paths, context, edges, scratch);
    id++;
  }
  edgeStart[identCount] = edges.count;
  return { index: patched, graph: { edges, edgeStart, pathOrder: scratch.computedOrder, ...slotsOf(patched) } };
}

/** Whether an identifier's new row has the stored row's definers (in order) and referencers with their counts. */
function sameEdgeRows(index: IdentIndex, id: number, row: IdentRows): boolean {
  const from = index.definerStart[id]!;
  if (row.definers.length !== index.definerStart[id + 1]! - from) return false;
  for (let k = 0; k < row.definers.length; k++) if (row.definers[k] !== index.definerList[from + k]) return false;
  const at = index.referencerStart[id]!;
  const n = row.referencers.length;
  if (n !== index.referencerStart[id + 1]! - at) return false;
  for (let r = 0; r < n; r++) {
    if (row.referencers[r] !== index.referencerFile[at + r] || row.refs[r] !== index.referencerRefs[at + r] || row.members[r] !== index.referencerMembers[at + r]) return false;
  }
  return true;
}

/** Whether each definer of a row with the stored definers (sameEdgeRows) has the stored lines. */
function sameLines(index: IdentIndex, id: number, row: IdentRows): boolean {
  const from = index.definerStart[id]!;
  for (let k = 0; k < row.definers.length; k++) {
    if (row.lineFrom[k]! >= 0) continue;
    const lines = row.fresh.get(row.definers[k]!)!;
    const start = index.definerLineStart[from + k]!;
    if (lines.length !== index.definerLineStart[from + k + 1]! - start) return false;
    for (let l = 0; l < lines.length; l++) if (lines[l] !== index.definerLines[start + l]) return false;
  }
  return true;
}

/**
 * An identifier's referencer row after a patch: its old entries (ascending file) less the
 * changed files', merged with their new entries, copied in runs by the typed arrays' own `set`
 * (rows of common names hold thousands of entries; a loop over them runs cold in a fresh process).
 */
function mergeReferencers(index: IdentIndex, row: PendingRows, changedFiles: readonly number[]): Pick<IdentRows, "referencers" | "refs" | "members"> {
  const { referencerFile, referencerRefs, referencerMembers } = index;
  const { from, to } = row;
  // Positions to skip (a changed file's old entry) and to insert at (a changed file's new entry), in order.
  const events: { at: number; insert?: PendingRows["added"][number] }[] = [];
  for (const f of changedFiles) {
    const at = lowerBound(referencerFile, from, to, f);
    if (at < to && referencerFile[at] === f) events.push({ at });
  }
  const skipped = events.length;
  for (const added of row.added) events.push({ at: lowerBound(referencerFile, from, to, added.file), insert: added });
  // Inserts before skips at one position (a file's new entry in place of its old one); inserts by file.
  events.sort((a, b) => a.at - b.at || (a.insert ? 0 : 1) - (b.insert ? 0 : 1) || (a.insert && b.insert ? a.insert.file - b.insert.file : 0));
  const count = to - from - skipped + row.added.length;
  const referencers = new Int32Array(count);
  const refs = new Float64Array(count);
  const members = new Float64Array(count);
  let out = 0;
  let cursor = from;
  const copyTo = (end: number) => {
    referencers.set(referencerFile.subarray(cursor, end), out);
    refs.set(referencerRefs.subarray(cursor, end), out);
    members.set(referencerMembers.subarray(cursor, end), out);
    out += end - cursor;
    cursor = end;
  };
  for (const event of events) {
    copyTo(event.at);
    if (event.insert) {
      referencers[out] = event.insert.file;
      refs[out] = event.insert.refs;
      members[out++] = event.insert.members;
    } else cursor = event.at + 1;
  }
  copyTo(to);
  return { referencers, refs, members };
}

/** The first position in [from, to) of an ascending array whose value is not below `value`. */
function lowerBound(list: Int32Array, from: number, to: number, value: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The identifier whose row holds entry `e` of compressed rows with these starts (also a slot's, by slotBase). */
export function identAt(start: Int32Array, e: number): number {
  let lo = 0;
  let hi = start.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (start[mid]! <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Inserts `value` into an ascending list unless present; `inserted(at)` keeps parallel lists in step. */
function insertSorted(list: number[], value: number, inserted: (at: number) => void): void {
  let at = list.length;
  while (at > 0 && list[at - 1]! > value) at--;
  if (at > 0 && list[at - 1] === value) return;
  list.splice(at, 0, value);
  inserted(at);
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

/** Plain string order (`<`) as a comparator: ties in ranking and edge order are broken by it. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Edges in flat typed arrays, grown when the count estimate falls short (a chat file's imports may exceed the bound). */
export class EdgeList {
  src: Int32Array;
  dst: Int32Array;
  weight: Float64Array;
  /** The edge's position in its identifier's definer row (its slot is slotBase[id] + this). */
  definer: Int32Array;
  count = 0;

  constructor(capacity: number) {
    this.src = new Int32Array(capacity);
    this.dst = new Int32Array(capacity);
    this.weight = new Float64Array(capacity);
    this.definer = new Int32Array(capacity);
  }

  add(src: number, dst: number, weight: number, definer: number): void {
    if (this.count === this.src.length) this.#grow(this.count + 1);
    const i = this.count++;
    this.src[i] = src;
    this.dst[i] = dst;
    this.weight[i] = weight;
    this.definer[i] = definer;
  }

  /** Appends edges from .. to - 1 of another list. */
  append(other: EdgeList, from: number, to: number): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.count + n > this.src.length) this.#grow(this.count + n);
    this.src.set(other.src.subarray(from, to), this.count);
    this.dst.set(other.dst.subarray(from, to), this.count);
    this.weight.set(other.weight.subarray(from, to), this.count);
    this.definer.set(other.definer.subarray(from, to), this.count);
    this.count += n;
  }

  #grow(needed: number): void {
    const capacity = Math.max(16, this.src.length * 2, needed);
    const grown = <T extends Int32Array | Float64Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.src = grown(this.src, new Int32Array(capacity));
    this.dst = grown(this.dst, new Int32Array(capacity));
    this.weight = grown(this.weight, new Float64Array(capacity));
    this.definer = grown(this.definer, new Int32Array(capacity));
  }
}

/** Identifier keys → dense ids: open addressing on a Float64Array (several times cheaper than a Map here). */
export class KeyIndex implements KeyLookup {
  #keys: Float64Array;
  #ids: Int32Array;
  #mask: number;
  #size = 0;

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
      if ((this.#size + 1) * 2 > this.#ids.length) {
        this.#rehash();
        return this.get(key, next);
      }
      this.#keys[i] = key;
      this.#ids[i] = next;
      this.#size++;
    }
    return this.#ids[i]!;
  }

  /** Adds `key` as `id` (absent keys only). */
  insert(key: number, id: number): void {
    this.get(key, id);
  }

  #rehash(): void {
    const keys = this.#keys;
    const ids = this.#ids;
    this.#keys = new Float64Array(keys.length * 2);
    this.#ids = new Int32Array(ids.length * 2).fill(-1);
    this.#mask = this.#ids.length - 1;
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] === -1) continue;
      const at = this.#slot(keys[i]!);
      this.#ids[at] = ids[i]!;
      this.#keys[at] = keys[i]!;
    }
  }
}
