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
import { buildRepoMap, prepareRepoMap, type RepoMapInput } from "./map.ts";
import { reparseInBackground } from "./scan.ts";
import { estimateTokens } from "./render.ts";

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
