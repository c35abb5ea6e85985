// The built-in syntax check: parse a file with its embedded tree-sitter grammar and
// report the ERROR and MISSING nodes, each with the lines of the scopes around it,
// and only those an edit introduced (the same broken line before the edit is not news).
import type { Node } from "web-tree-sitter";
import { languageFor } from "./languages.ts";
import type { GrammarLoader } from "./runtime.ts";

export interface SyntaxProblem {
  /** 0-based line of the problem. */
  line: number;
  /** "syntax error", or "missing X" for a token the parser had to invent. */
  what: string;
  /** 0-based first lines of the scopes enclosing it (function, class, block headers). */
  scopes: number[];
}

/** A file's syntax problems, or null when no embedded grammar covers it. */
export async function syntaxProblems(loader: GrammarLoader, path: string, text: string): Promise<{ language: string; problems: SyntaxProblem[] } | null> {
  const spec = languageFor(path);
  if (!spec) return null;
  const grammar = await loader.parser(spec);
  const tree = grammar.parser.parse(text);
  if (!tree) return null;
  try {
    const problems: SyntaxProblem[] = [];
    collect(tree.rootNode, problems);
    return { language: spec.name, problems };
  } finally {
    tree.delete();
  }
}

function collect(node: Node, out: SyntaxProblem[]): void {
  if (node.isMissing) {
    out.push({ line: node.startPosition.row, what: `missing ${node.type}`, scopes: scopesOf(node) });
    return;
  }
  if (node.isError) {
    out.push({ line: node.startPosition.row, what: "syntax error", scopes: scopesOf(node) });
    return;
  }
  if (!node.hasError) return;
  for (const child of node.children) if (child) collect(child, out);
}

/** The first lines of the named nodes enclosing `node` that start on an earlier line. */
function scopesOf(node: Node): number[] {
  const rows = new Set<number>();
  for (let up = node.parent; up && up.parent; up = up.parent) {
    if (up.startPosition.row < node.startPosition.row && up.isNamed) rows.add(up.startPosition.row);
  }
  return [...rows].sort((a, b) => a - b);
}

/**
 * The problems of `after` that `before` did not have: a problem whose line reads the same
 * (trimmed) as a problem line of the file before the edit was already there.
 */
export function introducedProblems(afterText: string, after: readonly SyntaxProblem[], beforeText: string | null, before: readonly SyntaxProblem[]): SyntaxProblem[] {
  if (beforeText === null || before.length === 0) return [...after];
  const lineOf = (text: string) => {
    const lines = text.split("\n");
    return (p: SyntaxProblem) => `${p.what}\u0000${(lines[p.line] ?? "").trim()}`;
  };
  const old = new Map<string, number>();
  const keyBefore = lineOf(beforeText);
  for (const p of before) old.set(keyBefore(p), (old.get(keyBefore(p)) ?? 0) + 1);
  const keyAfter = lineOf(afterText);
  return after.filter((p) => {
    const k = keyAfter(p);
    const n = old.get(k) ?? 0;
    if (n === 0) return true;
    old.set(k, n - 1);
    return false;
  });
}

/**
 * The report of one file's problems: each problem on a line, then the file's problem lines
 * with their scope lines for context, the bad lines marked with █ and gaps with ⋮.
 */
export function renderSyntaxReport(path: string, language: string, text: string, problems: readonly SyntaxProblem[]): string {
  const lines = text.split("\n");
  const bad = new Set(problems.map((p) => p.line));
  const shown = new Set<number>();
  for (const p of problems) {
    for (const s of p.scopes) shown.add(s);
    shown.add(p.line);
  }
  const rows = [...shown].filter((r) => r < lines.length).sort((a, b) => a - b);
  const width = String((rows.at(-1) ?? 0) + 1).length;
  const listing: string[] = [];
  let previous = -1;
  for (const row of rows) {
    if (previous >= 0 && row > previous + 1) listing.push(`${" ".repeat(width + 1)}⋮`);
    listing.push(`${bad.has(row) ? "█" : " "}${String(row + 1).padStart(width)}│${lines[row]}`);
    previous = row;
  }
  if (rows.length && (rows.at(-1) as number) < lines.length - 1 && lines.slice((rows.at(-1) as number) + 1).some((l) => l.trim())) listing.push(`${" ".repeat(width + 1)}⋮`);
  const heads = [...new Map(problems.map((p) => [`${p.line}:${p.what}`, p])).values()].map((p) => `${path}:${p.line + 1}: ${p.what}`);
  return [`${path} does not parse as ${language}:`, ...heads, "", ...listing].join("\n");
}
