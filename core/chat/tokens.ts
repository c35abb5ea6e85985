// Token counting: exact byte-pair counts over js-tiktoken's rank tables, loaded the
// first time an encoding is used, and sampled (counted on evenly spread slices, then
// extrapolated) for texts above ~200 KB so a huge file never stalls a request.
//
// We count with our own BPE loop over a flat hash table rather than js-tiktoken's
// `Tiktoken` class: its constructor takes ~350 ms to index o200k, and counting needs no ids.
// The result is identical to `new Tiktoken(ranks).encode(text, [], []).length`
// (tokens.test.ts checks it); special-token text counts as ordinary text.
import { closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ChatMessage, ToolSpec } from "../plugin.ts";
import { readAssetText } from "../../grammars/packed.ts";
import cl100kFile from "../../node_modules/js-tiktoken/dist/ranks/cl100k_base.cjs" with { type: "file" };
import o200kFile from "../../node_modules/js-tiktoken/dist/ranks/o200k_base.cjs" with { type: "file" };
import p50kFile from "../../node_modules/js-tiktoken/dist/ranks/p50k_base.cjs" with { type: "file" };
import r50kFile from "../../node_modules/js-tiktoken/dist/ranks/r50k_base.cjs" with { type: "file" };

export type EncodingName = "o200k_base" | "cl100k_base" | "p50k_base" | "p50k_edit" | "r50k_base" | "gpt2";

/** Texts longer than this (in characters) are counted on a sample. */
export const SAMPLE_ABOVE = 200_000;
const SAMPLE_SLICES = 96;
const SLICE_CHARS = 1_500;
const PIECE_CACHE_LIMIT = 100_000;

/** Per-message framing tokens (role markers, separators), as OpenAI's chat format adds them. */
export const MESSAGE_OVERHEAD = 3;
/** Tokens that prime the assistant's reply. */
export const REPLY_PRIMING = 3;

/**
 * One encoding's ranks as a bucketed hash table over the tokens' bytes, in one layout for memory
 * and the disk cache alike (the cache file is the table): header ints, the pattern (UTF-8,
 * padded to 4 bytes), the bucket directory (bucket k spans data[dir[k]] .. data[dir[k + 1]]),
 * then the buckets, each a run of entries `[length u8][rank u24, little-endian][token bytes]`.
 *
 * Building it from the rank text takes a fraction of the time a Map of 200k string keys does.
 * Read back from the cache, the table is opened, not read: a count of a small text (the repo
 * map's sample, a file name) looks up a few thousand byte strings, and only the buckets they
 * land in are read (a few dozen bytes each, instead of o200k's 2.5 MB); past PARTIAL_READS
 * bucket reads, or for a long text, the rest is read at once.
 */
interface Encoding {
  /** Bucket count − 1 (the count is a power of two). */
  mask: number;
  /** Byte offsets of the buckets in the data: bucket count + 1 of them. */
  dir: Uint32Array;
  /** The bucket data, once it is all in memory (built, or read whole). */
  data: Uint8Array | null;
  /** Until then: the open cache file, where its data starts, and the buckets read so far. */
  partial: { fd: number; dataStart: number; buckets: Map<number, Uint8Array> } | null;
  pattern: RegExp;
  /** Piece text → token count; pieces repeat a lot (words, indentation). */
  pieces: Map<string, number>;
}

const encodings = new Map<string, Encoding>();

interface RankFile {
  pat_str: string;
  bpe_ranks: string;
}

/**
 * The rank tables are embedded as files (packed in the binary, grammars/packed.ts), not as
 * modules: 5 MB of string literals would otherwise sit in the code every start loads. Each is
 * js-tiktoken's `module.exports = {...json...}`; read synchronously (kit.tokens.count is sync),
 * and only when the user's table cache misses.
 */
const RANK_FILES: Record<EncodingName, string> = {
  o200k_base: o200kFile,
  cl100k_base: cl100kFile,
  p50k_base: p50kFile,
  // Same ranks and pattern as p50k_base (they differ in special tokens, which count as text here).
  p50k_edit: p50kFile,
  r50k_base: r50kFile,
  // Same ranks and pattern as r50k_base.
  gpt2: r50kFile,
};

function rankFile(name: EncodingName): RankFile {
  const text = readAssetText(RANK_FILES[name]);
  return JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)) as RankFile;
}

