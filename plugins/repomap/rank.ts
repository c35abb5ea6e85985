// Ranking definitions for the repo map (pure): a graph from files that reference
// an identifier to files that define it, weighted as Aider weighs it, ranked by
// personalised PageRank, each file's rank spread over its out-edges onto the
// (file, identifier) definitions they point at.
import { personalizedPageRank, type WeightedEdges } from "./pagerank.ts";

export interface RankFile {
  path: string;
  defs: readonly { name: string; line: number }[];
  refs: ReadonlyMap<string, number>;
}

export interface RankRequest {
  /** Every tagged file, chat files included (their references count most). */
  files: readonly RankFile[];
  /** Every listed file (tagged or not), for the name-only tail of the ranking. */
  allFiles: readonly string[];
  chatFiles: ReadonlySet<string>;
  mentionedFiles: ReadonlySet<string>;
  mentionedIdents: ReadonlySet<string>;
}

/** A ranked definition (its line, 0-based) or a file shown by name only. */
export type RankedEntry = { path: string; name: string; line: number } | { path: string; name?: undefined; line?: undefined };

/**
 * How many edges one identifier may add. Aider links every referencing file to
 * every defining file, so a name defined and used everywhere (`get`, `init`)
 * makes the graph grow with the square of the files. Past this bound each
 * referencing file links to its nearest definers by path instead.
 */
export const EDGES_PER_IDENT = 2000;

export function identWeight(ident: string, definerCount: number, mentioned: boolean): number {
  let mul = 1;
  const hasLetter = /[A-Za-z]/.test(ident);
  const snake = ident.includes("_") && hasLetter;
  const kebab = ident.includes("-") && hasLetter;
  const camel = /[A-Z]/.test(ident) && /[a-z]/.test(ident);
  if (mentioned) mul *= 10;
  if ((snake || kebab || camel) && ident.length >= 8) mul *= 10;
  if (ident.startsWith("_")) mul *= 0.1;
  if (definerCount > 5) mul *= 0.1;
  return mul;
}

