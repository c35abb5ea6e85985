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

/** Per-window similarity of `search` against every place in `file` (whole-line, length-weighted). */
export function scanSimilarity(file: string[], search: string[]): Float64Array {
  const n = search.length;
  const windows = Math.max(0, file.length - n + 1);
  const scores = new Float64Array(windows);
  if (windows === 0 || n === 0) return scores;
  const stride = Math.max(1, Math.ceil((windows * n) / SCAN_BUDGET));
  const rows: number[] = [];
  for (let j = 0; j < n; j += stride) rows.push(j);
  const sTrim = search.map((l) => l.trim());
  const sGrams = search.map((l) => bigrams(l));
  const fTrim: (string | undefined)[] = new Array(file.length);
  const fGrams: (Uint32Array | undefined)[] = new Array(file.length);
  for (let i = 0; i < windows; i++) {
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
    scores[i] = weight === 0 ? 0 : sum / weight;
  }
  return scores;
}

/** The best non-overlapping windows, best first. */
export function topWindows(scores: Float64Array, n: number, k: number): { start: number; score: number }[] {
  const order = Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]!);
  const picked: { start: number; score: number }[] = [];
  for (const i of order) {
    if (picked.length >= k) break;
    if (picked.some((p) => Math.abs(p.start - i) < Math.max(n, 1))) continue;
    picked.push({ start: i, score: scores[i]! });
  }
  return picked;
}
