// The cold map's plan: when many files have no cached tags, the first map does not
// wait for every parse. Every file is ranked first from what is cheap to read
// (its path, its size, and the imports in its first bytes, by the language's import
// syntax); the files nearest the chat files in that import graph and the top-ranked
// files are parsed now, until there is enough for the budget; the rest are parsed
// in the background (scan.ts parseInBackground), and until then rank by the names
// they import.
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

export interface ColdInput {
  /** Every listed file (imports resolve against them). */
  files: readonly string[];
  chatFiles: readonly string[];
  /** Token budget of the map. */
  budget: number;
  /** A file's first `maxBytes` as text (null: unreadable). */
  head(path: string, maxBytes: number): string | null;
  /** A chat file's whole text (its imports decide what is parsed first). */
  read(path: string): string | null;
}

export interface ColdPlan {
  /** Files to parse before the first map, most wanted first. */
  now: FileEntry[];
  /** Files left to the background parse. */
  later: FileEntry[];
  /** What ranking reads of a file left for later: no definitions, its imported names as references. */
  prescanned: Map<string, RankFile>;
}

/**
 * Which of the `stale` files (no fresh cached tags) to parse before the first map.
 * Order: the chat files; the files they import (re-exports followed) and the files
 * that import them; the files those import; then every other file by a PageRank over
 * the import graph personalised to the chat files (uniform without), until at least
 * enough files for the budget are chosen (about one file per 8 tokens, and their
 * text at least 200 bytes per token).
 */
export function planColdScan(stale: readonly FileEntry[], input: ColdInput): ColdPlan {
  const byPath = new Map(stale.map((e) => [e.path, e]));
  // Other files (tsconfig.json, package.json, go.mod) are read whole, once each.
  const configs = new Map<string, string | null>();
  const readOther = (path: string) => {
    if (!configs.has(path)) configs.set(path, input.head(path, 1 << 20));
    return configs.get(path)!;
  };
  const heads = new ImportResolver({ files: input.files, read: (path) => (byPath.has(path) ? input.head(path, PRESCAN_BYTES) : readOther(path)) }, { followReexports: false, samePackage: false });
  const graph = importGraph(stale, input.files, heads);
  const { ids, paths } = graph;

  const order: string[] = [];
  const chosen = new Set<string>();
  const choose = (path: string) => {
    if (!byPath.has(path) || chosen.has(path)) return;
    chosen.add(path);
    order.push(path);
  };
  const chat = [...new Set(input.chatFiles)];
  for (const path of chat) choose(path);
  // The chat files' own imports from their whole text, re-exports followed (what the map shows first).
  const full = new ImportResolver({ files: input.files, read: input.read });
  // Files the chat takes names from first; then the ones it imports whole (a Go or Java
  // package's other files: many); then the files importing the chat files.
  const named: string[] = [];
  const whole: string[] = [];
  for (const path of chat) for (const [target, names] of full.importsOf(path)) (names.size > 0 ? named : whole).push(target);
  const near = [...named, ...whole];
  for (const path of chat) near.push(...graph.importersOf(ids.get(path)).map((i) => stale[i]!.path));
  for (const path of near.slice(0, MAX_NEIGHBOURS)) choose(path);
  const second: string[] = [];
  for (const path of near) {
    const at = graph.staleIndex.get(path);
    if (at === undefined) continue;
    for (let e = graph.start[at]!; e < graph.start[at + 1]!; e++) second.push(paths[graph.target[e]!]!);
  }
  for (const path of second.slice(0, MAX_NEIGHBOURS)) choose(path);

  const wantFiles = Math.max(MIN_NOW_FILES, Math.ceil(input.budget / 8));
  const wantBytes = input.budget * 200;
  let bytes = 0;
  for (const path of order) bytes += byPath.get(path)!.size;
  if (order.length < wantFiles || bytes < wantBytes) {
    for (const path of byImportRank(stale, graph, chat)) {
      if (order.length >= wantFiles && bytes >= wantBytes) break;
      if (chosen.has(path)) continue;
      choose(path);
      bytes += byPath.get(path)!.size;
    }
  }

  const now = order.map((path) => byPath.get(path)!);
  const later: FileEntry[] = [];
  const prescanned = new Map<string, RankFile>();
  stale.forEach((entry, i) => {
    if (chosen.has(entry.path)) return;
    later.push(entry);
    prescanned.set(entry.path, importsAsReferences(entry.path, graph.names[i]!));
  });
  return { now, later, prescanned };
}

