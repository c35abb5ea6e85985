// Building the repo map end to end: list → stat → (cached map?) → tags (cache,
// reparse what changed) → rank → fit to the budget. The finished map is cached by
// the repository state (files, mtimes, sizes), the chat files, the budget and the
// tokenizer it was fitted in, never by the words of a message.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import type { GrammarAssets } from "../../grammars/runtime.ts";
import type { TagCache } from "./cache.ts";
import { ImportResolver, type FileImports } from "./imports.ts";
import type { MapMemory } from "./memory.ts";
import type { RankedEntry, RankRequest } from "./rank.ts";
import { PATCH_MIN_FILES, rankWithState, STATE_FORMAT } from "./rank-state.ts";
import { listingHash } from "./rank-quick.ts";
import { EDGES_PER_IDENT, WEIGHTS } from "./graph.ts";
import { MapRenderer, PrefixTooShort, estimateTokens, fitToBudget, shownFiles, type KnownEstimates } from "./render.ts";
import { renderOrder, type RenderOrder } from "./special.ts";
import { scanTags, statFiles, type FileEntry, type ScanResult, type ScanStats } from "./scan.ts";
import type { StatHelper } from "./stat.ts";
import { decodeDefNames } from "./tags.ts";

/** Bump when ranking or rendering changes, or how a ranking is stored, so cached maps and rankings are not reused. */
const MAP_FORMAT = 5;

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
  /**
   * What countTokens counts in (an encoding's name): a fitted map is kept under it (the keys
   * of PreparedMap and the rendering's), and so are token counts and the map's estimates
   * (FitMemo). Absent: one unnamed counter's maps (a caller's with one counter per cache), and
   * no estimates kept.
   */
  tokenizer?: string;
  cache: TagCache;
  assets: () => Promise<GrammarAssets>;
  warn: (message: string) => void;
  progress?: (done: number, total: number) => void;
  /** "state": reuse a map for the same files, mtimes, chat and budget; "files": ignore mtimes; "none": always rebuild. */
  reuse: "state" | "files" | "none";
  /** Shares the stat of the listing with a second thread (stat.ts); absent: this thread stats alone. */
  statHelper?: StatHelper | null;
  /**
   * Whether a worker may parse ahead beside the stat (memory.ts tagAhead): only when a core is
   * likely free. On a busy machine its start, grammar compile and cold parse cost 7-35 ms more
   * CPU than the same parse on this thread, for no wall time measurably saved (README.md).
   * Default: true.
   */
  parseAhead?: boolean;
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
  /** The render order the map was cut from (absent when a finished map was reused; when a stored ranking's first part served, only that part). */
  ranking?: readonly RankedEntry[];
  /** The changed chat files whose older tags were used: still to be reparsed. */
  deferred: FileEntry[];
  /** A cold build's files not parsed yet (see RepoMapInput.coldFirst): to be parsed in the background. */
  pending: FileEntry[];
  stats: ScanStats & { statMs: number; scanMs: number; rankMs: number; renderMs: number; ranking?: "reused" | "patched" | "built"; rankingKept?: boolean };
}

/** A stat of the repository and the keys of the map it would give. */
export interface PreparedMap {
  input: RepoMapInput;
  entries: ReturnType<typeof statFiles>;
  /** Repository state + chat files + budget + tokenizer (no mentions): a session reuses its map while this holds. */
  stateKey: string;
  /** stateKey + mentions: the persistent map cache's key. */
  key: string;
  statMs: number;
}

