// What a session keeps between map builds in one process: the tag cache's index
// (path → stat and signature), each file's tags as ranking reads them (decoded),
// the main thread's compiled grammars, and the last PageRank vector. A build
// after a one-file edit then reads, parses and decodes that file only, compiles
// no tags query, and re-ranks from the previous vector.
import type { GrammarLoader } from "../../grammars/runtime.ts";
import type { FileMeta } from "./cache.ts";
import type { RankFile } from "./rank.ts";

export interface RememberedTags {
  sig: string;
  skipped: string;
  file: RankFile;
}

export class MapMemory {
  /** Mirror of the tag cache's index, as this session last wrote or read it (null: not read yet). */
  meta: Map<string, FileMeta> | null = null;
  /** Decoded tags by path, valid while the signature matches the index's. */
  readonly tags = new Map<string, RememberedTags>();
  /** The main thread's parser and compiled queries (compiling a tags query costs 40–90 ms). */
  loader: GrammarLoader | null = null;
  /** The last PageRank vector by path: the next ranking starts from it. */
  ranks: Map<string, number> | null = null;

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