/**
 * The pre-scan's import graph, compact: per stale file (in `stale` order) its imported
 * files as ids into the listing, each once, in the order first imported (as importsOf
 * merges them), with how many distinct names it takes from each; and per stale file
 * every name it imports. A Go package's files come as one list per import, so the
 * graph holds no set per imported file (at 100k files, millions of such edges).
 */
export interface ImportGraph {
  /** Listed path → id, and back. */
  ids: ReadonlyMap<string, number>;
  paths: readonly string[];
  /** Stale path → its index in `stale`. */
  staleIndex: ReadonlyMap<string, number>;
  /** Stale file i's edges are start[i] .. start[i + 1] - 1. */
  start: Int32Array;
  target: Int32Array;
  /** Distinct names taken through each edge. */
  nameCount: Int32Array;
  /** Per stale file, every name it imports. */
  names: readonly (readonly string[])[];
  /** The stale files (indexes) importing listed file `id`, in `stale` order. */
  importersOf(id: number | undefined): number[];
}

/** The import graph of the `stale` files' heads, resolved against every listed file (see ImportGraph). */
export function importGraph(stale: readonly FileEntry[], files: readonly string[], resolver: ImportResolver): ImportGraph {
  const paths = [...files];
  // An id is the position of a path's first listing.
  const ids = new Map<string, number>();
  paths.forEach((path, i) => {
    if (!ids.has(path)) ids.set(path, i);
  });
  const staleIndex = new Map(stale.map((e, i) => [e.path, i]));
  const start = new Int32Array(stale.length + 1);
  let target: Int32Array<ArrayBuffer> = new Int32Array(Math.max(1024, stale.length * 8));
  let nameCount: Int32Array<ArrayBuffer> = new Int32Array(target.length);
  const names: string[][] = [];
  // Where file `id`'s edge from the current importer is (stamp: which importer set it), to merge a file imported twice.
  const stamp = new Int32Array(paths.length).fill(-1);
  const edgeOf = new Int32Array(paths.length);
  let edges = 0;
  stale.forEach((entry, i) => {
    start[i] = edges;
    // Each edge's names: the list it came with, or, when the file comes again through
    // another import (rare), the merged set.
    const edgeNames: (readonly string[] | Set<string>)[] = [];
    resolver.eachImport(entry.path, (found, list) => {
      const distinct = list.length < 2 ? list.length : new Set(list).size;
      const each = (path: string) => {
        const id = ids.get(path);
        if (id === undefined) return;
        if (stamp[id] === i) {
          const e = edgeOf[id]!;
          let set = edgeNames[e - start[i]!]!;
          if (!(set instanceof Set)) edgeNames[e - start[i]!] = set = new Set(set);
          for (const name of list) set.add(name);
          nameCount[e] = set.size;
          return;
        }
        if (edges === target.length) {
          target = grow(target);
          nameCount = grow(nameCount);
        }
        stamp[id] = i;
        edgeOf[id] = edges;
        target[edges] = id;
        nameCount[edges] = distinct;
        edgeNames.push(list);
        edges++;
      };
      if (typeof found === "string") each(found);
      else for (const path of found) each(path);
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
    names.push([...taken]);
  });
  start[stale.length] = edges;
  target = target.subarray(0, edges);
  nameCount = nameCount.subarray(0, edges);
  return {
    ids,
    paths,
    staleIndex,
    start,
    target,
    nameCount,
    names,
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
