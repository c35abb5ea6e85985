// Brings the tag cache up to date for a list of repository files: stat every
// file, reparse only what changed (in a worker pool when there are many), and
// return each file's tags. A warm run with nothing changed only stats.
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { GRAMMAR_TABLE_VERSION, languageFor, type LanguageSpec } from "../../grammars/languages.ts";
import type { GrammarAssets, GrammarLoader } from "../../grammars/runtime.ts";
import type { CachedFile, FileIndex, RankRow, TagCache } from "./cache.ts";

/** Up to this many files, cached tags are read while changed files are parsed. */
const SPECULATIVE_LOAD_FILES = 20_000;
/** From this many files to pre-scan, a cold build reads their imports in workers (below, here: starting workers costs more). */
export const PRESCAN_POOL_FILES = 4_000;
import { isBinaryPath, skipByName, untagged } from "./filter.ts";
import type { PrescanReply, WorkerReply, WorkerRequest, WorkerResult } from "./worker.ts";
import type { RankFile } from "./graph.ts";
import type { SessionTagger } from "./tagger.ts";
import { decodeDefNames, decodeRefKeys } from "./tags.ts";
import { listingIds, planColdScan, readHead, type ColdInput, type ImportEdges } from "./cold.ts";
import type { StatHelper } from "./stat.ts";
import { lstatListed, readListedText } from "./stat-path.ts";

/** A file's tags as the session remembers them, valid while its signature matches the cache's index. */
export interface RememberedTags {
  sig: string;
  skipped: string;
  file: RankFile;
}

/** What a scan reads and updates of the session's memory (memory.ts MapMemory implements it). */
export interface ScanMemory {
  meta: FileIndex | null;
  readonly tags: Map<string, RememberedTags>;
  loader: GrammarLoader | null;
  tagger: SessionTagger | null;
  stored(rows: readonly { path: string; mtime: number; size: number; version: string; sig: string; skipped: string }[]): void;
  pruned(paths: readonly string[]): void;
}

export interface FileEntry {
  path: string;
  mtime: number;
  size: number;
  lang: LanguageSpec | null;
}

/** Stats the listed files; binaries, symlinks, folders and files that vanished (or whose folder did) are left out. */
export function statFiles(root: string, files: readonly string[], helper?: StatHelper | null): FileEntry[] {
  // With a helper, the listing is stat'ed on two threads (stat.ts): the same entries, sooner.
  if (helper) return helper.stat(root, files);
  const entries: FileEntry[] = [];
  for (const path of files) {
    if (isBinaryPath(path)) continue;
    // lstat: a symlink is listed by git but may lead out of the repository; it is not read.
    // The listing's paths are relative and normalised: joined by hand (path.join normalises
    // each again, a quarter of the stat's time at 10k files).
    const stat = lstatListed(root + "/" + path);
    if (!stat || !stat.isFile()) continue;
    entries.push({ path, mtime: stat.mtimeMs, size: stat.size, lang: languageFor(path) });
  }
  return entries;
}

export interface ScanOptions {
  root: string;
  cache: TagCache;
  /** Lazily resolved grammar asset paths (only needed when something must be parsed). */
  assets: () => Promise<GrammarAssets>;
  warn: (message: string) => void;
  /** Called while parsing, e.g. for a progress bar. */
  progress?: (done: number, total: number) => void;
  /**
   * Files to parse before a worker pool is worth starting (default 16): starting
   * a worker and compiling its grammar costs more than parsing a few files here.
   */
  poolThreshold?: number;
  /** Worker count (default: available cores). 0 parses on this thread. */
  workers?: number;
  /** Stops parsing (the build then rejects with the signal's reason). */
  signal?: AbortSignal;
  /** The session's memory of tags and grammars (absent: read everything from the cache). */
  memory?: ScanMemory;
  /**
   * Changed files whose older cached tags may stand in for now (chat files: never
   * shown in the map, their tags only personalise the ranking). Used only when no
   * other file needs parsing, so that this run loads no grammar; they are listed
   * in `deferred` for a reparse after the map is returned (see reparseInBackground).
   */
  deferrable?: ReadonlySet<string>;
  /**
   * A cold build: when at least `minFiles` files need parsing, parse only those the
   * first map needs (cold.ts planColdScan) and leave the rest in `pending`, to be
   * parsed in the background (parseInBackground). Until then they rank by the names
   * they import and show no definitions.
   */
  coldFirst?: Omit<ColdInput, "head"> & { minFiles: number };
  /**
   * Read every cached file's tags while parsing only when more files than this
   * changed (default 0): a ranking patched from its kept graph (rank-state.ts)
   * needs only the changed files' tags.
   */
  preloadAbove?: number;
}

