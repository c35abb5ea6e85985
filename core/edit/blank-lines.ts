// The matcher's blank-lines rung, in two halves: where SEARCH lands when only its
// non-blank lines are compared, and how the REPLACE text takes over the file's
// blank lines where the edit leaves the gap between two lines as it was.
import { diffArrays } from "diff";
import { isBlank } from "./lines.ts";

/** Lines without the blank ones, and where each came from. */
export interface NonBlank {
  lines: string[];
  at: number[];
}

export function nonBlank(lines: readonly string[]): NonBlank {
  const out: NonBlank = { lines: [], at: [] };
  lines.forEach((l, i) => {
    if (isBlank(l)) return;
    out.lines.push(l);
    out.at.push(i);
  });
  return out;
}

/** A run of file lines a projected match covers, and the blank lines between its non-blank lines. */
export interface BlankSpan {
  start: number;
  length: number;
  /** Blank lines before the first non-blank line, between each pair, and after the last (n + 1 gaps). */
  gaps: number[];
}

/** Blank lines of `lines` between the non-blank ones listed in `at` (n + 1 gaps; the outer two count the edges). */
function gapsOf(lines: readonly string[], at: readonly number[]): number[] {
  const gaps = [at[0]!];
  for (let k = 1; k < at.length; k++) gaps.push(at[k]! - at[k - 1]! - 1);
  gaps.push(lines.length - 1 - at[at.length - 1]!);
  return gaps;
}

/**
 * The file span of a match of SEARCH's `n` non-blank lines starting at projected line `p`:
 * from the first matched line to the last, widened over as many of the file's adjacent blank
 * lines as SEARCH itself has at that edge (never more: blank lines outside stay untouched).
 */
export function blankSpan(file: readonly string[], projected: NonBlank, p: number, n: number, search: readonly string[]): BlankSpan {
  const sAt = nonBlank(search).at;
  const sGaps = gapsOf(search, sAt);
  let start = projected.at[p]!;
  let end = projected.at[p + n - 1]!;
  let lead = 0;
  while (lead < sGaps[0]! && start > 0 && isBlank(file[start - 1]!)) {
    start--;
    lead++;
  }
  let trail = 0;
  while (trail < sGaps[n]! && end + 1 < file.length && isBlank(file[end + 1]!)) {
    end++;
    trail++;
  }
  const inner = projected.at.slice(p, p + n);
  const gaps = [lead, ...inner.slice(1).map((at, k) => at - inner[k]! - 1), trail];
  return { start, length: end - start + 1, gaps };
}

/** Where each line of `from` survives in `to` (-1: removed), by a line diff. */
function survivors(from: readonly string[], to: readonly string[]): number[] {
  const kept = new Array<number>(from.length).fill(-1);
  let i = 0;
  let j = 0;
  for (const part of diffArrays([...from], [...to])) {
    const count = part.count ?? part.value.length;
    if (part.added) j += count;
    else if (part.removed) i += count;
    else for (let c = 0; c < count; c++) kept[i++] = j++;
  }
  return kept;
}

/**
 * Where the gap of SEARCH between non-blank lines `a` and `b` lies in REPLACE, as
 * [first line, line count], when the edit leaves it in place: one of the two lines kept,
 * the gap's own blank lines kept next to it, and on the other side the other line (or
 * what replaced it). Null when the edit writes into the gap itself.
 */
function gapInReplace(kept: readonly number[], replace: readonly string[], a: number, b: number): [number, number] | null {
  const size = b - a - 1;
  const solid = (r: number) => r >= 0 && r < replace.length && !isBlank(replace[r]!);
  const stands = (r: number, line: number) => kept[line] === r || (kept[line] === -1 && !kept.includes(r));
  const blanksKept = (from: number) => Array.from({ length: size }, (_, k) => kept[a + 1 + k] === from + k).every(Boolean);
  const rb = kept[b]!;
  if (rb >= 0 && blanksKept(rb - size) && solid(rb - size - 1) && stands(rb - size - 1, a)) return [rb - size, size];
  const ra = kept[a]!;
  if (ra >= 0 && blanksKept(ra + 1) && solid(ra + size + 1) && stands(ra + size + 1, b)) return [ra + 1, size];
  return null;
}

/**
 * `replacement` (REPLACE as placed, line for line) with the file's blank lines put back in
 * every gap of SEARCH the edit leaves in place; elsewhere REPLACE keeps its own blank lines.
 */
export function withFileGaps(search: readonly string[], replace: readonly string[], replacement: readonly string[], fileGaps: readonly number[]): string[] {
  const sAt = nonBlank(search).at;
  const sGaps = gapsOf(search, sAt);
  const n = sAt.length;
  const kept = survivors(search, replace);
  // Gaps to rewrite, as [first replacement line, line count, blank lines wanted].
  const rewrites: [number, number, number][] = [];
  const rFirst = replace.findIndex((l) => !isBlank(l));
  if (rFirst >= 0) {
    if (sGaps[0] !== fileGaps[0] && rFirst === sGaps[0]) rewrites.push([0, rFirst, fileGaps[0]!]);
    const trailing = replace.length - 1 - replace.findLastIndex((l) => !isBlank(l));
    if (sGaps[n] !== fileGaps[n] && trailing === sGaps[n]) rewrites.push([replace.length - trailing, trailing, fileGaps[n]!]);
  }
  for (let k = 1; k < n; k++) {
    if (sGaps[k] === fileGaps[k]) continue;
    const at = gapInReplace(kept, replace, sAt[k - 1]!, sAt[k]!);
    if (at) rewrites.push([...at, fileGaps[k]!]);
  }
  const out = [...replacement];
  for (const [at, count, wanted] of rewrites.sort((x, y) => y[0] - x[0])) out.splice(at, count, ...new Array<string>(wanted).fill(""));
  return out;
}
