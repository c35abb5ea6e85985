// The map end to end on real files in a temp folder: caching, changes, skips,
// and a corrupt or locked cache.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import { CACHE_FILE, memoryCacheStore, openCacheStore } from "../../core/edit/cache-store.ts";
import { CACHE_NAMESPACE, CACHE_VERSION, TagCache } from "./cache.ts";
import { testInput } from "../../tests/support/repomap-input.ts";
import { buildRepoMap, definitionHeaders, prepareRepoMap, type RepoMapInput } from "./map.ts";
import { decodeDefs, encodeDefs } from "./tags.ts";
import { reparseInBackground } from "./scan.ts";
import { estimateTokens } from "./render.ts";
import { countTokens } from "../../core/chat/tokens.ts";

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
  return testInput(root, Object.keys(SOURCES), cache, { warn: (m) => warnings.push(m), workers: 0, ...overrides });
}

test("builds a map of definitions; files without a grammar appear by name; binaries are left out", async () => {
  const root = repo(SOURCES);
  const result = await buildRepoMap(input(root, memoryTags()));
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
  const result = await buildRepoMap(input(root, memoryTags(), { chatFiles: ["app/main.py"], budget: 60 }));
  expect(result.text).not.toContain("app/main.py");
  expect(result.text).toContain("lib/total.py");
});

test("warm runs reuse the map; a changed file is reparsed alone and shows up", async () => {
  const root = repo(SOURCES);
  const dir = join(root, ".coder", "cache", "repomap");
  const first = await buildRepoMap(input(root, openTags(root, () => {})));
  expect(first.fromCache).toBe(false);
  const warm = await buildRepoMap(input(root, openTags(root, () => {})));
  expect(warm.fromCache).toBe(true);
  expect(warm.stats.parsed).toBe(0);
  expect(warm.text).toBe(first.text);
  // Lines move (a comment on top) but names stay: ranking is reused, lines are right.
  writeFileSync(join(root, "lib/total.py"), "# totals\n" + SOURCES["lib/total.py"]);
  const moved = await buildRepoMap(input(root, openTags(root, () => {})));
  expect(moved.stats.parsed).toBe(1);
  expect(moved.text).toContain("lib/total.py:\n⋮\n│def compute_total(store):");
  // A new definition.
  writeFileSync(join(root, "lib/total.py"), SOURCES["lib/total.py"] + "\ndef compute_discount(store):\n    return 0\n");
  const added = await buildRepoMap(input(root, openTags(root, () => {})));
  expect(added.stats.parsed).toBe(1);
  expect(added.text).toContain("│def compute_discount(store):");
});

test("the map cache key ignores message words but not chat files or budget", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const a = await buildRepoMap(input(root, cache));
  const b = await buildRepoMap(input(root, cache, { budget: 512 }));
  expect(b.fromCache).toBe(false);
  const c = await buildRepoMap(input(root, cache, { chatFiles: ["lib/store.py"] }));
  expect(c.fromCache).toBe(false);
  const again = await buildRepoMap(input(root, cache));
  expect(again.fromCache).toBe(true);
  expect(again.text).toBe(a.text);
});

test("a map served from the cache counts its tokens only when they are read, once", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const counted: string[] = [];
  const countTokens = (text: string) => {
    counted.push(text);
    return Math.ceil(text.length / 4);
  };
  await buildRepoMap(input(root, cache, { countTokens }));
  counted.length = 0;
  const warm = await buildRepoMap(input(root, cache, { countTokens }));
  expect(warm.fromCache).toBe(true);
  expect(counted).toEqual([]);
  const tokens = warm.tokens;
  expect(counted.length).toBeGreaterThan(0);
  expect(tokens).toBe(estimateTokens(warm.text, (text) => Math.ceil(text.length / 4)));
  expect(warm.tokens).toBe(tokens);
  expect({ ...warm }.tokens).toBe(tokens);
});

test("a corrupt cache is rebuilt with a warning", async () => {
  const root = repo(SOURCES);
  const dir = join(root, ".coder", "cache", "repomap");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, CACHE_FILE), "this is not a database".repeat(100));
  const warnings: string[] = [];
  const cache = openTags(root, (m) => warnings.push(m));
  expect(warnings.join("\n")).toContain("rebuilding");
  const result = await buildRepoMap(input(root, cache, {}, warnings));
  expect(result.text).toContain("class Store");
  const warm = await buildRepoMap(input(root, openTags(root, (m) => warnings.push(m))));
  expect(warm.fromCache).toBe(true);
});