/** Stats the files and computes the cache keys (what a warm run costs). */
export function prepareRepoMap(input: RepoMapInput): PreparedMap {
  // A large repository's tagger starts now, beside the stat, when a core is free (memory.ts tagAhead).
  const tagger = input.memory?.tagger ?? null;
  if (input.parseAhead !== false) void input.memory?.tagAhead(input.root, input.files, input.cache, input.deferChatFiles ? input.chatFiles : []);
  // A tagger started to parse ahead has the other core: the stat then stays on this thread.
  const parsingAhead = (input.memory?.tagger ?? null) !== tagger;
  const started = performance.now();
  const entries = statFiles(input.root, input.files, parsingAhead ? null : input.statHelper);
  const statMs = performance.now() - started;
  const state = new Bun.CryptoHasher("sha256");
  state.update(`${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${input.reuse}|${input.budget}|${tokenizerOf(input)}\n`);
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
  // A hash of the listed files, for the chat files' kept imports and the ranking key (joining 10k paths and hashing them costs ~1 ms).
  let listing: string | undefined;
  const listingOf = () => (listing ??= listingHash(allFiles));
  const imports = chatImports(input, entries, allFiles, listingOf, scan);
  const rankingKey = rankingKeyOf(input, allFiles, listingOf(), scan.files, limit, imports);
  const provisional = scan.deferred.length > 0 || scan.pending.length > 0;
  // A cold build's ranking and rendering stand for a few requests at most: not worth storing.
  const store = input.reuse !== "none" && scan.pending.length === 0;
  // The same ranking over the same shown files renders the same map, whatever
  // else changed (e.g. the body of a chat file: never shown, same names).
  const renderKey = renderKeyOf(input, entries, chat, rankingKey);
  const rendered = input.reuse === "none" ? null : input.cache.getMap(renderKey);
  if (rendered !== null) {
    stats.rankMs = performance.now() - rankStart;
    if (!provisional) input.cache.putBuild(null, [[key, rendered]]);
    return withLazyTokens({ text: rendered, fromCache: true, key, provisional, deferred: scan.deferred, pending: scan.pending, stats }, input.countTokens);
  }
  // The ranking built now (rank-state.ts): when none is stored under its key, or the stored one
  // is too short for this fit.
  const rankNow = (): RankedEntry[] => {
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
      listing: listingOf(),
      entries,
      scan,
      request,
      cache: input.cache,
      store,
      memory: input.memory,
    });
    stats.ranking = result.how;
    if (result.kept) stats.rankingKept = true;
    return result.ranked;
  };
  // Estimates kept from earlier builds: only for a map this state's tags give (a provisional
  // one may show files described by no tags yet), and only under a named tokenizer.
  const memo = store && !provisional && input.tokenizer !== undefined ? FitMemo.read(input, entries, scan, chat) : null;
  const count = memo ? memo.counter(input.countTokens) : input.countTokens;
  const renderer = new MapRenderer({
    text: (path) => (input.read ? input.read(path) : readText(input.root, path)),
    // Scope ranges are decoded only for the lines the map shows.
    headers: (path, lines) => definitionHeaders(scan.defsOf(path), lines),
  });
  let renderMs = 0;
  const fit = (ranked: readonly RankedEntry[], whole: StoredRanking["whole"]) => {
    const order = renderOrder(ranked, allFiles, input.chatFiles, input.budget, count, whole ? new Set(whole.shown) : undefined);
    // A stored part with a whole shorter than its own kept entries is not one this code wrote.
    if (whole && whole.total < order.kept) throw new PrefixTooShort();
    // Of a stored first part, only the kept entries are the whole's (names moved behind them are not).
    const ordered = whole ? order.entries.slice(0, order.kept) : order.entries;
    const renderStart = performance.now();
    const run = memo?.run(ordered);
    try {
      const render = (prefix: readonly RankedEntry[]) => run?.rendering(prefix.length) ?? renderer.render(prefix, chat);
      return { order, ordered, run, fitted: fitToBudget(ordered, input.budget, render, input.countTokens, run, whole?.total) };
    } finally {
      renderMs += performance.now() - renderStart;
    }
  };

  const stored = input.reuse === "none" ? null : decodeRanking(input.cache.getRanking(rankingKey));
  let built: RankedEntry[] | null = null;
  let done: ReturnType<typeof fit> | null = null;
  if (stored) {
    stats.ranking = "reused";
    try {
      // Same names everywhere: only lines may have moved, in the files parsed now, or in any
      // file of the ranking whose stat changed since it was stored (parsed by a build between).
      const moved = stored.lined !== linedStats(stored.ranked, entries);
      done = fit(moved ? reline(stored.ranked, (path) => scan.defsOf(path)) : relineFresh(stored.ranked, scan.fresh), stored.whole);
    } catch (error) {
      if (!(error instanceof PrefixTooShort)) throw error;
    }
  }
  if (!done) done = fit((built = rankNow()), null);
  const { order, ordered, run, fitted } = done;
  stats.rankMs = performance.now() - rankStart - renderMs;
  stats.renderMs = renderMs;

  if (store) {
    // One transaction for the build's writes (each is a transaction of its own otherwise).
    const maps: [string, string][] = [[renderKey, fitted.text]];
    // A provisional map is not what this state's tags give: never cached under its key.
    if (!provisional) maps.push([key, fitted.text]);
    const shown = run?.keep(fitted.entries, fitted.text);
    if (shown) maps.push(shown);
    if (memo?.changed) maps.push([memo.key, memo.encode()]);
    input.cache.putBuild(built && { key: rankingKey, entries: encodeRanking(built, order, fitted.furthest, entries) }, maps);
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
function chatImports(input: RepoMapInput, entries: readonly FileEntry[], files: readonly string[], listingOf: () => string, scan: ScanResult): Map<string, FileImports> {
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
    listing ??= listingOf();
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
function rankingKeyOf(input: RepoMapInput, listed: readonly string[], listing: string, files: ReadonlyMap<string, { sig: string; skipped: string }>, limit: number, imports: ReadonlyMap<string, FileImports>): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${limit}\n`);
  hasher.update(sortedUnique(input.chatFiles) + "\n\n");
  hasher.update(importsText(imports));
  hasher.update(sortedUnique(input.mentionedFiles) + "\n\n");
  hasher.update(sortedUnique(input.mentionedIdents) + "\n\n");
  // The files ranked (the listing's regular files, as the ranking and the special files see
  // them), in listing order (parse results arrive in any order): the paths (their hash), then
  // what each is to the ranking: its signature, "-" when skipped, "" when untagged (only its
  // name matters). A column rather than a string per file: 10k short strings cost more than the hashing.
  const described: string[] = new Array(listed.length);
  for (let i = 0; i < listed.length; i++) {
    const file = files.get(listed[i]!);
    described[i] = file ? (file.skipped ? "-" : file.sig) : "";
  }
  hasher.update(`${listing}\n`);
  hasher.update(described.join("\n"));
  return hasher.digest("hex");
}

/**
 * What a rendering depends on: the ranking (its key), the budget and the tokenizer the fit
 * counts in, and the files it may show (path, mtime, size: their text and tags) or list by
 * name. Chat files are never shown: their paths alone (their content is in the ranking key).
 * Kept in the maps table under a distinct prefix.
 */
function renderKeyOf(input: RepoMapInput, entries: readonly FileEntry[], chat: ReadonlySet<string>, rankingKey: string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`render|${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${input.budget}|${tokenizerOf(input)}|${rankingKey}\n`);
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

/**
 * The tokenizer as a key holds it: a fit's steps and the prefix it ends at follow the counts.
 * (A ranking does not: which names it keeps within their share depends on the counts of the
 * fit that reads it, and a stored first part too short for a fit is ranked again.)
 */
function tokenizerOf(input: RepoMapInput): string {
  return input.tokenizer === undefined ? "-" : `=${input.tokenizer}`;
}

/** A list's distinct items, sorted, one a line (order and repeats make no difference to a key). */
function sortedUnique(items: readonly string[]): string {
  return [...new Set(items)].sort().join("\n");
}

/** A stored ranking: its entries, or its first part with what the fit needs of the whole. */
interface StoredRanking {
  ranked: RankedEntry[];
  /** Present when `ranked` is the first part: the length of the whole's render order, and the special files it shows definitions of. */
  whole: { total: number; shown: string[] } | null;
  /** linedStats of `ranked` when it was stored. */
  lined: string;
}

/** Render-order entries a stored ranking covers beyond the furthest step of the fit that stored it. */
const STORED_MARGIN = 64;

/**
 * A ranking as stored: its columns as JSON (paths; names, "" for a file listed by name; lines,
 * -1 for one), read by the native parser: splitting 8,000 rows by hand cost ~40 ms in a fresh
 * process, on the way of every map after a body edit. Only the first part a fit can use is
 * stored: twice the furthest step of this fit and a margin, as render-order entries (a fit of a
 * later state, lines moved, takes about the same steps); with it, what the fit needs of the
 * rest (the length of the render order, which special files the ranking shows). A fit that
 * steps past it ranks again (PrefixTooShort). At 10k files the whole is 8,192 entries, ~480 KB:
 * encoding and writing it cost ~8 ms of every changed build.
 */
function encodeRanking(ranked: readonly RankedEntry[], order: RenderOrder, furthest: number, entries: readonly FileEntry[]): string {
  const wanted = 2 * furthest + STORED_MARGIN;
  // The whole when the part would reach the names moved behind the kept entries.
  const n = wanted >= order.kept ? ranked.length : Math.min(ranked.length, order.consumed(wanted));
  const p: string[] = new Array(n);
  const names: string[] = new Array(n);
  const l: number[] = new Array(n);
  // One loop filling the three columns: three `map` calls cost twice as much in a fresh process.
  for (let i = 0; i < n; i++) {
    const e = ranked[i]!;
    p[i] = e.path;
    names[i] = e.name ?? "";
    l[i] = e.line ?? -1;
  }
  const whole = n < ranked.length ? { t: order.entries.length, s: order.shown } : {};
  return JSON.stringify({ p, n: names, l, h: linedStats(n < ranked.length ? ranked.slice(0, n) : ranked, entries), ...whole });
}

function decodeRanking(text: string | null): StoredRanking | null {
  if (text === null) return null;
  let columns: { p: string[]; n: string[]; l: number[]; h?: string; t?: number; s?: string[] };
  try {
    columns = JSON.parse(text);
  } catch {
    return null;
  }
  const { p, n, l, h, t, s } = columns;
  if (!Array.isArray(p) || !Array.isArray(n) || !Array.isArray(l) || n.length !== p.length || l.length !== p.length) return null;
  let whole: StoredRanking["whole"] = null;
  if (t !== undefined || s !== undefined) {
    if (!Number.isInteger(t) || t! < 0 || !Array.isArray(s) || !s.every((x) => typeof x === "string")) return null;
    whole = { total: t!, shown: s };
  }
  const ranked: RankedEntry[] = new Array(p.length);
  for (let i = 0; i < p.length; i++) ranked[i] = l[i]! < 0 ? { path: p[i]! } : { path: p[i]!, name: n[i]!, line: l[i]! };
  return { ranked, whole, lined: typeof h === "string" ? h : "" };
}

/**
 * A hash of the stats (mtime, size) of the files with definitions in `ranked`, in the order
 * they first appear: while it is the same, their lines are those the ranking holds.
 */
function linedStats(ranked: readonly RankedEntry[], entries: readonly FileEntry[]): string {
  const paths: string[] = [];
  const wanted = new Set<string>();
  for (const e of ranked) {
    if (e.line === undefined || wanted.has(e.path)) continue;
    wanted.add(e.path);
    paths.push(e.path);
  }
  const stats = new Map<string, FileEntry>();
  for (const e of entries) if (wanted.has(e.path)) stats.set(e.path, e);
  let text = "";
  for (const path of paths) {
    const stat = stats.get(path);
    text += `${path}\u0000${stat ? `${stat.mtime}\u0000${stat.size}` : "-"}\n`;
  }
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

/** Files parsed in this run keep their names but may have moved lines: take the lines from their new tags. */
function relineFresh(ranked: RankedEntry[], fresh: ReadonlyMap<string, { defs: string }>): RankedEntry[] {
  return fresh.size === 0 ? ranked : reline(ranked, (path) => fresh.get(path)?.defs);
}

/**
 * The ranking with the lines of its definitions taken from the encoded definitions `defsOf`
 * gives (undefined: the file's lines are kept), the n-th entry of a name in a file on the
 * n-th definition of that name.
 */
function reline(ranked: RankedEntry[], defsOf: (path: string) => string | undefined): RankedEntry[] {
  const lines = new Map<string, number[]>();
  const seen = new Map<string, number>();
  return ranked.map((entry) => {
    const encoded = entry.line === undefined ? undefined : defsOf(entry.path);
    if (encoded === undefined) return entry;
    const key = entry.path + "\u0000" + entry.name;
    let list = lines.get(key);
    if (!list) {
      const defs = decodeDefNames(encoded);
      list = defs.names.flatMap((name, i) => (name === entry.name ? [defs.lines[i]!] : []));
      lines.set(key, list);
    }
    const index = seen.get(key) ?? 0;
    seen.set(key, index + 1);
    return { path: entry.path, name: entry.name!, line: list[index] ?? entry.line! };
  });
}

/**
 * The header ranges of a file's encoded definitions (tags.ts encodeDefs) on `lines`, in the
 * definitions' order: what `decodeDefs(encoded).filter(on lines).flatMap((d) => d.show)` gives,
 * each row read as decodeDefs reads it, and only the rows on those lines decoded whole.
 */
export function definitionHeaders(encoded: string, lines: ReadonlySet<number>): [number, number][] {
  const out: [number, number][] = [];
  if (!encoded) return out;
  for (const row of encoded.split("\n")) {
    const [, line = "0", , show = ""] = row.split("\t");
    if (!show || !lines.has(Number(line))) continue;
    for (const range of show.split(",")) out.push(range.split("-").map(Number) as [number, number]);
  }
  return out;
}

/** Layout of FitMemo's row. */
const FIT_FORMAT = 1;
/** Estimates a memo keeps (a build learns about five; the newest are kept). */
const MEMO_ESTIMATES = 256;
/** Counts of short texts (files listed by name) a memo keeps. */
const MEMO_COUNTS = 1024;
/** Texts up to this length have their counts kept. */
const MEMO_TEXT_MAX = 256;

/**
 * Token counts kept from build to build, in one row of the maps table per tokenizer: the
 * estimates of renderings (fitToBudget's steps) and the counts of short texts (the names
 * capBareNames weighs). A rendering's estimate is kept under a hash of everything its text is
 * made of: the map's and the grammar table's versions, and per file shown, its path, the lines
 * shown (or none: listed by name), and, for a file with lines, its mtime and size (its text, as
 * every key here has it) and its tags' signature and skip reason (a file with no tags yet has
 * none: its rendering would change when it gets some). So a build whose ranking moved but whose
 * steps show the same lines of the same files finds their estimates and renders only the map it
 * ends at: the same steps on the same numbers give the same map. Entries are only ever added
 * under such keys, so a memo written by another process, or lost in a race, costs only time.
 */
class FitMemo {
  readonly key: string;
  changed = false;
  readonly #estimates: Map<string, number>;
  readonly #counts: Map<string, number>;
  readonly #entries: readonly FileEntry[];
  readonly #tags: ScanResult["files"];
  readonly #chat: ReadonlySet<string>;
  readonly #cache: TagCache;
  readonly #stats = new Map<string, FileEntry>();
  readonly #missing = new Set<string>();

  private constructor(key: string, estimates: Map<string, number>, counts: Map<string, number>, entries: readonly FileEntry[], scan: ScanResult, chat: ReadonlySet<string>, cache: TagCache) {
    this.key = key;
    this.#estimates = estimates;
    this.#counts = counts;
    this.#entries = entries;
    this.#tags = scan.files;
    this.#chat = chat;
    this.#cache = cache;
  }

  static read(input: RepoMapInput, entries: readonly FileEntry[], scan: ScanResult, chat: ReadonlySet<string>): FitMemo {
    const key = `fit|${FIT_FORMAT}|${MAP_FORMAT}|${input.tokenizer}`;
    const estimates = new Map<string, number>();
    const counts = new Map<string, number>();
    const text = input.cache.getMap(key);
    if (text !== null) {
      try {
        const row = JSON.parse(text) as { e?: unknown; c?: unknown };
        for (const [into, pairs] of [[estimates, row.e], [counts, row.c]] as const) {
          if (!Array.isArray(pairs)) continue;
          for (const pair of pairs) if (Array.isArray(pair) && typeof pair[0] === "string" && Number.isFinite(pair[1])) into.set(pair[0], pair[1]);
        }
      } catch {
        // An unreadable memo is an empty one.
      }
    }
    return new FitMemo(key, estimates, counts, entries, scan, chat, input.cache);
  }

  /** `count`, with the counts of short texts kept. */
  counter(count: (text: string) => number): (text: string) => number {
    return (text) => {
      if (text.length > MEMO_TEXT_MAX) return count(text);
      let n = this.#counts.get(text);
      if (n === undefined) {
        n = count(text);
        if (Number.isFinite(n)) this.#learn(this.#counts, text, n);
      }
      return n;
    };
  }

  /**
   * The estimates of prefixes of `ordered` this memo knows, a place for those computed, and
   * the renderings kept (in the maps table, under "shown:" and the same key as the estimate).
   */
  run(ordered: readonly RankedEntry[]): KnownEstimates & { rendering(n: number): string | null; keep(n: number, text: string): [string, string] | null } {
    const keys = new Map<number, string | null>();
    const keyOf = (n: number): string | null => {
      let key = keys.get(n);
      if (key === undefined) keys.set(n, (key = this.#renderingKey(ordered.slice(0, n))));
      return key;
    };
    const read = new Set<number>();
    return {
      known: (n) => {
        const key = keyOf(n);
        return key === null ? undefined : this.#estimates.get(key);
      },
      learned: (n, tokens) => {
        const key = keyOf(n);
        if (key !== null && Number.isFinite(tokens)) this.#learn(this.#estimates, key, tokens);
      },
      rendering: (n) => {
        const key = keyOf(n);
        const text = key === null ? null : this.#cache.getMap("shown:" + key);
        if (text !== null) read.add(n);
        return text;
      },
      keep: (n, text) => {
        const key = keyOf(n);
        return key === null || read.has(n) ? null : ["shown:" + key, text];
      },
    };
  }

  encode(): string {
    const newest = (map: Map<string, number>, limit: number) => [...map].slice(-limit);
    return JSON.stringify({ e: newest(this.#estimates, MEMO_ESTIMATES), c: newest(this.#counts, MEMO_COUNTS) });
  }

  #learn(map: Map<string, number>, key: string, value: number): void {
    map.delete(key);
    map.set(key, value);
    this.changed = true;
  }

  /** What the rendering of `prefix` is made of, hashed; null when a shown file has no stat. */
  #renderingKey(prefix: readonly RankedEntry[]): string | null {
    const byFile = shownFiles(prefix, this.#chat);
    const stats = this.#statsOf(byFile);
    let text = `${MAP_FORMAT}|${FIT_FORMAT}|${GRAMMAR_TABLE_VERSION}\n`;
    for (const path of [...byFile.keys()].sort()) {
      const lines = byFile.get(path);
      if (!lines) {
        text += `${path}\n`;
        continue;
      }
      const stat = stats.get(path);
      if (!stat) return null;
      const tags = this.#tags.get(path);
      const described = tags ? `${tags.sig}\t${tags.skipped}` : "\u0000";
      text += `${path}\t${stat.mtime}\t${stat.size}\t${described}\t${[...new Set(lines)].sort((a, b) => a - b).join(",")}\n`;
    }
    return new Bun.CryptoHasher("sha256").update(text).digest("hex");
  }

  /**
   * The stats of the files shown with lines, found in one pass over the entries for those not
   * found before (a map of every entry costs more: 10k inserts, where a search ends within a
   * few hundred files).
   */
  #statsOf(byFile: ReadonlyMap<string, number[] | null>): Map<string, FileEntry> {
    const wanted = new Set<string>();
    for (const [path, lines] of byFile) if (lines && !this.#stats.has(path) && !this.#missing.has(path)) wanted.add(path);
    if (wanted.size > 0) {
      for (const e of this.#entries) if (wanted.has(e.path)) this.#stats.set(e.path, e);
      for (const path of wanted) if (!this.#stats.has(path)) this.#missing.add(path);
    }
    return this.#stats;
  }
}
