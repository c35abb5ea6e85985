// Building the repo map end to end: list → stat → (cached map?) → tags (cache,
// reparse what changed) → rank → fit to the budget. The finished map is cached by
// the repository state (files, mtimes, sizes), the chat files and the budget,
// never by the words of a message.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import type { GrammarAssets } from "../../grammars/runtime.ts";
import type { TagCache } from "./cache.ts";
import { ImportResolver, type FileImports } from "./imports.ts";
import type { MapMemory } from "./memory.ts";
import type { RankedEntry, RankRequest } from "./rank.ts";
import { PATCH_MIN_FILES, rankWithState, STATE_FORMAT } from "./rank-state.ts";
import { EDGES_PER_IDENT, WEIGHTS } from "./graph.ts";
import { MapRenderer, estimateTokens, fitToBudget } from "./render.ts";
import { capBareNames, specialFiles } from "./special.ts";
import { scanTags, statFiles, type FileEntry, type ScanResult, type ScanStats } from "./scan.ts";
import type { StatHelper } from "./stat.ts";
import { decodeDefNames, decodeDefs, type Definition } from "./tags.ts";

/** Bump when ranking or rendering changes, or how a ranking is stored, so cached maps and rankings are not reused. */
const MAP_FORMAT = 4;

export interface RepoMapInput {
  root: string;
  /** Repository-relative files (tracked, .coderignore applied). */
  files: readonly string[];
  /** Files whose full text is in the chat (editable and read-only): personalised, never shown. */
  chatFiles: readonly string[];
  mentionedFiles: readonly string[];
  mentionedIdents: readonly string[];
  /** Token budget of the map body. */
  budget: number;
  countTokens: (text: string) => number;
  cache: TagCache;
  assets: () => Promise<GrammarAssets>;
  warn: (message: string) => void;
  progress?: (done: number, total: number) => void;
  /** "state": reuse a map for the same files, mtimes, chat and budget; "files": ignore mtimes; "none": always rebuild. */
  reuse: "state" | "files" | "none";
  /** Shares the stat of the listing with a second thread (stat.ts); absent: this thread stats alone. */
  statHelper?: StatHelper | null;
  /** Worker count for cold builds (default: cores). */
  workers?: number;
  /** Changed files needed before parsing moves to workers (see ScanOptions). */
  poolThreshold?: number;
  /** What the session keeps between builds (memory.ts); absent: everything is read from the cache. */
  memory?: MapMemory;
  /** A file's text through the kit's capped reader (a tracked link to /dev/zero is not read); default: the disk. */
  read?: (path: string) => string | null;
  /** Aborts a build (it rejects with the signal's reason). */
  signal?: AbortSignal;
  /**
   * When the chat files are the only changed files and older tags of theirs are
   * cached, build from those tags instead of parsing now (no grammar is loaded).
   * Chat files are never shown; their tags only personalise the ranking. Such a
   * map is `provisional`: not stored under this state's key, and its `deferred`
   * files are to be reparsed (reparseInBackground) before the next build.
   */
  deferChatFiles?: boolean;
  /**
   * A cold build does not wait for every parse: when at least this many files need
   * parsing, the files the first map needs are parsed now (cold.ts) and the rest are
   * returned in `pending`, for the caller to parse in the background
   * (scan.ts parseInBackground). Such a map is `provisional`. Absent: parse everything.
   */
  coldFirst?: number;
}

export interface RepoMapResult {
  /** The map body ("" when nothing fits or the repository has no files). */
  text: string;
  tokens: number;
  fromCache: boolean;
  key: string;
  /** Built from older tags of changed chat files (see RepoMapInput.deferChatFiles): not cached under `key`. */
  provisional: boolean;
  /** The ranking the map was cut from, in order (absent when a finished map was reused). */
  ranking?: readonly RankedEntry[];
  /** The changed chat files whose older tags were used: still to be reparsed. */
  deferred: FileEntry[];
  /** A cold build's files not parsed yet (see RepoMapInput.coldFirst): to be parsed in the background. */
  pending: FileEntry[];
  stats: ScanStats & { statMs: number; scanMs: number; rankMs: number; renderMs: number; ranking?: "reused" | "patched" | "built" };
}