test("a locked cache is bypassed with a warning, never a crash", async () => {
  const root = repo(SOURCES);
  const dir = join(root, ".coder", "cache", "repomap");
  openTags(root, () => {}).close();
  const holder = new Database(join(dir, CACHE_FILE));
  holder.exec("BEGIN EXCLUSIVE");
  try {
    const warnings: string[] = [];
    const cache = openTags(root, (m) => warnings.push(m), 50);
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
  const here = await buildRepoMap(input(root, memoryTags(), { reuse: "none" }));
  const pooled = await buildRepoMap(input(root, memoryTags(), { reuse: "none", workers: 2, poolThreshold: 1 }));
  expect(pooled.stats.workers).toBeGreaterThan(0);
  expect(pooled.text).toBe(here.text);
});

test("an aborted build stops parsing and rejects; the provider's next build starts from what was cached", async () => {
  const root = repo(SOURCES);
  const controller = new AbortController();
  controller.abort(new Error("interrupted"));
  const cache = memoryTags();
  await expect(buildRepoMap(input(root, cache, { signal: controller.signal, workers: 2 }))).rejects.toThrow("interrupted");
  const result = await buildRepoMap(input(root, cache));
  expect(result.text).toContain("class Store");
});

// ─── Changed chat files: older tags stand in, reparsed in the background ─────

const CHAT = "app/main.py";
/** The chat file now calls into web/ui.ts instead of lib/: its references change the ranking. */
const CHAT_EDITED = "from web.ui import renderCart\n\ndef main():\n    return renderCart(formatPrice(2))\n";

test("a changed chat file with cached tags: the map is built from those tags, not cached under the fresh key; the reparse makes the next build fresh", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const opts = { chatFiles: [CHAT], budget: 40 };
  const first = await buildRepoMap(input(root, cache, opts));
  expect(first.provisional).toBe(false);
  expect(first.text).toContain("lib/");
  expect(first.text).not.toContain("web/ui.ts:");

  writeFileSync(join(root, CHAT), CHAT_EDITED);
  const stale = await buildRepoMap(input(root, cache, { ...opts, deferChatFiles: true }));
  expect(stale.stats.parsed).toBe(0);
  expect(stale.provisional).toBe(true);
  expect(stale.deferred.map((e) => e.path)).toEqual([CHAT]);
  // The same names as last time: the same map, byte for byte.
  expect(stale.text).toBe(first.text);
  expect(cache.getMap(stale.key)).toBeNull();
  // Still stale: the tags were not replaced.
  expect(cache.fileMeta().get(CHAT)!.size).toBe(SOURCES[CHAT].length);

  const background = reparseInBackground(stale.deferred, { root, cache, assets: input(root, cache).assets });
  await background.done;
  expect(background.started).toBe(true);
  const row = cache.fileMeta().get(CHAT)!;
  expect(row.size).toBe(CHAT_EDITED.length);
  expect(row.mtime).toBe(statSync(join(root, CHAT)).mtimeMs);

  const fresh = await buildRepoMap(input(root, cache, { ...opts, deferChatFiles: true }));
  expect(fresh.stats.parsed).toBe(0);
  expect(fresh.provisional).toBe(false);
  expect(fresh.deferred).toEqual([]);
  expect(fresh.key).toBe(stale.key);
  expect(cache.getMap(fresh.key)).toBe(fresh.text);
  // Exactly what a build from scratch gives: the new references pulled web/ui.ts up.
  const scratch = await buildRepoMap(input(root, memoryTags(), opts));
  expect(fresh.text).toBe(scratch.text);
  expect(fresh.text).toContain("web/ui.ts:");
  expect(fresh.text).not.toBe(first.text);
});

test("older tags stand in only when the chat files are all that changed, and only when asked", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const opts = { chatFiles: [CHAT], budget: 40 };
  await buildRepoMap(input(root, cache, opts));
  writeFileSync(join(root, CHAT), CHAT_EDITED);
  const notAsked = await buildRepoMap(input(root, cache, opts));
  expect(notAsked.provisional).toBe(false);
  expect(notAsked.stats.parsed).toBe(1);

  writeFileSync(join(root, CHAT), CHAT_EDITED + "\n");
  writeFileSync(join(root, "lib/total.py"), "# totals\n" + SOURCES["lib/total.py"]);
  const both = await buildRepoMap(input(root, cache, { ...opts, deferChatFiles: true }));
  expect(both.provisional).toBe(false);
  expect(both.deferred).toEqual([]);
  expect(both.stats.parsed).toBe(2);
  expect(cache.getMap(both.key)).toBe(both.text);

  // A chat file never tagged before is parsed.
  const other = repo(SOURCES);
  const fresh = await buildRepoMap(input(other, memoryTags(), { ...opts, deferChatFiles: true }));
  expect(fresh.provisional).toBe(false);
  expect(fresh.stats.parsed).toBe(4);
});

