// Argument helpers for the built-in slash commands: shell-like word splitting
// and glob expansion against the repository's files. Pure functions.

/** Split `text` into words like a POSIX shell would (single/double quotes, backslash escapes); no expansion. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Does a glob match a path (`kit.files.matches`: coder's one glob syntax)? */
export type GlobMatch = (pattern: string, path: string) => boolean;

export function isGlob(word: string): boolean {
  return /[*?[\]{}]/.test(word);
}

/**
 * Expand words against `files` (repository-relative): a glob becomes the files it
 * matches (a bare directory name becomes the files under it); other words stay as
 * typed. Returns the paths and the patterns that matched nothing.
 */
export function expandPaths(words: readonly string[], files: readonly string[], matches: GlobMatch): { paths: string[]; unmatched: string[] } {
  const paths: string[] = [];
  const unmatched: string[] = [];
  for (const raw of words) {
    const word = raw.replace(/^\.\//, "").replace(/\/+$/, "");
    if (isGlob(word)) {
      const hits = files.filter((f) => matches(word, f));
      if (hits.length) paths.push(...hits);
      else unmatched.push(raw);
      continue;
    }
    const under = files.filter((f) => f.startsWith(`${word}/`));
    if (under.length && !files.includes(word)) paths.push(...under);
    else paths.push(raw);
  }
  return { paths: [...new Set(paths)], unmatched };
}

/** Completion candidates: repository paths that start with the last word of `arg`. */
export function completePaths(arg: string, files: readonly string[], limit = 50): string[] {
  // The last word as typed (spaces escaped with a backslash, or inside quotes), and as meant.
  let start = 0;
  let quote: string | null = null;
  for (let i = 0; i < arg.length; i++) {
    const c = arg[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "\\") i++;
    else if (/\s/.test(c)) start = i + 1;
  }
  const typed = arg.slice(start);
  const last = splitWords(typed)[0] ?? "";
  const head = arg.slice(0, start);
  // An open quote stays open around the completion; otherwise a name with spaces is escaped.
  const open = quote && typed.startsWith(quote) ? quote : null;
  const out: string[] = [];
  for (const f of files) {
    if (f.startsWith(last) || (last && !last.includes("/") && f.split("/").at(-1)!.startsWith(last))) out.push(head + (open ? `${open}${f}` : escapeWord(f)));
    if (out.length >= limit) break;
  }
  return out;
}

/** A path as one word for `splitWords`: spaces, quotes and backslashes escaped. */
export function escapeWord(path: string): string {
  return path.replace(/[\s'"\\]/g, (c) => `\\${c}`);
}

/**
 * The chat files `/drop WORD` means: the file itself, a glob's matches, the files under a folder,
 * or else (as in Aider) every chat file whose path contains the word.
 */
export function dropMatches(word: string, inChat: readonly string[], matches: GlobMatch): string[] {
  const clean = word.replace(/^\.\//, "").replace(/\/+$/, "");
  if (inChat.includes(clean)) return [clean];
  if (isGlob(clean)) return expandPaths([clean], inChat, matches).paths.filter((p) => inChat.includes(p));
  const under = inChat.filter((f) => f.startsWith(`${clean}/`));
  if (under.length) return under;
  return inChat.filter((f) => f.includes(clean));
}
