// Tags of one file: its definitions (name, line, kind, and the scope lines that
// give a definition its context in the map) and its references (name → count),
// from a grammar's tags query. Pure apart from the parser it is handed.
import { availableParallelism, loadavg } from "node:os";
import type { Node } from "web-tree-sitter";
import type { LoadedGrammar } from "../../grammars/runtime.ts";

/** Lines are 0-based. `show` lists [start, end) line ranges of enclosing scope headers. */
export interface Definition {
  name: string;
  line: number;
  kind: string;
  show: [number, number][];
}

/** How a file refers to a name: plainly or qualified (`load(x)`, `pkg.Load`), or as a member of an unknown receiver (`x.get()`). */
export interface RefCount {
  plain: number;
  member: number;
}

export interface FileTags {
  defs: Definition[];
  refs: Map<string, RefCount>;
}

/**
 * Node types whose named child after the receiver is a member name: `x.get` in
 * JS/TS (member_expression), Python (attribute), Go (selector_expression), Rust and
 * C/C++ (field_expression), Java (method_invocation, field_access), C#
 * (member_access_expression), Kotlin (navigation_suffix), Ruby (call), PHP
 * (member_call_expression), Lua (method_index_expression, dot_index_expression).
 */
const MEMBER_ACCESS = new Set([
  "member_expression", "attribute", "selector_expression", "field_expression", "method_invocation", "field_access",
  "member_access_expression", "navigation_suffix", "call", "member_call_expression", "nullsafe_member_call_expression",
  "method_index_expression", "dot_index_expression",
]);

/**
 * A reference made as a member of some receiver (`x.get()`, `self.items`), where
 * the receiver's type is unknown: it links to every class with such a member. A
 * capitalised member (`pkg.Load`, `errors.HTTPError`, Go's exported names) reads as
 * a qualified name and counts as plain.
 */
function isMemberRef(node: Node): boolean {
  const parent = node.parent;
  if (!parent || !MEMBER_ACCESS.has(parent.type) || node.startIndex <= parent.startIndex) return false;
  const first = node.text.replace(/^[$_]+/, "").charCodeAt(0);
  return !(first >= 65 && first <= 90);
}

/** How many lines of a scope's header are shown at most (as Aider's TreeContext does). */
const HEADER_MAX = 10;

/** UTF-16 code units handed to the parser per read. */
const READ_CHUNK = 8192;

/**
 * The text as a parser input read in bounded chunks. Passing the string itself
 * makes web-tree-sitter hand over the whole rest of the text on every read, which
 * turns quadratic on some inputs (8,000 Python comment lines: 44 s, chunked: 5 ms).
 * A chunk never ends between the two halves of a surrogate pair.
 */
function chunkedInput(text: string): (index: number) => string {
  return (index) => {
    if (index >= text.length) return "";
    let end = index + READ_CHUNK;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end++;
    return text.slice(index, end);
  };
}

/**
 * How long a parse may take: a base plus a time per character far above normal
 * parsing (about 3 MB/s). Some grammars turn quadratic on some inputs
 * (tree-sitter-python on thousands of comment lines after an indented block: 44 s
 * for 8,000 lines); such a file is listed by name rather than stalling a build.
 * Counted in this thread's CPU time where the runtime tells it, so that a busy
 * machine (the cold map's workers share it with everything else) does not cut
 * files that parse normally; else in wall-clock time stretched by the load.
 */
const PARSE_BASE_MS = 1000;
const PARSE_MS_PER_KCHAR = 10;

/** The clocks a parse's time limit reads (injected in tests). */
export interface ParseClock {
  /** Wall-clock milliseconds. */
  wall(): number;
  /** This thread's CPU milliseconds, or null when the runtime cannot tell them apart from other threads'. */
  threadCpu(): number | null;
  /** Runnable tasks per core over the last minute (used only without a thread clock). */
  loadPerCore(): number;
}

const threadCpuUsage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;