export interface ScanStats {
  files: number;
  parsed: number;
  bytesParsed: number;
  workers: number;
  /** A cold build's pre-scan and plan (cold.ts planColdScan), ms; 0 when there was none. */
  prescanMs: number;
}

export interface ScanResult {
  /** Every entry with a grammar: its ranking signature and skip reason. */
  files: Map<string, { sig: string; skipped: string }>;
  /** Rows parsed by this scan. */
  fresh: Map<string, CachedFile>;
  /** Changed files described by their older cached tags (see ScanOptions.deferrable): still to be reparsed. */
  deferred: FileEntry[];
  /** Files not parsed yet in a cold build (see ScanOptions.coldFirst): to be parsed in the background. */
  pending: FileEntry[];
  /** What ranking needs of every described file (fresh, remembered or cached), decoded. */
  rankFiles(): RankSource[];
  /** One file's encoded definitions. */
  defsOf(path: string): string;
  stats: ScanStats;
}

/** Brings the cache up to date for `entries` (those with a grammar) and describes them. */
export async function scanTags(entries: readonly FileEntry[], options: ScanOptions): Promise<ScanResult> {
  const memory = options.memory;
  // A session's kept index, unless another process wrote the cache since (then what changed is forgotten).
  const meta = memory ? options.cache.sessionMeta(memory.meta, (path) => memory.tags.delete(path)) : options.cache.fileMeta();
  if (memory) memory.meta = meta;
  const files = new Map<string, { sig: string; skipped: string }>();
  const fresh = new Map<string, CachedFile>();
  let stale: FileEntry[] = [];
  let deferred: FileEntry[] = [];
  for (const entry of entries) {
    if (!entry.lang) continue;
    const known = meta.fresh(entry.path, entry.mtime, entry.size);
    if (known) {
      files.set(entry.path, known);
      continue;
    }
    const skipped = skipByName(entry.path, entry.size);
    if (skipped) {
      fresh.set(entry.path, { path: entry.path, mtime: entry.mtime, size: entry.size, version: GRAMMAR_TABLE_VERSION, ...untagged(skipped) });
      files.set(entry.path, { sig: "", skipped });
    } else stale.push(entry);
  }
  if (stale.length > 0 && options.deferrable && stale.every((e) => canDefer(e, meta, options.deferrable!))) {
    for (const entry of stale) {
      const row = meta.get(entry.path)!;
      files.set(entry.path, { sig: row.sig, skipped: row.skipped });
    }
    deferred = stale;
    stale = [];
  }
  let prescanned: Map<string, RankFile> | null = null;
  let pending: FileEntry[] = [];
  const cold = options.coldFirst;
  let prescanMs = 0;
  if (cold && stale.length >= cold.minFiles) {
    const planStart = performance.now();
    const sizes = new Map(stale.map((e) => [e.path, e.size]));
    const head: ColdInput["head"] = (path, maxBytes) => readHead(join(options.root, path), maxBytes, sizes.get(path));
    const count = options.workers ?? availableParallelism();
    const pooled = count > 0 && stale.length >= PRESCAN_POOL_FILES;
    // Planned from the few files' imports it needs when it can; when it needs every file's, those are read in workers.
    let plan = planColdScan(stale, { ...cold, head, wholeElsewhere: pooled });
    if (!plan) {
      let edges: ImportEdges | undefined;
      try {
        edges = await prescanInPool(stale, cold.files, options, count);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        options.warn(`repo map: pre-scan workers failed (${error instanceof Error ? error.message : String(error)}); reading on one thread`);
      }
      plan = planColdScan(stale, { ...cold, head, edges, wholeElsewhere: false });
    }
    stale = plan.now;
    pending = plan.later;
    prescanned = plan.prescanned;
    // Not a cached signature: a ranking over these is never taken for the parsed files' one.
    for (const entry of pending) files.set(entry.path, { sig: `~${entry.mtime}:${entry.size}`, skipped: "" });
    prescanMs = performance.now() - planStart;
  }
  const stats: ScanStats = { files: entries.length, parsed: stale.length, bytesParsed: 0, workers: 0, prescanMs };
  let cachedRows: Map<string, RankRow> | null = null;
  if (stale.length > 0) {
    // Parse what changed (in workers) while this thread reads what ranking will
    // likely need (when that is cheap and not already in the session's memory).
    const parsing = parseFiles(stale, options, stats);
    if (meta.size <= SPECULATIVE_LOAD_FILES && stale.length > (options.preloadAbove ?? 0) && !(memory && memory.tags.size > 0)) cachedRows = options.cache.rankRows();
    const results = await parsing;
    const byPath = new Map(stale.map((e) => [e.path, e]));
    for (const result of results) {
      const entry = byPath.get(result.rel)!;
      const { rel: _rel, ...tags } = result;
      fresh.set(entry.path, { path: entry.path, mtime: entry.mtime, size: entry.size, version: GRAMMAR_TABLE_VERSION, ...tags });
      files.set(entry.path, { sig: tags.sig, skipped: tags.skipped });
      stats.bytesParsed += entry.size;
    }
  }
  const written = [...fresh.values()];
  options.cache.putFiles(written, options.warn);
  memory?.stored(written);
  if (meta.size > files.size) {
    const gone = [...meta.keys()].filter((path) => !files.has(path));
    if (gone.length > 0) {
      options.cache.prune(gone);
      if (memory) memory.pruned(gone);
    }
  }
  return {
    files,
    fresh,
    deferred,
    pending,
    stats,
    rankFiles() {
      const rows = cachedRows;
      cachedRows = null;
      return rankFilesOf(files, fresh, rows, options.cache, memory, prescanned);
    },
    defsOf(path) {
      if (prescanned?.has(path)) return "";
      return fresh.get(path)?.defs ?? options.cache.defsOf(path);
    },
  };
}

