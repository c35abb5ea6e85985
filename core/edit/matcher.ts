// The one SEARCH/REPLACE matcher every format lands its edits through (handed to
// plugins as kit.matcher). It climbs a ladder of ever looser rungs, stops at the
// first rung that finds exactly one place, and returns failures as data.
import { blankSpan, nonBlank, withFileGaps } from "./blank-lines.ts";
import { fenced } from "./fence.ts";
import { type FileLines, fromFileLines, isBlank, leadingWs, mostlyCrlf, textLines, toFileLines } from "./lines.ts";
import type { MatchCandidate, MatchFailure, Matcher, MatchOptions, MatchResult, MatchRung } from "../plugin.ts";
import { similarWindows, type Window } from "./similarity.ts";
import { UncommittedChanges } from "./uncommitted.ts";

export { lineSimilarity } from "./similarity.ts";

/** Fuzzy matching: a window must be at least this similar (and differ in at most one line in four)... */
const FUZZY_THRESHOLD = 0.9;
/** ...and beat the next best (non-overlapping) window by this margin. */
const FUZZY_MARGIN = 0.08;
/** Closest regions below this similarity are not worth showing. */
const CANDIDATE_FLOOR = 0.45;
/** Ambiguous matches listed at most. */
const MAX_LOCATIONS = 12;

// ─── Rungs ───────────────────────────────────────────────────────────────────

/** Where a rung matched and the replacement lines it produces for that place. */
interface Hit {
  start: number;
  /** Number of file lines replaced. */
  length: number;
  replacement: string[];
}

type Rung = (file: string[], search: string[], replace: string[]) => Hit[];

function scanEqual(file: string[], search: string[], eq: (a: string, b: string) => boolean): number[] {
  const found: number[] = [];
  const n = search.length;
  const first = search[0]!;
  for (let i = 0; i + n <= file.length; i++) {
    if (!eq(file[i]!, first)) continue;
    let ok = true;
    for (let j = 1; j < n; j++) {
      if (!eq(file[i + j]!, search[j]!)) {
        ok = false;
        break;
      }
    }
    if (ok) {
      found.push(i);
      if (found.length > MAX_LOCATIONS) break;
    }
  }
  return found;
}

const exactRung: Rung = (file, search, replace) =>
  scanEqual(file, search, (a, b) => a === b).map((start) => ({ start, length: search.length, replacement: replace }));

const trailingRung: Rung = (file, search, replace) => {
  const s = search.map((l) => l.trimEnd());
  return scanEqual(file, s, (a, b) => a.startsWith(b) && a.trimEnd().length === b.length).map((start) => ({
    start,
    length: search.length,
    replacement: replace,
  }));
};

/** The search's common indentation removed, so it can be matched under any uniform extra indent. */
function commonIndent(lines: string[]): string {
  let common: string | null = null;
  for (const l of lines) {
    if (isBlank(l)) continue;
    const ws = leadingWs(l);
    if (common === null) common = ws;
    else {
      let k = 0;
      while (k < common.length && k < ws.length && common[k] === ws[k]) k++;
      common = common.slice(0, k);
    }
  }
  return common ?? "";
}

/** Re-indent `lines`: drop `from` (or as much leading whitespace as it has), add `to`. */
function reindent(lines: string[], from: string, to: string): string[] {
  return lines.map((l) => {
    if (isBlank(l)) return "";
    let body = l;
    if (body.startsWith(from)) body = body.slice(from.length);
    else {
      const ws = leadingWs(body);
      body = body.slice(Math.min(ws.length, from.length));
    }
    return to + body;
  });
}

