// The repo map's persistent cache, kept in the kit's cache store (namespace
// "repomap", `.coder/cache/repomap/`): tags per file keyed by path + mtime + size +
// grammar version, with one compact index of every file's row (FileIndex), rankings,
// finished maps keyed by the repository state, and the chat files' imports. The store
// handles links, corruption, locks and a second process; here a failed read is a miss
// and a failed write costs a reparse.
import type { CacheStore, CacheWrites } from "../../core/plugin.ts";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import { identKey } from "./tags.ts";

/** The store's namespace and the layout of what this file keeps in it (another layout empties it). */
export const CACHE_NAMESPACE = "repomap";
export const CACHE_VERSION = 8;

/** Buckets of the store. */
const META = "meta";
const RANK = "rank";
const DEFS = "defs";
/**
 * The files' index (keys INDEX_FILES, INDEX_DELTA, INDEX_TOKEN, INDEX_RECENT): every META
 * row in two values (FileIndex), and the token of the last write to META (see TagCache.fileMeta).
 */
const INDEX = "index";
const INDEX_FILES = "files";
const INDEX_DELTA = "delta";
const INDEX_TOKEN = "token";
/** The file the last write of a few rows parsed first, and its stat: what the next changed build will likely parse (a hint only). */
const INDEX_RECENT = "recent";
/** Files kept in the INDEX_RECENT hint: the last one only (each costs the tagger a parse, and maybe a grammar compile, beside the stat). */
const RECENT_FILES = 1;
/** Writes of at most this many rows are the few changed files of a build (the INDEX_RECENT hint); more is a cold build. */
const RECENT_MAX_ROWS = 4;
const MAPS = "maps";
const RANKINGS = "rankings";
const IMPORTS = "imports";
const RESOLVED = "resolved-imports";
const GRAPHS = "graphs";
/** The key of the state stored last (one row). */
const GRAPHS_LATEST = "graphs-latest";
/** A stored state's kept ranking (rank-quick.ts): its head per context, and its parts. */
const GRAPHS_QUICK = "graphs-quick";
const GRAPHS_QUICK_PARTS = "graphs-quick-parts";

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
  readonly store: CacheStore;
  /** The index this handle read last (fileMeta), kept up to date by its own writes while no other handle writes between. */
  #view: FileIndex | null = null;
  /** The store's INDEX_TOKEN that #view reflects (null: no token yet, a new cache). */
  #based: string | null = null;
  /** #view was read from the rows (no usable stored index): the next write stores it, with rows or without. */
  #unsaved = false;

  constructor(store: CacheStore) {
    this.store = store;
  }

  /** Where it lives, or ":memory:" for a temporary store. */
  get location(): string {
    return this.store.file ?? ":memory:";
  }

  /**
   * Path → the fields that decide freshness (no tag text): from the stored index when
   * it is current, else from every row. The index is current when its token is the
   * store's INDEX_TOKEN: every write to the rows changes that token, in the same
   * transaction, and stores the index only when the writer's view of the rows was the
   * store's (its token unchanged since it read them); otherwise the index is dropped.
   * So a stored index never stands for rows that another process has since rewritten,
   * whatever the interleaving: a lost index only costs the read of every row.
   */
  fileMeta(): FileIndex {
    // The token first: a write after it changes it, and the next write of this handle finds out.
    const token = this.store.get(INDEX, INDEX_TOKEN);
    const based = typeof token === "string" ? token : null;
    const stored = based === null ? null : FileIndex.decode(this.store.get(INDEX, INDEX_FILES), this.store.get(INDEX, INDEX_DELTA), based);
    this.#view = stored ?? FileIndex.of(this.metaRows());
    this.#based = based;
    this.#unsaved = stored === null;
    return this.#view;
  }

  /**
   * The index a session's build reads, given the one it kept from its last build (`kept`, null:
   * none yet): `kept` itself while it is this handle's view and no other handle has written the
   * rows since (the store's INDEX_TOKEN is the one the view is based on: one read); else the
   * current index (this handle's view when it is current, else read again), with `forget` told
   * each path whose entry differs between the two: what the session decoded from such a file's
   * row (its tags) is not what the row now holds. Without this a session never saw another
   * process's writes: a file that process parsed changed and then put back to the stat the
   * session kept was taken as fresh, and its tags read from the other content's row.
   */
  sessionMeta(kept: FileIndex | null, forget: (path: string) => void): FileIndex {
    const token = this.store.get(INDEX, INDEX_TOKEN);
    const current = this.#view !== null && this.#based === (typeof token === "string" ? token : null);
    if (current && kept !== null && kept === this.#view) return kept;
    const now = current ? this.#view! : this.fileMeta();
    if (kept) for (const path of changedPaths(kept, now)) forget(path);
    return now;
  }

  /** Every file's META row, decoded (what the index stands for; read from the rows themselves). */
  metaRows(): Map<string, FileMeta> {
    const meta = new Map<string, FileMeta>();
    for (const [path, value] of this.store.entries(META)) {
      const row = decodeMeta(value);
      if (row) meta.set(path, row);
    }
    return meta;
  }

  /**
   * Inside a write transaction that changes META rows: a new INDEX_TOKEN, and the index
   * with `change` applied to it. The index changed is this handle's view when that view
   * was the rows' as the transaction found them (the token it was read under is still
   * the store's: the transaction holds the write lock, so no other write comes between);
   * else the stored index when it is the current one (another handle wrote since: its
   * index stands for the rows as they are); else there is none and the index is dropped.
   * `keep` false: the stored index is dropped in any case, and this handle's view, when it
   * was the rows', is changed and kept unsaved (the next write that keeps the index stores
   * it whole), so that a session's next build need not read every row again (sessionMeta).
   */
  #writeIndex(w: CacheWrites, change: (view: FileIndex) => void, keep = true): void {
    const stored = this.store.get(INDEX, INDEX_TOKEN);
    const current = typeof stored === "string" ? stored : null;
    const token = crypto.randomUUID();
    w.put(INDEX, INDEX_TOKEN, token);
    if (!keep && this.#view && current === this.#based) {
      change(this.#view);
      this.#view.unstored();
      w.delete(INDEX, [INDEX_FILES, INDEX_DELTA]);
      this.#based = token;
      this.#unsaved = true;
      return;
    }
    let view = keep && this.#view && current === this.#based ? this.#view : null;
    if (keep && !view && current !== null) view = FileIndex.decode(this.store.get(INDEX, INDEX_FILES), this.store.get(INDEX, INDEX_DELTA), current);
    if (view) {
      change(view);
      const [base, delta] = view.store(token);
      if (base) w.put(INDEX, INDEX_FILES, base);
      w.put(INDEX, INDEX_DELTA, delta);
      this.#view = view;
      this.#based = token;
      this.#unsaved = false;
    } else {
      w.delete(INDEX, [INDEX_FILES, INDEX_DELTA]);
      this.#view = null;
    }
  }

  /**
   * What the last small writes parsed, newest first, each with the stat it was parsed at
   * (a hint of what the next changed build will parse; may be stale).
   */
  recentFiles(): { path: string; mtime: number; size: number }[] {
    const value = this.store.get(INDEX, INDEX_RECENT);
    if (typeof value !== "string" || value === "") return [];
    const parts = value.split("\0");
    const out: { path: string; mtime: number; size: number }[] = [];
    for (let i = 0; i + 2 < parts.length; i += 3) out.push({ path: parts[i]!, mtime: Number(parts[i + 1]), size: Number(parts[i + 2]) });
    return out;
  }

  /** What ranking needs of every cached file (used when something changed and the graph must be rebuilt). */
  rankRows(): Map<string, RankRow> {
    const rows = new Map<string, RankRow>();
    const meta = this.metaRows();
    for (const [path, value] of this.store.entries(RANK)) {
      const m = meta.get(path);
      const rank = decodeRank(value);
      if (m && rank) rows.set(path, { path, skipped: m.skipped, sig: m.sig, ...rank });
    }
    return rows;
  }

  /** What ranking needs of one cached file, or null. */
  rankRow(path: string): RankRow | null {
    const m = decodeMeta(this.store.get(META, path));
    const rank = decodeRank(this.store.get(RANK, path));
    return m && rank ? { path, skipped: m.skipped, sig: m.sig, ...rank } : null;
  }

  /**
   * Writes rows in one transaction, the index with them (see fileMeta); a failure (disk
   * full, lock) only costs the next run a reparse. With no rows, stores the index read
   * from the rows by fileMeta, if any. `keepIndex` false: the index is dropped instead
   * (a cold build's background batches: the next fileMeta reads the rows once), so no
   * batch pays for storing it.
   */
  putFiles(rows: readonly CachedFile[], warn: (message: string) => void, keepIndex = true): void {
    if (rows.length === 0 && !(this.#unsaved && this.#view)) return;
    const ok = this.store.batch((w) => {
      for (const r of rows) {
        w.put(META, r.path, `${r.mtime}\t${r.size}\t${versionTag(r.version)}\t${r.sig}\t${r.skipped}`);
        w.put(RANK, r.path, encodeRank(r.names, r.refs));
        w.put(DEFS, r.path, r.defs);
      }
      this.#writeIndex(w, (view) => {
        for (const r of rows) view.set(r.path, { mtime: r.mtime, size: r.size, version: r.version, sig: r.sig, skipped: r.skipped });
      }, keepIndex);
      if (rows.length > 0 && rows.length <= RECENT_MAX_ROWS) {
        const recent = [...rows, ...this.recentFiles()].filter((r) => !r.path.includes("\0")).slice(0, RECENT_FILES);
        w.put(INDEX, INDEX_RECENT, recent.map((r) => `${r.path}\0${r.mtime}\0${r.size}`).join("\0"));
      }
    });
    // The view may hold what was not written.
    if (!ok) this.#view = null;
    if (!ok && rows.length > 0) warn("repo map: could not update the tag cache (its store refused the write)");
  }

  /** Drops rows of files that are no longer listed. */
  prune(gone: readonly string[]): void {
    if (gone.length === 0) return;
    // Stale rows are harmless when this fails: they are keyed by path and never listed.
    const ok = this.store.batch((w) => {
      for (const bucket of [META, RANK, DEFS]) w.delete(bucket, gone);
      this.#writeIndex(w, (view) => {
        for (const path of gone) view.delete(path);
      });
    });
    if (!ok) this.#view = null;
  }

  /** One file's encoded definitions ("" when unknown). */
  defsOf(path: string): string {
    const value = this.store.get(DEFS, path);
    return typeof value === "string" ? value : "";
  }

  /** A chat file's resolved imports as last read, when its tags then had ranking signature `sig` (see map.ts chatImports). */
  getImports(path: string, sig: string): string | null {
    const value = this.store.get(IMPORTS, path);
    if (typeof value !== "string") return null;
    const cut = value.indexOf("\n");
    return cut >= 0 && value.slice(0, cut) === sig ? value.slice(cut + 1) : null;
  }

  putImports(path: string, sig: string, data: string): void {
    this.store.put(IMPORTS, path, `${sig}\n${data}`);
  }

  /** A chat file's imports as last resolved, with what the resolution read (map.ts chatImports checks it). */
  getResolvedImports(path: string): string | null {
    const value = this.store.get(RESOLVED, path);
    return typeof value === "string" ? value : null;
  }

  putResolvedImports(path: string, value: string): void {
    this.store.put(RESOLVED, path, value);
  }

  getRanking(key: string): string | null {
    const value = this.store.get(RANKINGS, key);
    return typeof value === "string" ? value : null;
  }

  /** The ranking's stored graph for a context (rank-state.ts), or null. */
  getRankState(key: string): Uint8Array | null {
    const value = this.store.get(GRAPHS, key);
    return value instanceof Uint8Array ? value : null;
  }

  /**
   * Stores a state and, when given, its kept ranking, in one transaction. The kept ranking's parts
   * carry one generation each: a reader that meets parts of two (another process wrote in between)
   * combines nothing.
   */
  putRankState(key: string, state: Uint8Array, quick?: { head: Uint8Array; parts: ReadonlyMap<string, Uint8Array> } | null): void {
    // A state is as large as the graph: keep the newest two contexts (a chat file added and removed again).
    this.store.batch((w) => {
      w.put(GRAPHS, key, state);
      w.keepNewest(GRAPHS, 2);
      w.put(GRAPHS_LATEST, "key", key);
      if (quick) {
        w.put(GRAPHS_QUICK, key, quick.head);
        for (const [name, part] of quick.parts) w.put(GRAPHS_QUICK_PARTS, `${key}\n${name}`, part);
        w.keepNewest(GRAPHS_QUICK, 2);
        w.keepNewest(GRAPHS_QUICK_PARTS, 2 * quick.parts.size);
      } else w.delete(GRAPHS_QUICK, [key]);
    });
  }

  /** The kept ranking's head of a context (rank-quick.ts), or null. */
  getRankQuick(key: string): Uint8Array | null {
    const value = this.store.get(GRAPHS_QUICK, key);
    return value instanceof Uint8Array ? value : null;
  }

  /** One part of the kept ranking (its name: rank-quick.ts), or null. */
  getRankQuickPart(key: string, name: string): Uint8Array | null {
    const value = this.store.get(GRAPHS_QUICK_PARTS, `${key}\n${name}`);
    return value instanceof Uint8Array ? value : null;
  }

  /** The state stored last, with its key, or null. */
  latestRankState(): { key: string; state: Uint8Array } | null {
    const key = this.store.get(GRAPHS_LATEST, "key");
    if (typeof key !== "string") return null;
    const state = this.getRankState(key);
    return state ? { key, state } : null;
  }

  /** A build's writes in one transaction (each write is a transaction otherwise): its ranking, when computed, and its maps. */
  putBuild(ranking: { key: string; entries: string } | null, maps: readonly (readonly [string, string])[]): void {
    this.store.batch((w) => {
      if (ranking) {
        w.put(RANKINGS, ranking.key, ranking.entries);
        w.keepNewest(RANKINGS, 20);
      }
      for (const [key, text] of maps) w.put(MAPS, key, text);
      // The newest few dozen maps (a build stores up to two, by state and by rendering inputs, and a memo): old states never come back.
      if (maps.length > 0) w.keepNewest(MAPS, 100);
    });
  }

  getMap(key: string): string | null {
    const value = this.store.get(MAPS, key);
    return typeof value === "string" ? value : null;
  }

  close(): void {
    this.store.close();
  }
}

