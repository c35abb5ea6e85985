// How close a history task's result is to the commit's real change: exact (the same bytes),
// equivalent (the same syntax tree per file with the embedded grammars, whitespace and comments
// aside) and the F1 of changed lines (how much of the real change the model made, and how much
// else it did).
import { languageFor } from "../../grammars/languages.ts";
import type { GrammarLoader } from "../../grammars/runtime.ts";

let loader: Promise<GrammarLoader> | null = null;

function grammars(): Promise<GrammarLoader> {
  loader ??= (async () => {
    const [{ GrammarLoader }, { EMBEDDED_ASSETS }] = await Promise.all([import("../../grammars/runtime.ts"), import("../../grammars/embedded.ts")]);
    return new GrammarLoader(EMBEDDED_ASSETS);
  })();
  return loader;
}

/**
 * A file's shape for comparison: its syntax tree's leaves (type and text) and node kinds in
 * order, comments left out; without a grammar (or when it fails to load), its text with every
 * run of whitespace made one space.
 */
export async function shapeOf(path: string, text: string): Promise<string> {
  const spec = languageFor(path);
  if (spec) {
    try {
      const parser = (await (await grammars()).parser(spec)).parser;
      const tree = parser.parse(text);
      if (tree) {
        try {
          const parts: string[] = [];
          const cursor = tree.walk();
          // Depth-first over every node: named kinds open, leaves carry their text.
          let done = false;
          while (!done) {
            const node = cursor.currentNode;
            const comment = node.type.includes("comment");
            if (!comment) parts.push(node.childCount === 0 ? `${node.type}=${node.text}` : `(${node.type}`);
            if (!comment && cursor.gotoFirstChild()) continue;
            if (!comment && node.childCount > 0) parts.push(")");
            while (!cursor.gotoNextSibling()) {
              if (!cursor.gotoParent()) {
                done = true;
                break;
              }
              parts.push(")");
            }
          }
          return parts.join("\u0000");
        } finally {
          tree.delete();
        }
      }
    } catch {
      // The grammar did not load: compare the text instead.
    }
  }
  return text.replace(/\s+/g, " ").trim();
}

/** The same program, whitespace and comments aside (both missing counts as the same). */
export async function equivalent(path: string, ours: string | null, real: string | null): Promise<boolean> {
  if (ours === null || real === null) return ours === real;
  if (ours === real) return true;
  return (await shapeOf(path, ours)) === (await shapeOf(path, real));
}

/** The changed lines of a unified diff, as "-text" and "+text" (headers and context left out). */
export function changedLines(unified: string): string[] {
  const out: string[] = [];
  for (const line of unified.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---")) continue;
    if (line.startsWith("+") || line.startsWith("-")) out.push(line);
  }
  return out;
}

/** The F1 of two multisets of changed lines: 1 when both are empty, 0 when only one is. */
export function lineF1(ours: readonly string[], real: readonly string[]): number {
  if (ours.length === 0 && real.length === 0) return 1;
  if (ours.length === 0 || real.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const line of real) counts.set(line, (counts.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of ours) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      common++;
      counts.set(line, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / ours.length;
  const recall = common / real.length;
  return (2 * precision * recall) / (precision + recall);
}
