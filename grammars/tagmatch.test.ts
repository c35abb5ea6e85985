import { expect, test } from "bun:test";
import type { Node } from "web-tree-sitter";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tagCorpus } from "../tests/support/tag-corpus.ts";
import { EMBEDDED_ASSETS } from "./embedded.ts";
import { LANGUAGES, type LanguageSpec } from "./languages.ts";
import { GrammarLoader, MATCHER_BYTES, treeSitterTagsQuery } from "./runtime.ts";
import { compileTagMatcher, parseQuery, type TagMatch, type TagQuery } from "./tagmatch.ts";

const loader = new GrammarLoader(EMBEDDED_ASSETS);
const corpus = tagCorpus();
/** Aider's per-language fixtures (../shared, CI only): a user's clone has the rest of the corpus. */
const SHARED = existsSync(join(import.meta.dir, "../../shared/fixtures/aider/repomap/languages"));

/** Languages whose tags query our matcher does not take (tree-sitter's Query tags them). */
const FALLBACK = ["csharp"]; // its query matches `(type …)`, a supertype: a hidden node the matcher cannot see

function show(match: TagMatch): string {
  return `${match.patternIndex}|${match.captures.map((c) => `${c.name}@${c.node.startIndex}-${c.node.endIndex}`).join(",")}`;
}

/**
 * Files of the corpus where the two give different matches. The order is not
 * compared: tree-sitter defers a finished match while another way to match the
 * same pattern at the same node is still open (it finishes when its cursor leaves
 * that node), which the matcher does not copy; what the order decides in the repo
 * map (the kind of a name two patterns define) is compared in tags.test.ts.
 */
async function differences(spec: LanguageSpec, ours: TagQuery, oracle: TagQuery): Promise<string[]> {
  const { parser } = await loader.parser(spec);
  const out: string[] = [];
  for (const file of corpus.get(spec.name)!) {
    const tree = parser.parse(file.text)!;
    try {
      const root: Node = tree.rootNode;
      const expected = oracle.matches(root).map(show);
      const actual = ours.matches(root).map(show);
      if ([...expected].sort().join("\n") !== [...actual].sort().join("\n")) {
        const missing = expected.filter((m) => !actual.includes(m));
        const extra = actual.filter((m) => !expected.includes(m));
        out.push(`${file.label}: tree-sitter only ${JSON.stringify(missing.slice(0, 3))}, ours only ${JSON.stringify(extra.slice(0, 3))}${missing.length + extra.length === 0 ? " (as often)" : ""}`);
      }
    } finally {
      tree.delete();
    }
  }
  return out;
}

test("every embedded tags query is parsed into patterns; the languages kept on tree-sitter's Query are listed", async () => {
  const fallback: string[] = [];
  for (const spec of LANGUAGES) {
    const source = loader.tagsSource(spec);
    expect(parseQuery(source).length).toBeGreaterThan(0);
    const { language } = await loader.parser(spec);
    if (!compileTagMatcher(language, source)) fallback.push(spec.name);
    const grammar = await loader.load(spec);
    expect(grammar.tagsByQuery).toBe(FALLBACK.includes(spec.name));
  }
  expect(fallback).toEqual(FALLBACK);
});

test("the matcher gives tree-sitter's matches for every language on its corpus", async () => {
  const report: string[] = [];
  for (const spec of LANGUAGES) {
    if (FALLBACK.includes(spec.name)) continue;
    expect(corpus.get(spec.name)!.length).toBeGreaterThanOrEqual(SHARED ? 3 : 2);
    const source = loader.tagsSource(spec);
    const { language } = await loader.parser(spec);
    report.push(...(await differences(spec, compileTagMatcher(language, source)!, treeSitterTagsQuery(language, source))));
  }
  expect(report).toEqual([]);
}, 180_000);

test("the comparison sees a matcher that ignores fields, anchors or quantifiers", async () => {
  const broken = async (name: string, mutate: (source: string) => string): Promise<number> => {
    const spec = LANGUAGES.find((l) => l.name === name)!;
    const source = loader.tagsSource(spec);
    const { language } = await loader.parser(spec);
    return (await differences(spec, compileTagMatcher(language, mutate(source))!, treeSitterTagsQuery(language, source))).length;
  };
  // Fields dropped: `name: (identifier)` becomes `(identifier)`.
  expect(await broken("typescript", (s) => s.replace(/\b[a-z_]+:\s*(?=[([_"])/g, ""))).toBeGreaterThan(0);
  // Python's field-sensitive cases are in Aider's fixture (../shared).
  if (SHARED) expect(await broken("python", (s) => s.replace(/\b[a-z_]+:\s*(?=[([_"])/g, ""))).toBeGreaterThan(0);
  // Anchors dropped.
  expect(await broken("julia", (s) => s.replace(/\(([a-z_]+)\s+\.\s/g, "($1 "))).toBeGreaterThan(0);
  // The doc comments' quantifier made a single comment (the matches change shape).
  expect(await broken("javascript", (s) => s.replaceAll("(comment)* @doc", "(comment)? @doc"))).toBeGreaterThan(0);
}, 120_000);

test("a language's matcher hands over to tree-sitter's Query after MATCHER_BYTES of its text in a thread, with the same matches", async () => {
  const spec = LANGUAGES.find((l) => l.name === "python")!;
  const fresh = new GrammarLoader(EMBEDDED_ASSETS);
  const grammar = await fresh.load(spec);
  const tags = grammar.tags as TagQuery & { compiled: boolean };
  const text = "def f():\n    g(1)\n".repeat(Math.ceil(MATCHER_BYTES / 18 / 4));
  const tree = grammar.parser.parse(text)!;
  try {
    const first = tags.matches(tree.rootNode).map(show);
    expect(tags.compiled).toBe(false);
    for (let i = 0; i < 4; i++) tags.matches(tree.rootNode);
    expect(tags.compiled).toBe(true);
    expect(tags.matches(tree.rootNode).map(show)).toEqual(first);
  } finally {
    tree.delete();
  }
}, 60_000);
