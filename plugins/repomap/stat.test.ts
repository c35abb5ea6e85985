// The stat shared with a helper thread (stat.ts) gives statFiles' entries exactly, in order,
// whoever stat'ed which file: regular files, links, folders, missing files and binaries among
// thousands of files; paths that cannot be there now (under a file); a helper that claims files
// and never stats them. And a file that turns into a pipe after its stat is not read.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryCacheStore } from "../../core/edit/cache-store.ts";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { testInput } from "../../tests/support/repomap-input.ts";
import { CACHE_VERSION, TagCache } from "./cache.ts";
import { prepareRepoMap } from "./map.ts";
import { scanTags, statFiles } from "./scan.ts";
import { SHARED_STAT_FILES, StatHelper } from "./stat.ts";

const dirs: string[] = [];
const helpers: StatHelper[] = [];
afterAll(() => {
  for (const h of helpers) h.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A tree of `count` listed paths: mostly files of varied sizes and mtimes, with every kind statFiles leaves out spread among them. */
function tree(count: number): { root: string; files: string[] } {
  const root = mkdtempSync(join(tmpdir(), "coder-stat-"));
  dirs.push(root);
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const dir = `pkg${i % 7}/mod${i % 13}`;
    mkdirSync(join(root, dir), { recursive: true });
    const path = `${dir}/f${i}.${["ts", "py", "go", "txt", "java"][i % 5]}`;
    files.push(path);
    switch (i % 97) {
      case 5: // a link to a file
        symlinkSync(join(root, files[0]!), join(root, path));
        break;
      case 17: // a link to a folder
        symlinkSync(join(root, "pkg0"), join(root, path));
        break;
      case 29: // a dangling link
        symlinkSync(join(root, "nowhere"), join(root, path));
        break;
      case 41: // a folder where the listing has a file (a submodule)
        mkdirSync(join(root, path));
        break;
      case 53: // listed, gone from the disk
        break;
      case 67: // a binary by its name
        files[files.length - 1] = `${dir}/image${i}.png`;
        writeFileSync(join(root, files[files.length - 1]!), "png");
        break;
      default: {
        writeFileSync(join(root, path), "x".repeat(i % 300));
        // Fractional milliseconds: the mtime must come back to the last bit.
        const when = new Date(1_700_000_000_000 + i * 1_003.25);
        utimesSync(join(root, path), when, when);
      }
    }
  }
  return { root, files };
}

/** The helper's stat of `files`, once its worker has taken part in one (it starts in a few milliseconds). */
async function sharedStat(helper: StatHelper, root: string, files: string[], took: (h: StatHelper) => boolean) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const entries = helper.stat(root, files);
    if (took(helper)) return entries;
    await Bun.sleep(20);
  }
  throw new Error("the helper never took part");
}

test("a listing stat'ed on two threads gives statFiles' entries in order: files, links, folders, missing files, binaries", async () => {
  const { root, files } = tree(SHARED_STAT_FILES + 1_000);
  const helper = new StatHelper();
  helpers.push(helper);
  const entries = await sharedStat(helper, root, files, (h) => (h.last?.helped ?? 0) > 0);
  expect(helper.last!.helped).toBeLessThan(helper.last!.files);
  expect(entries).toEqual(statFiles(root, files));
  expect(entries.length).toBeLessThan(files.length);
}, 30_000);

test("listed paths that cannot be there now (under a file, through a link loop, a name too long) are left out, whichever thread met them", async () => {
  const { root, files } = tree(SHARED_STAT_FILES + 500);
  writeFileSync(join(root, "plain"), "x");
  symlinkSync("loop", join(root, "loop"));
  const gone = ["plain/inner.ts", "loop/inner.py", `${"n".repeat(300)}.go`, "plain/deeper/more.java"];
  // Two near the start (this thread's first chunks), two at the end (where the helper claims too).
  const listed = [...files.slice(0, 10), gone[0]!, gone[1]!, ...files.slice(10), gone[2]!, gone[3]!];
  const alone = statFiles(root, listed);
  expect(alone).toEqual(statFiles(root, files));
  const helper = new StatHelper();
  helpers.push(helper);
  const shared = await sharedStat(helper, root, listed, (h) => (h.last?.helped ?? 0) > 0);
  expect(shared).toEqual(alone);
  // The helper's own chunks (its last ones hold the end of the listing) left them out too.
  const tail = [...files.slice(-2 * 64), gone[2]!, gone[3]!];
  for (let attempt = 0; attempt < 5; attempt++) expect(helper.stat(root, tail)).toEqual(statFiles(root, files.slice(-2 * 64)));
}, 30_000);

test("a helper that claims files and never stats them: this thread stats them after its wait, with the same entries", async () => {
  const { root, files } = tree(SHARED_STAT_FILES + 500);
  const helper = new StatHelper(new URL("./testdata/late-stat-worker.ts", import.meta.url).href);
  helpers.push(helper);
  const entries = await sharedStat(helper, root, files, (h) => (h.last?.takenOver ?? 0) > 0);
  expect(helper.last!.helped).toBe(0);
  expect(entries).toEqual(statFiles(root, files));
}, 30_000);

test("the map's keys and entries are the same with the helper or without", async () => {
  const { root, files } = tree(SHARED_STAT_FILES + 300);
  const helper = new StatHelper();
  helpers.push(helper);
  const cache = new TagCache(memoryCacheStore(CACHE_VERSION));
  const alone = prepareRepoMap(testInput(root, files, cache));
  await sharedStat(helper, root, files, (h) => (h.last?.helped ?? 0) > 0);
  const shared = prepareRepoMap(testInput(root, files, cache, { statHelper: helper }));
  expect(helper.last!.helped).toBeGreaterThan(0);
  expect(shared.entries).toEqual(alone.entries);
  expect(shared.stateKey).toBe(alone.stateKey);
  expect(shared.key).toBe(alone.key);
}, 30_000);

test("a listed file replaced by a pipe after its stat is parsed as unreadable, on this thread and in a worker, never waited on", async () => {
  const root = mkdtempSync(join(tmpdir(), "coder-stat-fifo-"));
  dirs.push(root);
  const files = ["a.py", "b.py", "c.py"];
  for (const path of files) writeFileSync(join(root, path), `def ${path[0]}_value():\n    return 1\n`);
  const entries = statFiles(root, files);
  expect(entries.map((e) => e.path)).toEqual(files);
  rmSync(join(root, "b.py"));
  expect(Bun.spawnSync(["mkfifo", join(root, "b.py")]).exitCode).toBe(0);
  for (const workers of [0, 1]) {
    const cache = new TagCache(memoryCacheStore(CACHE_VERSION));
    const scan = await scanTags(entries, { root, cache, assets: async () => EMBEDDED_ASSETS, warn: () => {}, workers, poolThreshold: 0 });
    expect(scan.files.get("b.py")?.skipped).toContain("unreadable");
    expect(scan.files.get("a.py")?.skipped).toBe("");
    expect(scan.defsOf("c.py")).toContain("c_value");
  }
}, 30_000);