/** A file's tags as ranking reads them, with why it was skipped ("" when tagged). */
export interface RankSource {
  file: RankFile;
  skipped: string;
}

/**
 * Every described file's tags for ranking, decoded: from the rows parsed now, the
 * session's memory (same signature), or the tag cache (all rows at once when many
 * are missing, else one by one).
 */
function rankFilesOf(
  files: ReadonlyMap<string, { sig: string; skipped: string }>,
  fresh: ReadonlyMap<string, CachedFile>,
  preloaded: Map<string, RankRow> | null,
  cache: TagCache,
  memory: ScanMemory | undefined,
  prescanned: ReadonlyMap<string, RankFile> | null,
): RankSource[] {
  let rows = preloaded;
  const cached = files.size - fresh.size - (prescanned?.size ?? 0);
  if (!rows && memory) {
    let missing = 0;
    for (const [path, { sig }] of files) if (!fresh.has(path) && !prescanned?.has(path) && memory.tags.get(path)?.sig !== sig) missing++;
    if (missing > 64) rows = cache.rankRows();
  } else if (!rows && cached > 64) rows = cache.rankRows();
  const out: RankSource[] = [];
  for (const [path, { sig, skipped }] of files) {
    const early = prescanned?.get(path);
    if (early) {
      out.push({ file: early, skipped: "" });
      continue;
    }
    const remembered = fresh.has(path) ? undefined : memory?.tags.get(path);
    if (remembered && remembered.sig === sig) {
      out.push({ file: remembered.file, skipped });
      continue;
    }
    const row = fresh.get(path) ?? rows?.get(path) ?? cache.rankRow(path);
    if (!row) continue;
    const file = decodeRankFile(row);
    memory?.tags.set(path, { sig, skipped, file });
    out.push({ file, skipped });
  }
  return out;
}

/** A cached row as ranking reads it. */
export function decodeRankFile(row: Pick<RankRow, "path" | "names" | "refs">): RankFile {
  const defs = decodeDefNames(row.names);
  return { path: row.path, defNames: defs.names, defLines: defs.lines, refs: decodeRefKeys(row.refs) };
}

/** A changed file whose cached tags (same grammar version) may stand in for now. */
function canDefer(entry: FileEntry, meta: FileIndex, deferrable: ReadonlySet<string>): boolean {
  return deferrable.has(entry.path) && meta.get(entry.path)?.version === GRAMMAR_TABLE_VERSION;
}

