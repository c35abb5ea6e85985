// The repo map's persistent cache, kept in the kit's cache store (namespace
// "repomap", `.coder/cache/repomap/`): tags per file keyed by path + mtime + size +
// grammar version, rankings, finished maps keyed by the repository state, and the
// chat files' imports. The store handles links, corruption, locks and a second
// process; here a failed read is a miss and a failed write costs a reparse.
import type { CacheStore } from "../../core/plugin.ts";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import { identKey } from "./tags.ts";

/** The store's namespace and the layout of what this file keeps in it (another layout empties it). */
export const CACHE_NAMESPACE = "repomap";
export const CACHE_VERSION = 7;

/** Buckets of the store. */
const META = "meta";
const RANK = "rank";
const DEFS = "defs";
const MAPS = "maps";
const RANKINGS = "rankings";
const IMPORTS = "imports";
const RESOLVED = "resolved-imports";
const GRAPHS = "graphs";
/** The key of the state stored last (one row). */
const GRAPHS_LATEST = "graphs-latest";

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

  constructor(store: CacheStore) {
    this.store = store;
  }

  /** Where it lives, or ":memory:" for a temporary store. */
  get location(): string {
    return this.store.file ?? ":memory:";
  }

  /** Path → the fields that decide freshness (cheap: no tag text). */
  fileMeta(): Map<string, FileMeta> {
    const meta = new Map<string, FileMeta>();
    for (const [path, value] of this.store.entries(META)) {
      const row = decodeMeta(value);
      if (row) meta.set(path, row);
    }
    return meta;
  }

  /** What ranking needs of every cached file (used when something changed and the graph must be rebuilt). */
  rankRows(): Map<string, RankRow> {
    const rows = new Map<string, RankRow>();
    const meta = this.fileMeta();
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

  /** Writes rows in one transaction; a failure (disk full, lock) only costs the next run a reparse. */
  putFiles(rows: readonly CachedFile[], warn: (message: string) => void): void {
    if (rows.length === 0) return;
    const ok = this.store.batch((w) => {
      for (const r of rows) {
        w.put(META, r.path, `${r.mtime}\t${r.size}\t${versionTag(r.version)}\t${r.sig}\t${r.skipped}`);
        w.put(RANK, r.path, encodeRank(r.names, r.refs));
        w.put(DEFS, r.path, r.defs);
      }
    });
    if (!ok) warn("repo map: could not update the tag cache (its store refused the write)");
  }

  /** Drops rows of files that are no longer listed. */
  prune(gone: readonly string[]): void {
    if (gone.length === 0) return;
    // Stale rows are harmless when this fails: they are keyed by path and never listed.
    this.store.batch((w) => {
      for (const bucket of [META, RANK, DEFS]) w.delete(bucket, gone);
    });
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

  putRankState(key: string, state: Uint8Array): void {
    // A state is as large as the graph: keep the newest two contexts (a chat file added and removed again).
    this.store.batch((w) => {
      w.put(GRAPHS, key, state);
      w.keepNewest(GRAPHS, 2);
      w.put(GRAPHS_LATEST, "key", key);
    });
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
