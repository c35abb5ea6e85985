// The cold map's plan: when many files have no cached tags, the first map does not
// wait for every parse. Every file is ranked first from what is cheap to read
// (its path, its size, and the imports in its first bytes, by the language's import
// syntax); the files nearest the chat files in that import graph and the top-ranked
// files are parsed now, until there is enough for the budget; the rest are parsed
// in the background (scan.ts parseInBackground), and until then rank by the names
// they import.
import { closeSync, constants, openSync, readSync } from "node:fs";
import type { FileEntry } from "./scan.ts";
import { ImportResolver } from "./imports.ts";
import type { RankFile } from "./graph.ts";
import { personalizedPageRank } from "./pagerank.ts";
import { identKey } from "./tags.ts";

/** Of each file, the imports are read from this many first bytes (imports sit at the top). */
export const PRESCAN_BYTES = 8192;
/** At least this many files to parse before the first map, whatever the budget. */
const MIN_NOW_FILES = 48;
/** The chat files' neighbours parsed now, at most (a chat file importing half the repository). */
const MAX_NEIGHBOURS = 300;
/** Past this many files' names for ranking, the plan reads every file's imports at once (in workers when there are many) rather than one by one. */
const MAX_NAMED_ONE_BY_ONE = 1_000;
/** Files chosen by rank stop at this many times the budget's bytes (200 a token), however few. */
const MAX_BYTES_SHARE = 2;

export interface ColdInput {
  /** Every listed file (imports resolve against them). */
  files: readonly string[];
  chatFiles: readonly string[];
  /** The request's mentioned files and identifiers (with the chat files, what ranking personalises to). */
  mentionedFiles?: readonly string[];
  mentionedIdents?: readonly string[];
  /** Token budget of the map. */
  budget: number;
  /** A file's first `maxBytes` as text (null: unreadable). */
  head(path: string, maxBytes: number): string | null;
  /** A chat file's whole text (its imports decide what is parsed first). */
  read(path: string): string | null;
  /** The stale files' import edges when already read (in workers: scan.ts prescanInPool); else read here, and only as far as the plan needs them. */
  edges?: ImportEdges;
  /**
   * When the plan needs every stale file's imports (see planColdScan) and `edges` is not
   * given: return null instead of reading them here (the caller reads them in workers and
   * plans again with them).
   */
  wholeElsewhere?: boolean;
}

export interface ColdPlan {
  /** Files to parse before the first map, most wanted first. */
  now: FileEntry[];
  /** Files left to the background parse. */
  later: FileEntry[];
  /**
   * What ranking reads of a file left for later: no definitions, and its imported names as
   * references where they can count (see mayHaveRank); else none.
   */
  prescanned: Map<string, RankFile>;
}

/**
 * Which of the `stale` files (no fresh cached tags) to parse before the first map.
 * Order: the chat files; the files they import (re-exports followed) and the files
 * that import them; the files those import; then every other file by a PageRank over
 * the import graph personalised to the chat files (uniform without), until at least
 * enough files for the budget are chosen (about one file per 8 tokens, and their
 * text at least 200 bytes per token), never past MAX_BYTES_SHARE times those bytes.
 */
export function planColdScan(stale: readonly FileEntry[], input: ColdInput & { wholeElsewhere?: false }): ColdPlan;
export function planColdScan(stale: readonly FileEntry[], input: ColdInput): ColdPlan | null;
export function planColdScan(stale: readonly FileEntry[], input: ColdInput): ColdPlan | null {
  try {
    return plan(stale, input);
  } catch (error) {
    if (error === WHOLE_ELSEWHERE) return null;
    throw error;
  }
}

/** Thrown inside the plan when it needs every file's imports and they are to be read elsewhere. */
const WHOLE_ELSEWHERE = Symbol("every file's imports are needed");

/**
 * The plan. Every stale file's imports (the whole graph: at 100k files most of a cold
 * first map's time) are read only when a step needs them: the chat files' importers,
 * while the budget's bytes are not reached; the ranking by imports, while the files or
 * bytes are not reached; and, with nothing to personalise to, every file's names for
 * ranking. Else only the files the steps look at are read, one by one, with the same
 * resolver: the same plan, most often from a few hundred files' imports.
 */