test("the background reparse stores tags under the stat of the text it read; a vanished file leaves the older tags", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const opts = { chatFiles: [CHAT, "lib/total.py"], budget: 40 };
  await buildRepoMap(input(root, cache, opts));
  writeFileSync(join(root, CHAT), CHAT_EDITED);
  writeFileSync(join(root, "lib/total.py"), "# totals\n" + SOURCES["lib/total.py"]);
  const stale = await buildRepoMap(input(root, cache, { ...opts, deferChatFiles: true }));
  expect(stale.deferred.map((e) => e.path).sort()).toEqual([CHAT, "lib/total.py"]);
  // Edited again after the stat the map used, and one file gone: the reparse reads what is there now.
  writeFileSync(join(root, CHAT), CHAT_EDITED + "# more\n");
  rmSync(join(root, "lib/total.py"));
  const background = reparseInBackground(stale.deferred, { root, cache, assets: input(root, cache).assets });
  await background.done;
  const meta = cache.fileMeta();
  expect(meta.get(CHAT)!.size).toBe(CHAT_EDITED.length + "# more\n".length);
  expect(meta.get(CHAT)!.mtime).toBe(statSync(join(root, CHAT)).mtimeMs);
  expect(meta.get("lib/total.py")!.size).toBe(SOURCES["lib/total.py"].length);
});

test("a background reparse cancelled before it starts writes nothing and settles", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const opts = { chatFiles: [CHAT], budget: 40 };
  await buildRepoMap(input(root, cache, opts));
  writeFileSync(join(root, CHAT), CHAT_EDITED);
  const stale = await buildRepoMap(input(root, cache, { ...opts, deferChatFiles: true }));
  const background = reparseInBackground(stale.deferred, { root, cache, assets: input(root, cache).assets }, 60_000);
  expect(background.started).toBe(false);
  background.cancel();
  await background.done;
  expect(background.started).toBe(false);
  expect(cache.fileMeta().get(CHAT)!.size).toBe(SOURCES[CHAT].length);
  // A cache closed under a running reparse: the reply is dropped quietly.
  const closing = memoryTags();
  await buildRepoMap(input(root, closing, { ...opts, chatFiles: ["lib/store.py"] }));
  const running = reparseInBackground(stale.deferred, { root, cache: closing, assets: input(root, closing).assets });
  closing.close();
  await running.done;
});

test("a rendering is reused for the same ranking and the same shown files: a chat file's body edit re-renders nothing", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const opts = { chatFiles: [CHAT], budget: 40 };
  const first = await buildRepoMap(input(root, cache, opts));
  // Lines move in the chat file, names stay: parsed, same ranking, same rendering.
  writeFileSync(join(root, CHAT), "# entry point\n" + SOURCES[CHAT]);
  const edited = await buildRepoMap(input(root, cache, opts));
  expect(edited.stats.parsed).toBe(1);
  expect(edited.fromCache).toBe(true);
  expect(edited.text).toBe(first.text);
  expect(cache.getMap(edited.key)).toBe(first.text);
  // A shown file that changed is rendered again.
  writeFileSync(join(root, "lib/total.py"), "# totals\n" + SOURCES["lib/total.py"]);
  const moved = await buildRepoMap(input(root, cache, opts));
  expect(moved.fromCache).toBe(false);
  expect(moved.text).toBe((await buildRepoMap(input(root, memoryTags(), opts))).text);
});

