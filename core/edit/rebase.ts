// A whole new text that the model wrote from the text it was shown, landed on the file as it is
// now. When the file changed while the model answered (the user saved it in an editor, a
// formatter ran), writing the model's text as it is would silently undo that change. Instead
// the model's change (shown → new) is merged onto the change made meanwhile (shown → now),
// three-way as git merges; where both touch the same lines nothing is written.
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
    if (region.conflict) {
      const { a, aIndex, oIndex } = region.conflict;
      return { conflict: { startLine: aIndex + 1, endLine: Math.max(aIndex + 1, aIndex + a.length), text: a.join(""), shownLine: oIndex + 1 } };
    }
    merged.push(...(region.ok ?? []));
  }
  return { text: merged.join("") };
}