function plan(stale: readonly FileEntry[], input: ColdInput): ColdPlan {
  const byPath = new Map(stale.map((e) => [e.path, e]));
  const ids = listingIds(input.files);
  const stalePaths = stale.map((e) => e.path);
  const paths = input.files;
  let resolver: ImportResolver | null = null;
  const resolverOf = () => (resolver ??= prescanResolver(input.files, (path) => byPath.has(path), input.head));
  let graph: ImportGraph | null = input.edges ? importGraph(stalePaths, input.files, ids, input.edges) : null;
  const wholeGraph = (): ImportGraph => {
    if (!graph) {
      if (input.wholeElsewhere) throw WHOLE_ELSEWHERE;
      graph = importGraph(stalePaths, input.files, ids, importEdges(stalePaths, ids, resolverOf()));
    }
    return graph;
  };
  const staleIndex = new Map(stalePaths.map((path, i) => [path, i]));
  // Files read one by one (before the whole graph was, if it ever is): their targets and names.
  let reader: EdgeReader | null = null;
  const single = new Map<number, { targets: number[]; names: string }>();
  const fileEdges = (i: number): { targets: ArrayLike<number>; names: string } => {
    if (graph) return { targets: graph.target.subarray(graph.start[i]!, graph.start[i + 1]!), names: graph.names[i]! };
    let found = single.get(i);
    if (!found) {
      reader ??= new EdgeReader(ids, resolverOf());
      reader.edges = 0;
      const names = reader.read(stalePaths[i]!);
      single.set(i, (found = { targets: Array.from(reader.target.subarray(0, reader.edges)), names }));
    }
    return found;
  };

  const wantFiles = Math.max(MIN_NOW_FILES, Math.ceil(input.budget / 8));
  const wantBytes = input.budget * 200;
  const order: string[] = [];
  const chosen = new Set<string>();
  let bytes = 0;
  const choose = (path: string, maxBytes = Infinity) => {
    const entry = byPath.get(path);
    // A file that would take the bytes past a limit is left (a smaller one further on may fit).
    if (!entry || chosen.has(path) || bytes + entry.size > maxBytes) return;
    chosen.add(path);
    order.push(path);
    bytes += entry.size;
  };
  const chat = [...new Set(input.chatFiles)];
  for (const path of chat) choose(path);
  // The chat files' own imports from their whole text, re-exports followed (what the map shows first).
  const full = new ImportResolver({ files: input.files, read: input.read });
  // Files the chat takes names from first; then the ones it imports whole (a Go or Java
  // package's other files: many); then the files those import.
  const named: string[] = [];
  const whole: string[] = [];
  for (const path of chat) for (const [target, names] of full.importsOf(path)) (names.size > 0 ? named : whole).push(target);
  const near = [...named, ...whole];
  for (const path of near.slice(0, MAX_NEIGHBOURS)) choose(path);
  const second: string[] = [];
  for (const path of near) {
    const at = staleIndex.get(path);
    if (at === undefined) continue;
    const { targets } = fileEdges(at);
    for (let t = 0; t < targets.length; t++) second.push(paths[targets[t]!]!);
  }
  for (const path of second.slice(0, MAX_NEIGHBOURS)) choose(path);
  // The files importing the chat files, while the budget's bytes are not reached: rank
  // flows from the chat files to what they import, so these are seldom shown (and a
  // widely imported chat file has hundreds of them).
  if (bytes < wantBytes) {
    const importers: string[] = [];
    for (const path of chat) for (const i of wholeGraph().importersOf(ids.get(path))) importers.push(stale[i]!.path);
    for (const path of importers.slice(0, MAX_NEIGHBOURS)) {
      if (bytes >= wantBytes) break;
      choose(path);
    }
  }
  // Then by rank, until enough files and bytes for the budget, or MAX_BYTES_SHARE times its bytes (a tree of large files),
  // which no file takes the bytes past.
  if (order.length < wantFiles || bytes < wantBytes) {
    for (const path of byImportRank(stale, wholeGraph(), chat)) {
      if ((order.length >= wantFiles && bytes >= wantBytes) || bytes >= wantBytes * MAX_BYTES_SHARE) break;
      choose(path, wantBytes * MAX_BYTES_SHARE);
    }
  }

  const now = order.map((path) => byPath.get(path)!);
  const later: FileEntry[] = [];
  const prescanned = new Map<string, RankFile>();
  const ranked = mayHaveRank(input);
  // Many files whose names are needed (every file's, with nothing to personalise to; or a
  // mentioned name that is a common folder's): read as the whole graph (in workers when asked).
  const withNames = new Uint8Array(stale.length);
  let namedCount = 0;
  stale.forEach((entry, i) => {
    if (!chosen.has(entry.path) && ranked(entry.path)) {
      withNames[i] = 1;
      namedCount++;
    }
  });
  if (namedCount > MAX_NAMED_ONE_BY_ONE) wholeGraph();
  stale.forEach((entry, i) => {
    if (chosen.has(entry.path)) return;
    later.push(entry);
    const names = withNames[i] ? fileEdges(i).names : "";
    prescanned.set(entry.path, importsAsReferences(entry.path, names === "" ? [] : names.split("\n")));
  });
  return { now, later, prescanned };
}