test("a session's memory gives the same maps as fresh builds through edits, additions and removals, and keeps one compiled grammar", async () => {
  const { MapMemory } = await import("./memory.ts");
  const root = repo(SOURCES);
  const memory = new MapMemory();
  const cache = memoryTags();
  const files = [...Object.keys(SOURCES)];
  const session = (extra: Partial<RepoMapInput> = {}) => buildRepoMap(input(root, cache, { chatFiles: [CHAT], memory, files, ...extra }));
  const fresh = async () => (await buildRepoMap(input(root, memoryTags(), { chatFiles: [CHAT], files }))).text;
  await session();
  const loader = memory.loader;
  expect(loader).not.toBeNull();
  expect(memory.tags.size).toBeGreaterThan(0);

  writeFileSync(join(root, "lib/total.py"), SOURCES["lib/total.py"] + "\ndef compute_discount(store):\n    return 0\n");
  const added = await session();
  expect(added.stats.parsed).toBe(1);
  expect(added.text).toContain("compute_discount");
  expect(added.text).toBe(await fresh());
  expect(memory.loader).toBe(loader);

  writeFileSync(join(root, "lib/total.py"), "# moved\n" + SOURCES["lib/total.py"]);
  const moved = await session();
  expect(moved.text).toBe(await fresh());

  writeFileSync(join(root, "lib/extra.py"), "def extra_helper():\n    return compute_total(None)\n");
  files.push("lib/extra.py");
  expect((await session()).text).toBe(await fresh());
  files.splice(files.indexOf("lib/store.py"), 1);
  const removed = await session();
  expect(removed.text).not.toContain("lib/store.py");
  expect(removed.text).toBe(await fresh());
  expect(memory.meta?.has("lib/store.py")).toBe(false);

  // A background reparse of the chat file updates the memory: the next build parses nothing.
  writeFileSync(join(root, CHAT), CHAT_EDITED);
  const stale = await session({ deferChatFiles: true });
  expect(stale.provisional).toBe(true);
  await reparseInBackground(stale.deferred, { root, cache, assets: input(root, cache).assets, memory }).done;
  const after = await session();
  expect(after.stats.parsed).toBe(0);
  expect(after.text).toBe(await fresh());
});

test("of a file past PARSE_HEAD_CHARS only the head is parsed: its first definitions are tagged, later ones not", async () => {
  const { PARSE_HEAD_CHARS } = await import("./filter.ts");
  const filler = Array.from({ length: Math.ceil(PARSE_HEAD_CHARS / 8) }, (_, i) => `print(${i})\n`).join("");
  const files = { "big.py": `def head_function():\n    return 1\n\n${filler}\ndef tail_function():\n    return 2\n` };
  const root = repo(files);
  const result = await buildRepoMap(input(root, memoryTags(), { files: Object.keys(files) }));
  expect(result.text).toContain("│def head_function():");
  expect(result.text).not.toContain("tail_function");
});

test("after a warm-up the session's tagger parses an edited file (its grammar compiled ahead), giving what a fresh build gives", async () => {
  const { MapMemory } = await import("./memory.ts");
  const root = repo(SOURCES);
  const memory = new MapMemory();
  const cache = memoryTags();
  const files = Object.keys(SOURCES);
  await buildRepoMap(input(root, cache, { chatFiles: [CHAT], memory, files }));
  await memory.warmUp(cache, EMBEDDED_ASSETS, root, [CHAT]);
  try {
    expect(memory.tagger?.failed).toBe(false);
    expect(memory.tags.size).toBeGreaterThan(0);
    writeFileSync(join(root, "lib/total.py"), SOURCES["lib/total.py"] + "\ndef compute_discount(store):\n    return 0\n");
    const edited = await buildRepoMap(input(root, cache, { chatFiles: [CHAT], memory, files }));
    expect(edited.stats.parsed).toBe(1);
    expect(edited.stats.workers).toBe(1);
    expect(edited.text).toBe((await buildRepoMap(input(root, memoryTags(), { chatFiles: [CHAT], files }))).text);
  } finally {
    memory.close();
  }
  // A closed tagger is not used: the next build parses on this thread.
  writeFileSync(join(root, "lib/total.py"), "# again\n" + SOURCES["lib/total.py"]);
  const after = await buildRepoMap(input(root, cache, { chatFiles: [CHAT], memory, files }));
  expect(after.stats.parsed).toBe(1);
  expect(after.stats.workers).toBe(0);
});

test("a file's tags cached under another grammar table are parsed again; this table's rows stay fresh", async () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  await buildRepoMap(input(root, cache));
  const row = cache.fileMeta().get("lib/store.py")!;
  expect(row.version).toBe(GRAMMAR_TABLE_VERSION);
  const stat = statSync(join(root, "lib/store.py"));
  cache.putFiles([{ path: "lib/store.py", mtime: stat.mtimeMs, size: stat.size, version: GRAMMAR_TABLE_VERSION.replace("python=", "python=other-"), skipped: "", sig: row.sig, defs: "", names: "", refs: new Uint8Array(0) }], () => {});
  expect(cache.fileMeta().get("lib/store.py")!.version).not.toBe(GRAMMAR_TABLE_VERSION);
  const again = await buildRepoMap(input(root, cache, { reuse: "none" }));
  expect(again.stats.parsed).toBe(1);
  expect(again.text).toContain("│    def add_item(self, item):");
  expect(cache.fileMeta().get("lib/store.py")!.version).toBe(GRAMMAR_TABLE_VERSION);
});

