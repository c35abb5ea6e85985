// Whole-line similarity for the matcher's fuzzy rung and its "did you mean" regions:
// bigram Dice per line, weighted by length, over every window of the file.

/** Cap on line comparisons of one similarity scan (keeps huge blocks cheap). */
const SCAN_BUDGET = 3_000_000;

function bigrams(s: string): Uint32Array {
  const t = s.trim();
  if (t.length < 2) return Uint32Array.of(t.length === 1 ? t.charCodeAt(0) : 0);
  const out = new Uint32Array(t.length - 1);
  for (let k = 0; k < t.length - 1; k++) out[k] = t.charCodeAt(k) * 65536 + t.charCodeAt(k + 1);
  return out.sort();
}

function dice(a: Uint32Array, b: Uint32Array): number {
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      common++;
      i++;
      j++;
    } else if (a[i]! < b[j]!) i++;
    else j++;
  }
  return (2 * common) / (a.length + b.length);
}

/** Similarity of two lines, 0..1, ignoring surrounding whitespace. */
export function lineSimilarity(a: string, b: string): number {
  const ta = a.trim();
  const tb = b.trim();
  if (ta === tb) return 1;
  if (ta === "" || tb === "") return 0;
  return dice(bigrams(ta), bigrams(tb));
}

/** A place in the file (0-based first line) and how similar the search is there. */
export interface Window {
  start: number;
  score: number;
}

/** Scores windows of `file` against `search` (whole-line, length-weighted), caching per-line work. */
function windowScorer(file: string[], search: string[]) {
  const sTrim = search.map((l) => l.trim());
  const sGrams = search.map((l) => bigrams(l));
  const fTrim: (string | undefined)[] = new Array(file.length);
  const fGrams: (Uint32Array | undefined)[] = new Array(file.length);
  return (i: number, rows: readonly number[]): number => {
    let sum = 0;
    let weight = 0;
    for (const j of rows) {
      const k = i + j;
      const ft = (fTrim[k] ??= file[k]!.trim());
      const st = sTrim[j]!;
      const w = Math.max(ft.length, st.length, 1);
      let sim: number;
      if (ft === st) sim = 1;
      else if (ft === "" || st === "") sim = 0;
      else sim = dice((fGrams[k] ??= bigrams(ft)), sGrams[j]!);
      sum += sim * w;
      weight += w;
    }
    return weight === 0 ? 0 : sum / weight;
  };
}

/**
 * Windows that share identical (trimmed, non-trivial, not too common) lines with the
 * search, with how many they share: the only places worth scoring in a big file.
 */
function anchorVotes(file: string[], search: string[], windows: number): Map<number, number> {
  const wanted = new Map<string, number[]>();
  search.forEach((l, j) => {
    const t = l.trim();
    if (t.length >= 4) wanted.set(t, [...(wanted.get(t) ?? []), j]);
  });
  const seen = new Map<string, number[]>();
  for (let k = 0; k < file.length; k++) {
    const t = file[k]!.trim();
    if (!wanted.has(t)) continue;
    const at = seen.get(t) ?? [];
    if (at.length <= 50) at.push(k);
    seen.set(t, at);
  }
  const votes = new Map<number, number>();
  for (const [t, ks] of seen) {
    if (ks.length > 50) continue; // a line this common says nothing about where the block is
    for (const k of ks) for (const j of wanted.get(t)!) {
      const i = k - j;
      if (i >= 0 && i < windows) votes.set(i, (votes.get(i) ?? 0) + 1);
    }
  }
  return votes;
}

/**
 * The `k` best non-overlapping windows of `file` for `search`, best first. Big files
 * score only the windows anchored by identical lines (all of them when none is, with
 * rows sampled to stay within budget).
 */
export function similarWindows(file: string[], search: string[], k: number): Window[] {
  const n = search.length;
  const windows = file.length - n + 1;
  if (windows <= 0 || n === 0) return [];
  const score = windowScorer(file, search);
  const allRows = Array.from({ length: n }, (_, j) => j);
  const fullScanAffordable = windows * n <= SCAN_BUDGET;
  if (!fullScanAffordable || windows > 2000) {
    const votes = anchorVotes(file, search, windows);
    if (votes.size > 0) {
      const starts = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, Math.max(64, Math.floor(SCAN_BUDGET / n)));
      const picked = pick(starts.map(([i]) => ({ start: i, score: score(i, allRows) })), n, k);
      if (!fullScanAffordable || (picked[0]?.score ?? 0) >= 0.6) return picked;
    }
  }
  const stride = Math.max(1, Math.ceil((windows * n) / SCAN_BUDGET));
  const rows = allRows.filter((j) => j % stride === 0);
  const scored: Window[] = new Array(windows);
  for (let i = 0; i < windows; i++) scored[i] = { start: i, score: score(i, rows) };
  return pick(scored, n, k);
}

/** The best non-overlapping windows, best first. */
function pick(scored: Window[], n: number, k: number): Window[] {
  const order = scored.slice().sort((a, b) => b.score - a.score || a.start - b.start);
  const picked: Window[] = [];
  for (const w of order) {
    if (picked.length >= k) break;
    if (picked.some((p) => Math.abs(p.start - w.start) < Math.max(n, 1))) continue;
    picked.push(w);
  }
  return picked;
}