/** The paths whose entries differ between two indexes (set in one only, or set to other fields). */
function changedPaths(before: FileIndex, after: FileIndex): string[] {
  const changed: string[] = [];
  for (const [path, was] of before.entries()) {
    const now = after.get(path);
    if (!now || now.mtime !== was.mtime || now.size !== was.size || now.version !== was.version || now.sig !== was.sig || now.skipped !== was.skipped) changed.push(path);
  }
  for (const [path] of after.entries()) if (!before.has(path)) changed.push(path);
  return changed;
}

/** The stored index's layout (FileIndex); another is not read. */
const INDEX_FORMAT = 2;
/** Header: format, entry count, version count, text bytes (u32 each). */
const INDEX_HEADER = 16;
/** An entry's version number in a stored delta when the delta deletes it. */
const DELETED = 0xffff;
/** Entries a stored delta holds at most; past that, the whole index is stored again. */
const DELTA_MAX = 1024;
/** Lookups out of the base's order that are binary searches; past them, a map by path is built. */
const MISSES_BEFORE_MAP = 64;

/** Stored entries, as decoded. */
interface IndexPart {
  /** The text fields before the entries: [token] for a base, [token, base's token] for a delta. */
  head: string[];
  count: number;
  mtimes: Float64Array;
  sizes: Float64Array;
  /** Number of each entry's version in `versions` (DELETED in a delta: the entry is deleted). */
  versionOf: Uint16Array;
  versions: string[];
  /** The text fields as stored: entry i's path at [at + 3i], its signature and skip reason after it. */
  text: string[];
  at: number;
}

