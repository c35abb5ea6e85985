import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { CACHE_FILE, memoryCacheStore, openCacheStore } from "./cache-store.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function repo(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-cache-store-")));
  dirs.push(root);
  return root;
}

test("keyed text and bytes in buckets persist across opens; a batch lands whole; keepNewest trims the oldest", () => {
  const root = repo();
  const warnings: string[] = [];
  const store = openCacheStore(root, "my plugin", { version: 1, warn: (m) => warnings.push(m) });
  expect(store.file).toBe(join(root, ".coder", "cache", "my_plugin", CACHE_FILE));
  expect(store.put("a", "k", "text")).toBe(true);
  expect(store.batch((w) => {
    w.put("b", "x", new Uint8Array([0, 1, 2]));
    w.put("b", "y", "why");
  })).toBe(true);
  for (let i = 0; i < 5; i++) store.put("c", `n${i}`, String(i));
  store.keepNewest("c", 2);
  store.close();
  const again = openCacheStore(root, "my plugin", { version: 1, warn: (m) => warnings.push(m) });
  expect(again.get("a", "k")).toBe("text");
  expect(again.get("a", "missing")).toBeNull();
  expect([...(again.get("b", "x") as Uint8Array)]).toEqual([0, 1, 2]);
  expect([...again.entries("b").keys()].sort()).toEqual(["x", "y"]);
  expect([...again.entries("c").keys()].sort()).toEqual(["n3", "n4"]);
  again.delete("b", ["x"]);
  expect(again.get("b", "x")).toBeNull();
  // A batch that throws half way writes nothing.
  expect(again.batch((w) => {
    w.put("a", "k", "changed");
    throw new Error("half way");
  })).toBe(false);
  expect(again.get("a", "k")).toBe("text");
  again.close();
  expect(warnings).toEqual([]);
});

test("a store written under another version is emptied when opened", () => {
  const root = repo();
  const one = openCacheStore(root, "p", { version: 1, warn: () => {} });
  one.put("a", "k", "v1");
  one.close();
  const two = openCacheStore(root, "p", { version: 2, warn: () => {} });
  expect(two.get("a", "k")).toBeNull();
  two.close();
});

test("a store of the first layout (values in a WITHOUT ROWID table) is emptied without a warning, then keeps values and trims by age", () => {
  const root = repo();
  const file = join(root, ".coder", "cache", "p", CACHE_FILE);
  mkdirSync(join(root, ".coder", "cache", "p"), { recursive: true });
  const old = new Database(file);
  old.exec("CREATE TABLE entries (bucket TEXT NOT NULL, key TEXT NOT NULL, value NOT NULL, created INTEGER NOT NULL, PRIMARY KEY (bucket, key)) WITHOUT ROWID");
  old.exec("CREATE TABLE store (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
  old.exec("INSERT INTO entries VALUES ('a', 'k', 'old', 1)");
  old.exec("INSERT INTO store VALUES ('version', '1')");
  old.exec("PRAGMA user_version = 1");
  old.close();
  const warnings: string[] = [];
  const store = openCacheStore(root, "p", { version: 1, warn: (m) => warnings.push(m) });
  expect(store.get("a", "k")).toBeNull();
  const big = new Uint8Array(3 * 1024 * 1024).fill(7);
  expect(store.put("g", "big", big)).toBe(true);
  for (let i = 0; i < 4; i++) store.put("m", `n${i}`, `v${i}`);
  store.keepNewest("m", 2);
  store.close();
  const again = openCacheStore(root, "p", { version: 1, warn: (m) => warnings.push(m) });
  expect((again.get("g", "big") as Uint8Array).length).toBe(big.length);
  expect([...again.entries("m").keys()].sort()).toEqual(["n2", "n3"]);
  again.close();
  expect(warnings).toEqual([]);
});

test("a corrupt file is rebuilt with one warning, never a crash", () => {
  const root = repo();
  mkdirSync(join(root, ".coder", "cache", "p"), { recursive: true });
  writeFileSync(join(root, ".coder", "cache", "p", CACHE_FILE), "this is not a database".repeat(200));
  const warnings: string[] = [];
  const store = openCacheStore(root, "p", { warn: (m) => warnings.push(m) });
  expect(warnings.join("\n")).toContain("rebuilding it");
  expect(store.file).not.toBeNull();
  expect(store.put("a", "k", "v")).toBe(true);
  expect(store.get("a", "k")).toBe("v");
  store.close();
});

test("a planted link in the store's place is never opened: a temporary store, the target untouched", () => {
  const root = repo();
  const victim = join(repo(), "victim.txt");
  writeFileSync(victim, "keep me\n");
  mkdirSync(join(root, ".coder", "cache", "p"), { recursive: true });
  symlinkSync(victim, join(root, ".coder", "cache", "p", CACHE_FILE));
  const warnings: string[] = [];
  const store = openCacheStore(root, "p", { warn: (m) => warnings.push(m) });
  expect(store.file).toBeNull();
  expect(warnings.join("\n")).toContain(`.coder/cache/p/${CACHE_FILE} is a symlink`);
  store.put("a", "k", "v");
  expect(store.get("a", "k")).toBe("v");
  store.close();
  expect(readFileSync(victim, "utf8")).toBe("keep me\n");
  // A linked namespace folder is refused the same way.
  const other = repo();
  mkdirSync(join(other, ".coder", "cache"), { recursive: true });
  symlinkSync(repo(), join(other, ".coder", "cache", "q"));
  const linked: string[] = [];
  expect(openCacheStore(other, "q", { warn: (m) => linked.push(m) }).file).toBeNull();
  expect(linked.join("\n")).toContain(".coder/cache/q is a symlink");
});

test("two processes write the same store at once: every write of both lands", async () => {
  const root = repo();
  const script = join(root, "..", `writer-${process.pid}.ts`);
  dirs.push(script);
  writeFileSync(
    script,
    `import { openCacheStore } from ${JSON.stringify(join(import.meta.dir, "cache-store.ts"))};
const [root, tag] = process.argv.slice(2);
const store = openCacheStore(root!, "p", { version: 1, warn: (m) => console.error(m) });
for (let i = 0; i < 200; i++) if (!store.batch((w) => { w.put("rows", tag + i, "x".repeat(1000)); })) console.error("lost " + i);
store.close();
`,
  );
  const spawn = (tag: string) => Bun.spawn([process.execPath, script, root, tag], { stdout: "pipe", stderr: "pipe" });
  const [a, b] = [spawn("a"), spawn("b")];
  expect(await a.exited).toBe(0);
  expect(await b.exited).toBe(0);
  expect(await new Response(a.stderr).text()).toBe("");
  expect(await new Response(b.stderr).text()).toBe("");
  const store = openCacheStore(root, "p", { version: 1, warn: () => {} });
  expect(store.entries("rows").size).toBe(400);
  store.close();
  expect(existsSync(join(root, ".coder", ".gitignore"))).toBe(true);
});

test("a store in memory keeps values for its life only", () => {
  const store = memoryCacheStore();
  expect(store.file).toBeNull();
  store.put("a", "k", "v");
  expect(store.get("a", "k")).toBe("v");
  store.close();
  expect(store.get("a", "k")).toBeNull();
});
