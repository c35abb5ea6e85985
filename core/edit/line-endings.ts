// Files whose lines end in both LF and CRLF: edited as LF text, written back with
// every surviving line keeping its own ending, a replaced line the ending of the
// line it replaces, and a new line the ending of the line before it (the first
// line's when it opens the file): an edit never turns an LF line into CRLF.
import { diffArrays } from "diff";

/** `after` (LF text) with CRLF put back where `before`'s lines had it (`endings`: one per line of `before`). */
export function restoreEndings(before: string, endings: readonly string[], after: string): string {
  const oldLines = before.split("\n");
  const out: string[] = [];
  let oldIndex = 0;
  let last = endings[0] ?? "\n";
  const emit = (line: string, ending: string | undefined) => {
    last = ending ?? last;
    out.push(line, last);
  };
  const parts = diffArrays(oldLines, after.split("\n"));
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!part.added && !part.removed) {
      for (const line of part.value) emit(line, endings[oldIndex++]);
      continue;
    }
    // A change: the lines removed and the lines added in their place (in either order).
    const next = parts[i + 1];
    const paired = next && (next.added || next.removed) && next.added !== part.added ? next : null;
    if (paired) i++;
    const removed = part.removed ? part : paired;
    const added = part.added ? part : paired;
    const replaced = endings.slice(oldIndex, oldIndex + (removed?.value.length ?? 0));
    oldIndex += removed?.value.length ?? 0;
    added?.value.forEach((line, n) => emit(line, replaced[n]));
  }
  // The last element of split("\n") is the text after the final newline: it has no ending.
  out[out.length - 1] = "";
  return out.join("");
}