/** A tag cache in memory, as a test's throwaway. */
function memoryTags(): TagCache {
  return new TagCache(memoryCacheStore(CACHE_VERSION));
}

/** The repository's tag cache through the kit's store (`.coder/cache/repomap/cache.sqlite`). */
function openTags(root: string, warn: (message: string) => void, busyTimeoutMs?: number): TagCache {
  return new TagCache(openCacheStore(root, CACHE_NAMESPACE, { version: CACHE_VERSION, warn, busyTimeoutMs }));
}

test("a chat file's resolved imports are kept while the listing and every file the resolution read are the same", async () => {
  const files = {
    "app/chat.ts": 'import { helperOne } from "../lib/one";\n\nexport function run() {\n  return helperOne();\n}\n',
    "lib/one.ts": "export function helperOne() {\n  return 1;\n}\n",
    "lib/two.ts": "export function helperTwo() {\n  return 2;\n}\n",
  };
  const root = repo(files);
  const cache = memoryTags();
  const build = (list = Object.keys(files)) => buildRepoMap(testInput(root, list, cache, { chatFiles: ["app/chat.ts"], workers: 0 }));
  const first = await build();
  expect(first.ranking![0]).toMatchObject({ path: "lib/one.ts", name: "helperOne" });
  const kept = JSON.parse(cache.getResolvedImports("app/chat.ts")!) as { l: string; s: [string, number, number][]; i: string };
  // The chat file and the file it imports (read for re-exports).
  expect(kept.s.map((s) => s[0])).toEqual(["app/chat.ts", "lib/one.ts"]);
  // A kept resolution that says lib/two.ts: used as long as what it read is unchanged (so it is not resolved again).
  const plant = () => {
    const now = JSON.parse(cache.getResolvedImports("app/chat.ts")!);
    cache.putResolvedImports("app/chat.ts", JSON.stringify({ ...now, i: JSON.stringify([["lib/two.ts", ["helperTwo"]]]) }));
  };
  plant();
  writeFileSync(join(root, "lib/two.ts"), files["lib/two.ts"] + "// touched\n");
  expect((await build()).ranking![0]).toMatchObject({ path: "lib/two.ts", name: "helperTwo" });
  // A file it read changed: resolved again.
  writeFileSync(join(root, "lib/one.ts"), files["lib/one.ts"] + "// touched\n");
  expect((await build()).ranking![0]).toMatchObject({ path: "lib/one.ts", name: "helperOne" });
  // The chat file changed: resolved again.
  plant();
  writeFileSync(join(root, "app/chat.ts"), files["app/chat.ts"] + "\nexport function extra() {\n  return 0;\n}\n");
  expect((await build()).ranking![0]).toMatchObject({ path: "lib/one.ts", name: "helperOne" });
  // Another listing (a file added): resolved again.
  plant();
  writeFileSync(join(root, "lib/three.ts"), "export const three = 3;\n");
  expect((await build([...Object.keys(files), "lib/three.ts"])).ranking![0]).toMatchObject({ path: "lib/one.ts", name: "helperOne" });
});

test("the state key follows every file's path, mtime and size (paths alone with --map-refresh files)", () => {
  const root = repo(SOURCES);
  const cache = memoryTags();
  const key = (overrides: Partial<RepoMapInput> = {}) => prepareRepoMap(input(root, cache, overrides)).stateKey;
  const path = join(root, "lib/total.py");
  // Whole seconds: set and set back exactly.
  const mtime = new Date(1_700_000_000_000);
  utimesSync(path, mtime, mtime);
  const before = key();
  expect(key()).toBe(before);
  utimesSync(path, mtime, new Date(mtime.getTime() + 1000));
  const touched = key();
  expect(touched).not.toBe(before);
  // The same size and mtime again: the same key.
  utimesSync(path, mtime, mtime);
  expect(key()).toBe(before);
  writeFileSync(path, SOURCES["lib/total.py"] + " ");
  utimesSync(path, mtime, mtime);
  expect(key()).not.toBe(before);
  // By paths alone: the same until the set of files changes.
  const files = key({ reuse: "files" });
  utimesSync(path, mtime, new Date(mtime.getTime() + 5000));
  expect(key({ reuse: "files" })).toBe(files);
  expect(key({ reuse: "files", files: Object.keys(SOURCES).filter((p) => p !== "lib/total.py") })).not.toBe(files);
});

