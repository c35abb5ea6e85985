// Tagging one file's source: content checks, then the tags query. Shared by the
// main thread (few changed files) and the worker pool (cold builds).
import type { GrammarLoader } from "../../grammars/runtime.ts";
import type { LanguageSpec } from "../../grammars/languages.ts";
import { skipByContent } from "./filter.ts";
import { encodeDefs, encodeRefs, extractTags } from "./tags.ts";

export interface TaggedSource {
  skipped: string;
  defs: string;
  refs: string;
}

export async function tagSource(loader: GrammarLoader, spec: LanguageSpec, text: string): Promise<TaggedSource> {
  const skipped = skipByContent(text);
  if (skipped) return { skipped, defs: "", refs: "" };
  let grammar;
  try {
    grammar = await loader.load(spec);
  } catch (error) {
    return { skipped: `grammar ${spec.name} failed to load: ${error instanceof Error ? error.message : String(error)}`, defs: "", refs: "" };
  }
  const tags = extractTags(grammar, text);
  return { skipped: "", defs: encodeDefs(tags.defs), refs: encodeRefs(tags.refs) };
}