/**
 * Every cached file's META fields by path (TagCache.fileMeta), read as a map (get, has,
 * set, delete, keys) that decodes no entry until it is asked for. Stored as two values:
 * a base (every entry, sorted by path) and a delta (entries set or deleted since; the base
 * is stored again when the delta grows past DELTA_MAX). Each holds the entries' mtimes and sizes
 * (f64), version numbers (u16), then, NUL-separated text, its head, the versions and each
 * entry's path, signature and skip reason. An entry that cannot be stored as text
 * (a NUL, a lone surrogate) is left out: it then reads as not cached.
 */
export class FileIndex {
  #base: IndexPart;
  /** The token the base was stored under (null: not stored yet). */
  #baseToken: string | null;
  /** Entries set or deleted (null) since the base. */
  readonly #changed = new Map<string, FileMeta | null>();
  /** Lookups that were not where guessed (see #find), and the base's positions by path once there were many. */
  #misses = 0;
  #positions: Map<string, number> | null = null;
  /** Where the next lookup is guessed to be (files are looked up in the listing's order, which is mostly the base's). */
  #next = 0;
  #size: number;
  /** The number of this build's grammar table among the base's versions (-1: none). */
  #current: number;

  private constructor(base: IndexPart, baseToken: string | null) {
    this.#base = base;
    this.#baseToken = baseToken;
    this.#size = base.count;
    this.#current = base.versions.indexOf(GRAMMAR_TABLE_VERSION);
  }