test("a file's cached fields read back as written, a skip reason with a tab included", () => {
  const cache = memoryTags();
  const row = { mtime: 1764645123456.7893, size: 4096, version: GRAMMAR_TABLE_VERSION, sig: "abc123", defs: "", names: "", refs: new Uint8Array(0) };
  cache.putFiles([{ path: "a.py", ...row, skipped: "" }, { path: "b.bin", ...row, skipped: "unreadable: one\ttwo" }], () => {});
  expect(cache.fileMeta().get("a.py")).toEqual({ mtime: row.mtime, size: 4096, version: GRAMMAR_TABLE_VERSION, sig: "abc123", skipped: "" });
  expect(cache.fileMeta().get("b.bin")).toEqual({ mtime: row.mtime, size: 4096, version: GRAMMAR_TABLE_VERSION, sig: "abc123", skipped: "unreadable: one\ttwo" });
  // A row cut short reads as missing (the file is parsed again).
  cache.store.put("meta", "c.py", "1\t2\t#v");
  expect(cache.fileMeta().has("c.py")).toBe(false);
});

// ─── Kept estimates (FitMemo) and a stored ranking's first part ───────────────

/**
 * Python modules that call each other; `padded`: each definition line ends in a comment (no
 * names, no references: the same ranking either way), so that each shown entry takes ~25 tokens.
 */
function modules(count: number, padded: boolean): Record<string, string> {
  const files: Record<string, string> = {};
  const tail = (i: number) => (padded ? `  # ${"padding words ".repeat(4 + (i % 3))}` : "");
  for (let i = 0; i < count; i++) {
    const calls = [1, 2, 3].map((k) => `    helper_${(i * 7 + k * 13) % count}_a(x)`).join("\n");
    files[`pkg/mod_${String(i).padStart(3, "0")}.py`] =
      `def helper_${i}_a(x):${tail(i)}\n${calls}\n    return x\n\n\nclass Thing${i}:${tail(i + 1)}\n    def run_${i}(self, y):${tail(i + 2)}\n        return helper_${i}_a(y)\n\n\ndef helper_${i}_b():${tail(i)}\n    return Thing${i}()\n`;
  }
  // Huge lines and multibyte text in a module every other one calls.
  files["pkg/mod_000.py"] += `\n\ndef wide_名前():${"😀漢".repeat(60)}\n    return "${"😀漢".repeat(400)}"\n`;
  return files;
}

/** The path of the file whose first entry in the ranking comes last. */
function lastRanked(ranking: readonly { path: string }[]): string {
  const first = new Map<string, number>();
  ranking.forEach((e, i) => first.has(e.path) || first.set(e.path, i));
  return [...first].sort((a, b) => b[1] - a[1])[0]![0];
}

test("kept estimates give the map a build from scratch gives, at several budgets (cuts within a file), through edits; a build whose fit shows the same files counts no rendering", async () => {
  const files = modules(60, true);
  const root = repo(files);
  const paths = Object.keys(files);
  const chat = ["pkg/mod_005.py"];
  let unrendered = 0;
  let midFile = 0;
  for (const budget of [128, 700, 2500]) {
    const cache = memoryTags();
    const counted: string[] = [];
    const build = () =>
      buildRepoMap(input(root, cache, { files: paths, chatFiles: chat, budget, tokenizer: "test", countTokens: (t) => (counted.push(t), countTokens(t)) }));
    const scratch = async () => (await buildRepoMap(input(root, memoryTags(), { files: paths, chatFiles: chat, budget, reuse: "none" }))).text;
    const first = await build();
    expect(first.text).toBe(await scratch());
    // The cut falls within a file: one it shows has a ranked definition it does not show.
    const showsDef = (name: string) => first.text.includes(`${name}(`) || first.text.includes(`${name}:`);
    if (first.ranking!.some((e) => e.name && first.text.includes(`\n${e.path}:\n`) && !showsDef(e.name))) midFile++;
    // A definition nobody uses, in the file ranked last: the ranking key changes, the steps show the same files.
    const far = lastRanked(first.ranking!);
    writeFileSync(join(root, far), files[far] + `\n\ndef unused_${budget}():\n    return 0\n`);
    counted.length = 0;
    const added = await build();
    expect(added.fromCache).toBe(false);
    expect(added.text).toBe(await scratch());
    if (!first.text.includes(far)) {
      expect(counted.filter((t) => t.length > 256)).toEqual([]);
      unrendered++;
    }
    // Lines move in a shown file (a comment on top): its steps are estimated again.
    const shown = paths.find((p) => added.text.includes(`\n${p}:\n`) && p !== "pkg/mod_000.py")!;
    writeFileSync(join(root, shown), "# moved\n" + files[shown]);
    counted.length = 0;
    const moved = await build();
    expect(moved.text).toBe(await scratch());
    expect(counted.filter((t) => t.length > 256).length).toBeGreaterThan(0);
    // A file added, one removed.
    writeFileSync(join(root, "pkg/extra.py"), "def helper_5_a(x):\n    return x\n");
    paths.push("pkg/extra.py");
    expect((await build()).text).toBe(await scratch());
    paths.splice(paths.indexOf(shown), 1);
    expect((await build()).text).toBe(await scratch());
    // Back as they were, for the next budget.
    writeFileSync(join(root, far), files[far]!);
    writeFileSync(join(root, shown), files[shown]!);
    paths.splice(paths.indexOf("pkg/extra.py"), 1, shown);
    rmSync(join(root, "pkg/extra.py"));
  }
  expect(unrendered).toBe(2);
  expect(midFile).toBeGreaterThan(0);
});