/**
 * Whether a file not parsed yet can have any rank in the map's PageRank (rank.ts), so that
 * its references count. Such a file defines nothing, so no edge leads to it: its rank is
 * only what the personalisation gives it (the chat files, the mentioned files, files whose
 * path names a mentioned identifier), or, with none of those, the uniform teleport. A file
 * with no rank passes none on: its references change no definition's rank, and leaving
 * them out spares ranking most of a large repository's references (at 100k files, 1.5
 * million, most of the ranking's time).
 */
export function mayHaveRank(input: Pick<ColdInput, "chatFiles" | "mentionedFiles" | "mentionedIdents">): (path: string) => boolean {
  const chat = new Set(input.chatFiles);
  const files = new Set(input.mentionedFiles ?? []);
  const idents = new Set(input.mentionedIdents ?? []);
  if (chat.size === 0 && files.size === 0 && idents.size === 0) return ALL_RANKED;
  return (path) => {
    if (chat.has(path) || files.has(path)) return true;
    if (idents.size === 0) return false;
    // As rank.ts's personalisation reads a path: its parts, and its base name without extension.
    const parts = path.split("/");
    const base = parts[parts.length - 1]!;
    const dot = base.lastIndexOf(".");
    return parts.some((part) => idents.has(part)) || idents.has(dot > 0 ? base.slice(0, dot) : base);
  };
}

const ALL_RANKED = (): boolean => true;

/** The resolver the pre-scan reads imports with: the first PRESCAN_BYTES of each stale file, other files (tsconfig.json, package.json, go.mod) whole, once each. */
export function prescanResolver(files: readonly string[], isStale: (path: string) => boolean, head: ColdInput["head"]): ImportResolver {
  const configs = new Map<string, string | null>();
  const readOther = (path: string) => {
    if (!configs.has(path)) configs.set(path, head(path, 1 << 20));
    return configs.get(path)!;
  };
  return new ImportResolver({ files, read: (path) => (isStale(path) ? head(path, PRESCAN_BYTES) : readOther(path)) }, { followReexports: false, samePackage: false });
}

/** Each listed path's id: the position of its first listing. */
export function listingIds(files: readonly string[]): Map<string, number> {
  const ids = new Map<string, number>();
  files.forEach((path, i) => {
    if (!ids.has(path)) ids.set(path, i);
  });
  return ids;
}

/**
 * Some files' imports, compact: per file (in the order given) its imported files as
 * listing ids, each once, in the order first imported (as importsOf merges them), with
 * how many distinct names it takes from each; and per file every name it imports. A Go
 * package's files come as one list per import, so this holds no set per imported file
 * (at 100k files, millions of such edges). Plain data: workers send it as it is.
 */
export interface ImportEdges {
  /** File i's edges are start[i] .. start[i + 1] - 1. */
  start: Int32Array;
  target: Int32Array;
  /** Distinct names taken through each edge. */
  nameCount: Int32Array;
  /** Per file, every name it imports (importsOf's order), joined by newlines. */
  names: string[];
}

