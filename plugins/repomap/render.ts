// Rendering the map (pure): each file as its definition lines with the header
// lines of their enclosing scopes, `⋮` for what is left out, in the manner of
// Aider's TreeContext; then fitting as many ranked definitions as the token
// budget allows, by binary search, within 15%.
import type { RankedEntry } from "./rank.ts";

/** Lines of a text as Python's splitlines() gives them (no trailing empty line). */
export function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** One file's excerpt: lines of interest plus their scope headers, small gaps closed. */
export function renderExcerpt(lines: readonly string[], linesOfInterest: readonly number[], headers: readonly (readonly [number, number])[]): string {
  const show = new Set<number>();
  for (const line of linesOfInterest) show.add(line);
  for (const [start, end] of headers) for (let i = start; i < end; i++) show.add(i);
  // Close one-line gaps.
  const sorted = [...show].sort((a, b) => a - b);
  for (let i = 0; i + 1 < sorted.length; i++) if (sorted[i + 1]! - sorted[i]! === 2) show.add(sorted[i]! + 1);
  // Pick up a blank line right after a shown line.
  for (let i = 0; i < lines.length; i++) {
    if (!show.has(i)) continue;
    if (lines[i]!.trim() && i < lines.length - 1 && !lines[i + 1]!.trim()) show.add(i + 1);
  }
  let out = "";
  let dots = !show.has(0);
  for (let i = 0; i < lines.length; i++) {
    if (!show.has(i)) {
      if (dots) {
        out += "⋮\n";
        dots = false;
      }
      continue;
    }
    out += "│" + lines[i] + "\n";
    dots = true;
  }
  return out;
}

export interface RenderSource {
  /** The file's text, or null when it cannot be read. */
  text(path: string): string | null;
  /** The header ranges of the file's definitions on `lines`, in the definitions' order (what `Definition.show` holds). */
  headers(path: string, lines: ReadonlySet<number>): readonly (readonly [number, number])[];
}

/** A line as the map shows it: cut at 100 characters (UTF-16 units, as `slice` counts). */
const LINE_MAX = 100;

/**
 * Renders a prefix of the ranking: files in path order, each as an excerpt (or by name only).
 * Each file's block ("\n" + path, then its excerpt) is rendered once per set of lines and kept
 * with its lines already cut: every block starts with "\n", so no line of the whole text spans
 * two blocks, and cutting each block's lines is cutting the text's.
 */
export class MapRenderer {
  readonly #source: RenderSource;
  readonly #blocks = new Map<string, string>();
  readonly #lines = new Map<string, string[] | null>();

  constructor(source: RenderSource) {
    this.#source = source;
  }

  render(entries: readonly RankedEntry[], chatFiles: ReadonlySet<string>): string {
    const byFile = shownFiles(entries, chatFiles);
    let out = "";
    for (const path of [...byFile.keys()].sort()) out += this.#block(path, byFile.get(path)!);
    return out;
  }

  #block(path: string, lois: number[] | null): string {
    if (!lois) return cutLines("\n" + path + "\n");
    const unique = [...new Set(lois)].sort((a, b) => a - b);
    const key = path + "\u0000" + unique.join(",");
    const cached = this.#blocks.get(key);
    if (cached !== undefined) return cached;
    let lines = this.#lines.get(path);
    if (lines === undefined) {
      const text = this.#source.text(path);
      lines = text === null ? null : splitLines(text);
      this.#lines.set(path, lines);
    }
    const excerpt = lines ? renderExcerpt(lines, unique, this.#source.headers(path, new Set(unique))) : "";
    const block = cutLines("\n" + path + ":\n" + excerpt);
    this.#blocks.set(key, block);
    return block;
  }
}

/**
 * The files a prefix of the ranking shows, chat files left out: each with its lines of
 * interest in ranking order, or null for a file listed by name only (no entry with a line).
 */
export function shownFiles(entries: readonly RankedEntry[], chatFiles: ReadonlySet<string>): Map<string, number[] | null> {
  const byFile = new Map<string, number[] | null>();
  for (const entry of entries) {
    if (chatFiles.has(entry.path)) continue;
    const lines = byFile.get(entry.path);
    if (entry.line === undefined) {
      if (!byFile.has(entry.path)) byFile.set(entry.path, null);
    } else if (lines) lines.push(entry.line);
    else byFile.set(entry.path, [entry.line]);
  }
  return byFile;
}

/** Each line of `text` cut at LINE_MAX. */
function cutLines(text: string): string {
  let out = "";
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    const stop = end < 0 ? text.length : end;
    out += stop - start > LINE_MAX ? text.slice(start, start + LINE_MAX) : text.slice(start, stop);
    if (end < 0) return out;
    out += "\n";
    start = end + 1;
  }
}

/** Token estimate: exact for short texts, else from a sample of about 100 lines scaled by length. */
export function estimateTokens(text: string, count: (text: string) => number): number {
  if (text.length < 200) return count(text);
  const lines = text.split(/(?<=\n)/);
  const step = Math.max(1, Math.floor(lines.length / 100));
  let sample = "";
  for (let i = 0; i < lines.length; i += step) sample += lines[i];
  return (count(sample) / sample.length) * text.length;
}

/** Estimates of renderings known without rendering them (see map.ts FitMemo). */
export interface KnownEstimates {
  /** The estimate of the rendering of the ranking's first `n` entries, when known. */
  known(n: number): number | undefined;
  /** An estimate computed here, for next time. */
  learned(n: number, tokens: number): void;
}

/** Thrown by fitToBudget when a step needs more of the list than it was given (see `total`). */
export class PrefixTooShort extends Error {
  constructor() {
    super("the ranking given is too short for this fit");
  }
}

/**
 * The largest rendering of a prefix of `ranked` that fits `budget` tokens, or one
 * within 15% of it: a binary search over the prefix length, starting from a guess
 * of 25 tokens per definition. A prefix whose estimate is `known` is not rendered
 * while searching: the search takes the same steps on the same estimates, and only
 * the prefix it ends at is rendered.
 *
 * `ranked` may be the first part of a list of `total` entries: the search is the one over the
 * whole list, and a step past the part given throws PrefixTooShort.
 */
export function fitToBudget(
  ranked: readonly RankedEntry[],
  budget: number,
  render: (entries: readonly RankedEntry[]) => string,
  count: (text: string) => number,
  estimates?: KnownEstimates,
  total: number = ranked.length,
): { text: string; tokens: number; entries: number; furthest: number } {
  let lower = 0;
  let upper = total;
  let middle = Math.min(Math.floor(budget / 25), total);
  let furthest = 0;
  let best: { text: string | null; tokens: number; entries: number } = { text: "", tokens: 0, entries: 0 };
  while (lower <= upper) {
    if (middle > ranked.length) throw new PrefixTooShort();
    furthest = Math.max(furthest, middle);
    let text: string | null = null;
    let tokens = estimates?.known(middle);
    if (tokens === undefined) {
      text = render(ranked.slice(0, middle));
      tokens = estimateTokens(text, count);
      estimates?.learned(middle, tokens);
    }
    const error = Math.abs(tokens - budget) / budget;
    if ((tokens <= budget && tokens > best.tokens) || error < 0.15) {
      best = { text, tokens, entries: middle };
      if (error < 0.15) break;
    }
    if (tokens < budget) lower = middle + 1;
    else upper = middle - 1;
    middle = Math.floor((lower + upper) / 2);
  }
  return { text: best.text ?? render(ranked.slice(0, best.entries)), tokens: best.tokens, entries: best.entries, furthest };
}