test("estimates are kept per tokenizer and per file state: planted under the keys of files that changed since, or of another tokenizer, they are not used", async () => {
  const files = modules(40, true);
  const root = repo(files);
  const paths = Object.keys(files);
  const cache = memoryTags();
  const budget = 600;
  const opts = { files: paths, chatFiles: ["pkg/mod_003.py"], budget, tokenizer: "o200k_base" };
  const scratch = async () => (await buildRepoMap(input(root, memoryTags(), { ...opts, reuse: "none" }))).text;
  const first = await buildRepoMap(input(root, cache, opts));
  // Every estimate the memo holds replaced by the budget itself (a fit takes the first step it knows).
  const store = cache.store;
  const plant = () => {
    let planted = 0;
    for (const [key, value] of store.entries("maps")) {
      if (!key.startsWith("fit|")) continue;
      const row = JSON.parse(value as string) as { e: [string, number][]; c: [string, number][] };
      store.put("maps", key, JSON.stringify({ e: row.e.map(([k]) => [k, budget]), c: row.c }));
      planted += row.e.length;
    }
    expect(planted).toBeGreaterThan(0);
  };
  const far = lastRanked(first.ranking!);
  const edit = (i: number) => writeFileSync(join(root, far), files[far] + `\n\ndef unused_${i}():\n    return 0\n`);
  // Planted under keys that still hold, they are used (what makes the next two checks mean something).
  plant();
  edit(1);
  expect((await buildRepoMap(input(root, cache, opts))).text).not.toBe(await scratch());
  // Another tokenizer: another memo.
  plant();
  edit(2);
  expect((await buildRepoMap(input(root, cache, { ...opts, tokenizer: "cl100k_base" }))).text).toBe(await scratch());
  // Every file's stat changed (the same text): no key holds.
  plant();
  edit(3);
  const later = new Date(Date.now() + 5000);
  for (const path of paths) utimesSync(join(root, path), later, later);
  expect((await buildRepoMap(input(root, cache, opts))).text).toBe(await scratch());
});

test("a fitted map is kept under its tokenizer: the same cache, asked for another tokenizer's map, gives that one's fit, by the state's key and by the rendering's", async () => {
  const files = modules(60, true);
  const root = repo(files);
  const paths = Object.keys(files);
  const cache = memoryTags();
  const chat = "pkg/mod_005.py";
  const opts = { files: paths, chatFiles: [chat], budget: 800 };
  // A counter of another tokenizer: half the tokens, so twice the definitions fit.
  const half = { tokenizer: "half", countTokens: (t: string) => Math.ceil(countTokens(t) / 2) };
  const scratch = async (counter: Partial<RepoMapInput>) => (await buildRepoMap(input(root, memoryTags(), { ...opts, ...counter, reuse: "none" }))).text;
  const whole = await buildRepoMap(input(root, cache, opts));
  const halved = await buildRepoMap(input(root, cache, { ...opts, ...half }));
  expect(halved.text).toBe(await scratch(half));
  expect(halved.text).not.toBe(whole.text);
  // The chat file's body changes, its names stay: a new state, the same ranking and shown files (the rendering's key).
  writeFileSync(join(root, chat), files[chat] + "\n# a comment\n");
  const rendered = await buildRepoMap(input(root, cache, opts));
  expect(rendered.fromCache).toBe(true);
  expect(rendered.text).toBe(whole.text);
  expect((await buildRepoMap(input(root, cache, { ...opts, ...half }))).text).toBe(halved.text);
});

