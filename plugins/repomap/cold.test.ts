import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "../../core/chat/tokens.ts";
import { memoryCacheStore } from "../../core/edit/cache-store.ts";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { generateRepo, type GeneratedRepo } from "../../scripts/gen-repo.ts";
import { CACHE_VERSION, TagCache } from "./cache.ts";
import { buildRepoMap, type RepoMapInput } from "./map.ts";
import { parseInBackground } from "./scan.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function generated(count: number): { root: string; repo: GeneratedRepo } {
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-cold-"));
  dirs.push(root);
  return { root, repo: generateRepo(root, count, 7) };
}

function input(root: string, files: readonly string[], cache: TagCache, overrides: Partial<RepoMapInput> = {}): RepoMapInput {
  return {
    root,
    files,
    chatFiles: [],
    mentionedFiles: [],
    mentionedIdents: [],
    budget: 1024,
    countTokens: (t) => countTokens(t),
    cache,
    assets: async () => EMBEDDED_ASSETS,
    warn: () => {},
    reuse: "state",
    workers: 1,
    ...overrides,
  };
}

const tags = () => new TagCache(memoryCacheStore(CACHE_VERSION));

/** The files a map shows with an excerpt (a `path:` line followed by excerpt lines). */
function shownFiles(text: string): Set<string> {
  const shown = new Set<string>();
  const lines = text.split("\n");
  for (let i = 0; i + 1 < lines.length; i++) if (lines[i]!.endsWith(":") && /^[│⋮]/.test(lines[i + 1]!)) shown.add(lines[i]!.slice(0, -1));
  return shown;
}

test("a cold first map parses the chat file's imported neighbours first and shows what a full parse shows of them; the rest waits", async () => {
  const { root, repo } = generated(400);
  const chat = repo.files.find((f) => (repo.imports.get(f)?.length ?? 0) >= 3)!;
  const imported = new Set(repo.imports.get(chat)!.map((i) => i.file));
  const cold = await buildRepoMap(input(root, repo.files, tags(), { chatFiles: [chat], coldFirst: 0 }));
  expect(cold.provisional).toBe(true);
  expect(cold.pending.length).toBeGreaterThan(200);
  const pending = new Set(cold.pending.map((e) => e.path));
  for (const file of imported) expect(pending.has(file)).toBe(false);
  expect(pending.has(chat)).toBe(false);
  expect(cold.stats.parsed).toBeLessThan(repo.files.length / 2);
  // Every imported file the full map shows, the cold map shows too.
  const full = await buildRepoMap(input(root, repo.files, tags(), { chatFiles: [chat] }));
  expect(full.pending).toEqual([]);
  const fullImported = [...shownFiles(full.text)].filter((f) => imported.has(f));
  expect(fullImported.length).toBeGreaterThan(0);
  const coldShown = shownFiles(cold.text);
  expect(fullImported.filter((f) => !coldShown.has(f))).toEqual([]);
  // Files not parsed yet show no definitions.
  for (const file of coldShown) expect(pending.has(file)).toBe(false);
});

test("the background parse fills the cache: the next build is warm and is the full map", async () => {
  const { root, repo } = generated(300);
  const chat = repo.files.find((f) => (repo.imports.get(f)?.length ?? 0) >= 2)!;
  const cache = tags();
  const cold = await buildRepoMap(input(root, repo.files, cache, { chatFiles: [chat], coldFirst: 0 }));
  expect(cold.pending.length).toBeGreaterThan(0);
  // Not cached under the state's key: the next build does not take the provisional map for the full one.
  const background = parseInBackground(cold.pending, { root, cache, assets: async () => EMBEDDED_ASSETS, workers: 2 });
  await background.hold();
  expect(background.stored).toBe(cold.pending.length);
  const warm = await buildRepoMap(input(root, repo.files, cache, { chatFiles: [chat], coldFirst: 0 }));
  expect(warm.stats.parsed).toBe(0);
  expect(warm.pending).toEqual([]);
  expect(warm.provisional).toBe(false);
  const full = await buildRepoMap(input(root, repo.files, tags(), { chatFiles: [chat], reuse: "none" }));
  expect(warm.text).toBe(full.text);
});

test("below the threshold a cold build parses everything, as before", async () => {
  const { root, repo } = generated(120);
  const result = await buildRepoMap(input(root, repo.files, tags(), { coldFirst: 10_000 }));
  expect(result.pending).toEqual([]);
  expect(result.provisional).toBe(false);
});

test("a cancelled background parse stops and settles; what it stored stays valid", async () => {
  const { root, repo } = generated(300);
  const cache = tags();
  const cold = await buildRepoMap(input(root, repo.files, cache, { coldFirst: 0 }));
  const background = parseInBackground(cold.pending, { root, cache, assets: async () => EMBEDDED_ASSETS, workers: 1 }, 60_000);
  expect(background.started).toBe(false);
  background.cancel();
  await background.done;
  expect(background.stored).toBe(0);
  const next = await buildRepoMap(input(root, repo.files, cache));
  expect(next.pending).toEqual([]);
  expect(next.stats.parsed).toBe(cold.pending.length);
});
