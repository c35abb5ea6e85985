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

/** Every identifier defined somewhere, with its defining and referencing files (compressed rows). */
export interface IdentIndex {
  names: string[];
  /** The id of a defined identifier, or -1. */
  idOf(name: string): number;
  definerStart: Int32Array;
  definerList: Int32Array;
  referencerStart: Int32Array;
  referencerFile: Int32Array;
  /** How often each referencing file references the identifier plainly or qualified, and as a member of an unknown receiver. */
  referencerRefs: Float64Array;
  referencerMembers: Float64Array;
}

export function indexIdentifiers(files: readonly RankFile[]): IdentIndex {
  // Identifiers as integers (an open-addressing table on their 53-bit keys);
  // definers and referencers in compressed rows: flat typed arrays + offsets.
  let totalDefs = 0;
  let totalRefs = 0;
  for (const file of files) {
    totalDefs += file.defNames.length;
    totalRefs += Math.floor(file.refs.length / REF_STRIDE);
  }
  const index = new KeyIndex(totalDefs);
  const identNames: string[] = [];
  const defIdent = new Int32Array(totalDefs);
  const lastDefiner = new Int32Array(totalDefs).fill(-1);
  const definerCount = new Int32Array(totalDefs + 1);
  let d = 0;
  for (let f = 0; f < files.length; f++) {
    const names = files[f]!.defNames;
    const keys = defKeysOf(files[f]!);
    for (let i = 0; i < names.length; i++, d++) {
      const name = names[i]!;
      const id = index.get(keys[i]!, identNames.length);
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

  // Referencing files per identifier (only identifiers defined somewhere).
  const refIdent = new Int32Array(totalRefs).fill(-1);
  const referencerCount = new Int32Array(identCount + 1);
  let anyReference = false;
  let r = 0;
  for (let f = 0; f < files.length; f++) {
    const refs = files[f]!.refs;
    for (let p = 0; p + REF_STRIDE <= refs.length; p += REF_STRIDE, r++) {
      const id = index.find(refs[p]!);
      if (id < 0) continue;
      anyReference = true;
      refIdent[r] = id;
      referencerCount[id] = referencerCount[id]! + 1;
    }
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
        if (id < 0) continue;
        referencerFile[at[id]!] = f;
        referencerMembers[at[id]!] = refs[p + 2]!;
        referencerRefs[at[id]!++] = refs[p + 1]!;
      }
    }
  } else {
    // No references at all: every definer references its own names once (as Aider does).
    referencerStart.set(definerStart);
    referencerFile = definerList;
    referencerRefs = new Float64Array(definerList.length).fill(1);
    referencerMembers = new Float64Array(definerList.length);
  }

  const idOf = (name: string) => index.find(identKey(name));
  return { names: identNames, idOf, definerStart, definerList, referencerStart, referencerFile, referencerRefs, referencerMembers };
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

/** The graph's edges; each edge feeds one slot, a (defining file, identifier) pair. */
export interface DefinitionGraph {
  edges: EdgeList;
  /** Slots of identifier `id` are slotBase[id] .. slotBase[id + 1] - 1, one per definer in definerList order. */
  slotBase: Int32Array;
  slotCount: number;
}

export function buildGraph(index: IdentIndex, paths: readonly string[], context: GraphContext): DefinitionGraph {
  const { names: identNames, definerStart, definerList, referencerStart, referencerFile, referencerRefs, referencerMembers } = index;
  const { inChat, mentionedIdents, imports, into } = context;
  const identCount = identNames.length;
  const definersOf = (id: number) => definerList.subarray(definerStart[id]!, definerStart[id + 1]!);
  const hasReferencers = (id: number) => referencerStart[id + 1]! > referencerStart[id]!;
  // One slot per (definer, ident): the unit that collects rank.
  const slotBase = new Int32Array(identCount + 1);
  for (let id = 0; id < identCount; id++) slotBase[id + 1] = slotBase[id]! + definerStart[id + 1]! - definerStart[id]!;
  const slotCount = slotBase[identCount]!;

  // Count the edges first so the edge arrays are usually allocated once (a chat
  // file's imports may add more: the list then grows).
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
  const importedDefiners: number[] = [];
  // Each file's place in path order (for the bounded identifiers' nearest definers), computed when first needed.
  let order: Int32Array | null = null;
  const pathOrder = (): Int32Array => {
    if (!order) {
      order = new Int32Array(paths.length);
      const sorted = paths.map((_, i) => i).sort((a, b) => cmp(paths[a]!, paths[b]!));
      sorted.forEach((file, place) => (order![file] = place));
    }
    return order;
  };
  for (let id = 0; id < identCount; id++) {
    if (!hasReferencers(id)) continue;
    const referencers = referencerFile.subarray(referencerStart[id]!, referencerStart[id + 1]!);
    const counts = referencerRefs.subarray(referencerStart[id]!, referencerStart[id + 1]!);
    const members = referencerMembers.subarray(referencerStart[id]!, referencerStart[id + 1]!);
    const ident = identNames[id]!;
    const defining = definersOf(id);
    const base = slotBase[id]!;
    const mentioned = mentionedIdents.has(ident);
    const mul = identWeight(ident, defining.length, mentioned);
    const bounded = defining.length > 5 && referencers.length * defining.length > EDGES_PER_IDENT;
    const perReferencer = Math.max(1, Math.floor(EDGES_PER_IDENT / referencers.length));
    if (bounded) defining.sort((a, b) => pathOrder()[a]! - pathOrder()[b]!);
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
          for (const k of importedDefiners) edges.add(referencer, defining[k]!, weight, base + k);
          continue;
        }
        factor *= WEIGHTS.unresolved;
      }
      const weight = mul * factor * (Math.sqrt(counts[r]!) + WEIGHTS.member * Math.sqrt(members[r]!));
      if (bounded) {
        for (const k of nearestByPath(paths, defining, paths[referencer]!, perReferencer)) edges.add(referencer, defining[k]!, weight * into[defining[k]!]!, base + k);
      } else {
        for (let k = 0; k < defining.length; k++) edges.add(referencer, defining[k]!, weight * into[defining[k]!]!, base + k);
      }
    }
  }

  return { edges, slotBase, slotCount };
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
  slot: Int32Array;
  count = 0;

  constructor(capacity: number) {
    this.src = new Int32Array(capacity);
    this.dst = new Int32Array(capacity);
    this.weight = new Float64Array(capacity);
    this.slot = new Int32Array(capacity);
  }

  add(src: number, dst: number, weight: number, slot: number): void {
    if (this.count === this.src.length) this.#grow();
    const i = this.count++;
    this.src[i] = src;
    this.dst[i] = dst;
    this.weight[i] = weight;
    this.slot[i] = slot;
  }

  #grow(): void {
    const capacity = Math.max(16, this.src.length * 2);
    const grown = <T extends Int32Array | Float64Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.src = grown(this.src, new Int32Array(capacity));
    this.dst = grown(this.dst, new Int32Array(capacity));
    this.weight = grown(this.weight, new Float64Array(capacity));
    this.slot = grown(this.slot, new Int32Array(capacity));
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
