// Parity with Aider's repo-map fixtures (../shared/fixtures/aider/repomap):
// the sample code base must render exactly Aider's expected map, and each
// one-file language sample must give a map with its key symbol. Languages with
// no grammar in coder (no WASM on npm) must still list the file by name.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { countTokens } from "../core/chat/tokens.ts";
import { GRAMMAR_ASSETS, RUNTIME_WASM } from "../grammars/embedded.ts";
import { languageFor } from "../grammars/languages.ts";
import { memoryCacheStore } from "../core/edit/cache-store.ts";
import { CACHE_VERSION, TagCache } from "../plugins/repomap/cache.ts";
import { buildRepoMap } from "../plugins/repomap/map.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "shared", "fixtures", "aider", "repomap");
const present = existsSync(join(FIXTURES, "repomap_cases.json"));

interface Cases {
  sample_code_base: { files: string[]; expected: string; path_prefix_in_expected: string };
  languages: { lang: string; file: string; key_symbol: string }[];
}
const cases: Cases | null = present ? JSON.parse(readFileSync(join(FIXTURES, "repomap_cases.json"), "utf8")) : null;

async function mapOf(files: string[], budget: number): Promise<string> {
  const result = await buildRepoMap({
    root: FIXTURES,
    files,
    chatFiles: [],
    mentionedFiles: [],
    mentionedIdents: [],
    budget,
    // Aider's fixture was made with gpt-3.5-turbo's tokenizer.
    countTokens: (t) => countTokens(t, "cl100k_base"),
    cache: new TagCache(memoryCacheStore(CACHE_VERSION)),
    assets: async () => ({ runtime: RUNTIME_WASM, files: GRAMMAR_ASSETS }),
    warn: () => {},
    reuse: "none",
    workers: 0,
  });
  return result.text;
}

test.skipIf(!present)("the sample code base renders exactly Aider's expected map", async () => {
  const base = cases!.sample_code_base;
  const expected = readFileSync(join(FIXTURES, base.expected), "utf8").replaceAll(base.path_prefix_in_expected, "").trim();
  expect((await mapOf(base.files, 1024)).trim()).toBe(expected);
});

describe.skipIf(!present)("one-file language samples", () => {
  for (const c of cases?.languages ?? []) {
    const supported = languageFor(c.file) !== null;
    test(`${c.lang}: ${supported ? `the map shows ${c.key_symbol}` : "no grammar: listed by name"}`, async () => {
      const map = await mapOf([c.file], 1024);
      expect(map).toContain(basename(c.file));
      if (supported) {
        expect(map.trim().split("\n").length).toBeGreaterThan(1);
        expect(map).toContain(c.key_symbol);
      } else {
        expect(map.trim()).toBe(c.file);
      }
    });
  }
});