/** The pre-scan's import graph over the stale files (in `stale` order). */
export interface ImportGraph extends ImportEdges {
  /** Listed path → id, and back. */
  ids: ReadonlyMap<string, number>;
  paths: readonly string[];
  /** Stale path → its index in `stale`. */
  staleIndex: ReadonlyMap<string, number>;
  /** The stale files (indexes) importing listed file `id`, in `stale` order. */
  importersOf(id: number | undefined): number[];
}

/** The import edges of `paths` (files of the listing that `ids` numbers), resolved by `resolver`. */
export function importEdges(paths: readonly string[], ids: ReadonlyMap<string, number>, resolver: ImportResolver): ImportEdges {
  const reader = new EdgeReader(ids, resolver, Math.max(1024, paths.length * 8));
  const start = new Int32Array(paths.length + 1);
  const names: string[] = [];
  paths.forEach((path, i) => {
    start[i] = reader.edges;
    names.push(reader.read(path));
  });
  start[paths.length] = reader.edges;
  return { start, target: reader.target.slice(0, reader.edges), nameCount: reader.nameCount.slice(0, reader.edges), names };
}

/** Reads files' import edges one after another into growing arrays (importEdges; the plan's files read one by one). */
class EdgeReader {
  target: Int32Array<ArrayBuffer>;
  nameCount: Int32Array<ArrayBuffer>;
  /** Edges in use. */
  edges = 0;
  readonly #ids: ReadonlyMap<string, number>;
  readonly #resolver: ImportResolver;
  // Where file `id`'s edge from the current importer is (stamp: which read set it), to merge a file imported twice.
  readonly #stamp: Int32Array;
  readonly #edgeOf: Int32Array;
  #reads = 0;
  // A list of files (a Go package's) comes from many importers: its ids are looked up once.
  readonly #listIds = new WeakMap<readonly string[], (number | undefined)[]>();

  constructor(ids: ReadonlyMap<string, number>, resolver: ImportResolver, capacity = 1024) {
    this.#ids = ids;
    this.#resolver = resolver;
    let listed = 0;
    for (const id of ids.values()) if (id >= listed) listed = id + 1;
    this.#stamp = new Int32Array(listed).fill(-1);
    this.#edgeOf = new Int32Array(listed);
    this.target = new Int32Array(capacity);
    this.nameCount = new Int32Array(capacity);
  }

  /** Appends `path`'s edges (from `edges` on); returns every name it imports, in importsOf's order, joined by newlines. */
  read(path: string): string {
    const serial = this.#reads++;
    const first = this.edges;
    const stamp = this.#stamp;
    const edgeOf = this.#edgeOf;
    // Each edge's names: the list it came with, or, when the file comes again through
    // another import (rare), the merged set.
    const edgeNames: (readonly string[] | Set<string>)[] = [];
    this.#resolver.eachImport(path, (found, list) => {
      const distinct = list.length < 2 ? list.length : new Set(list).size;
      const each = (id: number | undefined) => {
        if (id === undefined) return;
        if (stamp[id] === serial) {
          const e = edgeOf[id]!;
          let set = edgeNames[e - first]!;
          if (!(set instanceof Set)) edgeNames[e - first] = set = new Set(set);
          for (const name of list) set.add(name);
          this.nameCount[e] = set.size;
          return;
        }
        if (this.edges === this.target.length) {
          this.target = grow(this.target);
          this.nameCount = grow(this.nameCount);
        }
        stamp[id] = serial;
        edgeOf[id] = this.edges;
        this.target[this.edges] = id;
        this.nameCount[this.edges] = distinct;
        edgeNames.push(list);
        this.edges++;
      };
      if (typeof found === "string") each(this.#ids.get(found));
      else for (const id of this.#idsOf(found)) each(id);
    });
    // Every name imported, in the order importsOf's sets give them (the files in order, each one's names).
    const taken = new Set<string>();
    let previous: readonly string[] | Set<string> | null = null;
    for (const list of edgeNames) {
      // A Go package's files share one list: its names are in already.
      if (list === previous) continue;
      previous = list;
      for (const name of list) taken.add(name);
    }
    return [...taken].join("\n");
  }

  #idsOf(list: readonly string[]): (number | undefined)[] {
    let found = this.#listIds.get(list);
    if (!found) this.#listIds.set(list, (found = list.map((path) => this.#ids.get(path))));
    return found;
  }
}

