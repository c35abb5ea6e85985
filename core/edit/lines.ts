// Text as lines for the matcher: a file's lines with their CRLF-ness remembered,
// so an edit can splice lines and give the file back with its endings intact.

/** A file's text as lines without terminators; `cr` remembers which ended in CRLF (null: none did). */
export interface FileLines {
  lines: string[];
  cr: boolean[] | null;
  finalNewline: boolean;
}

export function toFileLines(content: string): FileLines {
  if (content === "") return { lines: [], cr: null, finalNewline: false };
  const raw = content.split("\n");
  const finalNewline = raw[raw.length - 1] === "";
  if (finalNewline) raw.pop();
  if (!content.includes("\r")) return { lines: raw, cr: null, finalNewline };
  const cr = raw.map((l) => l.endsWith("\r"));
  const lines = raw.map((l, i) => (cr[i] ? l.slice(0, -1) : l));
  return { lines, cr, finalNewline };
}

export function fromFileLines(f: FileLines): string {
  if (f.lines.length === 0) return "";
  const cr = f.cr;
  const body = cr ? f.lines.map((l, i) => (cr[i] ? l + "\r" : l)).join("\n") : f.lines.join("\n");
  return f.finalNewline ? body + "\n" : body;
}

/** Do most lines end in CRLF? (New lines follow the majority.) */
export const mostlyCrlf = (f: FileLines) => f.cr !== null && f.cr.filter(Boolean).length * 2 >= f.cr.length;

/** SEARCH/REPLACE text as lines: CRLF folded, one trailing newline dropped. */
export function textLines(text: string): string[] {
  const t = text.replace(/\r\n/g, "\n");
  if (t === "") return [];
  const lines = t.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export const isBlank = (s: string) => s.trim() === "";
export const leadingWs = (s: string) => s.slice(0, s.length - s.trimStart().length);