/** A stat of the repository and the keys of the map it would give. */
export interface PreparedMap {
  input: RepoMapInput;
  entries: ReturnType<typeof statFiles>;
  /** Repository state + chat files + budget (no mentions): a session reuses its map while this holds. */
  stateKey: string;
  /** stateKey + mentions: the persistent map cache's key. */
  key: string;
  statMs: number;
}

/** Stats the files and computes the cache keys (what a warm run costs). */
export function prepareRepoMap(input: RepoMapInput): PreparedMap {
  const started = performance.now();
  const entries = statFiles(input.root, input.files, input.statHelper);
  const statMs = performance.now() - started;
  const state = new Bun.CryptoHasher("sha256");
  state.update(`${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${input.reuse}|${input.budget}\n`);
  state.update(sortedUnique(input.chatFiles) + "\n\n");
  hashEntries(state, entries, input.reuse === "files" ? () => true : () => false);
  const stateKey = state.digest("hex");
  const full = new Bun.CryptoHasher("sha256");
  full.update(stateKey + "\n");
  full.update(sortedUnique(input.mentionedFiles) + "\n\n");
  full.update(sortedUnique(input.mentionedIdents));
  return { input, entries, stateKey, key: full.digest("hex"), statMs };
}

export async function buildRepoMap(input: RepoMapInput): Promise<RepoMapResult> {
  return buildPreparedMap(prepareRepoMap(input));
}

export async function buildPreparedMap(prepared: PreparedMap): Promise<RepoMapResult> {
  const { input, entries, key, statMs } = prepared;
  const chat = new Set(input.chatFiles);
  const stats: RepoMapResult["stats"] = { files: entries.length, parsed: 0, bytesParsed: 0, workers: 0, prescanMs: 0, statMs, scanMs: 0, rankMs: 0, renderMs: 0 };

  if (input.reuse !== "none") {
    const cached = input.cache.getMap(key);
    if (cached !== null) {
      return withLazyTokens({ text: cached, fromCache: true, key, provisional: false, deferred: [], pending: [], stats }, input.countTokens);
    }
  }

  const scanStart = performance.now();
  // One array: the import resolvers over it (the cold plan's, the chat files') share its indexes.
  const allFiles = entries.map((e) => e.path);
  const scan = await scanTags(entries, {
    root: input.root,
    cache: input.cache,
    assets: input.assets,
    warn: input.warn,
    progress: input.progress,
    workers: input.workers,
    poolThreshold: input.poolThreshold,
    signal: input.signal,
    memory: input.memory,
    // A few changed files patch the kept graph (rank-state.ts): no other file's tags are read.
    preloadAbove: PATCH_MIN_FILES,
    deferrable: input.deferChatFiles ? chat : undefined,
    coldFirst:
      input.coldFirst === undefined
        ? undefined
        : {
            minFiles: input.coldFirst,
            files: allFiles,
            chatFiles: input.chatFiles,
            mentionedFiles: input.mentionedFiles,
            mentionedIdents: input.mentionedIdents,
            budget: input.budget,
            read: (path) => (input.read ? input.read(path) : readText(input.root, path)),
          },
  });
  Object.assign(stats, scan.stats);
  stats.scanMs = performance.now() - scanStart;

  const rankStart = performance.now();
  // A map never shows more definitions than its budget has tokens.
  const limit = Math.max(200, input.budget * 2);
  const imports = chatImports(input, entries, allFiles, scan);
  const rankingKey = rankingKeyOf(input, scan.files, limit, imports);
  const provisional = scan.deferred.length > 0 || scan.pending.length > 0;
  // A cold build's ranking and rendering stand for a few requests at most: not worth storing.
  const store = input.reuse !== "none" && scan.pending.length === 0;
  // The same ranking over the same shown files renders the same map, whatever
  // else changed (e.g. the body of a chat file: never shown, same names).
  const renderKey = renderKeyOf(input, entries, chat, rankingKey);
  const rendered = input.reuse === "none" ? null : input.cache.getMap(renderKey);
  if (rendered !== null) {
    stats.rankMs = performance.now() - rankStart;
    if (!provisional) input.cache.putMap(key, rendered);
    return withLazyTokens({ text: rendered, fromCache: true, key, provisional, deferred: scan.deferred, pending: scan.pending, stats }, input.countTokens);
  }
  let ranked = decodeRanking(input.reuse === "none" ? null : input.cache.getRanking(rankingKey));
  if (ranked) {
    // Same names everywhere: only lines in the files parsed now may have moved.
    ranked = relineFresh(ranked, scan.fresh);
    stats.ranking = "reused";
  } else {
    const request = {
      allFiles,
      chatFiles: chat,
      mentionedFiles: new Set(input.mentionedFiles),
      mentionedIdents: new Set(input.mentionedIdents),
      imports,
      limit,
    };
    const result = rankWithState({
      key: rankContextKey(request),
      entries,
      scan,
      request,
      cache: input.cache,
      store,
      memory: input.memory,
    });
    ranked = result.ranked;
    stats.ranking = result.how;
    if (store) input.cache.putRanking(rankingKey, encodeRanking(ranked));
  }
  // Scope ranges are decoded only for the files the map renders.
  const definitions = new Map<string, Definition[]>();
  const definitionsOf = (path: string): Definition[] => {
    let defs = definitions.get(path);
    if (!defs) {
      defs = decodeDefs(scan.defsOf(path));
      definitions.set(path, defs);
    }
    return defs;
  };
  const rankedPaths = new Set(ranked.filter((e) => e.line !== undefined).map((e) => e.path));
  const special: RankedEntry[] = specialFiles(allFiles, input.chatFiles)
    .filter((f) => !rankedPaths.has(f))
    .map((path) => ({ path }));
  const specialSet = new Set(special.map((e) => e.path));
  const ordered = capBareNames([...special, ...ranked.filter((e) => e.line !== undefined || !specialSet.has(e.path))], input.budget, input.countTokens);
  stats.rankMs = performance.now() - rankStart;

  const renderStart = performance.now();
  const renderer = new MapRenderer({
    text: (path) => (input.read ? input.read(path) : readText(input.root, path)),
    definitions: definitionsOf,
  });
  const fitted = fitToBudget(ordered, input.budget, (prefix) => renderer.render(prefix, chat), input.countTokens);
  stats.renderMs = performance.now() - renderStart;

  if (store) {
    input.cache.putMap(renderKey, fitted.text);
    // A provisional map is not what this state's tags give: never cached under its key.
    if (!provisional) input.cache.putMap(key, fitted.text);
  }
  return { text: fitted.text, tokens: fitted.tokens, fromCache: false, key, provisional, deferred: scan.deferred, pending: scan.pending, ranking: ordered, stats };
}