test("a stored ranking's first part serves a later fit that stays within it; a fit that steps past it ranks again: both the map from scratch", async () => {
  const files = modules(150, true);
  const root = repo(files);
  const paths = Object.keys(files);
  const cache = memoryTags();
  const opts = { files: paths, chatFiles: ["pkg/mod_010.py"], budget: 200 };
  const scratch = async () => (await buildRepoMap(input(root, memoryTags(), { ...opts, reuse: "none" }))).text;
  const first = await buildRepoMap(input(root, cache, opts));
  expect(first.ranking!.length).toBeGreaterThan(300);
  // Lines move in a shown file: the same ranking key, a fit within the stored part.
  const shown = paths.find((p) => first.text.includes(`\n${p}:\n`))!;
  writeFileSync(join(root, shown), "# moved\n\n" + files[shown]);
  const moved = await buildRepoMap(input(root, cache, opts));
  expect(moved.stats.ranking).toBe("reused");
  expect(moved.ranking!.length).toBeLessThan(first.ranking!.length / 2);
  expect(moved.text).toBe(await scratch());
  // The comments go (names and references stay): each entry takes fewer tokens, the fit
  // steps past the stored part, and the ranking is built again.
  const bare = modules(150, false);
  for (const path of paths) writeFileSync(join(root, path), bare[path]!);
  const shrunk = await buildRepoMap(input(root, cache, opts));
  expect(shrunk.stats.ranking).not.toBe("reused");
  expect(shrunk.text).toBe(await scratch());
});

test("the header ranges read for the shown lines are what decoding every definition and filtering them gives, odd rows included", () => {
  let state = 9;
  const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  for (let round = 0; round < 200; round++) {
    const defs = Array.from({ length: Math.floor(next() * 12) }, (_, i) => ({
      name: `name${i}`,
      line: Math.floor(next() * 20),
      kind: next() < 0.5 ? "function" : "class",
      show: Array.from({ length: Math.floor(next() * 3) }, () => {
        const a = Math.floor(next() * 20);
        return [a, a + 1 + Math.floor(next() * 4)] as [number, number];
      }),
    }));
    let encoded = encodeDefs(defs);
    // Rows another writer could leave: no fields, a line only, an empty line field.
    if (next() < 0.3) encoded += "\nlonely";
    if (next() < 0.3) encoded += "\nx\t7";
    if (next() < 0.3) encoded += "\ny\t\tfunction\t3-4";
    const lines = new Set(Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * 20)));
    if (next() < 0.2) lines.add(0);
    const expected = decodeDefs(encoded)
      .filter((d) => lines.has(d.line))
      .flatMap((d) => d.show);
    expect(definitionHeaders(encoded, lines)).toEqual(expected);
  }
});

test("a stored ranking reused after a file of it moved its lines in a build between takes that file's lines from its tags now: the map from scratch", async () => {
  const files = modules(60, true);
  const root = repo(files);
  const paths = Object.keys(files);
  const cache = memoryTags();
  const opts = { files: paths, chatFiles: ["pkg/mod_005.py"], budget: 700 };
  const scratch = async () => (await buildRepoMap(input(root, memoryTags(), { ...opts, reuse: "none" }))).text;
  // 1: the ranking of these names is stored.
  const first = await buildRepoMap(input(root, cache, opts));
  const far = lastRanked(first.ranking!);
  const shown = paths.find((p) => first.text.includes(`\n${p}:\n`) && p !== far)!;
  // 2: a definition added elsewhere: another ranking.
  writeFileSync(join(root, far), files[far] + "\n\ndef unused_one():\n    return 0\n");
  expect((await buildRepoMap(input(root, cache, opts))).text).toBe(await scratch());
  // 3: lines move in a shown file (parsed now, relined).
  writeFileSync(join(root, shown), "# moved\n\n\n" + files[shown]);
  expect((await buildRepoMap(input(root, cache, opts))).text).toBe(await scratch());
  // 4: the definition goes again: the names of step 1, whose stored ranking has the shown file's old lines.
  writeFileSync(join(root, far), files[far]!);
  const back = await buildRepoMap(input(root, cache, opts));
  expect(back.stats.ranking).toBe("reused");
  expect(back.text).toBe(await scratch());
});
