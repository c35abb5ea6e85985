// The two texts of a diff hunk (udiff) or patch chunk: both formats mark lines with
// ` `/`-`/`+` the same way, and both locate the change by its text through kit.matcher.
import type { Kit, MatchRung } from "../core/plugin.ts";

/** The looser of two rungs (an edit made of several matches reports the loosest one used). */
export const loosest = (kit: Kit, a: MatchRung, b: MatchRung): MatchRung => (kit.matcher.rungs.indexOf(b) > kit.matcher.rungs.indexOf(a) ? b : a);

/** The text a hunk expects (context and removed lines) and the text it leaves (context and added lines). */
export function hunkTexts(lines: readonly string[]): { before: string; after: string } {
  const before: string[] = [];
  const after: string[] = [];
  for (const line of lines) {
    if (line.startsWith("-")) before.push(line.slice(1));
    else if (line.startsWith("+")) after.push(line.slice(1));
    else {
      // Context: " x"; models often drop the space on blank lines (or altogether).
      const text = line.startsWith(" ") ? line.slice(1) : line;
      before.push(text);
      after.push(text);
    }
  }
  const join = (ls: string[]) => (ls.length ? ls.join("\n") + "\n" : "");
  return { before: join(before), after: join(after) };
}

/**
 * kit.matcher's explanation, reworded for a hunk (udiff) or chunk (patch): the
 * matcher speaks of SEARCH and REPLACE, words a model answering in a diff format
 * was never told about. `expects` is plural ("the hunk's kept and removed lines").
 */
export function rewordForHunks(text: string, expects: string, leaves: string): string {
  return text
    .replace(/The SEARCH text does not match/g, `The ${expects} do not match`)
    .replace(/The SEARCH text matches/g, `The ${expects} match`)
    .replace(/The SEARCH text is not in/g, `The ${expects} are not in`)
    .replace(/the REPLACE text already is/g, `the ${leaves} already is`)
    .replace(/Rule: SEARCH must/g, `Rule: the ${expects} must`)
    .replace(/If more change is needed, SEARCH for the current lines\./g, "If more change is needed, write the change against the current lines.")
    .replace(/SEARCH and REPLACE give the same text/g, `the ${expects} and the ${leaves} are the same text`)
    .replace(/SEARCH text/g, expects)
    .replace(/REPLACE text/g, leaves);
}
