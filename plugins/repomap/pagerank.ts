// Personalised PageRank by power iteration, with the semantics of networkx's
// `pagerank(G, alpha, personalization, dangling=personalization)` (what Aider
// calls): rows normalised by out-weight, dangling mass and teleport both follow
// the personalisation vector, convergence when the L1 change < N·tol.
// graphology-metrics' PageRank has a uniform teleport only, hence this file. A
// virtual "personalisation node" would only approximate it (it takes rank itself
// and changes every other node's out-degree), so we iterate the exact equation.

export interface WeightedEdges {
  src: Int32Array;
  dst: Int32Array;
  weight: Float64Array;
  /** Number of edges in use (the arrays may be longer). */
  count: number;
}

export interface PageRankOptions {
  alpha?: number;
  tolerance?: number;
  maxIterations?: number;
  /** Where to start (e.g. the previous ranking after a small change: it converges in a few iterations); default uniform. */
  initial?: Float64Array;
  /** Each node's total out-weight, when the caller has it (else summed here). */
  outWeight?: Float64Array;
  /** Filled with the L1 change of the last iteration (what was compared with N·tolerance). */
  report?: { change: number };
}

/** networkx's defaults, which Aider's ranking uses. */
export const ALPHA = 0.85;
export const TOLERANCE = 1e-6;

/**
 * Ranks `nodeCount` nodes. `personalization` (non-negative, any scale) or null for
 * uniform. Returns ranks summing to 1.
 */
export function personalizedPageRank(
  nodeCount: number,
  edges: WeightedEdges,
  personalization: Float64Array | null,
  options: PageRankOptions = {},
): Float64Array {
  const alpha = options.alpha ?? ALPHA;
  const tolerance = options.tolerance ?? TOLERANCE;
  const maxIterations = options.maxIterations ?? 100;
  const n = nodeCount;
  if (n === 0) return new Float64Array(0);

  const p = new Float64Array(n);
  let pSum = 0;
  if (personalization) for (let i = 0; i < n; i++) pSum += personalization[i]!;
  if (personalization && pSum > 0) for (let i = 0; i < n; i++) p[i] = personalization[i]! / pSum;
  else p.fill(1 / n);

  // The arrays in locals: a fresh process runs these loops in the interpreter, where each
  // property read per edge counts.
  const { src: edgeSrc, dst: edgeDst, weight: edgeWeight, count: edgeCount } = edges;
  let outWeight = options.outWeight;
  if (!outWeight || outWeight.length !== n) {
    outWeight = new Float64Array(n);
    for (let e = 0; e < edgeCount; e++) {
      const src = edgeSrc[e]!;
      outWeight[src] = outWeight[src]! + edgeWeight[e]!;
    }
  }
  // Each edge's share of its source's out-weight, computed in the first iteration's pass (a
  // pass of its own over every edge runs cold in a fresh process).
  const share = new Float64Array(edgeCount);
  const dangling: number[] = [];
  for (let i = 0; i < n; i++) if (outWeight[i] === 0) dangling.push(i);

  let x = startVector(n, options.initial);
  let next = new Float64Array(n);
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    let danglingMass = 0;
    for (const d of dangling) danglingMass += x[d]!;
    const base = alpha * danglingMass + (1 - alpha);
    for (let i = 0; i < n; i++) next[i] = base * p[i]!;
    if (iteration === 0) {
      for (let e = 0; e < edgeCount; e++) {
        const src = edgeSrc[e]!;
        const dst = edgeDst[e]!;
        const part = edgeWeight[e]! / outWeight[src]!;
        share[e] = part;
        next[dst] = next[dst]! + alpha * x[src]! * part;
      }
    } else {
      for (let e = 0; e < edgeCount; e++) {
        const dst = edgeDst[e]!;
        next[dst] = next[dst]! + alpha * x[edgeSrc[e]!]! * share[e]!;
      }
    }
    let change = 0;
    for (let i = 0; i < n; i++) change += Math.abs(next[i]! - x[i]!);
    [x, next] = [next, x];
    if (options.report) options.report.change = change;
    if (change < n * tolerance) break;
  }
  return x;
}

/** The initial vector, normalised to sum 1; uniform when none is given or it sums to 0. */
function startVector(n: number, initial: Float64Array | undefined): Float64Array<ArrayBuffer> {
  const x = new Float64Array(n);
  let sum = 0;
  if (initial && initial.length === n) for (let i = 0; i < n; i++) sum += Math.max(0, initial[i]!);
  if (sum > 0) for (let i = 0; i < n; i++) x[i] = Math.max(0, initial![i]!) / sum;
  else x.fill(1 / n);
  return x;
}