export const SYSTEM_CLOCK: ParseClock = {
  wall: () => performance.now(),
  threadCpu: threadCpuUsage
    ? () => {
        const usage = threadCpuUsage.call(process);
        return (usage.user + usage.system) / 1000;
      }
    : () => null,
  loadPerCore: () => loadavg()[0]! / Math.max(1, availableParallelism()),
};

/**
 * A parse's progress callback: true (stop) once the parse has used its budget of
 * this thread's CPU time. The thread clock (a few µs a read) is read only when the
 * wall clock says the budget could be used up: CPU time never runs ahead of it.
 */
export function parseLimit(chars: number, clock: ParseClock = SYSTEM_CLOCK): () => boolean {
  const budget = PARSE_BASE_MS + (chars / 1000) * PARSE_MS_PER_KCHAR;
  const cpuStart = clock.threadCpu();
  const wallStart = clock.wall();
  if (cpuStart === null) {
    const deadline = wallStart + budget * Math.max(1, clock.loadPerCore());
    return () => clock.wall() > deadline;
  }
  let nextCheck = wallStart + budget;
  return () => {
    const now = clock.wall();
    if (now < nextCheck) return false;
    const used = (clock.threadCpu() ?? cpuStart) - cpuStart;
    if (used >= budget) return true;
    nextCheck = now + (budget - used);
    return false;
  };
}

/** The file's tags, or null when parsing took too long (it was stopped). */
export function extractTags(grammar: LoadedGrammar, text: string, clock: ParseClock = SYSTEM_CLOCK): FileTags | null {
  const tree = grammar.parser.parse(chunkedInput(text), null, { progressCallback: parseLimit(text.length, clock) });
  if (!tree) {
    // A stopped parse would otherwise resume on the next call.
    grammar.parser.reset();
    return null;
  }
  try {
    const defNodes: { node: Node; kind: string }[] = [];
    const defStarts = new Set<number>();
    const refNodes: Node[] = [];
    const ignored = new Set<number>();
    for (const match of grammar.tags.matches(tree.rootNode)) {
      let name: Node | null = null;
      let role: "def" | "ref" | null = null;
      let kind = "";
      for (const capture of match.captures) {
        const captureName = capture.name;
        if (captureName === "name") name = capture.node;
        else if (captureName === "ignore") ignored.add(capture.node.startIndex);
        else if (captureName.startsWith("definition.")) {
          role = "def";
          kind = captureName.slice(11);
        } else if (captureName.startsWith("reference.") && role !== "def") {
          role = "ref";
          kind = captureName.slice(10);
        }
      }
      if (!name || !role) continue;
      if (role === "def") {
        if (defStarts.has(name.startIndex)) continue;
        defStarts.add(name.startIndex);
        defNodes.push({ node: name, kind });
      } else refNodes.push(name);
    }
    const refs = new Map<string, RefCount>();
    for (const node of refNodes) {
      if (defStarts.has(node.startIndex) || ignored.has(node.startIndex)) continue;
      const name = node.text;
      if (!isUsefulName(name)) continue;
      let count = refs.get(name);
      if (!count) refs.set(name, (count = { plain: 0, member: 0 }));
      if (isMemberRef(node)) count.member++;
      else count.plain++;
    }
    const headers = new Map<number, [number, number]>();
    const defs: Definition[] = [];
    for (const { node, kind } of defNodes) {
      const name = node.text;
      if (!isUsefulName(name)) continue;
      defs.push({ name, line: node.startPosition.row, kind, show: scopeHeaders(node, headers) });
    }
    defs.sort((a, b) => a.line - b.line);
    return { defs, refs };
  } finally {
    tree.delete();
  }
}

function isUsefulName(name: string): boolean {
  return name.length > 0 && name.length <= 200 && !name.includes("\n") && !name.includes("\t");
}

/**
 * The header ranges of every scope enclosing a definition's line, as Aider's
 * TreeContext computes them: for each line where an enclosing node starts, the
 * smallest multi-line node starting there (capped at HEADER_MAX lines) when more
 * than one does, else that line alone. Scopes starting on line 0 are not shown.
 */
