// Choosing among the places a SEARCH text (or hunk) matches, from what the reply says:
// a line number the model gave, the previous edit's place in the same file, or the
// enclosing scope named in its prose. Only a choice exactly one clue supports is taken.
import type { MatchCandidate, Placement, PlacementHints } from "../plugin.ts";

/** How far from a candidate a given line number may be and still point at it. */
const LINE_SLACK = 3;

const KEYWORDS = "class|struct|interface|enum|trait|impl|module|namespace|function|method|def|fn|func|type|object|section";
const SCOPE_MENTION = new RegExp(
  String.raw`\b(?:in|inside|within|under|of)\s+(?:the\s+)?(?:(?:${KEYWORDS})\s+)?` + "`?" + String.raw`([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*)`,
  "gi",
);
const LINE_MENTION = /\b(?:lines?|L)\s*(\d{1,7})(?:\s*(?:-|–|to)\s*(\d{1,7}))?/gi;
const NOT_A_NAME = new Set(["the", "a", "an", "this", "that", "it", "its", "file", "order", "place", "case", "which", "each", "both", "all", "line", "lines"]);

/** The clues of a piece of prose (the text a reply puts before an edit). */
export function hintsFromProse(prose: string): PlacementHints {
  const lines: number[] = [];
  for (const m of prose.matchAll(LINE_MENTION)) {
    const from = Number(m[1]);
    const to = m[2] ? Number(m[2]) : from;
    if (to >= from && to - from < 500) lines.push(from, to);
  }
  const scopes = new Set<string>();
  for (const m of prose.matchAll(SCOPE_MENTION)) {
    for (const part of m[1]!.split(/\.|::|#/)) if (part.length >= 2 && !NOT_A_NAME.has(part.toLowerCase())) scopes.add(part);
  }
  return { lines, scopes: [...scopes] };
}

/** The clues of a diff hunk's `@@ -40,7 +40,8 @@ class Cart:` line: the old start line, the names in its heading. */
export function hintsFromHunkHeader(header: string): PlacementHints {
  const m = /^@@+\s*-(\d+)(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@+(.*)$/.exec(header.trim());
  if (!m) return {};
  const keywords = new Set(KEYWORDS.split("|"));
  const scopes = [...new Set(m[2]!.match(/[A-Za-z_$][\w$]*/g) ?? [])].filter((w) => w.length >= 2 && !keywords.has(w) && !NOT_A_NAME.has(w.toLowerCase()));
  return { lines: Number(m[1]) > 1 ? [Number(m[1])] : [], scopes }; // "-1" is what models write when they do not know
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/** The lines that open the scopes around line `start` (1-based): each less indented than the last, nearest first. */
export function enclosingHeaders(fileLines: readonly string[], start: number): string[] {
  let k = start - 1;
  while (k < fileLines.length && fileLines[k]!.trim() === "") k++;
  if (k >= fileLines.length) return [];
  let indent = indentOf(fileLines[k]!);
  const headers: string[] = [];
  for (let i = k - 1; i >= 0 && indent > 0; i--) {
    const line = fileLines[i]!;
    if (line.trim() === "" || indentOf(line) >= indent) continue;
    headers.push(line.trim());
    indent = indentOf(line);
  }
  return headers;
}

const mentions = (header: string, name: string) => new RegExp(String.raw`(^|[^\w$])${name.replace(/\$/g, "\\$")}([^\w$]|$)`).test(header);

/**
 * The one candidate the clues support, or null when none does or they point at different
 * places. `previousEnd` is the last line of the previous edit of this reply in the same file.
 */
export function choosePlace(candidates: readonly MatchCandidate[], content: string, hints: PlacementHints, previousEnd: number | null): Placement | null {
  const supported = new Map<number, string>();
  const support = (c: MatchCandidate, why: string) => supported.set(c.startLine, supported.get(c.startLine) ?? why);

  for (const line of hints.lines ?? []) {
    const near = candidates.filter((c) => line >= c.startLine - LINE_SLACK && line <= c.endLine + LINE_SLACK);
    if (near.length === 1) support(near[0]!, `line ${line}, which the reply gave`);
  }
  if (previousEnd !== null) {
    const after = candidates.filter((c) => c.startLine > previousEnd);
    if (after.length === 1) support(after[0]!, `the only one after the previous edit of this file (which ended at line ${previousEnd})`);
  }
  if (hints.scopes?.length) {
    const fileLines = content.split("\n");
    const headers = candidates.map((c) => enclosingHeaders(fileLines, c.startLine));
    for (const name of hints.scopes) {
      const inside = candidates.filter((_, i) => headers[i]!.some((h) => mentions(h, name)));
      if (inside.length === 1) support(inside[0]!, `inside \`${name}\`, which the reply named`);
    }
  }
  if (supported.size !== 1) return null;
  const [at, why] = [...supported.entries()][0]!;
  return { at, why };
}