const indentRung: Rung = (file, search, replace) => {
  const indent = commonIndent(search);
  const rel = search.map((l) => (isBlank(l) ? "" : l.slice(indent.length).trimEnd()));
  const firstIdx = rel.findIndex((l) => l !== "");
  if (firstIdx < 0) return [];
  const hits: Hit[] = [];
  const n = search.length;
  for (let i = 0; i + n <= file.length; i++) {
    if (!file[i + firstIdx]!.includes(rel[firstIdx]!)) continue; // cheap test first: no allocation
    const anchor = file[i + firstIdx]!.trimEnd();
    if (!anchor.endsWith(rel[firstIdx]!)) continue;
    const prefix = anchor.slice(0, anchor.length - rel[firstIdx]!.length);
    if (prefix.trim() !== "") continue;
    let ok = true;
    for (let j = 0; j < n && ok; j++) {
      const f = file[i + j]!.trimEnd();
      ok = rel[j] === "" ? f === "" : f === prefix + rel[j];
    }
    if (!ok) continue;
    hits.push({ start: i, length: n, replacement: reindent(replace, indent, prefix) });
    if (hits.length > MAX_LOCATIONS) break;
  }
  return hits;
};

const STRICT_RUNGS: [MatchRung, Rung][] = [
  ["exact", exactRung],
  ["trailing-whitespace", trailingRung],
  ["indentation", indentRung],
];

/** Every rung, strictest first: the order the ladder climbs. */
export const RUNGS: readonly MatchRung[] = ["exact", "trailing-whitespace", "indentation", "leading-blank", "blank-lines", "elision", "fuzzy"];

/** Which rungs a call may use, and where its match must start (0-based), from the caller's options. */
interface Limits {
  allows(rung: MatchRung): boolean;
  at: number | null;
}

function limitsOf(options: MatchOptions | undefined): Limits {
  const last = options?.loosest ? RUNGS.indexOf(options.loosest) : RUNGS.length - 1;
  return { allows: (rung) => RUNGS.indexOf(rung) <= last, at: options?.at ? options.at - 1 : null };
}

const NO_LIMITS: Limits = limitsOf(undefined);

function candidate(file: FileLines, start: number, length: number, similarity: number): MatchCandidate {
  const end = Math.min(file.lines.length, start + Math.max(length, 1));
  return {
    startLine: start + 1,
    endLine: end,
    similarity: Math.round(similarity * 1000) / 1000,
    text: file.lines.slice(start, end).join("\n") + "\n",
  };
}

/** The closest regions of `content` to `search` (for "did you mean these lines"). */
export function closestRegions(content: string, search: string, k = 3): MatchCandidate[] {
  const file = toFileLines(content);
  const s = textLines(search);
  return closest(file, s, k);
}

function closest(file: FileLines, search: string[], k: number, windows?: Window[]): MatchCandidate[] {
  if (search.length === 0 || file.lines.length === 0) return [];
  const n = Math.min(search.length, file.lines.length);
  return (windows ?? similarWindows(file.lines, search.slice(0, n), k))
    .slice(0, k)
    .filter((w) => w.score >= CANDIDATE_FLOOR)
    .map((w) => candidate(file, w.start, n, w.score));
}

// ─── The ladder ──────────────────────────────────────────────────────────────

type LadderResult =
  | { kind: "hit"; rung: MatchRung; hit: Hit }
  | { kind: "ambiguous"; rung: MatchRung; hits: Hit[] }
  | { kind: "none" };

function strictLadder(file: string[], search: string[], replace: string[], limits: Limits = NO_LIMITS): LadderResult {
  for (const [rung, find] of STRICT_RUNGS) {
    if (!limits.allows(rung)) break;
    let hits = find(file, search, replace);
    if (limits.at !== null) hits = hits.filter((h) => h.start === limits.at);
    if (hits.length === 1) return { kind: "hit", rung, hit: hits[0]! };
    if (hits.length > 1) return { kind: "ambiguous", rung, hits };
  }
  return { kind: "none" };
}

/**
 * SEARCH that differs from the file only in blank lines (one added or dropped, the
 * commonest slip after whitespace): its non-blank lines matched against the file's
 * non-blank lines by the strict rungs, the span mapped back onto the file.
 */
