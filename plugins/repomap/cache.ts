// The repo map's persistent cache (bun:sqlite under .coder/cache/repomap): tags
// per file keyed by path + mtime + size + grammar version, and finished maps keyed
// by the repository state. A corrupt cache is rebuilt and a locked one bypassed
// (in memory), each with one warning: never a crash.
import { constants, Database } from "bun:sqlite";
import { rmSync } from "node:fs";

const SCHEMA = 6;

/** The cache's path under `.coder/`, and the files SQLite keeps beside it (each checked like the cache itself). */
export const TAG_CACHE = "cache/repomap/tags.sqlite";
export const SQLITE_SIBLINGS = ["-wal", "-shm", "-journal"] as const;

export interface CachedFile {
  path: string;
  mtime: number;
  size: number;
  version: string;
  /** "" when tagged; else why the file was skipped (binary, minified, ...). */
  skipped: string;
  /** Hash of the definition names and references: what ranking depends on (not lines). */
  sig: string;
  /** Encoded definitions with their scope ranges (for rendering). */
  defs: string;
  /** Definition names and lines only, "name\tline" rows (for ranking: lighter to load). */
  names: string;
  /** [identKey, plain, member] triples as bytes (tags.ts encodeRefKeys). */
  refs: Uint8Array;
}

/** What ranking reads of a file. */
export type RankRow = Pick<CachedFile, "path" | "skipped" | "sig" | "names" | "refs">;

export interface FileMeta {
  mtime: number;
  size: number;
  version: string;
  sig: string;
  skipped: string;
}

export class TagCache {
  readonly db: Database;
  /** Where it lives, or ":memory:" when bypassed. */
  readonly location: string;

  private constructor(db: Database, location: string) {
    this.db = db;
    this.location = location;
  }

  /**
   * Opens (or creates) the cache at `file`, a path the kit checked (a plain file or none, never
   * a link); warns and falls back rather than throwing.
   */
  static open(file: string | null, warn: (message: string) => void, busyTimeoutMs = 2000): TagCache {
    if (file === null) return TagCache.memory();
    try {
      return TagCache.#openFile(file, busyTimeoutMs);
    } catch (first) {
      if (isLocked(first)) {
        warn(`repo map: the tag cache ${file} is locked by another process; using a temporary one for this run`);
        return TagCache.memory();
      }
      warn(`repo map: the tag cache ${file} is unreadable (${describe(first)}); rebuilding it`);
      try {
        for (const suffix of ["", ...SQLITE_SIBLINGS]) rmSync(file + suffix, { force: true });
        return TagCache.#openFile(file, busyTimeoutMs);
      } catch (second) {
        warn(`repo map: cannot rebuild the tag cache (${describe(second)}); using a temporary one for this run`);
        return TagCache.memory();
      }
    }
  }

  static memory(): TagCache {
    const db = new Database(":memory:");
    TagCache.#prepare(db);
    return new TagCache(db, ":memory:");
  }