const KNOWN: readonly string[] = ["o200k_base", "cl100k_base", "p50k_base", "p50k_edit", "r50k_base", "gpt2"];

/** The encoding name to use for `name` (unknown names fall back to o200k_base). */
export function encodingName(name: string | undefined): EncodingName {
  return name && KNOWN.includes(name) ? (name as EncodingName) : "o200k_base";
}

const BASE64 = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) BASE64["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] = i;

/** FNV-1a over bytes[start, end). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 16777619);
  return h >>> 0;
}

/** Entries per bucket, on average: bucket count = the power of two nearest tokens / this. */
const PER_BUCKET = 4;
/** Bytes before an entry's token bytes: its length (u8) and its rank (u24). */
const ENTRY_HEAD = 4;
/** Bucket reads after which a partly read table is read whole (a long count would otherwise make thousands of reads). */
export const PARTIAL_READS = 2048;
/** Texts at least this long (in characters) read the whole table first. */
const WHOLE_ABOVE = 20_000;

const CACHE_MAGIC = 0x52444f43; // "CODR"
const CACHE_VERSION = 3;
/** magic, version, tokens, bucket count, pattern bytes, data bytes, 0, 0. */
const HEADER_INTS = 8;

/**
 * Parse js-tiktoken's rank text — lines of "! <first rank> <base64 token> <base64 token> ...",
 * consecutive ranks — into the table's layout; returns the table and its bytes (the cache file).
 */
function buildEncoding(file: RankFile): { enc: Encoding; image: Uint8Array } {
  const text = file.bpe_ranks;
  let count = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 32) count++; // upper bound on tokens
  const bytes = new Uint8Array(Math.ceil((text.length * 3) / 4));
  const offsets = new Int32Array(count + 1);
  const ranks = new Int32Array(count);
  let tokens = 0;
  let used = 0;
  let pos = 0;
  while (pos < text.length) {
    let eol = text.indexOf("\n", pos);
    if (eol < 0) eol = text.length;
    const first = text.indexOf(" ", pos);
    const second = text.indexOf(" ", first + 1);
    if (first < 0 || first >= eol) {
      pos = eol + 1;
      continue;
    }
    let rank = Number(text.slice(first + 1, second < 0 || second > eol ? eol : second));
    let p = second < 0 || second > eol ? eol : second + 1;
    while (p < eol) {
      // Decode one base64 token (ends at a space or the line's end).
      offsets[tokens] = used;
      let acc = 0;
      let bits = 0;
      for (; p < eol; p++) {
        const c = text.charCodeAt(p);
        if (c === 32) break;
        const v = BASE64[c]!;
        if (v < 0) continue; // "=" padding
        acc = (acc << 6) | v;
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          bytes[used++] = (acc >> bits) & 0xff;
        }
      }
      p++;
      ranks[tokens++] = rank++;
    }
    pos = eol + 1;
  }
  offsets[tokens] = used;
  let buckets = 1;
  while (buckets * PER_BUCKET < tokens) buckets <<= 1;
  const mask = buckets - 1;
  const bucketOf = new Int32Array(tokens);
  const sizes = new Uint32Array(buckets);
  for (let t = 0; t < tokens; t++) {
    const length = offsets[t + 1]! - offsets[t]!;
    if (length > 255 || ranks[t]! > 0xffffff) throw new Error(`token ${t} does not fit the table layout`);
    const k = hashBytes(bytes, offsets[t]!, offsets[t + 1]!) & mask;
    bucketOf[t] = k;
    sizes[k] = sizes[k]! + ENTRY_HEAD + length;
  }
  const pattern = new TextEncoder().encode(file.pat_str);
  const dataLength = used + tokens * ENTRY_HEAD;
  const dataStart = (HEADER_INTS + Math.ceil(pattern.length / 4) + buckets + 1) * 4;
  const image = new Uint8Array(dataStart + dataLength);
  const ints = new Uint32Array(image.buffer, 0, dataStart / 4);
  ints.set([CACHE_MAGIC, CACHE_VERSION, tokens, buckets, pattern.length, dataLength, 0, 0]);
  image.set(pattern, HEADER_INTS * 4);
  const dir = ints.subarray(dataStart / 4 - (buckets + 1));
  for (let k = 0; k < buckets; k++) dir[k + 1] = dir[k]! + sizes[k]!;
  const data = image.subarray(dataStart);
  const fill = dir.slice(0, buckets);
  for (let t = 0; t < tokens; t++) {
    const from = offsets[t]!;
    const length = offsets[t + 1]! - from;
    let at = fill[bucketOf[t]!]!;
    data[at] = length;
    data[at + 1] = ranks[t]! & 0xff;
    data[at + 2] = (ranks[t]! >> 8) & 0xff;
    data[at + 3] = ranks[t]! >> 16;
    data.set(bytes.subarray(from, from + length), at + ENTRY_HEAD);
    fill[bucketOf[t]!] = at + ENTRY_HEAD + length;
  }
  return { enc: { mask, dir, data, partial: null, pattern: new RegExp(file.pat_str, "gu"), pieces: new Map() }, image };
}

