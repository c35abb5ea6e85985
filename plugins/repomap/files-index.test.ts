// The tag cache's stored index of every file's row (cache.ts FileIndex) and the tagger
// that parses ahead (memory.ts tagAhead): each must give what the rows and a parse give,
// whatever another cache handle (another process) wrote in between.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import { memoryCacheStore, openCacheStore } from "../../core/edit/cache-store.ts";
import { CACHE_NAMESPACE, CACHE_VERSION, TagCache, type CachedFile, type FileMeta } from "./cache.ts";
import { testInput } from "../../tests/support/repomap-input.ts";
import { buildRepoMap, type RepoMapInput } from "./map.ts";
import { MapMemory, TAG_AHEAD_FILES } from "./memory.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SOURCES: Record<string, string> = {
  "app/main.py": "from lib.store import Store\n\ndef main():\n    store = Store()\n    store.add_item(1)\n    return compute_total(store)\n",
  "lib/store.py": "class Store:\n    def __init__(self):\n        self.items = []\n\n    def add_item(self, item):\n        self.items.append(item)\n",
  "lib/total.py": "def compute_total(store):\n    return sum(store.items)\n",
  "web/ui.ts": "export function renderCart(total: number): string {\n  return formatPrice(total);\n}\nexport function formatPrice(n: number) {\n  return n.toFixed(2);\n}\n",
  "web/cart.ts": "import { renderCart } from './ui';\nexport function showCart() {\n  return renderCart(3);\n}\n",
  "README.md": "# shop\n",
};

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "coder-files-index-"));
  dirs.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** A handle on the repository's cache file, as another process would open it. */
function openTags(root: string): TagCache {
  return new TagCache(openCacheStore(root, CACHE_NAMESPACE, { version: CACHE_VERSION, warn: () => {} }));
}

function input(root: string, files: readonly string[], cache: TagCache, overrides: Partial<RepoMapInput> = {}): RepoMapInput {
  return testInput(root, files, cache, { workers: 0, reuse: "none", ...overrides });
}

/** The map a build from an empty cache gives for the tree as it is. */
async function scratch(root: string, files: readonly string[]): Promise<string> {
  return (await buildRepoMap(input(root, files, new TagCache(memoryCacheStore(CACHE_VERSION))))).text;
}

