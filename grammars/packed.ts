// Embedded assets packed at build time: scripts/build.ts stores each grammar's .wasm and query
// (and the token rank tables) compressed behind a small header (zstd, or brotli for what is
// cached); they are unpacked on first use. A large one is cached under the user's cache directory, keyed by the binary's version and
// the content's checksum, so later runs read it back instead of decompressing. From source the
// assets are plain files and are read as they are.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

declare const CODER_VERSION: string | undefined;

/**
 * "CDZ1" (one zstd frame) or "CDB1" (one brotli stream), then the raw length and the raw bytes'
 * CRC-32 (both u32, little-endian), then the compressed bytes.
 */
const MAGICS = { zstd: [0x43, 0x44, 0x5a, 0x31], brotli: [0x43, 0x44, 0x42, 0x31] } as const;
export type Codec = keyof typeof MAGICS;
const HEADER = 12;
/** Smaller assets are decompressed in memory every time: a cache file would cost more than it saves. */
export const CACHE_ABOVE = 64 * 1024;

interface Header {
  rawLength: number;
  crc: number;
  codec: Codec;
}

function headerOf(bytes: Uint8Array): Header | null {
  if (bytes.length < HEADER) return null;
  const codec = (Object.keys(MAGICS) as Codec[]).find((c) => MAGICS[c].every((b, i) => bytes[i] === b));
  if (!codec) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER);
  return { rawLength: view.getUint32(4, true), crc: view.getUint32(8, true), codec };
}

/**
 * node:zlib taken at run time: an import of a Node built-in makes the compiled binary embed
 * bytecode for Bun's own code of it, and only a first unpack of a brotli asset needs this one.
 */
const zlib = () => process.getBuiltinModule("node:zlib");

/**
 * The packed form of `raw` (scripts/build.ts): zstd at `level`, or brotli at quality `level`
 * with a 16 MB window (smaller, about 3x slower to unpack: for assets unpacked once per version).
 */
export function packAsset(raw: Uint8Array, level = 9, codec: Codec = "zstd"): Uint8Array {
  const { constants } = codec === "brotli" ? zlib() : { constants: null };
  const frame = constants
    ? zlib().brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: level, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } })
    : Bun.zstdCompressSync(raw, { level });
  const out = new Uint8Array(HEADER + frame.length);
  out.set(MAGICS[codec], 0);
  const view = new DataView(out.buffer);
  view.setUint32(4, raw.length, true);
  view.setUint32(8, Bun.hash.crc32(raw), true);
  out.set(frame, HEADER);
  return out;
}

/** The raw bytes of a packed asset, or null when `bytes` is not one or does not unpack to what its header says. */
export function unpackAsset(bytes: Uint8Array): Uint8Array | null {
  const header = headerOf(bytes);
  if (!header) return null;
  try {
    return unpack("", bytes, header);
  } catch {
    return null;
  }
}

/** Whether `bytes` is a packed asset. */
export function isPacked(bytes: Uint8Array): boolean {
  return headerOf(bytes) !== null;
}

/** $XDG_CACHE_HOME/coder/grammars/<version>, default ~/.cache/coder/grammars/<version>; null from source. */
export function assetCacheDir(env: Record<string, string | undefined> = process.env): string | null {
  if (typeof CODER_VERSION !== "string") return null;
  const root = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(root, "coder", "grammars", CODER_VERSION);
}

/**
 * An embedded asset's bytes (a path readable with node:fs: on disk from source, in the binary's
 * virtual file system when compiled), unpacked when packed; `cacheDir` null keeps it in memory.
 */
export function readAsset(path: string, cacheDir: string | null = assetCacheDir()): Uint8Array {
  const bytes = readWhole(path);
  const header = bytes && headerOf(bytes);
  const member = bytes ? null : MEMBER.exec(path);
  if (member) return readMember(member[1]!, member[2]!, { rawLength: Number(member[4]), crc: Number.parseInt(member[5]!, 16), codec: "brotli" }, Number(member[3]), cacheDir);
  if (!bytes) throw new Error(`embedded asset ${path} cannot be read`);
  if (!header) return bytes;
  return throughCache(cacheDir, basename(path), header, () => unpack(path, bytes, header));
}

/** A large asset's cached raw copy (named by `name` and its checksum) when it is sound; else `unpacked()`, cached. */
function throughCache(cacheDir: string | null, name: string, header: Header, unpacked: () => Uint8Array): Uint8Array {
  const cacheName = `${name.replace(/[^\w.-]/g, "_")}-${header.crc.toString(16).padStart(8, "0")}`;
  const cacheable = cacheDir !== null && header.rawLength > CACHE_ABOVE;
  const cached = cacheable ? readCached(join(cacheDir, cacheName), header) : null;
  if (cached) return cached;
  const raw = unpacked();
  if (cacheable) writeCached(cacheDir, cacheName, raw);
  return raw;
}

/**
 * A file packed in a group (scripts/build.ts ASSET_GROUPS) is imported as the group's path plus
 * `#NAME,OFFSET,LENGTH,CRC32`: its place in the group's unpacked bytes. Only a path that cannot be
 * read is taken for one, so a real file whose name has such a tail is still read as it is.
 */
const MEMBER = /^(.+)#([\w.-]+),(\d+),(\d+),([0-9a-f]{8})$/;

/** The tail (after the group's path) of a group member's path: `raw` is at `offset` in the group. */
export function memberPath(group: string, name: string, offset: number, raw: Uint8Array): string {
  return `${group}#${name},${offset},${raw.length},${Bun.hash.crc32(raw).toString(16).padStart(8, "0")}`;
}