// ─── The table cache ─────────────────────────────────────────────────────────
// Building a table costs ~100 ms; opening it from disk well under 1 ms. Encodings are fixed
// vocabularies, so a cache keyed by encoding name and layout version never goes stale.

let cacheDir: string | null | undefined;

/** Where encoding tables are cached (the kernel sets $XDG_CACHE_HOME/coder from its environment); null disables the cache. */
export function setTokenCacheDir(dir: string | null): void {
  cacheDir = dir;
}

function tableCacheDir(): string | null {
  if (cacheDir !== undefined) return cacheDir;
  return join(homedir(), ".cache", "coder");
}

function cachePath(dir: string, key: string): string {
  return join(dir, `tokens-${key}-v${CACHE_VERSION}.bin`);
}

function writeCache(path: string, image: Uint8Array): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, image);
  renameSync(temp, path);
}

/** `length` bytes of `fd` from `at`, or null when the file is shorter. */
function readAt(fd: number, at: number, length: number): Uint8Array | null {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, out, done, length - done, at + done);
    if (n <= 0) return null;
    done += n;
  }
  return out;
}

/**
 * Open a cached table: its header, pattern and bucket directory are read and checked (the
 * directory must run from 0 to the data's length, the file be as long as its header says);
 * the buckets are read when looked up, each bucket's range checked then. Anything else is a
 * miss, and the table gets rebuilt.
 */
function openCache(path: string): Encoding | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const head = readAt(fd, 0, HEADER_INTS * 4);
    if (!head) return undefined;
    const [magic, version, tokens, buckets, patternLength, dataLength] = new Uint32Array(head.buffer) as unknown as number[];
    if (magic !== CACHE_MAGIC || version !== CACHE_VERSION || !buckets || (buckets & (buckets - 1)) !== 0 || tokens! < 1) return undefined;
    const patternBytes = Math.ceil(patternLength! / 4) * 4;
    const dataStart = HEADER_INTS * 4 + patternBytes + (buckets + 1) * 4;
    if (fstatSync(fd).size !== dataStart + dataLength!) return undefined;
    const rest = readAt(fd, HEADER_INTS * 4, patternBytes + (buckets + 1) * 4);
    if (!rest) return undefined;
    const dir = new Uint32Array(rest.buffer, patternBytes, buckets + 1);
    // The rest of the directory is checked bucket by bucket as buckets are looked up (bucketRange):
    // checking its 65,536 entries here cost 2-4 ms of a fresh process's first count.
    if (dir[0] !== 0 || dir[buckets] !== dataLength) return undefined;
    const pattern = new RegExp(new TextDecoder().decode(rest.subarray(0, patternLength)), "gu");
    const enc: Encoding = { mask: buckets - 1, dir, data: null, partial: { fd, dataStart, buckets: new Map() }, pattern, pieces: new Map() };
    fd = -1; // the table keeps it
    return enc;
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** Read the rest of a partly read table (or rebuild it, should its file have become unreadable). */
function readWhole(enc: Encoding, key: EncodingName): void {
  const partial = enc.partial;
  if (!partial) return;
  enc.partial = null;
  let data: Uint8Array | null = null;
  try {
    data = readAt(partial.fd, partial.dataStart, enc.dir[enc.dir.length - 1]!);
  } catch {
    data = null;
  } finally {
    closeSync(partial.fd);
  }
  if (data) enc.data = data;
  else Object.assign(enc, buildEncoding(rankFile(key)).enc);
}