async function parseFiles(stale: FileEntry[], options: ScanOptions, stats: ScanStats): Promise<WorkerResult[]> {
  options.signal?.throwIfAborted();
  const assets = await options.assets();
  const threshold = options.poolThreshold ?? 16;
  const tagger = options.memory?.tagger;
  // A tagger that loaded the embedded grammars itself (MapMemory.tagAhead) parses only for a build that uses them.
  if (tagger && !tagger.failed && stale.length < threshold && (!tagger.embedded || assets === (await import("../../grammars/embedded.ts")).EMBEDDED_ASSETS)) {
    try {
      // With each file's stat: a file parsed ahead at that stat is answered at once.
      const results = await tagger.parse(stale.map((e) => ({ abs: join(options.root, e.path), rel: e.path, lang: e.lang!.name, mtime: e.mtime, size: e.size })));
      stats.workers = 1;
      return results;
    } catch {
      // The session's tagger is gone: parse here, as without one.
    }
  }
  const workerCount = Math.min(options.workers ?? availableParallelism(), Math.ceil(stale.length / 50));
  if (stale.length >= threshold && workerCount > 0) {
    try {
      stats.workers = workerCount;
      return await parseInPool(stale, options, assets, workerCount);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      options.warn(`repo map: worker pool failed (${error instanceof Error ? error.message : String(error)}); parsing on one thread`);
      stats.workers = 0;
    }
  }
  return parseHere(stale, options, assets);
}

async function parseHere(stale: FileEntry[], options: ScanOptions, assets: GrammarAssets): Promise<WorkerResult[]> {
  const { GrammarLoader } = await import("../../grammars/runtime.ts");
  const { tagSource } = await import("./parse.ts");
  const loader = options.memory?.loader ?? new GrammarLoader(assets);
  if (options.memory) options.memory.loader = loader;
  const results: WorkerResult[] = [];
  for (const entry of stale) {
    options.signal?.throwIfAborted();
    try {
      const text = readListedText(join(options.root, entry.path));
      results.push({ rel: entry.path, ...(await tagSource(loader, entry.lang!, text)) });
    } catch (error) {
      results.push({ rel: entry.path, ...untagged(`unreadable: ${error instanceof Error ? error.message : String(error)}`) });
    }
    options.progress?.(results.length, stale.length);
  }
  return results;
}

/** How a pool runs beside a build's own parse: in the background, each batch handed on as it comes. */
interface PoolHooks {
  /** Each batch's results as they arrive (then they are not collected). */
  onResults?: (results: WorkerResult[]) => void;
  /** Workers that do not keep the process alive. */
  unref?: boolean;
  /** Ask the workers for each file's stat around its read (WorkerRequest `stat`). */
  stat?: boolean;
  /** The workers, once started (to ref them later). */
  started?: (workers: readonly Worker[]) => void;
}

/** The workers of one pool, ended together: when it finishes (done or failed) or its signal aborts. */
function poolLife(signal: AbortSignal | undefined, resolve: () => void, reject: (error: unknown) => void): { workers: Worker[]; finish(error?: unknown): void; readonly done: boolean } {
  const workers: Worker[] = [];
  let done = false;
  const finish = (error?: unknown) => {
    if (done) return;
    done = true;
    signal?.removeEventListener("abort", onAbort);
    for (const w of workers) w.terminate();
    if (error) reject(error);
    else resolve();
  };
  const onAbort = () => finish(signal!.reason);
  signal?.addEventListener("abort", onAbort);
  return {
    workers,
    finish,
    get done() {
      return done;
    },
  };
}