/**
 * Each chat file's imports, read from its text (a chat file is small; no parse).
 * They are stored beside the file's ranking signature: a chat file described by
 * its older tags (deferred) gets the imports read with those tags, so that a
 * provisional map is the one those tags gave. And they are kept as resolved, with
 * what the resolution read (the listing, and the stat of each file read: the chat
 * file, configs, packages): while those are the same, the resolution gives the same
 * (it reads nothing else), so it is not done again (building its indexes of every
 * listed path cost 30-45 ms of every changed build at 10k files).
 */
function chatImports(input: RepoMapInput, entries: readonly FileEntry[], files: readonly string[], scan: ScanResult): Map<string, FileImports> {
  const imports = new Map<string, FileImports>();
  if (input.chatFiles.length === 0) return imports;
  const deferred = new Set(scan.deferred.map((e) => e.path));
  let resolver: ImportResolver | null = null;
  let read: Set<string> | null = null;
  let listing: string | null = null;
  let stats: Map<string, FileEntry> | null = null;
  const statOf = (paths: Iterable<string>): Map<string, FileEntry> => {
    const wanted = new Set(paths);
    if (stats && [...wanted].every((p) => stats!.has(p))) return stats;
    stats = new Map();
    for (const e of entries) if (wanted.has(e.path)) stats.set(e.path, e);
    return stats;
  };
  for (const chat of new Set(input.chatFiles)) {
    const sig = scan.files.get(chat)?.sig ?? "";
    const stored = deferred.has(chat) ? decodeImports(input.cache.getImports(chat, sig)) : null;
    if (stored) {
      imports.set(chat, stored);
      continue;
    }
    listing ??= listingHash(files);
    const kept = input.reuse === "none" ? null : resolvedImports(input.cache.getResolvedImports(chat), listing, statOf);
    if (kept) {
      imports.set(chat, kept);
      continue;
    }
    read ??= new Set();
    const reads = read;
    resolver ??= new ImportResolver({
      files,
      read: (path) => {
        reads.add(path);
        return input.read ? input.read(path) : readText(input.root, path);
      },
    });
    // The resolver keeps what it read: a second chat file's resolution may use the first's reads.
    reads.add(chat);
    const found = resolver.importsOf(chat);
    imports.set(chat, found);
    if (!deferred.has(chat) && sig) {
      const encoded = encodeImports(found);
      // Written only when it changed (a write is a transaction: more than the read).
      if (input.cache.getImports(chat, sig) !== encoded) input.cache.putImports(chat, sig, encoded);
      const known = statOf(reads);
      // Kept only when every file read has a stat to check it by (a file not listed: not kept).
      if (input.reuse !== "none" && [...reads].every((p) => known.has(p))) {
        const states = [...reads].sort().map((p) => [p, known.get(p)!.mtime, known.get(p)!.size]);
        input.cache.putResolvedImports(chat, JSON.stringify({ l: listing, s: states, i: encoded }));
      }
    }
  }
  return imports;
}

