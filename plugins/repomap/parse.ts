// Tagging one file's source: content checks, then the tags query. Shared by the
// main thread (few changed files) and the worker pool (cold builds).
import type { GrammarLoader } from "../../grammars/runtime.ts";
import type { LanguageSpec } from "../../grammars/languages.ts";
import { parsedPart, skipByContent, type TaggedSource, untagged } from "./filter.ts";
import { encodeDefs, encodeRefKeys, encodeRefs, extractTags } from "./tags.ts";


/** What ranking sees of a file: its definition names (with repeats) and references, not their lines. */
export function rankingSignature(defNames: readonly string[], refs: string): string {
  return Bun.hash(defNames.join("\n") + "\u0000" + refs).toString(36);
}

export async function tagSource(loader: GrammarLoader, spec: LanguageSpec, text: string): Promise<TaggedSource> {
  const skipped = skipByContent(text);
  if (skipped) return untagged(skipped);
  let grammar;
  try {
    grammar = await loader.load(spec);
  } catch (error) {
    return untagged(`grammar ${spec.name} failed to load: ${error instanceof Error ? error.message : String(error)}`);
  }
  const tags = extractTags(grammar, parsedPart(text));
  if (!tags) return untagged("parse too slow");
  return {
    skipped: "",
    sig: rankingSignature(tags.defs.map((d) => d.name), encodeRefs(tags.refs)),
    defs: encodeDefs(tags.defs),
    names: tags.defs.map((d) => `${d.name}\t${d.line}`).join("\n"),
    refs: encodeRefKeys(tags.refs),
  };
}