  /** An index of these rows, not stored yet. */
  static of(rows: ReadonlyMap<string, FileMeta>): FileIndex {
    const index = new FileIndex(decodePart(null)!, null);
    for (const [path, meta] of rows) index.set(path, meta);
    return index;
  }

  /** The stored index whose delta was written under `token`, or null (absent, another token or layout, cut short). */
  static decode(base: unknown, delta: unknown, token: string): FileIndex | null {
    const changes = decodePart(delta, token);
    if (!changes || changes.head.length !== 2) return null;
    const stored = decodePart(base, changes.head[1]!);
    if (!stored || stored.head.length !== 1) return null;
    const index = new FileIndex(stored, changes.head[1]!);
    for (let i = 0; i < changes.count; i++) {
      if (changes.versionOf[i] === DELETED) index.delete(pathOf(changes, i));
      else index.set(pathOf(changes, i), entryOf(changes, i));
    }
    return index;
  }

  get size(): number {
    return this.#size;
  }

  get(path: string): FileMeta | undefined {
    if (this.#changed.size > 0) {
      const changed = this.#changed.get(path);
      if (changed !== undefined) return changed ?? undefined;
    }
    const i = this.#find(path);
    return i < 0 ? undefined : entryOf(this.#base, i);
  }

  /**
   * What ranking needs of a file (its signature and skip reason) when its entry is of
   * this mtime and size and of this build's grammar table, else null: get() for the scan
   * of every listed file, without the rest of the entry.
   */
  fresh(path: string, mtime: number, size: number): { sig: string; skipped: string } | null {
    const changed = this.#changed.size > 0 ? this.#changed.get(path) : undefined;
    if (changed !== undefined) {
      return changed && changed.mtime === mtime && changed.size === size && changed.version === GRAMMAR_TABLE_VERSION ? { sig: changed.sig, skipped: changed.skipped } : null;
    }
    const base = this.#base;
    const i = this.#find(path);
    if (i < 0 || base.mtimes[i] !== mtime || base.sizes[i] !== size || base.versionOf[i] !== this.#current) return null;
    const at = base.at + 3 * i;
    return { sig: base.text[at + 1]!, skipped: base.text[at + 2]! };
  }

  has(path: string): boolean {
    return this.get(path) !== undefined;
  }

  set(path: string, meta: FileMeta): void {
    if (!this.has(path)) this.#size++;
    this.#changed.set(path, { mtime: meta.mtime, size: meta.size, version: meta.version, sig: meta.sig, skipped: meta.skipped });
  }

  delete(path: string): void {
    if (!this.has(path)) return;
    this.#size--;
    if (this.#find(path) >= 0) this.#changed.set(path, null);
    else this.#changed.delete(path);
  }

  *keys(): IterableIterator<string> {
    for (const [path] of this.entries()) yield path;
  }

  /** Every entry: the base's in their stored order, then those set since. */
  *entries(): IterableIterator<[string, FileMeta]> {
    const base = this.#base;
    for (let i = 0; i < base.count; i++) {
      const path = pathOf(base, i);
      const changed = this.#changed.get(path);
      if (changed === undefined) yield [path, entryOf(base, i)];
      else if (changed) yield [path, changed];
    }
    for (const [path, meta] of this.#changed) if (meta && this.#find(path) < 0) yield [path, meta];
  }

  /** Its stored form was dropped: the next store() stores it whole. */
  unstored(): void {
    this.#baseToken = null;
  }

  /**
   * Its stored form under `token`, as [base or null, delta]: the delta alone while it is
   * small and the base is stored; else the whole index as a new base (then this index
   * reads from it) and an empty delta.
   */
  store(token: string): [Uint8Array | null, Uint8Array] {
    let base: Uint8Array | null = null;
    if (this.#baseToken === null || this.#changed.size > DELTA_MAX) {
      // Sorted by path: a lookup out of order is a binary search.
      base = encodePart([token], [...this.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)), false);
      this.#base = decodePart(base, token)!;
      this.#baseToken = token;
      this.#changed.clear();
      this.#positions = null;
      this.#misses = 0;
      this.#next = 0;
      this.#size = this.#base.count;
      this.#current = this.#base.versions.indexOf(GRAMMAR_TABLE_VERSION);
    }
    return [base, encodePart([token, this.#baseToken], this.#changed, true)];
  }

  /**
   * Entry i of the base with this path, or -1: the entry after the last one found, else a
   * binary search (the base is sorted by path); past MISSES_BEFORE_MAP of those, a map by path.
   */
  #find(path: string): number {
    const base = this.#base;
    const guess = this.#next;
    if (guess < base.count && base.text[base.at + 3 * guess] === path) {
      this.#next = guess + 1;
      return guess;
    }
    if (this.#misses++ >= MISSES_BEFORE_MAP) {
      if (!this.#positions) {
        this.#positions = new Map();
        for (let i = 0; i < base.count; i++) this.#positions.set(pathOf(base, i), i);
      }
      const at = this.#positions.get(path) ?? -1;
      this.#next = at + 1;
      return at;
    }
    let low = 0;
    let high = base.count - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = pathOf(base, mid);
      if (at === path) {
        this.#next = mid + 1;
        return mid;
      }
      if (at < path) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }
}

function entryOf(part: IndexPart, i: number): FileMeta {
  const at = part.at + 3 * i;
  return { mtime: part.mtimes[i]!, size: part.sizes[i]!, version: part.versions[part.versionOf[i]!] ?? "", sig: part.text[at + 1]!, skipped: part.text[at + 2]! };
}

function pathOf(part: IndexPart, i: number): string {
  return part.text[part.at + 3 * i]!;
}

/** Whether a field can be stored in the index's text and read back the same. */
function storable(text: string): boolean {
  return !text.includes("\0") && text.isWellFormed();
}

/**
 * Stored entries (null meta: deleted) behind a head of text fields. An entry that cannot be
 * stored is left out of a base, and stored as deleted in a delta (`delta`): its path must
 * not read as the base's older entry.
 */
function encodePart(head: string[], entries: Iterable<[string, FileMeta | null]>, delta: boolean): Uint8Array {
  const versions: string[] = [];
  const versionIds = new Map<string, number>();
  const numbers: number[] = [];
  const text: string[] = [];
  for (const [path, given] of entries) {
    // A path that cannot be stored is in no base either.
    if (!storable(path)) continue;
    let meta = given && storable(given.sig) && storable(given.skipped) ? given : null;
    let id = DELETED;
    if (meta) {
      const tag = tagOf(meta.version);
      id = versionIds.get(tag) ?? versions.length;
      if (id === versions.length && id !== DELETED) {
        versionIds.set(tag, id);
        versions.push(tag);
      } else if (id === DELETED) meta = null;
    }
    if (!meta && !delta) continue;
    numbers.push(meta?.mtime ?? 0, meta?.size ?? 0, id);
    text.push(path, meta?.sig ?? "", meta?.skipped ?? "");
  }
  const body = new TextEncoder().encode([...head, ...versions, ...text].join("\0"));
  const count = numbers.length / 3;
  const textAt = INDEX_HEADER + count * 16 + Math.ceil((count * 2) / 8) * 8;
  const out = new Uint8Array(textAt + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, INDEX_FORMAT, true);
  view.setUint32(4, count, true);
  view.setUint32(8, versions.length, true);
  view.setUint32(12, body.length, true);
  const mtimes = new Float64Array(out.buffer, INDEX_HEADER, count);
  const sizes = new Float64Array(out.buffer, INDEX_HEADER + count * 8, count);
  const versionOf = new Uint16Array(out.buffer, INDEX_HEADER + count * 16, count);
  for (let i = 0; i < count; i++) {
    mtimes[i] = numbers[3 * i]!;
    sizes[i] = numbers[3 * i + 1]!;
    versionOf[i] = numbers[3 * i + 2]!;
  }
  out.set(body, textAt);
  return out;
}

/**
 * Stored entries whose head starts with `token`, or null (another token or layout, cut
 * short); with no value, an empty part.
 */
function decodePart(value: unknown, token?: string): IndexPart | null {
  if (value === null && token === undefined) return { head: [], count: 0, mtimes: new Float64Array(0), sizes: new Float64Array(0), versionOf: new Uint16Array(0), versions: [], text: [], at: 0 };
  if (!(value instanceof Uint8Array) || value.length < INDEX_HEADER) return null;
  // Typed arrays over it need its start 8-byte aligned.
  const bytes = value.byteOffset % 8 === 0 ? value : value.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, INDEX_HEADER);
  const count = view.getUint32(4, true);
  const versionCount = view.getUint32(8, true);
  const textAt = INDEX_HEADER + count * 16 + Math.ceil((count * 2) / 8) * 8;
  if (view.getUint32(0, true) !== INDEX_FORMAT || textAt + view.getUint32(12, true) !== bytes.length) return null;
  // The token first: the rest is decoded only when it is the one asked for.
  const tokenEnd = bytes.indexOf(0, textAt);
  if (new TextDecoder().decode(bytes.subarray(textAt, tokenEnd < 0 ? bytes.length : tokenEnd)) !== token) return null;
  const parts = new TextDecoder().decode(bytes.subarray(textAt)).split("\0");
  const headCount = parts.length - versionCount - count * 3;
  if (headCount < 1 || headCount > 2) return null;
  return {
    head: parts.slice(0, headCount),
    count,
    mtimes: new Float64Array(bytes.buffer, bytes.byteOffset + INDEX_HEADER, count),
    sizes: new Float64Array(bytes.buffer, bytes.byteOffset + INDEX_HEADER + count * 8, count),
    // A number past the versions (a damaged value) reads as no version: that entry is not fresh.
    versionOf: new Uint16Array(bytes.buffer, bytes.byteOffset + INDEX_HEADER + count * 16, count),
    versions: parts.slice(headCount, headCount + versionCount).map(versionOfTag),
    text: parts,
    at: headCount + versionCount,
  };
}

/** A row's fields by position (no split into an array: this runs for every file of a changed build). */
function decodeMeta(value: unknown): FileMeta | null {
  if (typeof value !== "string") return null;
  const a = value.indexOf("\t");
  const b = a < 0 ? -1 : value.indexOf("\t", a + 1);
  const c = b < 0 ? -1 : value.indexOf("\t", b + 1);
  const d = c < 0 ? -1 : value.indexOf("\t", c + 1);
  if (d < 0) return null;
  const mtime = Number(value.slice(0, a));
  const size = Number(value.slice(a + 1, b));
  if (!Number.isFinite(mtime) || !Number.isFinite(size)) return null;
  // The skip reason is last: it is the one field that may hold a tab.
  return { mtime, size, version: versionOfTag(value.slice(b + 1, c)), sig: value.slice(c + 1, d), skipped: value.slice(d + 1) };
}

const tags = new Map<string, string>();

/**
 * A grammar-table version as stored in a file's row: a hash of it (the version names
 * every grammar and is ~750 bytes; in every row it was most of what a warm index read).
 */
function versionTag(version: string): string {
  let tag = tags.get(version);
  if (tag === undefined) tags.set(version, (tag = "#" + identKey(version).toString(36)));
  return tag;
}

/** The version a row's tag stands for: this build's table when the tags agree, else the tag (never equal to a version). */
function versionOfTag(tag: string): string {
  return tag === versionTag(GRAMMAR_TABLE_VERSION) ? GRAMMAR_TABLE_VERSION : tag;
}

/** A version's tag; a version read back as its tag (versionOfTag) is its own tag. */
function tagOf(version: string): string {
  return version.startsWith("#") ? version : versionTag(version);
}

/**
 * Names and reference keys in one value: 8 bytes holding the keys' byte length, the keys
 * (8-byte aligned, so they are read in place), then the names' UTF-8.
 */
function encodeRank(names: string, refs: Uint8Array): Uint8Array {
  const tail = new TextEncoder().encode(names);
  const out = new Uint8Array(8 + refs.length + tail.length);
  new DataView(out.buffer).setUint32(0, refs.length, true);
  out.set(refs, 8);
  out.set(tail, 8 + refs.length);
  return out;
}

function decodeRank(value: unknown): { names: string; refs: Uint8Array } | null {
  if (!(value instanceof Uint8Array) || value.length < 8) return null;
  const refLength = new DataView(value.buffer, value.byteOffset, 8).getUint32(0, true);
  if (8 + refLength > value.length) return null;
  return { refs: value.subarray(8, 8 + refLength), names: new TextDecoder().decode(value.subarray(8 + refLength)) };
}