/** A hash of the listed paths in order (what the import resolver indexes). */
function listingHash(files: readonly string[]): string {
  return new Bun.CryptoHasher("sha256").update(`${files.length}\n${files.join("\n")}`).digest("hex");
}

/** A chat file's kept resolution when the listing and every file it read are as they were, else null. */
function resolvedImports(value: string | null, listing: string, statOf: (paths: Iterable<string>) => Map<string, FileEntry>): FileImports | null {
  if (value === null) return null;
  let kept: { l: string; s: [string, number, number][]; i: string };
  try {
    kept = JSON.parse(value);
  } catch {
    return null;
  }
  if (kept.l !== listing || !Array.isArray(kept.s) || typeof kept.i !== "string") return null;
  const now = statOf(kept.s.map((s) => s[0]));
  for (const [path, mtime, size] of kept.s) {
    const e = now.get(path);
    if (!e || e.mtime !== mtime || e.size !== size) return null;
  }
  return decodeImports(kept.i);
}

function readText(root: string, path: string): string | null {
  try {
    return readFileSync(join(root, path), "utf8");
  } catch {
    return null;
  }
}

function encodeImports(imports: FileImports): string {
  return JSON.stringify([...imports].map(([file, names]) => [file, [...names]]));
}

function decodeImports(data: string | null): FileImports | null {
  if (data === null) return null;
  try {
    return new Map((JSON.parse(data) as [string, string[]][]).map(([file, names]) => [file, new Set(names)]));
  } catch {
    return null;
  }
}

