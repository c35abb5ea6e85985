// Code blocks in replies, highlighted with the tree-sitter grammars coder already
// embeds for the repo map and their packages' `queries/highlights.scm`: no second
// highlighting engine. A fence's language is looked up by name or extension; a
// language without a grammar or highlight query is shown plain.
import type { Query, Parser } from "web-tree-sitter";
import { LANGUAGES, type LanguageSpec } from "../../grammars/languages.ts";
import { codePaint, type Theme } from "./style.ts";

/** Fence names that are not a language's id or extension. */
const ALIASES: Record<string, string> = {
  shell: "bash",
  sh: "bash",
  zsh: "bash",
  console: "bash",
  "c++": "cpp",
  "c#": "csharp",
  cs: "csharp",
  jsx: "javascript",
  js: "javascript",
  node: "javascript",
  ts: "typescript",
  py: "python",
  python3: "python",
  golang: "go",
  rb: "ruby",
  rs: "rust",
  ex: "elixir",
  hs: "haskell",
  jl: "julia",
  ml: "ocaml",
};

/** One highlighted line's pieces: text and the capture naming its colour (null: plain). */
export type Piece = { text: string; capture: string | null };

/** Highlights whole code texts of one language, line by line. */
export class CodeHighlighter {
  constructor(
    private readonly parser: Parser,
    private readonly query: Query,
  ) {}

  /** The pieces of every line of `code`. */
  pieces(code: string): Piece[][] {
    const tree = this.parser.parse(code);
    if (!tree) return code.split("\n").map((text) => [{ text, capture: null }]);
    try {
      const owner = new Array<string | null>(code.length).fill(null);
      // Outer nodes first, inner ones paint over them; for one node the later pattern wins
      // (the packages' queries put the general `(identifier) @variable` first).
      const captures = this.query
        .captures(tree.rootNode)
        .filter((c) => !c.name.startsWith("_") && c.name !== "spell" && c.name !== "none")
        .sort((a, b) => a.node.startIndex - b.node.startIndex || b.node.endIndex - a.node.endIndex || a.patternIndex - b.patternIndex);
      for (const c of captures) owner.fill(c.name, c.node.startIndex, c.node.endIndex);
      return splitLines(code, owner);
    } finally {
      tree.delete();
    }
  }

  /** Every line of `code`, painted with `theme`. */
  paint(code: string, theme: Theme): string[] {
    return this.pieces(code).map((line) => line.map((p) => (p.capture ? codePaint(theme, p.capture)(p.text) : theme.codePlain(p.text))).join(""));
  }
}

/** Indices in web-tree-sitter are UTF-16 offsets, as JavaScript string indices are. */
function splitLines(code: string, owner: (string | null)[]): Piece[][] {
  const lines: Piece[][] = [[]];
  let start = 0;
  const flush = (end: number) => {
    if (end > start) lines[lines.length - 1]!.push({ text: code.slice(start, end), capture: owner[start] ?? null });
    start = end;
  };
  for (let i = 0; i < code.length; i++) {
    if (code[i] === "\n") {
      flush(i);
      start = i + 1;
      lines.push([]);
    } else if (owner[i] !== owner[start]) flush(i);
  }
  flush(code.length);
  return lines;
}

/** The language a fence names (```python, ```ts, ```c++), or null. */
export function languageOfFence(info: string, languages: readonly LanguageSpec[]): LanguageSpec | null {
  const word = info.trim().split(/[\s{,]/, 1)[0]?.toLowerCase() ?? "";
  if (!word) return null;
  const name = ALIASES[word] ?? word;
  return languages.find((l) => l.name === name) ?? languages.find((l) => l.extensions.includes(`.${word}`)) ?? null;
}

const loading = new Map<string, Promise<CodeHighlighter | null>>();

/**
 * The highlighter of the language a fence names: null for unknown languages and those
 * without a highlight query (or whose grammar fails to load: the code is shown plain).
 * Grammars load once per process, on the first code block of their language.
 */
export function highlighterFor(info: string): Promise<CodeHighlighter | null> | null {
  const spec = languageOfFence(info, LANGUAGES);
  if (!spec?.highlights?.length) return null;
  let ready = loading.get(spec.name);
  if (!ready) {
    ready = loadHighlighter(spec).catch(() => null);
    loading.set(spec.name, ready);
  }
  return ready;
}

/** One loader for every language (the grammar runtime is imported on the first code block). */
let loader: Promise<import("../../grammars/runtime.ts").GrammarLoader> | null = null;

async function loadHighlighter(spec: LanguageSpec): Promise<CodeHighlighter | null> {
  loader ??= Promise.all([import("../../grammars/runtime.ts"), import("../../grammars/embedded.ts")]).then(([r, e]) => new r.GrammarLoader(e.EMBEDDED_ASSETS));
  const grammars = await loader;
  const [grammar, { Query }] = await Promise.all([grammars.load(spec), import("web-tree-sitter")]);
  const sources = (spec.highlights ?? []).map((key) => grammars.queryText(key));
  return new CodeHighlighter(grammar.parser, new Query(grammar.language, sources.join("\n")));
}