function blankLinesLadder(file: string[], search: string[], replace: string[], limits: Limits): LadderResult {
  const s = nonBlank(search);
  if (s.lines.length === 0) return { kind: "none" };
  const f = nonBlank(file);
  const n = s.lines.length;
  const toFile = (h: Hit): Hit => {
    const span = blankSpan(file, f, h.start, n, search);
    return { start: span.start, length: span.length, replacement: withFileGaps(search, replace, h.replacement, span.gaps) };
  };
  const r = strictLadder(f.lines, s.lines, replace, { ...limits, at: null });
  if (r.kind === "none") return r;
  const hits = (r.kind === "hit" ? [r.hit] : r.hits).map(toFile).filter((h) => limits.at === null || h.start === limits.at);
  if (hits.length === 0) return { kind: "none" };
  return hits.length === 1 ? { kind: "hit", rung: "blank-lines", hit: hits[0]! } : { kind: "ambiguous", rung: "blank-lines", hits };
}

/**
 * A line standing for omitted code: `...`, `…`, or the same inside a comment with a few
 * words (`// ... existing code ...`, `# ...`). Only consulted after the strict rungs failed.
 */
export function isElisionLine(line: string): boolean {
  let t = line.trim();
  if (t.length > 60) return false;
  t = t.replace(/^(\/\/+|#+|--|;+|\/\*+|<!--|\*|\{\/\*)\s*/, "").replace(/\s*(\*\/\}?|-->)$/, "").trim();
  return /^(\.\.\.|…)[\p{L}\s.…]*$/u.test(t);
}

/** Split on lines that are just `...`; null when SEARCH and REPLACE elide differently. */
function elisionPieces(search: string[], replace: string[]): [string[], string[]][] | null {
  const isDots = isElisionLine;
  const split = (lines: string[]) => {
    const pieces: string[][] = [[]];
    for (const l of lines) {
      if (isDots(l)) pieces.push([]);
      else pieces[pieces.length - 1]!.push(l);
    }
    return pieces;
  };
  if (!search.some(isDots)) return null;
  const sp = split(search);
  const rp = split(replace);
  if (sp.length !== rp.length) return null;
  return sp.map((p, i) => [p, rp[i]!]);
}

function elisionLadder(file: FileLines, search: string[], replace: string[]): { file: FileLines; start: number; end: number } | null {
  const pieces = elisionPieces(search, replace);
  if (!pieces) return null;
  let current = file;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const [sp, rp] of pieces) {
    if (sp.length === 0) {
      if (rp.length > 0) return null;
      continue;
    }
    const r = strictLadder(current.lines, sp, rp);
    if (r.kind !== "hit") return null;
    current = spliceLines(current, r.hit.start, r.hit.length, r.hit.replacement);
    first = Math.min(first, r.hit.start);
    last = Math.max(last, r.hit.start + r.hit.replacement.length);
  }
  return { file: current, start: first, end: last };
}

function fuzzyLadder(file: FileLines, search: string[], replace: string[], windows: Window[]): { hit: Hit; score: number } | null {
  const solid = search.filter((l) => !isBlank(l)).length;
  if (solid < 2 || search.length > file.lines.length) return null;
  const [best, second] = windows;
  if (!best || best.score < FUZZY_THRESHOLD) return null;
  if (second && second.score > best.score - FUZZY_MARGIN) return null;
  // Most lines must agree but for whitespace: at most one line in four may really differ.
  const pairs = search.map((l, k) => [l, file.lines[best.start + k]!] as const);
  const differing = pairs.filter(([s, f]) => s.trim() !== f.trim()).length;
  if (differing > Math.floor(solid / 4)) return null;
  // A blank line facing a non-blank one means the lines are shifted against each other: no place is certain.
  if (pairs.some(([s, f]) => isBlank(s) !== isBlank(f))) return null;
  // Carry the indentation difference of the first non-blank line over to the replacement.
  const j = search.findIndex((l) => !isBlank(l));
  const fileIndent = leadingWs(file.lines[best.start + j]!);
  const searchIndent = leadingWs(search[j]!);
  const replacement = fileIndent === searchIndent ? replace : reindent(replace, searchIndent, fileIndent);
  return { hit: { start: best.start, length: search.length, replacement }, score: best.score };
}

/** Splice `replacement` over `length` lines at `start`, giving new lines the CRLF-ness of the file. */
function spliceLines(file: FileLines, start: number, length: number, replacement: string[]): FileLines {
  const lines = file.lines.slice(0, start).concat(replacement, file.lines.slice(start + length));
  if (file.cr === null) return { lines, cr: null, finalNewline: file.finalNewline };
  const crlf = mostlyCrlf(file);
  const cr = file.cr.slice(0, start).concat(replacement.map(() => crlf), file.cr.slice(start + length));
  return { lines, cr, finalNewline: file.finalNewline };
}

function splice(file: FileLines, start: number, length: number, replacement: string[]): string {
  return fromFileLines(spliceLines(file, start, length, replacement));
}

function failure(reason: MatchFailure["reason"], candidates: MatchCandidate[]): MatchFailure {
  return { status: "failed", reason, candidates };
}

/** Empty SEARCH: create the file, or append to it. */
function append(file: FileLines, content: string, replace: string[]): MatchResult {
  const start = file.lines.length;
  if (replace.length === 0) return failure("no-op", []);
  const crlf = file.cr !== null && file.cr.every(Boolean);
  const tail = replace.map((l) => (crlf ? l + "\r" : l)).join("\n") + "\n";
  const sep = content === "" || content.endsWith("\n") ? "" : crlf ? "\r\n" : "\n";
  return { status: "applied", content: content + sep + tail, rung: "exact", startLine: start + 1, endLine: start + replace.length };
}

/** Lines before string offset `end` (counting newlines without splitting the text). */
function lineOf(content: string, end: number): number {
  let n = 0;
  for (let i = content.indexOf("\n"); i >= 0 && i < end; i = content.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * The exact rung without splitting the file into lines: big files, LF only, SEARCH found
 * at exactly one line start. Anything else (none, several, CR) goes up the full ladder.
 */
function exactFastPath(content: string, search: string[], replace: string[]): MatchResult | null {
  if (content.length < 100_000 || content.includes("\r")) return null;
  const needle = search.join("\n") + "\n";
  let found = -1;
  for (let i = content.indexOf(needle); i >= 0; i = content.indexOf(needle, i + 1)) {
    if (i > 0 && content[i - 1] !== "\n") continue;
    if (found >= 0) return null;
    found = i;
  }
  if (found < 0) return null;
  // A second copy as the unterminated last line would make it ambiguous: let the ladder decide.
  const last = needle.slice(0, -1);
  if (!content.endsWith("\n") && content.endsWith(last) && (content.length === last.length || content[content.length - last.length - 1] === "\n")) return null;
  const inserted = replace.length ? replace.join("\n") + "\n" : "";
  if (inserted === needle) return null;
  const startLine = lineOf(content, found) + 1;
  return {
    status: "applied",
    content: content.slice(0, found) + inserted + content.slice(found + needle.length),
    rung: "exact",
    startLine,
    endLine: startLine + replace.length - 1,
  };
}

/**
 * Replace the whole-line text `search` by `replace` in `content`. Stops at the first
 * rung that finds exactly one place; several places at one rung is `ambiguous`.
 * `options.loosest` stops the climb early; `options.at` only accepts a match starting there.
 */
export function applySearchReplace(content: string, search: string, replace: string, options?: MatchOptions): MatchResult {
  const s = textLines(search);
  const r = textLines(replace);
  const limits = options ? limitsOf(options) : NO_LIMITS;
  const fast = s.some((l) => !isBlank(l)) && limits.at === null ? exactFastPath(content, s, r) : null;
  if (fast) return fast;
  const file = toFileLines(content);
  if (s.every(isBlank)) return append(file, content, r);

  const applied = (rung: MatchRung, hit: Hit): MatchResult => {
    const next = splice(file, hit.start, hit.length, hit.replacement);
    if (next === content) return failure("no-op", [candidate(file, hit.start, hit.length, 1)]);
    return { status: "applied", content: next, rung, startLine: hit.start + 1, endLine: hit.start + hit.replacement.length };
  };
  const settle = (ladder: LadderResult, rung?: MatchRung): MatchResult | null => {
    if (ladder.kind === "hit") return applied(rung ?? ladder.rung, ladder.hit);
    if (ladder.kind === "ambiguous") return failure("ambiguous", ladder.hits.slice(0, MAX_LOCATIONS + 1).map((h) => candidate(file, h.start, h.length, 1)));
    return null;
  };

  const strict = settle(strictLadder(file.lines, s, r, limits));
  if (strict) return strict;

  if (isBlank(s[0]!) && limits.allows("leading-blank")) {
    let k = 0;
    while (k < s.length && isBlank(s[k]!)) k++;
    let m = 0;
    while (m < r.length && isBlank(r[m]!) && m < k) m++;
    const again = settle(strictLadder(file.lines, s.slice(k), r.slice(m), limits), "leading-blank");
    if (again) return again;
  }

  if (limits.allows("blank-lines")) {
    const blank = settle(blankLinesLadder(file.lines, s, r, limits));
    if (blank) return blank;
  }

  const elided = limits.allows("elision") ? elisionLadder(file, s, r) : null;
  if (elided && (limits.at === null || elided.start === limits.at)) {
    const out = fromFileLines(elided.file);
    if (out === content) return failure("no-op", []);
    return { status: "applied", content: out, rung: "elision", startLine: elided.start + 1, endLine: Math.max(elided.start + 1, elided.end) };
  }

  // One similarity scan serves both the fuzzy rung and the "did you mean" regions (skipped when
  // the caller stopped short of fuzzy: it asks again without limits for an explanation).
  if (!limits.allows("fuzzy")) return failure("not-found", []);
  const windows = similarWindows(file.lines, s.slice(0, Math.min(s.length, file.lines.length)), 3);
  const fuzzy = fuzzyLadder(file, s, r, windows);
  if (fuzzy && (limits.at === null || fuzzy.hit.start === limits.at)) return applied("fuzzy", fuzzy.hit);

  // Not found: maybe the edit is already in the file.
  if (r.filter((l) => !isBlank(l)).length >= 2 || r.join("\n").trim().length >= 16) {
    const present = strictLadder(file.lines, r, r);
    if (present.kind === "hit") return failure("already-applied", [candidate(file, present.hit.start, present.hit.length, 1)]);
  }
  return failure("not-found", closest(file, s, 3, windows));
}

// ─── Explaining failures to the model ────────────────────────────────────────

function lineRange(c: MatchCandidate): string {
  return c.startLine === c.endLine ? `line ${c.startLine}` : `lines ${c.startLine}-${c.endLine}`;
}

/** Up to five line pairs where SEARCH and the closest region differ (whitespace shown as written). */
function differingLines(search: string[], best: MatchCandidate): string[] {
  const actual = textLines(best.text);
  const out: string[] = [];
  for (let k = 0; k < search.length && out.length < 10; k++) {
    const a = actual[k];
    if (a === undefined || a === search[k]) continue;
    const label = `line ${best.startLine + k}`;
    out.push(`  ${"SEARCH".padEnd(label.length)} |${search[k]}|`, `  ${label} |${a}|`);
  }
  return out;
}

/** Text for the model: what went wrong, the actual lines it probably meant, and the rule broken. */
export function explainFailure(failure: MatchFailure, search: string, replace: string, path: string): string {
  if (failure.userChange) return explainUserChange(failure.userChange);
  const out: string[] = [];
  switch (failure.reason) {
    case "not-found": {
      out.push(`The SEARCH text does not match any lines of ${path}.`);
      const [best, ...rest] = failure.candidates;
      if (best) {
        out.push("", `Did you mean these actual lines of ${path} (${lineRange(best)}, ${Math.round(best.similarity * 100)}% similar)?`, fenced(best.text));
        const diffs = differingLines(textLines(search), best);
        if (diffs.length) out.push("", "Where they differ (between the bars):", ...diffs);
        for (const c of rest) out.push(`Also similar: ${lineRange(c)} (${Math.round(c.similarity * 100)}%).`);
      } else {
        out.push("", `No part of ${path} is close to it: check that this is the right file, and copy the lines from its current content in the chat.`);
      }
      out.push("", "Rule: SEARCH must copy the existing lines exactly, character for character, including indentation, comments and blank lines.");
      break;
    }
    case "ambiguous":
      out.push(
        failure.candidates.length > MAX_LOCATIONS
          ? `The SEARCH text matches more than ${MAX_LOCATIONS} places in ${path}, among them ${failure.candidates.slice(0, MAX_LOCATIONS).map(lineRange).join(", ")}.`
          : `The SEARCH text matches ${failure.candidates.length} places in ${path}: ${failure.candidates.map(lineRange).join(", ")}.`,
        "",
        "Rule: SEARCH must match exactly one place. Add a few unique surrounding lines (e.g. the enclosing function's first line) so it identifies one place.",
      );
      break;
    case "already-applied": {
      const c = failure.candidates[0];
      out.push(
        `The SEARCH text is not in ${path}, but the REPLACE text already is${c ? ` (${lineRange(c)})` : ""}: this edit appears to be applied already.`,
        "",
        "Do not send it again. If more change is needed, SEARCH for the current lines.",
      );
      break;
    }
    case "no-op":
      out.push(`This edit changes nothing in ${path}: SEARCH and REPLACE give the same text.`, "", "Rule: only send edits that change the file.");
      break;
  }
  return out.join("\n");
}

/** A stale SEARCH: the lines it quotes were changed (and not committed) since the last commit, or while the model answered. */
function explainUserChange(change: NonNullable<MatchFailure["userChange"]>): string {
  const where = change.startLine === change.endLine ? `line ${change.startLine}` : `lines ${change.startLine}-${change.endLine}`;
  const now = change.text
    ? [`They now read (${where} of ${change.path}):`, fenced(change.text)]
    : [`Those lines are no longer in ${change.path} (they were deleted after line ${change.startLine - 1}).`];
  return [
    change.was === "saved"
      ? `The SEARCH text matches ${change.path} as it was last saved (from line ${change.committedLine}), but those lines have changed since in the user's editor, not saved yet: the user is working on this file.`
      : change.was === "shown"
        ? `The SEARCH text matches ${change.path} as you were shown it (from line ${change.committedLine}), but those lines were changed while you were answering (most likely by the user, who is working on this file).`
        : `The SEARCH text matches ${change.path} as it was last committed (from line ${change.committedLine}), but those lines have changed since, in an edit not committed yet (most likely the user's, who is working on this file).`,
    "",
    ...now,
    "",
    "Rule: never undo the user's uncommitted changes. Send the edit again with the SEARCH text copied from the current lines above, and keep the user's change unless they asked to undo it.",
  ].join("\n");
}

/** The matcher alone, for tests and tools: no uncommitted changes are known to it. */
export const matcher: Matcher = {
  rungs: RUNGS,
  replace: applySearchReplace,
  explain: explainFailure,
};

/**
 * The shared matcher as handed to plugins in `kit.matcher`: every format's SEARCH lands
 * through it, so the user's uncommitted changes (`uncommitted`, filled while a reply is
 * staged) are kept here once for all of them. A SEARCH that quotes a dirty file as last
 * committed lands only on an exact copy of the current lines; any looser match would write
 * the committed lines back over the user's change, so it fails and says what the lines are now.
 */
export class SharedMatcher implements Matcher {
  readonly rungs = RUNGS;
  readonly uncommitted = new UncommittedChanges();

  readonly replace = (content: string, search: string, replace: string, options?: MatchOptions): MatchResult => {
    const result = applySearchReplace(content, search, replace, options);
    if (!this.uncommitted.active) return result;
    if (result.status === "applied" ? result.rung === "exact" : result.reason !== "not-found") return result;
    return this.uncommitted.staleSearch(search) ?? result;
  };

  readonly explain = explainFailure;
}