/** What the ranking depends on: every tagged file's signature, the chat and its imports, the mentions and the limit. */
function rankingKeyOf(input: RepoMapInput, files: ReadonlyMap<string, { sig: string; skipped: string }>, limit: number, imports: ReadonlyMap<string, FileImports>): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${limit}\n`);
  hasher.update(sortedUnique(input.chatFiles) + "\n\n");
  hasher.update(importsText(imports));
  hasher.update(sortedUnique(input.mentionedFiles) + "\n\n");
  hasher.update(sortedUnique(input.mentionedIdents) + "\n\n");
  // In listing order (parse results arrive in any order). Untagged files only
  // appear by name: their set matters, not their content.
  const parts: string[] = [];
  for (const path of input.files) {
    const file = files.get(path);
    parts.push(file ? `${path}\u0000${file.skipped ? "-" : file.sig}` : path);
  }
  hasher.update(parts.join("\n"));
  return hasher.digest("hex");
}

/**
 * What a rendering depends on: the ranking (its key), the budget, and the files it
 * may show (path, mtime, size: their text and tags) or list by name. Chat files
 * are never shown: their paths alone (their content is in the ranking key). Kept
 * in the maps table under a distinct prefix.
 */
function renderKeyOf(input: RepoMapInput, entries: readonly FileEntry[], chat: ReadonlySet<string>, rankingKey: string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`render|${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${input.budget}|${rankingKey}\n`);
  hashEntries(hasher, entries, (path) => chat.has(path));
  return "render:" + hasher.digest("hex");
}

/** The chat files' imports as key text: each chat file, then its imported files with the names taken (all sorted). */
function importsText(imports: ReadonlyMap<string, FileImports>): string {
  let text = "";
  for (const [chat, fileImports] of [...imports].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    text += `${chat}\n${[...fileImports].map(([file, names]) => `${file}\t${[...names].sort().join(",")}`).sort().join("\n")}\n\n`;
  }
  return text;
}

/**
 * A map served from the cache, its token count estimated only when read: a request's prompt does
 * not read it, and counting would load the token table (and its pattern) into a one-shot run that
 * otherwise needs none (the trivial task's peak memory is about 0.7 MB lower).
 */
function withLazyTokens(result: Omit<RepoMapResult, "tokens">, countTokens: (text: string) => number): RepoMapResult {
  let tokens: number | undefined;
  return Object.defineProperty(result as RepoMapResult, "tokens", {
    enumerable: true,
    get: () => (tokens ??= estimateTokens(result.text, countTokens)),
  });
}

/** The context a state was built in: the chat files, their imports, the mentioned names, the weights. */
function rankContextKey(request: Pick<RankRequest, "chatFiles" | "mentionedIdents" | "imports">): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`${STATE_FORMAT}|${GRAMMAR_TABLE_VERSION}|${EDGES_PER_IDENT}|${JSON.stringify(WEIGHTS)}\n`);
  hasher.update([...request.chatFiles].sort().join("\n") + "\n\n");
  hasher.update(importsText(request.imports ?? new Map()));
  hasher.update([...request.mentionedIdents].sort().join("\n"));
  return hasher.digest("hex");
}

/**
 * Every file as a key sees it: its path, and its mtime and size unless `pathOnly` (as the
 * numbers' bytes: formatting 10k floats as text cost 10-25 ms of every warm run at 10k files).
 */
function hashEntries(hasher: Bun.CryptoHasher, entries: readonly FileEntry[], pathOnly: (path: string) => boolean): void {
  const paths: string[] = new Array(entries.length);
  // Per file: mtime and size, or NaN twice for a path alone (no stat gives NaN).
  const numbers = new Float64Array(entries.length * 2);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    paths[i] = e.path;
    const alone = pathOnly(e.path);
    numbers[2 * i] = alone ? NaN : e.mtime;
    numbers[2 * i + 1] = alone ? NaN : e.size;
  }
  hasher.update(`${entries.length}\n`);
  hasher.update(paths.join("\u0000"));
  hasher.update(new Uint8Array(numbers.buffer));
}

/** A list's distinct items, sorted, one a line (order and repeats make no difference to a key). */
function sortedUnique(items: readonly string[]): string {
  return [...new Set(items)].sort().join("\n");
}

/**
 * A ranking as stored: its columns as JSON (paths; names, "" for a file listed by name; lines,
 * -1 for one), read by the native parser: splitting 8,000 rows by hand cost ~40 ms in a fresh
 * process, on the way of every map after a body edit.
 */
function encodeRanking(ranked: readonly RankedEntry[]): string {
  return JSON.stringify({ p: ranked.map((e) => e.path), n: ranked.map((e) => e.name ?? ""), l: ranked.map((e) => e.line ?? -1) });
}

function decodeRanking(text: string | null): RankedEntry[] | null {
  if (text === null) return null;
  let columns: { p: string[]; n: string[]; l: number[] };
  try {
    columns = JSON.parse(text);
  } catch {
    return null;
  }
  const { p, n, l } = columns;
  if (!Array.isArray(p) || !Array.isArray(n) || !Array.isArray(l) || n.length !== p.length || l.length !== p.length) return null;
  const ranked: RankedEntry[] = new Array(p.length);
  for (let i = 0; i < p.length; i++) ranked[i] = l[i]! < 0 ? { path: p[i]! } : { path: p[i]!, name: n[i]!, line: l[i]! };
  return ranked;
}

/** Files parsed in this run keep their names but may have moved lines: take the lines from their new tags. */
function relineFresh(ranked: RankedEntry[], fresh: ReadonlyMap<string, { defs: string }>): RankedEntry[] {
  if (fresh.size === 0) return ranked;
  const lines = new Map<string, number[]>();
  const seen = new Map<string, number>();
  return ranked.map((entry) => {
    const row = entry.line === undefined ? undefined : fresh.get(entry.path);
    if (!row) return entry;
    const key = entry.path + "\u0000" + entry.name;
    let list = lines.get(key);
    if (!list) {
      const defs = decodeDefNames(row.defs);
      list = defs.names.flatMap((name, i) => (name === entry.name ? [defs.lines[i]!] : []));
      lines.set(key, list);
    }
    const index = seen.get(key) ?? 0;
    seen.set(key, index + 1);
    return { path: entry.path, name: entry.name!, line: list[index] ?? entry.line! };
  });
}
