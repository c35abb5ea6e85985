// Token counting: exact byte-pair counts over js-tiktoken's rank tables, loaded the
// first time an encoding is used, and sampled (counted on evenly spread slices, then
// extrapolated) for texts above ~200 KB so a huge file never stalls a request.
//
// We count with our own BPE loop over a flat hash table rather than js-tiktoken's
// `Tiktoken` class: its constructor takes ~350 ms to index o200k, and counting needs no ids.
// The result is identical to `new Tiktoken(ranks).encode(text, [], []).length`
// (tokens.test.ts checks it); special-token text counts as ordinary text.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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
 * One encoding's ranks as a flat open-addressing hash table over the tokens' bytes:
 * building it takes a fraction of the time a Map of 200k string keys does, and the
 * first count sits on the path to the first request (the repo map counts its text).
 */
interface Encoding {
  /** Every token's bytes, back to back; token t spans bytes[offsets[t]] .. bytes[offsets[t + 1]]. */
  bytes: Uint8Array;
  offsets: Int32Array;
  ranks: Int32Array;
  /** Slot → token index + 1 (0 = empty); size a power of two. */
  table: Int32Array;
  mask: number;
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

/**
 * Parse js-tiktoken's rank text — lines of "! <first rank> <base64 token> <base64 token> ...",
 * consecutive ranks — straight into the flat table.
 */
function buildEncoding(file: RankFile): Encoding {
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
  let size = 1;
  while (size < tokens * 2) size <<= 1;
  const table = new Int32Array(size);
  const mask = size - 1;
  for (let t = 0; t < tokens; t++) {
    let slot = hashBytes(bytes, offsets[t]!, offsets[t + 1]!) & mask;
    while (table[slot] !== 0) slot = (slot + 1) & mask;
    table[slot] = t + 1;
  }
  return { bytes, offsets: offsets.subarray(0, tokens + 1), ranks: ranks.subarray(0, tokens), table, mask, pattern: new RegExp(file.pat_str, "gu"), pieces: new Map() };
}

// ─── The table cache ─────────────────────────────────────────────────────────
// Building a table costs ~100 ms; reading it back from disk ~3 ms. Encodings are fixed
// vocabularies, so a cache keyed by encoding name and layout version never goes stale.

const CACHE_MAGIC = 0x52444f43; // "CODR"
const CACHE_VERSION = 2;
const HEADER_INTS = 8;

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

/** Layout: header ints, offsets, ranks, table (Int32), pattern (UTF-8, padded), token bytes. */
function writeCache(path: string, enc: Encoding, patStr: string): void {
  const tokens = enc.ranks.length;
  const pattern = new TextEncoder().encode(patStr);
  const patternInts = Math.ceil(pattern.length / 4);
  const ints = HEADER_INTS + tokens + 1 + tokens + enc.table.length + patternInts;
  const out = new Uint8Array(ints * 4 + enc.offsets[tokens]!);
  const view = new Int32Array(out.buffer, 0, ints);
  view.set([CACHE_MAGIC, CACHE_VERSION, tokens, enc.offsets[tokens]!, enc.table.length, pattern.length, 0, 0]);
  let at = HEADER_INTS;
  view.set(enc.offsets.subarray(0, tokens + 1), at);
  view.set(enc.ranks, (at += tokens + 1));
  view.set(enc.table, (at += tokens));
  out.set(pattern, (at += enc.table.length) * 4);
  out.set(enc.bytes.subarray(0, enc.offsets[tokens]!), ints * 4);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, out);
  renameSync(temp, path);
}

function readCache(path: string): Encoding | undefined {
  let file: Uint8Array;
  try {
    file = readFileSync(path);
  } catch {
    return undefined;
  }
  const buffer = file.byteOffset % 4 === 0 ? file.buffer : file.slice().buffer;
  const base = file.byteOffset % 4 === 0 ? file.byteOffset : 0;
  if (file.length < HEADER_INTS * 4) return undefined;
  const header = new Int32Array(buffer, base, HEADER_INTS);
  const [magic, version, tokens, used, tableSize, patternLength] = header as unknown as number[];
  if (magic !== CACHE_MAGIC || version !== CACHE_VERSION) return undefined;
  const patternInts = Math.ceil(patternLength! / 4);
  const ints = HEADER_INTS + tokens! + 1 + tokens! + tableSize! + patternInts;
  if (file.length !== ints * 4 + used!) return undefined;
  let at = base + HEADER_INTS * 4;
  const offsets = new Int32Array(buffer, at, tokens! + 1);
  const ranks = new Int32Array(buffer, (at += (tokens! + 1) * 4), tokens!);
  const table = new Int32Array(buffer, (at += tokens! * 4), tableSize!);
  const patStr = new TextDecoder().decode(new Uint8Array(buffer, (at += tableSize! * 4), patternLength!));
  const bytes = new Uint8Array(buffer, base + ints * 4, used!);
  // Structural check (a cache from a broken writer must not count wrongly): offsets rise to `used`.
  if (offsets[0] !== 0 || offsets[tokens!] !== used || tableSize! < tokens! || (tableSize! & (tableSize! - 1)) !== 0) return undefined;
  for (let t = 0; t < tokens!; t++) if (offsets[t + 1]! <= offsets[t]!) return undefined;
  return { bytes, offsets, ranks, table, mask: tableSize! - 1, pattern: new RegExp(patStr, "gu"), pieces: new Map() };
}

function loadEncoding(name: string | undefined): Encoding {
  const key = encodingName(name);
  let enc = encodings.get(key);
  if (enc) return enc;
  const dir = tableCacheDir();
  enc = dir ? readCache(cachePath(dir, key)) : undefined;
  if (!enc) {
    const file = rankFile(key);
    enc = buildEncoding(file);
    if (dir) {
      try {
        mkdirSync(dir, { recursive: true });
        writeCache(cachePath(dir, key), enc, file.pat_str);
      } catch {
        // A read-only home only costs the rebuild next time.
      }
    }
  }
  encodings.set(key, enc);
  return enc;
}

/** Forget loaded tables (tests). */
export function resetEncodings(): void {
  encodings.clear();
}

/** Load an encoding's tables now (e.g. while waiting for user input) so the first count is fast. */
export function preloadEncoding(encoding: string = "o200k_base"): void {
  loadEncoding(encoding);
}

/** Rank of the byte sequence piece[start, end), or -1. */
function rankOf(enc: Encoding, piece: Uint8Array, start: number, end: number): number {
  const length = end - start;
  let slot = hashBytes(piece, start, end) & enc.mask;
  for (let entry = enc.table[slot]!; entry !== 0; slot = (slot + 1) & enc.mask, entry = enc.table[slot]!) {
    const t = entry - 1;
    const from = enc.offsets[t]!;
    if (enc.offsets[t + 1]! - from !== length) continue;
    let i = 0;
    while (i < length && enc.bytes[from + i] === piece[start + i]) i++;
    if (i === length) return enc.ranks[t]!;
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