function parseInPool(stale: FileEntry[], options: Pick<ScanOptions, "root" | "signal" | "progress">, assets: GrammarAssets, count: number, hooks: PoolHooks = {}): Promise<WorkerResult[]> {
  // Files sorted by language and cut into one contiguous segment per worker: a
  // worker works through its own segment (few grammars to compile: compiling one
  // costs as much as parsing a hundred files), then helps with the back of the
  // fullest remaining segment. Small batches keep every core busy to the end.
  const queue = [...stale].sort((a, b) => (a.lang!.name < b.lang!.name ? -1 : a.lang!.name > b.lang!.name ? 1 : 0));
  const batchSize = Math.max(8, Math.min(64, Math.ceil(queue.length / (count * 8))));
  const cuts = segmentCuts(queue.map((e) => e.lang!.name), count);
  const segments = Array.from({ length: count }, (_, i) => ({ next: cuts[i]!, end: cuts[i + 1]! }));
  const results: WorkerResult[] = [];
  let parsed = 0;
  let batchId = 0;
  const take = (own: number): FileEntry[] => {
    const mine = segments[own]!;
    if (mine.next < mine.end) {
      const batch = queue.slice(mine.next, Math.min(mine.end, mine.next + batchSize));
      mine.next += batch.length;
      return batch;
    }
    let fullest = mine;
    for (const segment of segments) if (segment.end - segment.next > fullest.end - fullest.next) fullest = segment;
    if (fullest.next >= fullest.end) return [];
    const from = Math.max(fullest.next, fullest.end - batchSize);
    const batch = queue.slice(from, fullest.end);
    fullest.end = from;
    return batch;
  };
  return new Promise((resolve, reject) => {
    const life = poolLife(options.signal, () => resolve(results), reject);
    const { workers, finish } = life;
    let running = 0;
    const feed = (worker: Worker, own: number): boolean => {
      const batch = take(own);
      if (batch.length === 0) return false;
      const files = batch.map((e) => ({ abs: join(options.root, e.path), rel: e.path, lang: e.lang!.name }));
      worker.postMessage({ kind: "parse", id: batchId++, files, stat: hooks.stat } satisfies WorkerRequest);
      return true;
    };
    for (let i = 0; i < count; i++) {
      const worker = new Worker(workerEntry());
      workers.push(worker);
      if (hooks.unref) worker.unref();
      worker.onmessage = (event: MessageEvent<WorkerReply>) => {
        if (life.done) return;
        if (hooks.onResults) {
          parsed += event.data.results.length;
          hooks.onResults(event.data.results);
        } else results.push(...event.data.results);
        options.progress?.(parsed + results.length, queue.length);
        if (!feed(worker, i)) {
          running--;
          if (running === 0) finish();
        }
      };
      worker.onerror = (event) => finish(new Error(event.message || "worker error"));
      worker.postMessage({ kind: "init", assets } satisfies WorkerRequest);
      if (feed(worker, i)) running++;
    }
    hooks.started?.(workers);
    if (running === 0) finish();
  });
}

/**
 * Where a queue sorted by language is cut into `count` segments (count + 1 positions):
 * evenly, each cut moved to the nearest change of language within a quarter of a
 * segment, so that fewer workers compile a grammar for a few files of it.
 */
export function segmentCuts(langs: readonly string[], count: number): number[] {
  const cuts = [0];
  const slack = Math.floor(langs.length / count / 4);
  for (let i = 1; i < count; i++) {
    const even = Math.floor((langs.length * i) / count);
    let cut = even;
    for (let d = 0; d <= slack; d++) {
      if (even - d > cuts[cuts.length - 1]! && langs[even - d - 1] !== langs[even - d]) {
        cut = even - d;
        break;
      }
      if (even + d < langs.length && even + d > 0 && langs[even + d - 1] !== langs[even + d]) {
        cut = even + d;
        break;
      }
    }
    cuts.push(Math.max(cut, cuts[cuts.length - 1]!));
  }
  cuts.push(langs.length);
  return cuts;
}

/**
 * A cold build's pre-scan of `stale` (cold.ts) in `count` workers: each builds the same
 * resolver over the listing and answers chunks of the stale files, by position, with
 * their import edges; joined here in order, they are what importEdges gives on this
 * thread. Chunks are small enough that a worker slowed by other load takes fewer.
 */
export function prescanInPool(stale: readonly FileEntry[], files: readonly string[], options: Pick<ScanOptions, "root" | "signal">, count: number): Promise<ImportEdges> {
  options.signal?.throwIfAborted();
  const ids = listingIds(files);
  const staleIds = Int32Array.from(stale, (e) => ids.get(e.path)!);
  const sizes = Float64Array.from(stale, (e) => e.size);
  // One string: far quicker to copy to a worker than 100k of them.
  const listing = files.join("\n");
  const chunk = Math.max(250, Math.ceil(stale.length / (count * 8)));
  const parts: ImportEdges[] = [];
  let next = 0;
  return new Promise((resolve, reject) => {
    const life = poolLife(options.signal, () => resolve(joinEdges(parts)), reject);
    const { workers, finish } = life;
    let running = 0;
    const feed = (worker: Worker): boolean => {
      if (next >= stale.length) return false;
      const from = next;
      next = Math.min(stale.length, from + chunk);
      worker.postMessage({ kind: "prescan", id: from / chunk, from, to: next } satisfies WorkerRequest);
      return true;
    };
    for (let i = 0; i < Math.min(count, Math.ceil(stale.length / chunk)); i++) {
      const worker = new Worker(workerEntry());
      workers.push(worker);
      worker.onmessage = (event: MessageEvent<PrescanReply>) => {
        if (life.done) return;
        parts[event.data.id] = event.data;
        if (!feed(worker)) {
          running--;
          if (running === 0) finish();
        }
      };
      worker.onerror = (event) => finish(new Error(event.message || "worker error"));
      worker.postMessage({ kind: "prescan-init", root: options.root, files: listing, stale: staleIds, sizes } satisfies WorkerRequest);
      if (feed(worker)) running++;
    }
    if (running === 0) finish();
  });
}

