// The map end to end on real files in a temp folder: caching, changes, skips,
// and a corrupt or locked cache.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "../../core/tokens.ts";
import { GRAMMAR_ASSETS, RUNTIME_WASM } from "../../grammars/embedded.ts";
import { TagCache } from "./cache.ts";
import { buildRepoMap, type RepoMapInput } from "./map.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function repo(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-"));
  dirs.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const SOURCES = {
  "app/main.py": "from lib.store import Store\n\ndef main():\n    store = Store()\n    store.add_item(1)\n    return compute_total(store)\n",
  "lib/store.py": "class Store:\n    def __init__(self):\n        self.items = []\n\n    def add_item(self, item):\n        self.items.append(item)\n",
  "lib/total.py": "def compute_total(store):\n    return sum(store.items)\n",
  "web/ui.ts": "export function renderCart(total: number): string {\n  return formatPrice(total);\n}\nexport function formatPrice(n: number) {\n  return n.toFixed(2);\n}\n",
  "README.md": "# shop\n",
  "docs/notes.txt": "notes\n",
  "assets/logo.png": new Uint8Array([137, 80, 78, 71, 0, 0, 0]),
  "web/vendor.min.js": "var a=1;".repeat(2000),
};

function input(root: string, cache: TagCache, overrides: Partial<RepoMapInput> = {}, warnings: string[] = []): RepoMapInput {
  return {
    root,
    files: Object.keys(SOURCES),
    chatFiles: [],
    mentionedFiles: [],
    mentionedIdents: [],
    budget: 1024,
    countTokens: (t) => countTokens(t),
    cache,
    assets: async () => ({ runtime: RUNTIME_WASM, files: GRAMMAR_ASSETS }),
    warn: (m) => warnings.push(m),
    reuse: "state",
    workers: 0,
    ...overrides,
  };
}

test("builds a map of definitions; files without a grammar appear by name; binaries are left out", async () => {
  const root = repo(SOURCES);
  const result = await buildRepoMap(input(root, TagCache.memory()));
  expect(result.text).toContain("lib/store.py:\n│class Store:");
  expect(result.text).toContain("│    def add_item(self, item):");
  expect(result.text).toContain("web/ui.ts:");
  expect(result.text).toContain("\nREADME.md\n");
  expect(result.text).toContain("\ndocs/notes.txt\n");
  expect(result.text).toContain("\nweb/vendor.min.js\n");
  expect(result.text).not.toContain("logo.png");
  expect(result.stats.parsed).toBe(4);
});

test("chat files are left out of the map and pull up what they reference", async () => {
  const root = repo(SOURCES);
  const result = await buildRepoMap(input(root, TagCache.memory(), { chatFiles: ["app/main.py"], budget: 60 }));
  expect(result.text).not.toContain("app/main.py");
  expect(result.text).toContain("lib/total.py");
});

test("warm runs reuse the map; a changed file is reparsed alone and shows up", async () => {
  const root = repo(SOURCES);
  const dir = join(root, ".coder", "cache", "repomap");
  const first = await buildRepoMap(input(root, TagCache.open(dir, () => {})));
  expect(first.fromCache).toBe(false);
  const warm = await buildRepoMap(input(root, TagCache.open(dir, () => {})));
  expect(warm.fromCache).toBe(true);
  expect(warm.stats.parsed).toBe(0);
  expect(warm.text).toBe(first.text);
  // Lines move (a comment on top) but names stay: ranking is reused, lines are right.
  writeFileSync(join(root, "lib/total.py"), "# totals\n" + SOURCES["lib/total.py"]);
  const moved = await buildRepoMap(input(root, TagCache.open(dir, () => {})));
  expect(moved.stats.parsed).toBe(1);
  expect(moved.text).toContain("lib/total.py:\n⋮\n│def compute_total(store):");
  // A new definition.
  writeFileSync(join(root, "lib/total.py"), SOURCES["lib/total.py"] + "\ndef compute_discount(store):\n    return 0\n");
  const added = await buildRepoMap(input(root, TagCache.open(dir, () => {})));
  expect(added.stats.parsed).toBe(1);
  expect(added.text).toContain("│def compute_discount(store):");
});

test("the map cache key ignores message words but not chat files or budget", async () => {
  const root = repo(SOURCES);
  const cache = TagCache.memory();
  const a = await buildRepoMap(input(root, cache));
  const b = await buildRepoMap(input(root, cache, { budget: 512 }));
  expect(b.fromCache).toBe(false);
  const c = await buildRepoMap(input(root, cache, { chatFiles: ["lib/store.py"] }));
  expect(c.fromCache).toBe(false);
  const again = await buildRepoMap(input(root, cache));
  expect(again.fromCache).toBe(true);
  expect(again.text).toBe(a.text);
});

test("a corrupt cache is rebuilt with a warning", async () => {
  const root = repo(SOURCES);
  const dir = join(root, ".coder", "cache", "repomap");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tags.sqlite"), "this is not a database".repeat(100));
  const warnings: string[] = [];
  const cache = TagCache.open(dir, (m) => warnings.push(m));
  expect(warnings.join("\n")).toContain("rebuilding");
  const result = await buildRepoMap(input(root, cache, {}, warnings));
  expect(result.text).toContain("class Store");
  const warm = await buildRepoMap(input(root, TagCache.open(dir, (m) => warnings.push(m))));
  expect(warm.fromCache).toBe(true);
});

test("a locked cache is bypassed with a warning, never a crash", async () => {
  const root = repo(SOURCES);
  const dir = join(root, ".coder", "cache", "repomap");
  TagCache.open(dir, () => {}).close();
  const holder = new Database(join(dir, "tags.sqlite"));
  holder.exec("BEGIN EXCLUSIVE");
  try {
    const warnings: string[] = [];
    const cache = TagCache.open(dir, (m) => warnings.push(m), 50);
    const result = await buildRepoMap(input(root, cache, {}, warnings));
    expect(result.text).toContain("class Store");
    expect(warnings.length).toBeGreaterThan(0);
  } finally {
    holder.exec("ROLLBACK");
    holder.close();
  }
});

test("the worker pool gives the same tags as this thread", async () => {
  const root = repo(SOURCES);
  const here = await buildRepoMap(input(root, TagCache.memory(), { reuse: "none" }));
  const pooled = await buildRepoMap(input(root, TagCache.memory(), { reuse: "none", workers: 2, poolThreshold: 1 }));
  expect(pooled.stats.workers).toBeGreaterThan(0);
  expect(pooled.text).toBe(here.text);
});

test("an aborted build stops parsing and rejects; the provider's next build starts from what was cached", async () => {
  const root = repo(SOURCES);
  const controller = new AbortController();
  controller.abort(new Error("interrupted"));
  const cache = TagCache.memory();
  await expect(buildRepoMap(input(root, cache, { signal: controller.signal, workers: 2 }))).rejects.toThrow("interrupted");
  const result = await buildRepoMap(input(root, cache));
  expect(result.text).toContain("class Store");
});
