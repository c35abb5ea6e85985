// The input of a repo-map build as the tests give it: the files, no
// chat files, 1,024 tokens, the real token counter (named, so its counts are kept: map.ts
// FitMemo) and the embedded grammars, warnings dropped, the state cache reused; `overrides`
// changes any of it (another counter is unnamed unless a tokenizer is given too).
import { readFileSync, writeFileSync } from "node:fs";
import { countTokens } from "../../core/chat/tokens.ts";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import type { TagCache } from "../../plugins/repomap/cache.ts";
import type { RepoMapInput } from "../../plugins/repomap/map.ts";

export function testInput(root: string, files: readonly string[], cache: TagCache, overrides: Partial<RepoMapInput> = {}): RepoMapInput {
  return {
    root,
    files: [...files],
    chatFiles: [],
    mentionedFiles: [],
    mentionedIdents: [],
    budget: 1024,
    countTokens: (t) => countTokens(t),
    tokenizer: overrides.countTokens && !("tokenizer" in overrides) ? undefined : "o200k_base",
    cache,
    assets: async () => EMBEDDED_ASSETS,
    warn: () => {},
    reuse: "state",
    ...overrides,
  };
}

/** Removes a Python file's first top-level function (from its `def` to the blank line after it): a definition removed. */
export function removeFirstPythonDef(path: string): void {
  const text = readFileSync(path, "utf8");
  const at = text.indexOf("\ndef ");
  const end = text.indexOf("\n\n", at + 1);
  writeFileSync(path, text.slice(0, at) + text.slice(end));
}