/** Consecutive files' edges as one (see ImportEdges). */
function joinEdges(parts: readonly ImportEdges[]): ImportEdges {
  let fileCount = 0;
  let edgeCount = 0;
  for (const part of parts) {
    fileCount += part.start.length - 1;
    edgeCount += part.target.length;
  }
  const start = new Int32Array(fileCount + 1);
  const target = new Int32Array(edgeCount);
  const nameCount = new Int32Array(edgeCount);
  const names: string[] = [];
  let f = 0;
  let e = 0;
  for (const part of parts) {
    const n = part.start.length - 1;
    for (let i = 0; i < n; i++) {
      start[f + i] = part.start[i]! + e;
      names.push(part.names[i]!);
    }
    target.set(part.target, e);
    nameCount.set(part.nameCount, e);
    f += n;
    e += part.target.length;
  }
  start[f] = e;
  return { start, target, nameCount, names };
}

/**
 * The worker's entry. Inside the compiled binary it is an extra entrypoint of the
 * build, found by its path relative to the build root (import.meta.url still names
 * the source file there, which may not exist); from source, beside this file.
 */
export function workerEntry(file: "worker.ts" | "stat-worker.ts" = "worker.ts"): string {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.includes("~BUN");
  return compiled ? `./plugins/repomap/${file}` : new URL(`./${file}`, import.meta.url).href;
}

/** A reparse running off this thread (see reparseInBackground). */
export interface BackgroundReparse {
  /** Settles (never rejects) once the fresh tags are stored, or the reparse failed or was cancelled. */
  done: Promise<void>;
  /** Whether the worker was started (false while the start is still delayed, or when it was cancelled before). */
  readonly started: boolean;
  /** Stops the reparse (the delayed start or the worker); nothing more is written. */
  cancel(): void;
}

/**
 * Reparses `entries` in one worker that does not keep the process alive, started
 * after `delayMs` (an unreferenced timer: off the path of the request just sent
 * and of a quick reply), then stores their tags in one transaction, each under the
 * stat taken around its read (a file edited meanwhile is not stored: the next
 * build parses it). Never throws and never blocks exit; a failure or an exit
 * before it is done only leaves the older tags in place.
 */
export function reparseInBackground(
  entries: readonly FileEntry[],
  options: Pick<ScanOptions, "root" | "cache" | "assets" | "memory">,
  delayMs = 0,
): BackgroundReparse {
  let worker: Worker | null = null;
  const job = backgroundJob(delayMs, () => {
    worker?.terminate();
    worker = null;
  });
  const settle = job.settle;
  const byPath = new Map(entries.filter((e) => e.lang).map((e) => [e.path, e]));
  const start = async () => {
    if (!job.begin()) return;
    const assets = await options.assets();
    if (job.settled) return;
    const w = new Worker(workerEntry());
    worker = w;
    w.unref();
    w.onmessage = (event: MessageEvent<WorkerReply>) => {
      if (job.settled) return;
      const rows = cachedRows(event.data.results, byPath);
      // One synchronous transaction: all rows or none, and no other work interleaves.
      options.cache.putFiles(rows, () => {});
      options.memory?.stored(rows);
      settle();
    };
    w.onerror = () => settle();
    w.postMessage({ kind: "init", assets } satisfies WorkerRequest);
    const files = [...byPath.values()].map((e) => ({ abs: join(options.root, e.path), rel: e.path, lang: e.lang!.name }));
    w.postMessage({ kind: "parse", id: 0, files, stat: true } satisfies WorkerRequest);
  };
  job.schedule(() => void start().catch(() => settle()), byPath.size === 0);
  return {
    done: job.done,
    get started() {
      return job.started;
    },
    cancel: settle,
  };
}

