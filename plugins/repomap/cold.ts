// The cold map's plan: when many files have no cached tags, the first map does not
// wait for every parse. Every file is ranked first from what is cheap to read
// (its path, its size, and the imports in its first bytes, by the language's import
// syntax); the files nearest the chat files in that import graph and the top-ranked
// files are parsed now, until there is enough for the budget; the rest are parsed
// in the background (scan.ts parseInBackground), and until then rank by the names
// they import.
import type { FileEntry } from "./scan.ts";
import { ImportResolver, type FileImports } from "./imports.ts";
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
  const imports = new Map<string, FileImports>();
  for (const entry of stale) imports.set(entry.path, heads.importsOf(entry.path));
  const importers = new Map<string, string[]>();
  for (const [from, targets] of imports) {
    for (const to of targets.keys()) {
      let list = importers.get(to);
      if (!list) importers.set(to, (list = []));
      list.push(from);
    }
  }

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
  for (const path of chat) near.push(...(importers.get(path) ?? []));
  for (const path of near.slice(0, MAX_NEIGHBOURS)) choose(path);
  const second: string[] = [];
  for (const path of near) for (const target of imports.get(path)?.keys() ?? []) second.push(target);
  for (const path of second.slice(0, MAX_NEIGHBOURS)) choose(path);

  const wantFiles = Math.max(MIN_NOW_FILES, Math.ceil(input.budget / 8));
  const wantBytes = input.budget * 200;
  let bytes = 0;
  for (const path of order) bytes += byPath.get(path)!.size;
  if (order.length < wantFiles || bytes < wantBytes) {
    for (const path of byImportRank(stale, imports, chat)) {
      if (order.length >= wantFiles && bytes >= wantBytes) break;
      if (chosen.has(path)) continue;
      choose(path);
      bytes += byPath.get(path)!.size;
    }
  }

  const now = order.map((path) => byPath.get(path)!);
  const later = stale.filter((e) => !chosen.has(e.path));
  const prescanned = new Map<string, RankFile>();
  for (const entry of later) prescanned.set(entry.path, importsAsReferences(entry.path, imports.get(entry.path)));
  return { now, later, prescanned };
}

/** The stale files by PageRank over "imports" edges (weighted by the names taken), personalised to the chat files. */
function byImportRank(stale: readonly FileEntry[], imports: ReadonlyMap<string, FileImports>, chat: readonly string[]): string[] {
  const index = new Map(stale.map((e, i) => [e.path, i]));
  const src: number[] = [];
  const dst: number[] = [];
  const weight: number[] = [];
  for (const [from, targets] of imports) {
    const a = index.get(from)!;
    for (const [to, names] of targets) {
      const b = index.get(to);
      if (b === undefined || b === a) continue;
      src.push(a);
      dst.push(b);
      weight.push(1 + Math.sqrt(names.size));
    }
  }
  let personalization: Float64Array | null = null;
  const inChat = chat.filter((path) => index.has(path));
  if (inChat.length > 0) {
    personalization = new Float64Array(stale.length);
    for (const path of inChat) personalization[index.get(path)!] = 1;
  }
  const ranks = personalizedPageRank(stale.length, { src: Int32Array.from(src), dst: Int32Array.from(dst), weight: Float64Array.from(weight), count: src.length }, personalization);
  // Ties (files nothing imports) by size: a larger file is likelier to hold what others use.
  return stale
    .map((e, i) => ({ path: e.path, rank: ranks[i]!, size: e.size }))
    .sort((a, b) => b.rank - a.rank || b.size - a.size || (a.path < b.path ? -1 : 1))
    .map((e) => e.path);
}

/** A file not parsed yet, as ranking reads it: the names it imports count as its references. */
function importsAsReferences(path: string, imports: FileImports | undefined): RankFile {
  const names = new Set<string>();
  for (const taken of imports?.values() ?? []) for (const name of taken) names.add(name);
  const refs = new Float64Array(names.size * 3);
  let i = 0;
  for (const name of names) {
    refs[i++] = identKey(name);
    refs[i++] = 1;
    refs[i++] = 0;
  }
  return { path, defNames: [], defLines: [], refs };
}