  static #openFile(file: string, busyTimeoutMs: number): TagCache {
    // NOFOLLOW as well as the kit's check: SQLite itself refuses a link in the file's place.
    const db = new Database(file, constants.SQLITE_OPEN_READWRITE | constants.SQLITE_OPEN_CREATE | constants.SQLITE_OPEN_NOFOLLOW);
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      TagCache.#prepare(db);
      // Touch both tables so corruption shows here, not later.
      db.query("SELECT count(*) FROM files").get();
      db.query("SELECT count(*) FROM maps").get();
      return new TagCache(db, file);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  static #prepare(db: Database): void {
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version !== SCHEMA) {
      db.exec("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS maps; DROP TABLE IF EXISTS rankings; DROP TABLE IF EXISTS imports;");
      db.exec(`PRAGMA user_version = ${SCHEMA}`);
    }
    db.exec(`CREATE TABLE IF NOT EXISTS files (
      path TEXT PRIMARY KEY, mtime REAL NOT NULL, size INTEGER NOT NULL, version TEXT NOT NULL,
      skipped TEXT NOT NULL, sig TEXT NOT NULL, defs TEXT NOT NULL, names TEXT NOT NULL, refs BLOB NOT NULL) WITHOUT ROWID`);
    db.exec("CREATE TABLE IF NOT EXISTS maps (key TEXT PRIMARY KEY, text TEXT NOT NULL, created INTEGER NOT NULL)");
    db.exec("CREATE TABLE IF NOT EXISTS rankings (key TEXT PRIMARY KEY, entries TEXT NOT NULL, created INTEGER NOT NULL)");
    db.exec("CREATE TABLE IF NOT EXISTS imports (path TEXT PRIMARY KEY, sig TEXT NOT NULL, data TEXT NOT NULL)");
  }

  /** Path → the fields that decide freshness (cheap: no tag text). */
  fileMeta(): Map<string, FileMeta> {
    const meta = new Map<string, FileMeta>();
    try {
      for (const row of this.db.query("SELECT path, mtime, size, version, sig, skipped FROM files").all() as (FileMeta & { path: string })[]) {
        meta.set(row.path, row);
      }
    } catch {
      // Unreadable reads as empty.
    }
    return meta;
  }

  /** What ranking needs of every cached file (used when something changed and the graph must be rebuilt). */
  rankRows(): Map<string, RankRow> {
    const rows = new Map<string, RankRow>();
    try {
      for (const row of this.db.query("SELECT path, skipped, sig, names, refs FROM files").all() as RankRow[]) rows.set(row.path, row);
    } catch {
      // An unreadable cache reads as empty: everything is reparsed.
    }
    return rows;
  }

  /** What ranking needs of one cached file, or null. */
  rankRow(path: string): RankRow | null {
    try {
      return (this.db.query("SELECT path, skipped, sig, names, refs FROM files WHERE path = ?").get(path) as RankRow | null) ?? null;
    } catch {
      return null;
    }
  }

  /** Writes rows in one transaction; a failure (disk full, lock) only costs the next run a reparse. */
  putFiles(rows: readonly CachedFile[], warn: (message: string) => void): void {
    if (rows.length === 0) return;
    try {
      const insert = this.db.query(
        "INSERT OR REPLACE INTO files (path, mtime, size, version, skipped, sig, defs, names, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      this.db.transaction(() => {
        for (const r of rows) insert.run(r.path, r.mtime, r.size, r.version, r.skipped, r.sig, r.defs, r.names, r.refs);
      })();
    } catch (error) {
      warn(`repo map: could not update the tag cache (${describe(error)})`);
    }
  }

  /** Drops rows of files that are no longer listed. */
  prune(gone: readonly string[]): void {
    if (gone.length === 0) return;
    try {
      const del = this.db.query("DELETE FROM files WHERE path = ?");
      this.db.transaction(() => {
        for (const path of gone) del.run(path);
      })();
    } catch {
      // Stale rows are harmless: they are keyed by path and never listed.
    }
  }

  /** One file's encoded definitions ("" when unknown). */
  defsOf(path: string): string {
    try {
      const row = this.db.query("SELECT defs FROM files WHERE path = ?").get(path) as { defs: string } | null;
      return row?.defs ?? "";
    } catch {
      return "";
    }
  }

  /** A chat file's resolved imports as last read, when its tags then had ranking signature `sig` (see map.ts chatImports). */
  getImports(path: string, sig: string): string | null {
    try {
      const row = this.db.query("SELECT data FROM imports WHERE path = ? AND sig = ?").get(path, sig) as { data: string } | null;
      return row?.data ?? null;
    } catch {
      return null;
    }
  }

  putImports(path: string, sig: string, data: string): void {
    try {
      this.db.query("INSERT OR REPLACE INTO imports (path, sig, data) VALUES (?, ?, ?)").run(path, sig, data);
    } catch {
      // Not caching imports only makes a provisional map less like the last one.
    }
  }

  getRanking(key: string): string | null {
    try {
      const row = this.db.query("SELECT entries FROM rankings WHERE key = ?").get(key) as { entries: string } | null;
      return row?.entries ?? null;
    } catch {
      return null;
    }
  }

  putRanking(key: string, entries: string): void {
    try {
      this.db.query("INSERT OR REPLACE INTO rankings (key, entries, created) VALUES (?, ?, ?)").run(key, entries, Date.now());
      this.db.exec("DELETE FROM rankings WHERE key NOT IN (SELECT key FROM rankings ORDER BY created DESC LIMIT 20)");
    } catch {
      // Not caching a ranking is only slower.
    }
  }

  getMap(key: string): string | null {
    try {
      const row = this.db.query("SELECT text FROM maps WHERE key = ?").get(key) as { text: string } | null;
      return row?.text ?? null;
    } catch {
      return null;
    }
  }

  putMap(key: string, text: string): void {
    try {
      this.db.query("INSERT OR REPLACE INTO maps (key, text, created) VALUES (?, ?, ?)").run(key, text, Date.now());
      // Keep the newest few dozen maps (a build stores up to two: by state and by rendering inputs):
      // old repository states never come back.
      this.db.exec("DELETE FROM maps WHERE key NOT IN (SELECT key FROM maps ORDER BY created DESC LIMIT 100)");
    } catch {
      // Not caching a map is only slower.
    }
  }

  close(): void {
    try {
      this.db.close();
    } catch {
      // Already closed.
    }
  }
}

function isLocked(error: unknown): boolean {
  return /locked|busy/i.test(describe(error));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