/** A cold build's other files being parsed off this thread (see parseInBackground). */
export interface BackgroundParse extends BackgroundReparse {
  /** Keeps the process alive until the parse is done (a one-shot `coder map` fills the cache before it exits); settles with it. */
  hold(): Promise<void>;
  /** Files stored so far. */
  readonly stored: number;
}

/**
 * Parses the files a cold build left for later (ScanResult.pending) in a pool of
 * workers, one per core, that does not keep the process alive, started after
 * `delayMs` (an unreferenced timer: off the path of the request just sent). Each
 * batch is stored as it arrives, each file under the stat taken around its read (a
 * file edited meanwhile is not stored: the next build parses it); so what was parsed
 * stays cached when the process ends first. Never throws.
 */
export function parseInBackground(
  entries: readonly FileEntry[],
  options: Pick<ScanOptions, "root" | "cache" | "assets" | "memory" | "workers">,
  delayMs = 0,
): BackgroundParse {
  const abort = new AbortController();
  let workers: readonly Worker[] = [];
  let held = false;
  let stored = 0;
  const job = backgroundJob(delayMs, () => abort.abort(new Error("background parse stopped")));
  const settle = job.settle;
  const queue = entries.filter((e) => e.lang);
  const byPath = new Map(queue.map((e) => [e.path, e]));
  const store = (results: WorkerResult[]) => {
    const rows = cachedRows(results, byPath);
    // Batch after batch: the files' index is read from the rows once by the next build, not stored with each.
    options.cache.putFiles(rows, () => {}, false);
    options.memory?.stored(rows);
    stored += rows.length;
  };
  const start = async () => {
    if (!job.begin()) return;
    const assets = await options.assets();
    if (job.settled) return;
    const count = Math.max(1, Math.min(options.workers ?? availableParallelism(), Math.ceil(queue.length / 50)));
    await parseInPool(queue, { root: options.root, signal: abort.signal }, assets, count, {
      onResults: store,
      unref: !held,
      stat: true,
      started: (ws) => (workers = ws),
    });
  };
  job.schedule(() => void start().then(settle, settle), queue.length === 0);
  return {
    done: job.done,
    get started() {
      return job.started;
    },
    get stored() {
      return stored;
    },
    cancel: settle,
    hold() {
      held = true;
      for (const worker of workers) worker.ref();
      job.startNow();
      return job.done;
    },
  };
}

/** The cache rows of a worker's results, each under the stat taken around its read; files not asked for are left out. */
function cachedRows(results: readonly WorkerResult[], byPath: ReadonlyMap<string, FileEntry>): CachedFile[] {
  const rows: CachedFile[] = [];
  for (const result of results) {
    const entry = byPath.get(result.rel);
    if (!entry || result.mtime === undefined || result.size === undefined) continue;
    const { rel: _rel, mtime, size, ...tags } = result;
    const skipped = skipByName(entry.path, size);
    rows.push({ path: entry.path, mtime, size, version: GRAMMAR_TABLE_VERSION, ...(skipped ? untagged(skipped) : tags) });
  }
  return rows;
}

/**
 * The life of one background job: started once, after `delayMs` on an unreferenced timer (or at
 * once), settled once (by the job, a cancel, or nothing to do), `stop` run as it settles.
 */
function backgroundJob(delayMs: number, stop: () => void) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let run: (() => void) | null = null;
  let started = false;
  let settled = false;
  let resolve: () => void = () => {};
  const done = new Promise<void>((r) => (resolve = r));
  const settle = () => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    timer = null;
    stop();
    resolve();
  };
  return {
    done,
    settle,
    get started() {
      return started;
    },
    get settled() {
      return settled;
    },
    /** Marks the job started; false when it already was, or has settled (then the job does nothing). */
    begin(): boolean {
      timer = null;
      if (settled || started) return false;
      started = true;
      return true;
    },
    /** Runs `start` after the delay; settles at once when there is nothing to do. */
    schedule(start: () => void, empty: boolean): void {
      run = start;
      if (empty) settle();
      else if (delayMs > 0) {
        timer = setTimeout(start, delayMs);
        (timer as { unref?: () => void }).unref?.();
      } else start();
    },
    /** Starts a job still waiting for its delay now. */
    startNow(): void {
      if (!timer || !run) return;
      clearTimeout(timer);
      timer = null;
      run();
    },
  };
}
