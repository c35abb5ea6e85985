// The two texts of a diff hunk (udiff) or patch chunk: both formats mark lines with
// ` `/`-`/`+` the same way, and both locate the change by its text through kit.matcher.

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
