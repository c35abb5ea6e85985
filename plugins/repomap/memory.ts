// What a session keeps between map builds in one process: the tag cache's index
// (path → stat and signature), each file's tags as ranking reads them (decoded),
// the main thread's compiled grammars, and the last PageRank vector. A build
// after a one-file edit then reads, parses and decodes that file only, compiles
// no tags query, and re-ranks from the previous vector.
import type { GrammarAssets, GrammarLoader } from "../../grammars/runtime.ts";
import type { FileIndex, TagCache } from "./cache.ts";
import { join } from "node:path";
import { languageFor } from "../../grammars/languages.ts";
import type { RankFile } from "./graph.ts";
import { buildRankGraph, rankGraph } from "./rank.ts";
import { patchRankGraph } from "./graph.ts";
import { decodeRankFile, type RememberedTags, type ScanMemory, workerEntry } from "./scan.ts";
import { SessionTagger } from "./tagger.ts";
import { isBinaryPath, skipByName } from "./filter.ts";
import { lstatListed } from "./stat-path.ts";
import { loadLatestState, type RankState, type RankStateHolder } from "./rank-state.ts";

/** Up to this many files, a warm-up also reads every file's tags into memory (~40 ms per 1,000 files). */
const PREFILL_FILES = 20_000;
/** Files in the warm-up's ranking (enough to run every part of the ranking code). */
const WARM_RANK_FILES = 500;
/**
 * From this many listed files, a build with no tagger yet may start one before its stat to
 * parse ahead the file the last changed build parsed (tagAhead): the stat and the cache's
 * reads take long enough to hide the worker's start and grammar compile.
 */
export const TAG_AHEAD_FILES = 2_000;


export class MapMemory implements ScanMemory, RankStateHolder {
  /** Mirror of the tag cache's index, as this session last wrote or read it (null: not read yet). */
  meta: FileIndex | null = null;
  /** Decoded tags by path, valid while the signature matches the index's. */
  readonly tags = new Map<string, RememberedTags>();
  /** The main thread's parser and compiled queries (compiling a tags query costs 40–90 ms). */
  loader: GrammarLoader | null = null;
  /** The last ranking's graph and PageRank vector (rank-state.ts): the next ranking patches it. */
  rankState: RankState | null = null;
  /** The session's worker for the few files an edit changes, its grammars compiled ahead (tagger.ts). */
  tagger: SessionTagger | null = null;

  /**
   * Readies the session for the map after an edit, off the path of any request:
   * the tagger compiles the chat files' languages and parses them once, (in
   * repositories up to PREFILL_FILES files) every file's tags are read into
   * memory, and a small ranking runs once.
   */
  async warmUp(cache: TagCache, assets: GrammarAssets, root: string, chatFiles: readonly string[]): Promise<void> {
    if (!this.tagger || this.tagger.failed) this.tagger = new SessionTagger(workerEntry(), assets);
    const chat = chatFiles.flatMap((path) => {
      const lang = languageFor(path);
      return lang ? [{ abs: join(root, path), rel: path, lang: lang.name }] : [];
    });
    // Compiling the grammars and parsing the chat files once also readies the worker's parsing code.
    const tagging = this.tagger.preload([...new Set(chat.map((f) => f.lang))]).then(() => this.tagger?.parse(chat));
    if (!this.meta) this.meta = cache.fileMeta();
    if (this.meta.size <= PREFILL_FILES && this.tags.size === 0) {
      for (const row of cache.rankRows().values()) {
        if (!this.tags.has(row.path)) this.tags.set(row.path, { sig: row.sig, skipped: row.skipped, file: decodeRankFile(row) });
      }
    }
    // The ranking's graph as last stored: the map after an edit patches it without reading it.
    this.rankState ??= loadLatestState(cache);
    // A ranking of a few files readies this thread's ranking code (the first run of
    // it in a process costs several times a later one, whatever the size).
    // The same for the patch of a kept graph (rank-state.ts), on a copy of the sample's.
    const sample = [...this.tags.values()].slice(0, WARM_RANK_FILES).map((t) => t.file);
    const request = { allFiles: sample.map((f) => f.path), chatFiles: new Set(sample.slice(0, 1).map((f) => f.path)), mentionedFiles: new Set<string>(), mentionedIdents: new Set<string>(), limit: 100 };
    const graph = buildRankGraph({ ...request, files: sample });
    rankGraph(graph, request);
    if (sample.length > 1) patchRankGraph(graph.index, graph.graph, graph.paths, graph.context, new Map([[1, sample[1]!]]));
    await tagging;
  }

  /**
   * Before the stat of a build of `files` (from TAG_AHEAD_FILES of them), when the session
   * has no tagger, and the file the cache's last small write parsed (TagCache.recentFiles)
   * has changed since: starts it, on the embedded grammars, and has it parse that file
   * ahead, which the build will parse (its stat changed), while this thread stats; the
   * build then finds it parsed at its stat, or at least its grammar compiled. Not one of
   * `deferred` (chat files a first map in a request may take older tags of). Returns when
   * they are parsed (nobody needs to wait).
   */
  tagAhead(root: string, files: readonly string[], cache: TagCache, deferred: readonly string[] = [], minFiles = TAG_AHEAD_FILES): Promise<void> {
    if (files.length < minFiles || (this.tagger && !this.tagger.failed)) return Promise.resolve();
    // Only what the build will parse: a file changed since it was parsed (one lstat each), listed,
    // with a grammar, not skipped by its name or size (a huge file), not in `deferred`. With none
    // (nothing changed: a warm build; a new cache), a tagger now would only start a worker.
    const recent = cache.recentFiles().flatMap(({ path, mtime, size }) => {
      const lang = isBinaryPath(path) ? null : languageFor(path);
      const stat = lang ? lstatListed(join(root, path)) : undefined;
      const changed = stat?.isFile() && (stat.mtimeMs !== mtime || stat.size !== size) && !skipByName(path, stat.size);
      return lang && changed && files.includes(path) && !deferred.includes(path) ? [{ abs: join(root, path), rel: path, lang: lang.name }] : [];
    });
    if (recent.length === 0) return Promise.resolve();
    this.tagger = new SessionTagger(workerEntry(), null);
    // Settles when they are parsed (for a caller that waits: a test); a failure only loses the head start.
    return this.tagger.ahead(recent).catch(() => {});
  }

  close(): void {
    this.tagger?.close();
    this.tagger = null;
  }

  /** Records rows just written to the tag cache (by this session or its background reparse). */
  stored(rows: readonly { path: string; mtime: number; size: number; version: string; sig: string; skipped: string }[]): void {
    if (!this.meta) return;
    for (const row of rows) {
      this.meta.set(row.path, { mtime: row.mtime, size: row.size, version: row.version, sig: row.sig, skipped: row.skipped });
      // Lines may have moved even when the signature is the same: decode again when needed.
      this.tags.delete(row.path);
    }
  }

  /** Forgets files no longer listed. */
  pruned(paths: readonly string[]): void {
    for (const path of paths) {
      this.meta?.delete(path);
      this.tags.delete(path);
    }
  }
}