function scopeHeaders(name: Node, memo: Map<number, [number, number]>): [number, number][] {
  const topByRow = new Map<number, Node>();
  for (let node: Node | null = name; node; node = node.parent) topByRow.set(node.startPosition.row, node);
  const ranges: [number, number][] = [];
  for (const [row, top] of topByRow) {
    if (row === 0) continue;
    let header = memo.get(row);
    if (!header) {
      header = headerAt(top, row);
      memo.set(row, header);
    }
    ranges.push(header);
  }
  return ranges.sort((a, b) => a[0] - b[0]);
}

function headerAt(top: Node, row: number): [number, number] {
  let count = 0;
  let bestSize = Infinity;
  const stack: Node[] = [top];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.startPosition.row !== row) continue;
    const size = node.endPosition.row - row;
    if (size > 0) {
      count++;
      if (size < bestSize) bestSize = size;
    }
    const children = node.childCount;
    for (let i = 0; i < children; i++) {
      const child = node.child(i);
      if (!child || child.startPosition.row > row) break;
      stack.push(child);
    }
  }
  if (count > 1) return [row, row + Math.min(bestSize, HEADER_MAX)];
  return [row, row + 1];
}

// ─── Cache encoding: compact text, fast to split ─────────────────────────────

export function encodeDefs(defs: readonly Definition[]): string {
  return defs.map((d) => `${d.name}\t${d.line}\t${d.kind}\t${d.show.map((r) => `${r[0]}-${r[1]}`).join(",")}`).join("\n");
}

export function decodeDefs(text: string): Definition[] {
  if (!text) return [];
  return text.split("\n").map((row) => {
    const [name = "", line = "0", kind = "", show = ""] = row.split("\t");
    return {
      name,
      line: Number(line),
      kind,
      show: show ? show.split(",").map((r) => r.split("-").map(Number) as [number, number]) : [],
    };
  });
}

/**
 * An identifier as a 53-bit number (two 32-bit hashes): ranking joins
 * references to definitions on these, which is several times cheaper than
 * hashing hundreds of thousands of fresh strings in a Map.
 */
export function identKey(name: string): number {
  return Bun.hash.cityHash32(name) * 2097152 + (Bun.hash.murmur32v3(name) & 0x1fffff);
}

/** Numbers per reference in encoded references: [identKey, plain count, member count]. */
export const REF_STRIDE = 3;

/** References as bytes of a Float64Array of [key, plain, member] triples (stored as a BLOB, read without parsing). */
export function encodeRefKeys(refs: ReadonlyMap<string, RefCount>): Uint8Array {
  const triples = new Float64Array(refs.size * REF_STRIDE);
  let i = 0;
  for (const [name, count] of refs) {
    triples[i++] = identKey(name);
    triples[i++] = count.plain;
    triples[i++] = count.member;
  }
  return new Uint8Array(triples.buffer);
}

export function decodeRefKeys(bytes: Uint8Array | null | undefined): Float64Array {
  if (!bytes || bytes.byteLength < 8 * REF_STRIDE) return new Float64Array(0);
  // A copy when the view is not 8-byte aligned.
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  const length = Math.floor(aligned.byteLength / 8 / REF_STRIDE) * REF_STRIDE;
  return new Float64Array(aligned.buffer, aligned.byteOffset, length);
}

/** References as text, for the ranking signature. */
export function encodeRefs(refs: ReadonlyMap<string, RefCount>): string {
  const out: string[] = [];
  for (const [name, count] of refs) out.push(`${name}\t${count.plain}\t${count.member}`);
  return out.join("\n");
}

/** Just the names and lines of encoded definitions (what ranking needs), without the scope ranges. */
export function decodeDefNames(text: string): { names: string[]; lines: number[] } {
  const names: string[] = [];
  const lines: number[] = [];
  if (!text) return { names, lines };
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const tab = text.indexOf("\t", start);
    const tab2 = text.indexOf("\t", tab + 1);
    names.push(text.slice(start, tab));
    lines.push(+text.slice(tab + 1, tab2 < 0 || tab2 > end ? end : tab2));
    start = end + 1;
  }
  return { names, lines };
}
