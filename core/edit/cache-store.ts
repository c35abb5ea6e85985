// The kit's cache store (`kit.cache(namespace)`): keyed values in buckets, in one
// SQLite file per namespace under `.coder/cache/<namespace>/`, so that no plugin
// opens a database itself. A cache is never worth a crash: a planted link is
// refused (and a temporary store used), a corrupt file is rebuilt, a file another
// process holds locked is bypassed, each with one warning; reads that fail read
// as missing, writes that fail are dropped.
import { constants, Database } from "bun:sqlite";
import type { CacheStore, CacheValue, CacheWrites } from "../plugin.ts";
import { removeQuietly, statePath } from "./state.ts";

/** The store's file name in its namespace folder, and the files SQLite keeps beside it (each checked like the store itself). */
export const CACHE_FILE = "cache.sqlite";
const SIBLINGS = ["-wal", "-shm", "-journal"] as const;
/**
 * Layout of the store's own tables; a file with another layout is emptied. 2: values in a
 * rowid table (in a WITHOUT ROWID table a large value sits in the b-tree's interior cells, and
 * SQLite reads the whole of such a cell to compare keys: each lookup near a 14 MB value read it).
 */
const LAYOUT = 2;

export interface CacheStoreOptions {
  /** The user's data version: a store written under another version is emptied when opened. */
  version?: string | number;
  warn: (message: string) => void;
  /** How long to wait for another process's write (default 2 s); past that the store is bypassed. */
  busyTimeoutMs?: number;
}

/** A namespace as a folder name (letters, digits, `.`, `_`, `-`; never `.` or `..`). */
export function cacheNamespace(namespace: string): string {
  return namespace.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+$/, "_") || "_";
}

/** The store of `namespace` in the repository at `root` (a temporary one when the file cannot be used). */
export function openCacheStore(root: string, namespace: string, options: CacheStoreOptions): CacheStore {
  const rel = `cache/${cacheNamespace(namespace)}/${CACHE_FILE}`;
  const shown = `.coder/${rel}`;
  let file: string;
  try {
    file = statePath(root, rel, SIBLINGS);
  } catch (error) {
    options.warn(`${namespace}: cannot use the cache ${shown}: ${describe(error)}; caching in memory for this run`);
    return memoryCacheStore(options.version);
  }
  try {
    return openWaiting(file, options);
  } catch (first) {
    if (isLocked(first)) {
      options.warn(`${namespace}: the cache ${shown} is locked by another process; using a temporary one for this run`);
      return memoryCacheStore(options.version);
    }
    options.warn(`${namespace}: the cache ${shown} is unreadable (${describe(first)}); rebuilding it`);
    try {
      for (const suffix of ["", ...SIBLINGS]) removeQuietly(file + suffix);
      // Checked again: nothing may have been planted in the meantime.
      return SqliteCacheStore.open(statePath(root, rel, SIBLINGS), options);
    } catch (second) {
      options.warn(`${namespace}: cannot rebuild the cache ${shown} (${describe(second)}); using a temporary one for this run`);
      return memoryCacheStore(options.version);
    }
  }
}

/**
 * The store in `file`, waiting up to the busy timeout for another process that is opening it
 * too: SQLite answers "locked" at once, without its busy handler, while another connection
 * switches a new file to WAL or makes its first tables (seen in 1 of 5 two-process opens).
 */
function openWaiting(file: string, options: CacheStoreOptions): SqliteCacheStore {
  const deadline = Date.now() + Math.max(0, options.busyTimeoutMs ?? 2000);
  for (;;) {
    try {
      return SqliteCacheStore.open(file, options);
    } catch (error) {
      if (!isLocked(error) || Date.now() >= deadline) throw error;
      Bun.sleepSync(5 + Math.floor(Math.random() * 20));
    }
  }
}

/** A store in memory (tests; and the fallback when the file cannot be used). */
export function memoryCacheStore(version?: string | number): CacheStore {
  return SqliteCacheStore.memory(version);
}

class SqliteCacheStore implements CacheStore {
  readonly file: string | null;
  readonly #db: Database;
  readonly #statements = new Map<string, ReturnType<Database["query"]>>();

  private constructor(db: Database, file: string | null) {
    this.#db = db;
    this.file = file;
  }

  static memory(version?: string | number): SqliteCacheStore {
    const db = new Database(":memory:");
    prepare(db, version);
    return new SqliteCacheStore(db, null);
  }

