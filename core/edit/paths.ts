// Paths as models write them, mapped onto repository paths: decoration stripped,
// then exact, basename/suffix and close matches among the chat files.

/** Strip what models wrap paths in: backticks, `*`, quotes, a trailing `:`, leading `#` headings, `./`. */
export function stripPathDecoration(raw: string): string {
  let p = raw.trim();
  for (let guard = 0; guard < 4; guard++) {
    const before = p;
    p = p.replace(/^#+\s*/, "");
    p = p.replace(/:+$/, "");
    p = p.replace(/^[`*"']+|[`*"']+$/g, "");
    p = p.trim();
    if (p === before) break;
  }
  while (p.startsWith("./")) p = p.slice(2);
  return p;
}

/** A repository-relative path in its canonical spelling (forward slashes, no `.` segments). */
export function normalizeRel(path: string): string {
  const parts: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else parts.push(seg);
  }
  return parts.join("/");
}

const basename = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/** Letters and digits only, lower-cased: `file1_py` and `file1.py` agree. */
const skeleton = (p: string) => p.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");

/**
 * Map a path as the model wrote it onto a repository path: exact; decoration stripped;
 * a basename or suffix that identifies exactly one chat file; a close match among chat
 * files (the same letters and digits, only separators differ); else the path as written.
 * A close match is deliberately strict: `file2.txt` beside `file1.txt` is a new file.
 */
export function resolveModelPath(raw: string, chatFiles: readonly string[], allFiles: readonly string[] = []): string {
  const stripped = stripPathDecoration(raw);
  if (stripped === "") return stripped;
  const known = new Set([...chatFiles, ...allFiles]);
  if (known.has(raw)) return raw;
  if (known.has(stripped)) return stripped;
  const norm = normalizeRel(stripped.replace(/\\/g, "/"));
  if (known.has(norm)) return norm;

  const unique = (matches: readonly string[]) => (new Set(matches).size === 1 ? matches[0]! : null);
  // A suffix of a chat file ("file3.py" for "dir/file3.py").
  const suffix = unique(chatFiles.filter((f) => f.endsWith("/" + norm)));
  if (suffix) return suffix;
  // A bogus directory before a chat file's name ("path/to/sample.txt" for "sample.txt").
  // A bogus prefix before a chat file's path ("path/to/sample.txt", "/home/me/repo/src/a.ts").
  const prefixed = chatFiles.filter((f) => norm.endsWith("/" + f)).sort((a, b) => b.length - a.length);
  if (prefixed.length && (prefixed.length === 1 || prefixed[0]!.length > prefixed[1]!.length)) return prefixed[0]!;
  // Only separators differ ("file1_py", "\windows__init__.py").
  const close = unique(chatFiles.filter((f) => skeleton(f) === skeleton(stripped)));
  if (close) return close;
  // A new file: forward slashes, no `.` segments; absolute paths stay as written, for the store to refuse.
  return /^([a-zA-Z]:)?[\\/]/.test(stripped) ? stripped : norm;
}