function loadEncoding(name: string | undefined): Encoding {
  const key = encodingName(name);
  let enc = encodings.get(key);
  if (enc) return enc;
  const dir = tableCacheDir();
  enc = dir ? openCache(cachePath(dir, key)) : undefined;
  if (!enc) {
    const built = buildEncoding(rankFile(key));
    enc = built.enc;
    if (dir) {
      try {
        mkdirSync(dir, { recursive: true });
        writeCache(cachePath(dir, key), built.image);
      } catch {
        // A read-only home only costs the rebuild next time.
      }
    }
  }
  encodings.set(key, enc);
  keys.set(enc, key);
  return enc;
}

const keys = new WeakMap<Encoding, EncodingName>();

/** Forget loaded tables, closing their cache files (tests). */
export function resetEncodings(): void {
  for (const enc of encodings.values()) if (enc.partial) closeSync(enc.partial.fd);
  encodings.clear();
}

/** Load an encoding's whole table now (e.g. while waiting for user input) so no count waits on a read. */
export function preloadEncoding(encoding: string = "o200k_base"): void {
  const enc = loadEncoding(encoding);
  readWhole(enc, keys.get(enc)!);
}

/** How much of an encoding's table is in memory: none (not loaded), the buckets read so far, or all of it ("all"). */
export function tableState(encoding: string = "o200k_base"): { loaded: "none" | "partial" | "all"; bucketsRead: number } {
  const enc = encodings.get(encodingName(encoding));
  if (!enc) return { loaded: "none", bucketsRead: 0 };
  return enc.partial ? { loaded: "partial", bucketsRead: enc.partial.buckets.size } : { loaded: "all", bucketsRead: enc.dir.length - 1 };
}

const EMPTY = new Uint8Array(0);

/**
 * Whether bucket k's range in the directory lies within the data (a directory read from a cache
 * file is checked bucket by bucket, as buckets are looked up); when it does not, the table is
 * rebuilt from the ranks (whole, in memory) and false returned: look the bucket up again.
 */
function bucketRange(enc: Encoding, k: number): boolean {
  const from = enc.dir[k]!;
  const to = enc.dir[k + 1]!;
  if (from <= to && to <= enc.dir[enc.dir.length - 1]!) return true;
  if (enc.partial) closeSync(enc.partial.fd);
  Object.assign(enc, buildEncoding(rankFile(keys.get(enc)!)).enc);
  return false;
}

/** Bucket k of a partly read table, read on first use (or, past PARTIAL_READS or when the table was rebuilt, null: the whole table is in memory). */
function partialBucket(enc: Encoding, k: number): Uint8Array | null {
  const partial = enc.partial!;
  let bucket = partial.buckets.get(k);
  if (bucket) return bucket;
  if (!bucketRange(enc, k)) return null;
  const from = enc.dir[k]!;
  const to = enc.dir[k + 1]!;
  if (from === to) return EMPTY;
  if (partial.buckets.size >= PARTIAL_READS) {
    readWhole(enc, keys.get(enc)!);
    return null;
  }
  try {
    bucket = readAt(partial.fd, partial.dataStart + from, to - from) ?? undefined;
  } catch {
    bucket = undefined;
  }
  if (!bucket) {
    readWhole(enc, keys.get(enc)!);
    return null;
  }
  partial.buckets.set(k, bucket);
  return bucket;
}

/** Rank of the byte sequence piece[start, end), or -1. */
function rankOf(enc: Encoding, piece: Uint8Array, start: number, end: number): number {
  const length = end - start;
  const hash = hashBytes(piece, start, end);
  const read = enc.data ? null : partialBucket(enc, hash & enc.mask);
  // A table read whole from the cache has its directory checked as it is used (once rebuilt, it holds).
  if (!read && !bucketRange(enc, hash & enc.mask)) return rankOf(enc, piece, start, end);
  const bucket = read ?? enc.data!;
  let at = read ? 0 : enc.dir[hash & enc.mask]!;
  const stop = read ? read.length : enc.dir[(hash & enc.mask) + 1]!;
  while (at < stop) {
    const size = bucket[at]!;
    if (size === length) {
      const from = at + ENTRY_HEAD;
      let i = 0;
      while (i < length && bucket[from + i] === piece[start + i]) i++;
      if (i === length) return bucket[at + 1]! | (bucket[at + 2]! << 8) | (bucket[at + 3]! << 16);
    }
    at += ENTRY_HEAD + size;
  }
  return -1;
}