/** A group member's bytes: its own cached copy, or else cut from the unpacked group (then cached). */
function readMember(groupPath: string, name: string, header: Header, offset: number, cacheDir: string | null): Uint8Array {
  const path = `${groupPath}#${name}`;
  return throughCache(cacheDir, name, header, () => {
    const group = readWhole(groupPath);
    const groupHeader = group && headerOf(group);
    if (!group || !groupHeader) throw new Error(`embedded asset ${path} cannot be read`);
    const raw = unpack(groupPath, group, groupHeader).slice(offset, offset + header.rawLength);
    if (raw.length !== header.rawLength || Bun.hash.crc32(raw) !== header.crc) throw new Error(`embedded asset ${path} is damaged (its checksum does not match)`);
    return raw;
  });
}

const imported = new Map<string, Promise<Record<string, unknown>>>();
const required = new Map<string, Record<string, unknown>>();

/**
 * Import a packed library bundle (scripts/build.ts packs libraries no start-up path needs, the
 * web page, image, MCP, ACP, set-up, YAML and zod libraries, as one ES module each): unpacked
 * into the user's cache as a `.js` file, checked against its checksum, and imported from there,
 * once per process. When the cache cannot be written (a read-only home) it is imported from a
 * private temporary folder that is removed again.
 */
export function importPacked(path: string, cacheDir: string | null = assetCacheDir()): Promise<Record<string, unknown>> {
  let loading = imported.get(path);
  if (!loading) {
    loading = (async () => withUnpackedModule(path, cacheDir, async (file) => (await import(pathToFileURL(file).href)) as Record<string, unknown>))();
    imported.set(path, loading);
  }
  return loading;
}

/**
 * importPacked for a library that synchronous code needs (zod, for a config file read while the
 * settings load): the same checked file, loaded with require(), so its stand-in has no top-level
 * await and a require() chain may reach it.
 */
export function requirePacked(path: string, cacheDir: string | null = assetCacheDir()): Record<string, unknown> {
  let loaded = required.get(path);
  if (!loaded) {
    loaded = withUnpackedModule(path, cacheDir, (file) => require(file) as Record<string, unknown>);
    required.set(path, loaded);
  }
  return loaded;
}

/**
 * Run `load` on the packed library's unpacked, checked `.js` file: the cached copy (a regular
 * file whose checksum matches, rewritten when it does not), or else a copy in a private temporary
 * folder, removed once `load` has settled.
 */
function withUnpackedModule<T>(path: string, cacheDir: string | null, load: (file: string) => T): T {
  const bytes = readWhole(path);
  const header = bytes && headerOf(bytes);
  if (!bytes || !header) throw new Error(`embedded library ${path} cannot be read`);
  const name = `${basename(path).replace(/[^\w.-]/g, "_")}-${header.crc.toString(16).padStart(8, "0")}.js`;
  if (cacheDir) {
    const file = join(cacheDir, name);
    if (!readCached(file, header)) writeCached(cacheDir, name, unpack(path, bytes, header));
    if (readCached(file, header)) return load(file);
  }
  const dir = mkdtempSync(join(tmpdir(), "coder-lib-"));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  let result: T;
  try {
    const file = join(dir, name);
    writeFileSync(file, unpack(path, bytes, header), { flag: "wx", mode: 0o600 });
    result = load(file);
  } catch (error) {
    removeDir();
    throw error;
  }
  if (result instanceof Promise) return result.finally(removeDir) as T;
  removeDir();
  return result;
}

function unpack(path: string, bytes: Uint8Array, header: Header): Uint8Array {
  const body = bytes.subarray(HEADER);
  const raw = new Uint8Array(header.codec === "zstd" ? Bun.zstdDecompressSync(body) : zlib().brotliDecompressSync(body));
  if (raw.length !== header.rawLength || Bun.hash.crc32(raw) !== header.crc) throw new Error(`embedded asset ${path} is damaged (its checksum does not match)`);
  return raw;
}

/** readAsset as UTF-8 text (queries). */
export function readAssetText(path: string, cacheDir?: string | null): string {
  return new TextDecoder().decode(cacheDir === undefined ? readAsset(path) : readAsset(path, cacheDir));
}

function readWhole(path: string): Uint8Array | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

/**
 * A cached copy, only if it is a regular file (a link is not followed: O_NOFOLLOW) of the
 * expected length whose checksum matches; anything else is a miss and gets replaced.
 */
function readCached(path: string, header: Header): Uint8Array | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size !== header.rawLength) return null;
    const raw = new Uint8Array(header.rawLength);
    let at = 0;
    while (at < raw.length) {
      const n = readSync(fd, raw, at, raw.length - at, at);
      if (n <= 0) return null;
      at += n;
    }
    return Bun.hash.crc32(raw) === header.crc ? raw : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Write a fresh copy: a new temp file (O_EXCL | O_NOFOLLOW, so never through a planted link)
 * renamed over the name, which replaces a link there rather than writing where it points. Two
 * processes racing each write their own temp file; either rename leaves a whole, correct copy.
 * The folders coder owns (coder/, grammars/, the version) must be real directories, not links.
 * Failing to cache (a read-only home) only costs decompressing again next time.
 */
function writeCached(dir: string, name: string, raw: Uint8Array): void {
  const temp = join(dir, `.${name}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    const owned = [dir, join(dir, ".."), join(dir, "..", "..")];
    if (owned.some((d) => !lstatSync(d).isDirectory())) return;
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      let at = 0;
      while (at < raw.length) at += writeSync(fd, raw, at, raw.length - at);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, join(dir, name));
  } catch {
    // Under a path that is not a folder even removing fails (ENOTDIR): nothing was written then.
    try {
      rmSync(temp, { force: true });
    } catch {}
  }
}
