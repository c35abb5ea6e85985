// Unified diffs for people: coloured additions, removals and hunk headers, and a long
// diff folded past a number of lines (the whole of it stays one `/diff` away).
import type { Theme } from "./style.ts";
import { terminalSafe } from "./safe.ts";

/** Lines of an applied edit's diff shown before the rest is folded. */
export const DIFF_FOLD_LINES = 40;

/** Does `text` read as a unified diff (a hunk header and its file lines)? */
export function looksLikeDiff(text: string): boolean {
  return /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(text) && /^(---|\+\+\+) /m.test(text);
}

/** Paint each line of a unified diff by its kind; lines past `fold` become one "… N more lines" line. */
export function renderDiff(diff: string, theme: Theme, fold = Number.POSITIVE_INFINITY, foldNote = "/diff shows all"): string {
  const lines = terminalSafe(diff.replace(/\n$/, "")).split("\n");
  const shown = lines.length > fold + 1 ? lines.slice(0, fold) : lines;
  const painted = shown.map((line) => paintLine(line, theme));
  if (shown.length < lines.length) painted.push(theme.dim(`… ${lines.length - shown.length} more lines (${foldNote})`));
  return painted.join("\n");
}

function paintLine(line: string, theme: Theme): string {
  if (/^(diff --git|index |--- |\+\+\+ |new file mode|deleted file mode|similarity index|rename (from|to) |={3,})/.test(line)) return theme.diffHeader(line);
  if (line.startsWith("@@")) return theme.diffHunk(line);
  if (line.startsWith("+")) return theme.diffAdd(line);
  if (line.startsWith("-")) return theme.diffDel(line);
  return line;
}