const utf8 = new TextEncoder();
let scratch = new Uint8Array(1024);

/** The piece's UTF-8 bytes in a reused buffer; returns their length. */
function pieceBytes(piece: string): number {
  if (scratch.length < piece.length * 3) scratch = new Uint8Array(piece.length * 3);
  return utf8.encodeInto(piece, scratch).written;
}

/** Tokens of one pre-tokenised piece: merge the lowest-ranked adjacent pair until none is ranked. */
function countPiece(enc: Encoding, piece: Uint8Array, length: number): number {
  if (length === 0) return 0;
  if (rankOf(enc, piece, 0, length) >= 0) return 1;
  // starts[i] = start offset of part i; parts end where the next begins.
  const starts: number[] = [];
  for (let i = 0; i <= length; i++) starts.push(i);
  while (starts.length > 2) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i < starts.length - 2; i++) {
      const rank = rankOf(enc, piece, starts[i]!, starts[i + 2]!);
      if (rank >= 0 && rank < bestRank) {
        bestRank = rank;
        best = i;
      }
    }
    if (best < 0) break;
    starts.splice(best + 1, 1);
  }
  return starts.length - 1;
}

function countExact(text: string, enc: Encoding): number {
  let total = 0;
  enc.pattern.lastIndex = 0;
  for (const match of text.matchAll(enc.pattern)) {
    const piece = match[0];
    let n = enc.pieces.get(piece);
    if (n === undefined) {
      const length = pieceBytes(piece); // may replace `scratch` with a larger buffer
      n = countPiece(enc, scratch, length);
      if (enc.pieces.size >= PIECE_CACHE_LIMIT) enc.pieces.clear();
      enc.pieces.set(piece, n);
    }
    total += n;
  }
  return total;
}

/** Count a sample of evenly spread slices (cut at whitespace) and scale by length. */
function countSampled(text: string, enc: Encoding): number {
  const stride = Math.floor(text.length / SAMPLE_SLICES);
  let sampledChars = 0;
  let sampledTokens = 0;
  for (let k = 0; k < SAMPLE_SLICES; k++) {
    let start = k * stride;
    let end = Math.min(text.length, start + SLICE_CHARS);
    // Start and end on whitespace so no word is split in two (which would inflate the count).
    const ws = text.slice(start, end).search(/\s/);
    if (ws > 0) start += ws;
    const tail = text.slice(end, end + 200).search(/\s/);
    if (tail >= 0) end += tail;
    const slice = text.slice(start, end);
    sampledChars += slice.length;
    sampledTokens += countExact(slice, enc);
  }
  return sampledChars ? Math.round((sampledTokens / sampledChars) * text.length) : 0;
}

/**
 * Tokens of `text` in `encoding` (o200k_base by default; unknown names count as o200k_base).
 * Exact up to SAMPLE_ABOVE characters, estimated from a sample above.
 *
 * @example countTokens("hello world") // 2
 */
export function countTokens(text: string, encoding: string = "o200k_base"): number {
  if (!text) return 0;
  const enc = loadEncoding(encoding);
  if (enc.partial && text.length >= WHOLE_ABOVE) readWhole(enc, keys.get(enc)!);
  return text.length > SAMPLE_ABOVE ? countSampled(text, enc) : countExact(text, enc);
}

/** Prompt tokens of a message list, with the chat format's per-message framing and the reply priming. */
export function countMessages(messages: readonly ChatMessage[], encoding: string = "o200k_base"): number {
  let total = 0;
  for (const m of messages) {
    total += MESSAGE_OVERHEAD + 1 /* role */ + countTokens(m.content, encoding);
    for (const call of m.toolCalls ?? []) total += MESSAGE_OVERHEAD + countTokens(call.name, encoding) + countTokens(call.arguments, encoding);
    if (m.toolCallId) total += countTokens(m.toolCallId, encoding);
  }
  return messages.length ? total + REPLY_PRIMING : 0;
}

/** Prompt tokens taken by native tool definitions (their JSON, plus a little framing each). */
export function countTools(tools: readonly ToolSpec[], encoding: string = "o200k_base"): number {
  let total = 0;
  for (const t of tools) total += 8 + countTokens(JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters }), encoding);
  return total;
}
