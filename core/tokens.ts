// Token counting: exact byte-pair counts over js-tiktoken's rank tables, loaded the
// first time an encoding is used, and sampled (counted on evenly spread slices, then
// extrapolated) for texts above ~200 KB so a huge file never stalls a request.
//
// We count with our own BPE loop rather than js-tiktoken's `Tiktoken` class: its
// constructor takes ~350 ms to index o200k, ours ~85 ms, and counting needs no ids.
// The result is identical to `new Tiktoken(ranks).encode(text, [], []).length`
// (tokens.test.ts checks it); special-token text counts as ordinary text.
import type { ChatMessage, ToolSpec } from "./plugin.ts";

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

interface Encoding {
  /** Byte sequence (as a latin1 string) → rank. */
  ranks: Map<string, number>;
  pattern: RegExp;
  /** Piece text → token count; pieces repeat a lot (words, indentation). */
  pieces: Map<string, number>;
}

const encodings = new Map<string, Encoding>();

interface RankFile {
  pat_str: string;
  bpe_ranks: string;
}

/** Synchronous on purpose (kit.tokens.count is sync); the bundler sees each literal path. */
function rankFile(name: EncodingName): RankFile {
  let mod: RankFile | { default: RankFile };
  switch (name) {
    case "cl100k_base":
      mod = require("js-tiktoken/ranks/cl100k_base");
      break;
    case "p50k_base":
      mod = require("js-tiktoken/ranks/p50k_base");
      break;
    case "p50k_edit":
      mod = require("js-tiktoken/ranks/p50k_edit");
      break;
    case "r50k_base":
      mod = require("js-tiktoken/ranks/r50k_base");
      break;
    case "gpt2":
      mod = require("js-tiktoken/ranks/gpt2");
      break;
    default:
      mod = require("js-tiktoken/ranks/o200k_base");
  }
  return "default" in mod ? mod.default : mod;
}

const KNOWN: readonly string[] = ["o200k_base", "cl100k_base", "p50k_base", "p50k_edit", "r50k_base", "gpt2"];

/** The encoding name to use for `name` (unknown names fall back to o200k_base). */
export function encodingName(name: string | undefined): EncodingName {
  return name && KNOWN.includes(name) ? (name as EncodingName) : "o200k_base";
}

function loadEncoding(name: string | undefined): Encoding {
  const key = encodingName(name);
  let enc = encodings.get(key);
  if (enc) return enc;
  const file = rankFile(key);
  const ranks = new Map<string, number>();
  // Each line: "! <first rank> <base64 token> <base64 token> ..." with consecutive ranks.
  for (const line of file.bpe_ranks.split("\n")) {
    if (!line) continue;
    const parts = line.split(" ");
    const offset = Number(parts[1]);
    for (let i = 2; i < parts.length; i++) ranks.set(atob(parts[i]!), offset + i - 2);
  }
  enc = { ranks, pattern: new RegExp(file.pat_str, "gu"), pieces: new Map() };
  encodings.set(key, enc);
  return enc;
}

/** Load an encoding's tables now (e.g. while waiting for user input) so the first count is fast. */
export function preloadEncoding(encoding: string = "o200k_base"): void {
  loadEncoding(encoding);
}

const utf8 = new TextEncoder();
const ASCII = /^[\x00-\x7f]*$/;

/** The piece's UTF-8 bytes as a latin1 string (one char per byte), the ranks' key form. */
function byteString(piece: string): string {
  if (ASCII.test(piece)) return piece;
  const bytes = utf8.encode(piece);
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += String.fromCharCode(bytes[i]!);
  return out;
}

/** Tokens of one pre-tokenised piece: merge the lowest-ranked adjacent pair until none is ranked. */
function countPiece(bytes: string, ranks: Map<string, number>): number {
  if (!bytes.length) return 0;
  if (ranks.has(bytes)) return 1;
  // starts[i] = start offset of part i; parts end where the next begins.
  const starts: number[] = [];
  for (let i = 0; i <= bytes.length; i++) starts.push(i);
  while (starts.length > 2) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i < starts.length - 2; i++) {
      const rank = ranks.get(bytes.slice(starts[i]!, starts[i + 2]!));
      if (rank !== undefined && rank < bestRank) {
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
      n = countPiece(byteString(piece), enc.ranks);
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