/** The graph over the stale files from their edges. */
export function importGraph(stale: readonly string[], files: readonly string[], ids: ReadonlyMap<string, number>, edges: ImportEdges): ImportGraph {
  const { start, target } = edges;
  return {
    ...edges,
    ids,
    paths: files,
    staleIndex: new Map(stale.map((path, i) => [path, i])),
    importersOf(id) {
      const out: number[] = [];
      if (id === undefined) return out;
      for (let i = 0; i < stale.length; i++) {
        for (let e = start[i]!; e < start[i + 1]!; e++) {
          if (target[e] === id) {
            out.push(i);
            break;
          }
        }
      }
      return out;
    },
  };
}

function grow(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** The stale files by PageRank over "imports" edges (weighted by the names taken), personalised to the chat files. */
function byImportRank(stale: readonly FileEntry[], graph: ImportGraph, chat: readonly string[]): string[] {
  // Edges between stale files only (ids of the listing → indexes of `stale`).
  const local = new Int32Array(graph.paths.length).fill(-1);
  stale.forEach((entry, i) => {
    const id = graph.ids.get(entry.path);
    if (id !== undefined) local[id] = i;
  });
  const total = graph.target.length;
  const src = new Int32Array(total);
  const dst = new Int32Array(total);
  const weight = new Float64Array(total);
  let count = 0;
  for (let a = 0; a < stale.length; a++) {
    for (let e = graph.start[a]!; e < graph.start[a + 1]!; e++) {
      const b = local[graph.target[e]!]!;
      if (b < 0 || b === a) continue;
      src[count] = a;
      dst[count] = b;
      weight[count] = 1 + Math.sqrt(graph.nameCount[e]!);
      count++;
    }
  }
  let personalization: Float64Array | null = null;
  const inChat = chat.filter((path) => graph.staleIndex.has(path));
  if (inChat.length > 0) {
    personalization = new Float64Array(stale.length);
    for (const path of inChat) personalization[graph.staleIndex.get(path)!] = 1;
  }
  const ranks = personalizedPageRank(stale.length, { src, dst, weight, count }, personalization);
  // Ties (files nothing imports) by size: a larger file is likelier to hold what others use.
  return stale
    .map((e, i) => ({ path: e.path, rank: ranks[i]!, size: e.size }))
    .sort((a, b) => b.rank - a.rank || b.size - a.size || (a.path < b.path ? -1 : 1))
    .map((e) => e.path);
}

/** A file not parsed yet, as ranking reads it: the names it imports count as its references. */
function importsAsReferences(path: string, names: readonly string[]): RankFile {
  const refs = new Float64Array(names.length * 3);
  let i = 0;
  for (const name of names) {
    refs[i++] = identKey(name);
    refs[i++] = 1;
    refs[i++] = 0;
  }
  return { path, defNames: [], defLines: [], refs };
}

/** The first `maxBytes` of a file as text, cut after its last whole line; null when unreadable. */
const HEAD_BUFFER = new Uint8Array(PRESCAN_BYTES);
const UTF8 = new TextDecoder();
/** No link is followed (the listing left out links already; one put in a file's place since is not read), and a FIFO put there does not block. */
const HEAD_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * `size`: the file's size from its stat, when known: a read that returns that many bytes
 * ends it (no second read to find the end: at 100k files, 100k calls fewer). A file that
 * grew since is read on, up to `maxBytes`, as any other.
 */
export function readHead(abs: string, maxBytes: number, size?: number): string | null {
  let fd: number;
  try {
    fd = openSync(abs, HEAD_FLAGS);
  } catch {
    return null;
  }
  try {
    const buffer = maxBytes <= HEAD_BUFFER.length ? HEAD_BUFFER : new Uint8Array(maxBytes);
    let length = 0;
    while (length < maxBytes) {
      const n = readSync(fd, buffer, length, maxBytes - length, null);
      if (n <= 0) break;
      length += n;
      if (length === size) break;
    }
    let end = length;
    if (length === maxBytes) {
      const cut = buffer.lastIndexOf(10, length - 1);
      if (cut > 0) end = cut + 1;
    }
    return UTF8.decode(buffer.subarray(0, end));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
