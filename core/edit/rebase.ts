// A whole new text that the model wrote from the text it was shown, landed on the file as it is
// now. When the file changed while the model answered (the user saved it in an editor, a
// formatter ran), writing the model's text as it is would silently undo that change. Instead
// the model's change (shown → new) is merged onto the change made meanwhile (shown → now),
// three-way as git merges; where both touch the same lines nothing is written.
import { diffArrays } from "diff";
import { diff3Merge } from "node-diff3";

/** The note of an applied edit whose text was merged onto a change made while the model answered. */
export const mergedNote = (path: string): string => `merged with the change made to ${path} while the model answered`;

/** The lines of `text`, each with its line ending. */
const linesOf = (text: string): string[] => text.match(/[^\n]*\n|[^\n]+$/g) ?? [];

/** Where the merge stopped: lines `startLine`–`endLine` of the file as it is now (1-based; `text` their content), line `shownLine` of the text the model was shown. */
export interface RebaseConflict {
  startLine: number;
  endLine: number;
  text: string;
  shownLine: number;
}

/**
 * `next` (written from `shown`) merged onto `now`: the merged text, or the first region both
 * changed differently. `shown` null: the file did not exist when the model was shown it.
 */
export function rebaseWhole(shown: string | null, now: string, next: string): { text: string } | { conflict: RebaseConflict } {
  const regions = diff3Merge(linesOf(now), linesOf(shown ?? ""), linesOf(next), { excludeFalseConflicts: true });
  const merged: string[] = [];
  for (const region of regions) {
    const byLine = region.conflict && mergeByLine(region.conflict.a, region.conflict.o, region.conflict.b);
    if (byLine) merged.push(...byLine);
    else if (region.conflict) {
      const { a, aIndex, oIndex } = region.conflict;
      return { conflict: { startLine: aIndex + 1, endLine: Math.max(aIndex + 1, aIndex + a.length), text: a.join(""), shownLine: oIndex + 1 } };
    }
    else merged.push(...(region.ok ?? []));
  }
  return { text: merged.join("") };
}

/**
 * A region both sides changed (`a` and `b`, from `o`), merged line by line when that is plain:
 * the same number of lines on each side and no line changed by both, differently (git calls
 * changes to adjacent lines a conflict; these are two edits, each to its own lines). Else null.
 */
function mergeByLine(a: readonly string[], o: readonly string[], b: readonly string[]): string[] | null {
  if (a.length !== o.length || b.length !== o.length) return null;
  const merged: string[] = [];
  for (let i = 0; i < o.length; i++) {
    if (a[i] === o[i] || a[i] === b[i]) merged.push(b[i]!);
    else if (b[i] === o[i]) merged.push(a[i]!);
    else return null;
  }
  return merged;
}

/** The note of an applied whole text that lacked the user's uncommitted change, which was kept: `ranges` are 1-based line ranges of the written text. */
export const keptNote = (path: string, ranges: readonly [number, number][]): string =>
  `kept the uncommitted change to ${ranges.map(([a, b]) => (a === b ? `line ${a}` : `lines ${a}-${b}`)).join(", ")} of ${path}, which the new text lacked`;

/** The lines a `keptNote` names ("lines 4-6, line 9"), or null for any other note. */
export const keptLines = (note: string | undefined): string | null => /^kept the uncommitted change to (.+) of .+, which the new text lacked$/.exec(note ?? "")?.[1] ?? null;

/**
 * A whole new text of a file with uncommitted changes, checked for a silent revert. The model
 * was shown the file as it is now (`now`), yet where the user changed lines since the last
 * commit (`head`), `next` may have exactly the committed lines back: it was written from an
 * older copy (the model's own earlier listing of the file, say). There the user's lines are
 * kept; every other line is the model's. Null when `next` undoes none of the user's change.
 * Lines both changed, each differently, are the model's: it edited the user's lines.
 */
export function keepUncommitted(head: string, now: string, next: string): { text: string; kept: [number, number][] } | null {
  const nextLines = linesOf(next);
  const merged: string[] = [];
  for (const region of diff3Merge(linesOf(now), linesOf(head), nextLines, { excludeFalseConflicts: true })) {
    const c = region.conflict;
    merged.push(...(region.ok ?? (c ? (mergeByLine(c.a, c.o, c.b) ?? c.b) : [])));
  }
  const text = merged.join("");
  if (text === next) return null;
  // The kept lines: those of the merged text that the model's text lacks.
  const kept: [number, number][] = [];
  let line = 1;
  const parts = diffArrays(nextLines, merged);
  parts.forEach((part, i) => {
    const n = part.count ?? part.value.length;
    // Lines the user added or changed, or where only a deletion of the user's was kept: the lines around the gap.
    const replaced = parts[i - 1]?.added || parts[i + 1]?.added;
    const range: [number, number] | null = part.added ? [line, line + n - 1] : part.removed && !replaced ? [Math.max(1, line - 1), Math.max(1, line)] : null;
    if (range) {
      const last = kept.at(-1);
      if (last && last[1] >= range[0] - 1) last[1] = Math.max(last[1], range[1]);
      else kept.push(range);
    }
    if (!part.removed) line += n;
  });
  return { text, kept };
}
