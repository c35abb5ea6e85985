// Which repository files and identifiers a piece of prose names. Used to offer
// adding files the model talks about, and to steer the repo map's ranking.

/** Characters trimmed from the end of a word (sentence punctuation). */
const TRAILING_PUNCTUATION = /[,.!;:?]+$/;
/** Characters trimmed from both ends (quotes and markdown emphasis). */
const QUOTES = /^["'`*_]+|["'`*_]+$/g;

/** The whitespace-separated words of `text`, stripped of punctuation and quoting, with `\` read as `/`. */
export function mentionWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const raw of text.split(/\s+/)) {
    if (!raw) continue;
    const word = raw.replace(TRAILING_PUNCTUATION, "").replace(QUOTES, "");
    if (word) words.add(word);
  }
  return words;
}

const normalise = (p: string) => p.replaceAll("\\", "/");
const basename = (p: string) => {
  const i = p.lastIndexOf("/");
  return i < 0 ? p : p.slice(i + 1);
};

/**
 * The files of `addable` that `text` names: by their full repository path
 * (either slash direction), or by a distinctive basename (one with a `.`, `_`
 * or `-`) that identifies exactly one addable file and is not already the
 * basename of a file in the chat or read-only.
 */
export function fileMentions(
  text: string,
  addable: readonly string[],
  inChat: readonly string[] = [],
  readOnly: readonly string[] = [],
): string[] {
  const words = mentionWords(text);
  const normalisedWords = new Set([...words].map(normalise));
  const taken = new Set([...inChat, ...readOnly].map((f) => basename(normalise(f))));
  const found = new Set<string>();
  const byBasename = new Map<string, string[]>();

  for (const file of addable) {
    if (normalisedWords.has(normalise(file))) found.add(file);
    const base = basename(file);
    if (!/[./\\_-]/.test(base)) continue;
    const list = byBasename.get(base);
    if (list) list.push(file);
    else byBasename.set(base, [file]);
  }
  for (const [base, files] of byBasename) {
    if (taken.has(base) || files.length !== 1) continue;
    if (words.has(base)) found.add(files[0] as string);
  }
  return [...found].sort();
}

/** Identifier-like words of `text` (3+ characters), for ranking the repo map. */
export function identMentions(text: string): string[] {
  const idents = new Set<string>();
  for (const word of text.split(/[^A-Za-z0-9_]+/)) {
    if (word.length >= 3 && /^[A-Za-z_]/.test(word)) idents.add(word);
  }
  return [...idents];
}

/** A clause that says a file is not to be changed: "no need to touch", "doesn't need changes", "leave it as is", "unchanged". */
const NOT_TO_CHANGE = [
  /\b(?:no need to|needn't|need not|won't|never|not|(?:does|do|did|should|will|would|must|can)\s*(?:n't|not)(?:\s+need)?(?:\s+to)?)\s+(?:\w+\s+){0,2}?(?:touch|chang|edit|modif|updat)\w*/i,
  /\b(?:unchanged|untouched|as[- ]is|stays the same|no changes?(?: are| is)? (?:needed|required|necessary))\b/i,
  /\bleave\b.*\b(?:alone|unchanged)\b/i,
];

/**
 * `text` without the clauses that name a file only to say it needs no change ("No need to
 * touch `README.md`"): a reply listing the files to change names others in passing.
 */
export function withoutNegatedClauses(text: string): string {
  return text
    .split("\n")
    .map((line) =>
      line
        .split(/(?<=[.;!?])\s+|\s+(?:but|while|whereas)\s+|,\s+(?=(?:and\s+)?(?:no|not|leave|there's no)\b)/i)
        .filter((clause) => !NOT_TO_CHANGE.some((re) => re.test(clause)))
        .join(" "),
    )
    .join("\n");
}