export function rankDefinitions(request: RankRequest): RankedEntry[] {
  const { files, chatFiles, mentionedIdents } = request;
  const paths = files.map((f) => f.path);
  const defines = new Map<string, number[]>();
  files.forEach((file, index) => {
    let previous = "";
    for (const def of [...file.defs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (def.name === previous) continue;
      previous = def.name;
      const definers = defines.get(def.name);
      if (definers) definers.push(index);
      else defines.set(def.name, [index]);
    }
  });
  const references = new Map<string, { files: number[]; counts: number[] }>();
  let anyReference = false;
  files.forEach((file, index) => {
    for (const [name, count] of file.refs) {
      if (!defines.has(name)) continue;
      anyReference = true;
      const refs = references.get(name);
      if (refs) {
        refs.files.push(index);
        refs.counts.push(count);
      } else references.set(name, { files: [index], counts: [count] });
    }
  });
  if (!anyReference) {
    for (const [name, definers] of defines) references.set(name, { files: [...definers], counts: definers.map(() => 1) });
  }

  const edges = new EdgeList();
  for (const [ident, definers] of defines) {
    if (references.has(ident)) continue;
    for (const definer of definers) edges.add(definer, definer, 0.1, ident);
  }
  for (const [ident, refs] of references) {
    const definers = defines.get(ident)!;
    const mul = identWeight(ident, definers.length, mentionedIdents.has(ident));
    const bounded = definers.length > 5 && refs.files.length * definers.length > EDGES_PER_IDENT;
    const perReferencer = bounded ? Math.max(1, Math.floor(EDGES_PER_IDENT / refs.files.length)) : definers.length;
    const sortedDefiners = bounded ? [...definers].sort((a, b) => (paths[a]! < paths[b]! ? -1 : 1)) : definers;
    for (let r = 0; r < refs.files.length; r++) {
      const referencer = refs.files[r]!;
      const weight = mul * (chatFiles.has(paths[referencer]!) ? 50 : 1) * Math.sqrt(refs.counts[r]!);
      const targets = bounded ? nearestByPath(paths, sortedDefiners, paths[referencer]!, perReferencer) : definers;
      for (const definer of targets) edges.add(referencer, definer, weight, ident);
    }
  }

  // Graph nodes are the files that have an edge, as in Aider's graph.
  const nodeOf = new Int32Array(files.length).fill(-1);
  const nodeFile: number[] = [];
  for (let e = 0; e < edges.count; e++) {
    for (const f of [edges.src[e]!, edges.dst[e]!]) {
      if (nodeOf[f] === -1) {
        nodeOf[f] = nodeFile.length;
        nodeFile.push(f);
      }
    }
  }
  const nodeEdges: WeightedEdges = {
    src: edges.src.map((f) => nodeOf[f]!).subarray(0, edges.count),
    dst: edges.dst.map((f) => nodeOf[f]!).subarray(0, edges.count),
    weight: edges.weight.subarray(0, edges.count),
    count: edges.count,
  };
  const ranks = personalizedPageRank(nodeFile.length, nodeEdges, personalization(request, nodeFile.map((f) => paths[f]!)));

  // Spread each node's rank over its out-edges onto (definer, ident).
  const outWeight = new Float64Array(nodeFile.length);
  for (let e = 0; e < edges.count; e++) {
    const src = nodeEdges.src[e]!;
    outWeight[src] = outWeight[src]! + edges.weight[e]!;
  }
  const definitionRank = new Map<string, { file: number; ident: string; rank: number }>();
  for (let e = 0; e < edges.count; e++) {
    const src = nodeEdges.src[e]!;
    const share = (ranks[src]! * edges.weight[e]!) / outWeight[src]!;
    const file = edges.dst[e]!;
    const ident = edges.ident[e]!;
    const key = `${file}\u0000${ident}`;
    const entry = definitionRank.get(key);
    if (entry) entry.rank += share;
    else definitionRank.set(key, { file, ident, rank: share });
  }
  const ordered = [...definitionRank.values()].sort(
    (a, b) => b.rank - a.rank || cmp(paths[b.file]!, paths[a.file]!) || cmp(b.ident, a.ident),
  );

  const ranked: RankedEntry[] = [];
  const included = new Set<string>();
  for (const { file, ident } of ordered) {
    const path = paths[file]!;
    if (chatFiles.has(path)) continue;
    for (const def of files[file]!.defs) if (def.name === ident) ranked.push({ path, name: ident, line: def.line });
    included.add(path);
  }
  const byNodeRank = nodeFile.map((f, node) => ({ path: paths[f]!, rank: ranks[node]! })).sort((a, b) => b.rank - a.rank || cmp(b.path, a.path));
  for (const { path } of byNodeRank) {
    if (included.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  for (const path of [...request.allFiles].sort()) {
    if (included.has(path) || chatFiles.has(path)) continue;
    included.add(path);
    ranked.push({ path });
  }
  return ranked;
}

/** Aider's personalisation: chat files, mentioned files, and files whose path parts name a mentioned identifier. */
function personalization(request: RankRequest, nodePaths: readonly string[]): Float64Array | null {
  if (request.chatFiles.size === 0 && request.mentionedFiles.size === 0 && request.mentionedIdents.size === 0) return null;
  const vector = new Float64Array(nodePaths.length);
  let any = false;
  nodePaths.forEach((path, node) => {
    let value = 0;
    if (request.chatFiles.has(path)) value += 1;
    if (request.mentionedFiles.has(path)) value = Math.max(value, 1);
    if (request.mentionedIdents.size > 0) {
      const parts = path.split("/");
      const base = parts[parts.length - 1]!;
      const dot = base.lastIndexOf(".");
      const candidates = [...parts, dot > 0 ? base.slice(0, dot) : base];
      if (candidates.some((part) => request.mentionedIdents.has(part))) value += 1;
    }
    if (value > 0) any = true;
    vector[node] = value;
  });
  return any ? vector : null;
}

/** Up to `k` definers whose paths share the longest prefix with `path` (definers sorted by path). */
function nearestByPath(paths: readonly string[], sortedDefiners: readonly number[], path: string, k: number): number[] {
  let lo = 0;
  let hi = sortedDefiners.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (paths[sortedDefiners[mid]!]! < path) lo = mid + 1;
    else hi = mid;
  }
  const picked: number[] = [];
  let left = lo - 1;
  let right = lo;
  while (picked.length < k && (left >= 0 || right < sortedDefiners.length)) {
    const leftShare = left >= 0 ? commonPrefix(paths[sortedDefiners[left]!]!, path) : -1;
    const rightShare = right < sortedDefiners.length ? commonPrefix(paths[sortedDefiners[right]!]!, path) : -1;
    if (rightShare >= leftShare) picked.push(sortedDefiners[right++]!);
    else picked.push(sortedDefiners[left--]!);
  }
  return picked;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

class EdgeList {
  src = new Int32Array(1024);
  dst = new Int32Array(1024);
  weight = new Float64Array(1024);
  ident: string[] = [];
  count = 0;

  add(src: number, dst: number, weight: number, ident: string): void {
    if (this.count === this.src.length) {
      const size = this.count * 2;
      const grow = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
        const b = make(size);
        b.set(a);
        return b;
      };
      this.src = grow(this.src, (n) => new Int32Array(n));
      this.dst = grow(this.dst, (n) => new Int32Array(n));
      this.weight = grow(this.weight, (n) => new Float64Array(n));
    }
    this.src[this.count] = src;
    this.dst[this.count] = dst;
    this.weight[this.count] = weight;
    this.ident.push(ident);
    this.count++;
  }
}