  static open(file: string, options: CacheStoreOptions): SqliteCacheStore {
    // NOFOLLOW as well as the path check: SQLite itself refuses a link put in the file's place since.
    const db = new Database(file, constants.SQLITE_OPEN_READWRITE | constants.SQLITE_OPEN_CREATE | constants.SQLITE_OPEN_NOFOLLOW);
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 2000))}`);
      // WAL: a second coder process reads while this one writes, and waits its turn to write.
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      prepare(db, options.version);
      // Read every page of an index of the table once, so that corruption shows here and not in a later read.
      db.query("SELECT count(*) FROM entries").get();
      return new SqliteCacheStore(db, file);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  #query(sql: string): ReturnType<Database["query"]> {
    let statement = this.#statements.get(sql);
    if (!statement) this.#statements.set(sql, (statement = this.#db.query(sql)));
    return statement;
  }

  get(bucket: string, key: string): CacheValue | null {
    try {
      const row = this.#query("SELECT value FROM entries WHERE bucket = ? AND key = ?").get(bucket, key) as { value: CacheValue } | null;
      return row ? row.value : null;
    } catch {
      return null;
    }
  }

  entries(bucket: string): Map<string, CacheValue> {
    const out = new Map<string, CacheValue>();
    try {
      for (const row of this.#query("SELECT key, value FROM entries WHERE bucket = ?").values(bucket) as [string, CacheValue][]) out.set(row[0], row[1]);
    } catch {
      // An unreadable store reads as empty: the caller recomputes.
    }
    return out;
  }

  put(bucket: string, key: string, value: CacheValue): boolean {
    return this.batch((w) => w.put(bucket, key, value));
  }

  delete(bucket: string, keys: readonly string[]): boolean {
    return this.batch((w) => w.delete(bucket, keys));
  }

  batch(write: (writes: CacheWrites) => void): boolean {
    try {
      const put = this.#query("INSERT OR REPLACE INTO entries (bucket, key, value, created) VALUES (?, ?, ?, ?)");
      const del = this.#query("DELETE FROM entries WHERE bucket = ? AND key = ?");
      const trim = this.#query("DELETE FROM entries WHERE bucket = ?1 AND key NOT IN (SELECT key FROM entries WHERE bucket = ?1 ORDER BY created DESC LIMIT ?2)");
      const writes: CacheWrites = {
        put: (bucket, key, value) => void put.run(bucket, key, value, nextStamp()),
        delete: (bucket, keys) => {
          for (const key of keys) del.run(bucket, key);
        },
        keepNewest: (bucket, count) => void trim.run(bucket, Math.max(0, Math.floor(count))),
      };
      // IMMEDIATE: take the write lock first, so two processes never deadlock upgrading a read.
      this.#db.transaction(() => write(writes)).immediate();
      return true;
    } catch {
      // Disk full, locked past the timeout, corrupt or closed: a cache write lost only costs recomputing.
      return false;
    }
  }

  keepNewest(bucket: string, count: number): boolean {
    return this.batch((w) => w.keepNewest(bucket, count));
  }

  close(): void {
    try {
      for (const statement of this.#statements.values()) statement.finalize();
      this.#statements.clear();
      this.#db.close();
    } catch {
      // Already closed.
    }
  }
}

/** The store's tables, emptied when the file's layout or the user's version is another. */
function prepare(db: Database, version: string | number | undefined): void {
  const wanted = String(version ?? "");
  db.transaction(() => {
    const layout = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (layout !== LAYOUT) {
      // Another layout (or an older cache's tables): start from nothing.
      const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table'").values() as [string][];
      for (const [name] of tables) db.exec(`DROP TABLE IF EXISTS "${name.replaceAll('"', '""')}"`);
      db.exec(`PRAGMA user_version = ${LAYOUT}`);
    }
    // `created` orders a bucket's entries for keepNewest (indexed, and before the value: read without it).
    db.exec(`CREATE TABLE IF NOT EXISTS entries (bucket TEXT NOT NULL, key TEXT NOT NULL, created INTEGER NOT NULL, value NOT NULL, PRIMARY KEY (bucket, key))`);
    db.exec("CREATE INDEX IF NOT EXISTS entries_by_age ON entries (bucket, created)");
    db.exec("CREATE TABLE IF NOT EXISTS store (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
    const stored = db.query("SELECT value FROM store WHERE name = 'version'").get() as { value: string } | null;
    if (stored?.value !== wanted) {
      db.exec("DELETE FROM entries");
      db.query("INSERT OR REPLACE INTO store (name, value) VALUES ('version', ?)").run(wanted);
    }
  }).immediate();
}

let lastStamp = 0;

/** Microseconds since the epoch, strictly increasing within this process (orders a bucket's entries). */
function nextStamp(): number {
  lastStamp = Math.max(lastStamp + 1, Date.now() * 1000);
  return lastStamp;
}

function isLocked(error: unknown): boolean {
  return /locked|busy/i.test(describe(error));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
