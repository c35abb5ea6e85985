// Parsing unified diffs out of ```diff fences (pure). Line numbers in `@@` headers
// are ignored: each hunk is located by its context and removed lines.
export interface RawHunk {
  /** Path from the `+++` line (from `---` when the file is deleted); null when the fence had no headers. */
  filename: string | null;
  /** Lines with their ` `/`-`/`+` prefix, without newlines. */
  lines: string[];
  /** `--- /dev/null`: a new file. */
  created: boolean;
  /** `+++ /dev/null`: the file is deleted. */
  deleted: boolean;
  /** The hunk's `@@` line as written ("" when the hunk had none), for its line number and scope. */
  header: string;
  /**
   * How sure it is that the hunk is whole: "closed" (its ```diff fence was closed), "unclosed"
   * (the fence ran to the end of the reply: cut off), "bare" (a diff without a fence).
   */
  ending: "closed" | "unclosed" | "bare";
}

/** A path from a `---`/`+++` line: timestamps after a tab dropped, git's a/ b/ prefixes removed when both carry them. */
function headerPaths(minus: string, plus: string): { a: string; b: string } {
  const clean = (s: string) => s.slice(4).split("\t")[0]!.trim();
  let a = clean(minus);
  let b = clean(plus);
  if ((a.startsWith("a/") || a === "/dev/null") && (b.startsWith("b/") || b === "/dev/null")) {
    if (a !== "/dev/null") a = a.slice(2);
    if (b !== "/dev/null") b = b.slice(2);
  }
  return { a, b };
}

const isChange = (l: string) => l.startsWith("+") || l.startsWith("-");

/** Hunks of every ```diff fence of `text`, in order. Hunks without a change are dropped. */
export function parseUnifiedDiffs(text: string, fenceOpen = "```"): RawHunk[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const hunks: RawHunk[] = [];
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.trimStart();
    const opener = [fenceOpen, "```"].find((f) => t.startsWith(f + "diff") || t.startsWith(f + "patch") || t.startsWith(f + "udiff"));
    if (!opener) continue;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```") && !lines[i]!.startsWith(fenceOpen); i++) body.push(lines[i]!);
    hunks.push(...hunksOf(body, i < lines.length ? "closed" : "unclosed"));
  }
  // No ```diff fence, but a bare diff (header pair and hunks) in the text: take it as one.
  if (hunks.length === 0) {
    const start = lines.findIndex((l, k) => l.startsWith("--- ") && lines[k + 1]?.startsWith("+++ "));
    if (start >= 0) hunks.push(...hunksOf(lines.slice(start).filter((l) => !l.startsWith("```")), "bare"));
  }
  return hunks;
}

function hunksOf(body: string[], ending: RawHunk["ending"]): RawHunk[] {
  const out: RawHunk[] = [];
  let file: { filename: string | null; created: boolean; deleted: boolean } = { filename: null, created: false, deleted: false };
  let current: string[] = [];
  let header = "";
  const flush = () => {
    while (current.length && current[current.length - 1]!.trim() === "") current.pop();
    if (current.some(isChange)) out.push({ ...file, lines: current, header, ending });
    current = [];
  };
  for (let k = 0; k < body.length; k++) {
    const line = body[k]!;
    const next = body[k + 1];
    if (line.startsWith("--- ") && next?.startsWith("+++ ")) {
      flush();
      const { a, b } = headerPaths(line, next);
      file = { filename: b === "/dev/null" ? a : b, created: a === "/dev/null", deleted: b === "/dev/null" };
      header = "";
      k++;
      continue;
    }
    if (line.startsWith("@@")) {
      flush();
      header = line;
      continue;
    }
    if (/^(diff --git|index [0-9a-f]+\.\.|new file mode|deleted file mode|similarity index|rename (from|to) |\\ No newline)/.test(line)) continue;
    current.push(line);
  }
  flush();
  return out;
}

/** The runs of changed lines of a hunk, as [first, last] indexes. */
export function changeRuns(lines: readonly string[]): [number, number][] {
  const runs: [number, number][] = [];
  for (let k = 0; k < lines.length; k++) {
    if (!isChange(lines[k]!)) continue;
    let end = k;
    while (end + 1 < lines.length && isChange(lines[end + 1]!)) end++;
    runs.push([k, end]);
    k = end;
  }
  return runs;
}

/** Run `n` of a hunk with up to `context` kept lines on each side (never reaching into a neighbouring run). */
export function runWithContext(lines: readonly string[], runs: readonly [number, number][], n: number, context: number): string[] {
  const [s, e] = runs[n]!;
  const lo = n > 0 ? runs[n - 1]![1] + 1 : 0;
  const hi = n + 1 < runs.length ? runs[n + 1]![0] : lines.length;
  return lines.slice(Math.max(lo, s - context), Math.min(hi, e + 1 + context));
}