function sorted(entries: Iterable<[string, FileMeta]>): [string, FileMeta][] {
  return [...entries].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

function row(path: string, mtime: number, sig: string, extra: Partial<CachedFile> = {}): CachedFile {
  return { path, mtime, size: 10, version: GRAMMAR_TABLE_VERSION, skipped: "", sig, defs: "", names: "", refs: new Uint8Array(0), ...extra };
}

test("the stored index reads back as the rows through writes, prunes, a delta stored again whole, other grammar tables and odd fields; a fresh handle reads it, not the rows", () => {
  const root = repo({});
  const writer = openTags(root);
  writer.fileMeta();
  const other = GRAMMAR_TABLE_VERSION.replace("python=", "python=other-");
  // Past the delta's bound, so the whole index is stored again on the way.
  const many = Array.from({ length: 2500 }, (_, i) => row(`pkg/f${i}.py`, 1764645123456.789 + i, `s${i}`));
  const steps: (() => void)[] = [
    () => writer.putFiles(many.slice(0, 700), () => {}),
    () => writer.putFiles([row("a.py", 5, "x", { skipped: "unreadable: one\ttwo\nthree" }), row("b.py", 6, "y", { version: other })], () => {}),
    () => writer.prune(["pkg/f3.py", "pkg/f5.py", "a.py"]),
    () => writer.putFiles(many.slice(700), () => {}),
    // A skip reason the index cannot hold, over the base's entry of that file: the older entry must not stand.
    () => writer.putFiles([row("pkg/f3.py", 9, "back"), row("ünï cödé/ü.py", 7, "u"), row("nul\0.py", 8, "n"), row("lone\ud800.py", 8, "s"), row("pkg/f2.py", 11, "z", { skipped: "bad\0reason" })], () => {}),
    () => writer.prune(["pkg/f1000.py"]),
  ];
  for (const step of steps) {
    step();
    const fresh = openTags(root);
    const rows = fresh.metaRows();
    // A path the index cannot hold reads as not cached (it is parsed again), never as another entry
    // (the rows keep the lone surrogate's path as U+FFFD: a path no file of those tags has).
    const expected = sorted([...rows].filter(([path, meta]) => path !== "nul\0.py" && path !== "lone\ufffd.py" && !meta.skipped.includes("\0")));
    expect(sorted(fresh.fileMeta().entries())).toEqual(expected);
    const index = openTags(root).fileMeta();
    expect(index.size).toBe(expected.length);
    for (const [path, meta] of expected) expect(index.get(path)).toEqual(meta);
    fresh.close();
  }
  const index = openTags(root).fileMeta();
  expect(index.get("b.py")!.version).not.toBe(GRAMMAR_TABLE_VERSION);
  expect(index.fresh("b.py", 6, 10)).toBeNull();
  expect(index.fresh("pkg/f3.py", 9, 10)).toEqual({ sig: "back", skipped: "" });
  expect(index.fresh("pkg/f3.py", 9, 11)).toBeNull();
  expect(index.has("pkg/f5.py")).toBe(false);
  // Read from the index: the rows dropped behind the cache's back (no token change) still read.
  writer.store.delete("meta", [...writer.metaRows().keys()]);
  expect(openTags(root).fileMeta().get("pkg/f7.py")).toEqual({ mtime: many[7]!.mtime, size: 10, version: GRAMMAR_TABLE_VERSION, sig: "s7", skipped: "" });
  writer.close();
});

test("a handle whose view another handle's write made stale stores the index as the rows are, not its view; with no current index it stores none", () => {
  const root = repo({});
  const first = openTags(root);
  first.fileMeta();
  first.putFiles([row("a.py", 1, "a1"), row("b.py", 1, "b1"), row("c.py", 1, "c1")], () => {});
  const one = openTags(root);
  const two = openTags(root);
  expect(one.fileMeta().get("a.py")!.sig).toBe("a1");
  expect(two.fileMeta().get("a.py")!.sig).toBe("a1");
  // `two` writes a.py; `one`, whose view still has a.py's old row, writes b.py and deletes c.py.
  two.putFiles([row("a.py", 2, "a2")], () => {});
  one.putFiles([row("b.py", 2, "b2")], () => {});
  one.prune(["c.py"]);
  const check = (expectIndex: boolean) => {
    const fresh = openTags(root);
    const read = fresh.fileMeta();
    expect(sorted(read.entries())).toEqual(sorted(fresh.metaRows()));
    // From the index or from the rows: a row dropped behind the cache's back tells which.
    const probe = openTags(root);
    probe.store.delete("meta", ["b.py"]);
    expect(openTags(root).fileMeta().has("b.py")).toBe(expectIndex);
    probe.putFiles([row("b.py", 2, "b2")], () => {});
    fresh.close();
  };
  expect(openTags(root).fileMeta().get("a.py")!.sig).toBe("a2");
  expect(openTags(root).fileMeta().get("b.py")!.sig).toBe("b2");
  expect(openTags(root).fileMeta().has("c.py")).toBe(false);
  check(true);
  // A background batch drops the index; a stale handle's next write then has no current index to change, and stores none.
  two.putFiles([row("d.py", 1, "d1")], () => {}, false);
  one.putFiles([row("e.py", 1, "e1")], () => {});
  expect(openTags(root).fileMeta().get("d.py")!.sig).toBe("d1");
  check(false);
  // Read from the rows: the build's write with no rows stores the index again.
  const rebuilt = openTags(root);
  rebuilt.fileMeta();
  rebuilt.putFiles([], () => {});
  check(true);
  for (const handle of [first, one, two, rebuilt]) handle.close();
});

test("maps built by cache handles taking turns equal a build from an empty cache: a file changed back and forth, a grammar table bump, files removed and added", async () => {
  const root = repo(SOURCES);
  let files = Object.keys(SOURCES);
  const handles = [openTags(root), openTags(root)];
  let turn = 0;
  const check = async (what: string) => {
    const handle = turn % 3 === 2 ? openTags(root) : handles[turn % 2]!;
    turn++;
    const built = await buildRepoMap(input(root, files, handle));
    expect(`${what}\n${built.text}`).toBe(`${what}\n${await scratch(root, files)}`);
    return built;
  };
  const ui = join(root, "web/ui.ts");
  // A whole second: utimes with a Date keeps milliseconds only.
  utimesSync(ui, 1_700_000_000, 1_700_000_000);
  const original = statSync(ui);
  await check("cold");
  writeFileSync(ui, SOURCES["web/ui.ts"] + "export function applyDiscount(n: number) {\n  return n * 0.9;\n}\n");
  await check("a definition added");
  await check("nothing changed");
  // Back to the first content, with the first stat: the row and index entry of the added definition must not stand.
  writeFileSync(ui, SOURCES["web/ui.ts"]!);
  utimesSync(ui, 1_700_000_000, 1_700_000_000);
  expect(statSync(ui).mtimeMs).toBe(original.mtimeMs);
  const back = await check("changed back");
  expect(back.stats.parsed).toBe(1);
  writeFileSync(join(root, "lib/total.py"), "# totals\n" + SOURCES["lib/total.py"]);
  await check("lines moved");
  // Another grammar table's row for a file: parsed again, whichever handle reads the index.
  const store = statSync(join(root, "lib/store.py"));
  const meta = handles[0]!.fileMeta().get("lib/store.py")!;
  handles[0]!.putFiles([{ path: "lib/store.py", mtime: store.mtimeMs, size: store.size, version: GRAMMAR_TABLE_VERSION.replace("python=", "python=other-"), skipped: "", sig: meta.sig, defs: "", names: "", refs: new Uint8Array(0) }], () => {});
  const bumped = await check("another grammar table");
  expect(bumped.stats.parsed).toBe(1);
  rmSync(join(root, "web/cart.ts"));
  files = files.filter((f) => f !== "web/cart.ts");
  await check("a file removed");
  writeFileSync(join(root, "lib/tax.py"), "from lib.total import compute_total\n\ndef with_tax(store):\n    return compute_total(store) * 1.2\n");
  files = [...files, "lib/tax.py"];
  await check("a file added");
  await check("nothing changed again");
  for (const handle of handles) handle.close();
});

test("a file parsed ahead answers a build only at the stat it was read at; the map is what a build from an empty cache gives", async () => {
  const root = repo(SOURCES);
  const files = Object.keys(SOURCES);
  const cache = openTags(root);
  await buildRepoMap(input(root, files, cache));
  const ui = join(root, "web/ui.ts");
  writeFileSync(ui, SOURCES["web/ui.ts"] + "export function one() {}\n");
  await buildRepoMap(input(root, files, cache));
  // The cache's last small write parsed web/ui.ts: what a tagger parses ahead once it changes.
  expect(cache.recentFiles().map((r) => r.path)).toEqual(["web/ui.ts"]);
  const unchanged = new MapMemory();
  await unchanged.tagAhead(root, files, openTags(root), [], 0);
  expect(unchanged.tagger).toBeNull();

  writeFileSync(ui, SOURCES["web/ui.ts"] + "export function two() {}\n");
  const used = new MapMemory();
  try {
    await used.tagAhead(root, files, openTags(root), [], 0);
    const built = await buildRepoMap(input(root, files, openTags(root), { memory: used }));
    expect(built.stats.parsed).toBe(1);
    expect(used.tagger!.aheadUsed).toBe(1);
    expect(built.text).toContain("two()");
    expect(built.text).toBe(await scratch(root, files));
  } finally {
    used.close();
  }

  writeFileSync(ui, SOURCES["web/ui.ts"] + "export function three() {}\n");
  const stale = new MapMemory();
  try {
    await stale.tagAhead(root, files, openTags(root), [], 0);
    // Changed after it was parsed ahead (another size): that parse must not stand for it.
    writeFileSync(ui, SOURCES["web/ui.ts"] + "export function fourth() {}\n");
    const built = await buildRepoMap(input(root, files, openTags(root), { memory: stale }));
    expect(stale.tagger!.aheadUsed).toBe(0);
    expect(built.text).toContain("fourth()");
    expect(built.text).not.toContain("three()");
    expect(built.text).toBe(await scratch(root, files));
  } finally {
    stale.close();
  }
  // Below the listing size that pays for it, with nothing to parse ahead, or for a file not listed, no tagger is started.
  const small = new MapMemory();
  await small.tagAhead(root, files, cache);
  expect(small.tagger).toBeNull();
  writeFileSync(ui, SOURCES["web/ui.ts"] + "export function fifth() {}\n");
  await small.tagAhead(root, files.filter((f) => f !== "web/ui.ts"), cache, [], 0);
  expect(small.tagger).toBeNull();
  // Nor a chat file whose older tags a first map in a request may take instead of parsing it.
  await small.tagAhead(root, files, cache, ["web/ui.ts"], 0);
  expect(small.tagger).toBeNull();
  await small.tagAhead(repo({}), files, new TagCache(memoryCacheStore(CACHE_VERSION)), [], 0);
  expect(small.tagger).toBeNull();
  cache.close();
});

test("a build parses ahead in a worker only when a core is free (parseAhead): else the changed file is parsed on the build's thread, with the same map", async () => {
  // A listing large enough to parse ahead for: the sources and many small files with no grammar.
  const sources: Record<string, string> = { ...SOURCES };
  for (let i = 0; i < TAG_AHEAD_FILES; i++) sources[`notes/note${i}.txt`] = `note ${i}\n`;
  const root = repo(sources);
  const files = Object.keys(sources);
  const cache = openTags(root);
  await buildRepoMap(input(root, files, cache));
  const ui = join(root, "web/ui.ts");
  // The cache's last small write parses web/ui.ts: what a build then parses ahead once it changed again.
  writeFileSync(ui, SOURCES["web/ui.ts"] + "export function one() {}\n");
  await buildRepoMap(input(root, files, cache));
  cache.close();
  for (const [parseAhead, added] of [[false, "two"], [true, "three"]] as const) {
    writeFileSync(ui, SOURCES["web/ui.ts"] + `export function ${added}() {}\n`);
    const memory = new MapMemory();
    try {
      const built = await buildRepoMap(input(root, files, openTags(root), { memory, parseAhead }));
      expect({ parseAhead, parsed: built.stats.parsed, tagger: memory.tagger !== null }).toEqual({ parseAhead, parsed: 1, tagger: parseAhead });
      expect(built.text).toContain(`${added}()`);
      expect(built.text).toBe(await scratch(root, files));
    } finally {
      memory.close();
    }
  }
}, 60_000);

test("the file to parse ahead under a folder now a file: no tagger, and the session's next map leaves that folder out", async () => {
  const root = repo(SOURCES);
  const files = Object.keys(SOURCES);
  const cache = openTags(root);
  await buildRepoMap(input(root, files, cache));
  writeFileSync(join(root, "web/ui.ts"), SOURCES["web/ui.ts"] + "export function one() {}\n");
  await buildRepoMap(input(root, files, cache));
  expect(cache.recentFiles().map((r) => r.path)).toEqual(["web/ui.ts"]);
  rmSync(join(root, "web"), { recursive: true });
  writeFileSync(join(root, "web"), "a file where the folder was\n");
  const memory = new MapMemory();
  try {
    await memory.tagAhead(root, files, openTags(root), [], 0);
    expect(memory.tagger).toBeNull();
    const built = await buildRepoMap(input(root, files, openTags(root), { memory }));
    expect(built.text).not.toContain("web/");
    expect(built.text).toContain("lib/store.py");
    expect(built.text).toBe(await scratch(root, files));
  } finally {
    memory.close();
    cache.close();
  }
});

test("a session's memory after another handle rewrote a file's row, the file then put back to its first stat: the map a build from an empty cache gives", async () => {
  // A method whose signature spans lines: its rendering shows them from its tags' header range.
  const text = "class Store:\n    def __init__(self):\n        self.items = []\n\n    def add_item(\n        self,\n        item,\n    ):\n        self.items.append(item)\n";
  const root = repo({ ...SOURCES, "lib/store.py": text });
  const files = Object.keys(SOURCES);
  const store = join(root, "lib/store.py");
  utimesSync(store, 1_700_000_000, 1_700_000_000);
  const first = statSync(store);
  const session = openTags(root);
  const memory = new MapMemory();
  try {
    const before = await buildRepoMap(input(root, files, session, { memory }));
    expect(before.text).toBe(await scratch(root, files));
    // Another process parses the file changed (other names, other lines, another size) and writes its row.
    writeFileSync(store, "# moved\n\nclass Depot:\n    def put_box(self, box):\n        return box\n\n    def take_box(self):\n        return None\n");
    const other = openTags(root);
    await buildRepoMap(input(root, files, other));
    other.close();
    // The file is put back: its first text and stat, which the session's memory holds a row of.
    writeFileSync(store, text);
    utimesSync(store, 1_700_000_000, 1_700_000_000);
    expect(statSync(store).mtimeMs).toBe(first.mtimeMs);
    const after = await buildRepoMap(input(root, files, session, { memory }));
    expect(after.text).toBe(await scratch(root, files));
    expect(after.stats.parsed).toBe(1);
    // Another process parses the file with its lines moved (the same names: the same signature)
    // and it stays so: the session's tags decoded from the older row must not stand (a ranking
    // from every file's tags: a context the session kept no graph of).
    writeFileSync(store, "# moved\n# down\n" + text);
    const third = openTags(root);
    await buildRepoMap(input(root, files, third));
    third.close();
    const mentioned = { mentionedIdents: ["add_item"] };
    const moved = await buildRepoMap(input(root, files, session, { memory, ...mentioned }));
    expect(moved.stats.parsed).toBe(0);
    expect(moved.text).toBe((await buildRepoMap(input(root, files, new TagCache(memoryCacheStore(CACHE_VERSION)), mentioned))).text);
  } finally {
    memory.close();
    session.close();
  }
});

test("a background batch drops the stored index but keeps its handle's view, which the handle's next write stores whole; another handle's write in between is seen", () => {
  const root = repo({});
  const session = openTags(root);
  const kept = session.fileMeta();
  session.putFiles([row("a.py", 1, "a1"), row("b.py", 1, "b1")], () => {});
  const forgotten: string[] = [];
  const forget = (path: string) => forgotten.push(path);
  session.putFiles([row("c.py", 1, "c1")], () => {}, false);
  // No stored index: another handle reads the rows.
  const probe = openTags(root);
  probe.store.delete("meta", ["a.py"]);
  expect(openTags(root).fileMeta().has("a.py")).toBe(false);
  probe.putFiles([row("a.py", 1, "a1")], () => {});
  probe.close();
  // That write was another handle's: the session's view is read again, and what changed is forgotten.
  const read = session.sessionMeta(kept, forget);
  expect(sorted(read.entries())).toEqual(sorted(session.metaRows()));
  expect(forgotten).toEqual([]);
  // The session's own batch: its view stays (not read again), and is what the rows are.
  session.putFiles([row("d.py", 1, "d1"), row("b.py", 2, "b2")], () => {}, false);
  expect(session.sessionMeta(read, forget)).toBe(read);
  expect(sorted(read.entries())).toEqual(sorted(session.metaRows()));
  // Its next write keeping the index stores it whole: a fresh handle reads it, not the rows.
  session.putFiles([], () => {});
  const dropped = openTags(root);
  dropped.store.delete("meta", ["d.py"]);
  expect(openTags(root).fileMeta().get("d.py")).toEqual({ mtime: 1, size: 10, version: GRAMMAR_TABLE_VERSION, sig: "d1", skipped: "" });
  expect(sorted(openTags(root).fileMeta().entries())).toEqual(sorted(read.entries()));
  // Another handle changes a row and deletes one: the session forgets exactly those.
  dropped.putFiles([row("d.py", 1, "d1"), row("a.py", 3, "a3")], () => {});
  dropped.prune(["c.py"]);
  dropped.close();
  const after = session.sessionMeta(read, forget);
  expect(after).not.toBe(read);
  expect(forgotten.sort()).toEqual(["a.py", "c.py"]);
  expect(sorted(after.entries())).toEqual(sorted(session.metaRows()));
  session.close();
});
