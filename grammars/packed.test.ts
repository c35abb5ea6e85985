// Packed embedded assets: unpacked exactly, cached per version under the user's cache folder,
// never written or read through a link planted there, and safe when two processes race.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CACHE_ABOVE, importPacked, isPacked, memberPath, packAsset, readAsset, requirePacked, unpackAsset } from "./packed.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "coder-packed-"));
  dirs.push(dir);
  return dir;
}

/** A large asset (above the cache threshold) packed into `dir/name`; its raw bytes. */
function plant(dir: string, name = "tree-sitter-demo-abc123.wasm"): { path: string; raw: Uint8Array<ArrayBuffer> } {
  const raw = new Uint8Array(CACHE_ABOVE * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 31 + (i >> 7)) & 0xff;
  const path = join(dir, name);
  writeFileSync(path, packAsset(raw));
  return { path, raw };
}

const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

describe("packed assets", () => {
  test("a packed asset unpacks to its bytes, and is cached once under the version folder", () => {
    const dir = scratch();
    const { path, raw } = plant(dir);
    expect(isPacked(readFileSync(path))).toBe(true);
    expect(readFileSync(path).length).toBeLessThan(raw.length / 4);
    const cache = join(dir, "cache", "coder", "grammars", "9.9.9");
    expect(readAsset(path, cache)).toEqual(raw);
    const files = cacheFiles(cache);
    expect(files.length).toBe(1);
    expect(new Uint8Array(readFileSync(join(cache, files[0]!)))).toEqual(raw);
    // Read back from the cache: the same bytes, and nothing else written.
    expect(readAsset(path, cache)).toEqual(raw);
    expect(cacheFiles(cache)).toEqual(files);
  });

  test("a brotli-packed asset unpacks to its bytes and is cached like a zstd one; a damaged one is refused", () => {
    const dir = scratch();
    const raw = new Uint8Array(CACHE_ABOVE * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 7 + (i >> 9)) & 0xff;
    const packed = packAsset(raw, 11, "brotli");
    expect(new TextDecoder().decode(packed.subarray(0, 4))).toBe("CDB1");
    expect(packed.length).toBeLessThan(packAsset(raw, 19, "zstd").length * 1.05);
    const path = join(dir, "tree-sitter-demo-brotli.wasm");
    writeFileSync(path, packed);
    const cache = join(dir, "cache");
    expect(readAsset(path, cache)).toEqual(raw);
    expect(cacheFiles(cache)).toHaveLength(1);
    expect(readAsset(path, cache)).toEqual(raw);
    expect(unpackAsset(packed)).toEqual(raw);
    const damaged = packed.slice();
    damaged[damaged.length - 3]! ^= 0xff;
    expect(unpackAsset(damaged)).toBeNull();
  });

  test("an unpacked file (from source) is returned as it is, and a small packed one is not cached", () => {
    const dir = scratch();
    writeFileSync(join(dir, "plain.scm"), "(identifier) @name\n");
    const cache = join(dir, "cache");
    expect(new TextDecoder().decode(readAsset(join(dir, "plain.scm"), cache))).toBe("(identifier) @name\n");
    writeFileSync(join(dir, "small.scm"), packAsset(new TextEncoder().encode("(call) @reference.call\n")));
    expect(new TextDecoder().decode(readAsset(join(dir, "small.scm"), cache))).toBe("(call) @reference.call\n");
    expect(cacheFiles(cache)).toEqual([]);
  });

  test("a link planted at the cache file's name is neither read nor written through: it is replaced", () => {
    const dir = scratch();
    const { path, raw } = plant(dir);
    const cache = join(dir, "cache");
    // Learn the cache file's name, then plant a link there to a file of the user's, same length.
    readAsset(path, cache);
    const [name] = cacheFiles(cache);
    rmSync(join(cache, name!));
    const victim = join(dir, "victim.bin");
    const original = new Uint8Array(raw.length).fill(7);
    writeFileSync(victim, original);
    symlinkSync(victim, join(cache, name!));
    expect(readAsset(path, cache)).toEqual(raw);
    expect(new Uint8Array(readFileSync(victim))).toEqual(original);
    expect(lstatSync(join(cache, name!)).isSymbolicLink()).toBe(false);
    expect(new Uint8Array(readFileSync(join(cache, name!)))).toEqual(raw);
  });

  test("a version folder that is a link is not written into", () => {
    const dir = scratch();
    const { path, raw } = plant(dir);
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    mkdirSync(join(dir, "cache", "coder", "grammars"), { recursive: true });
    const version = join(dir, "cache", "coder", "grammars", "1.0.0");
    symlinkSync(elsewhere, version);
    expect(readAsset(path, version)).toEqual(raw);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test("a damaged cache file (same length, other bytes) is not trusted and is rewritten", () => {
    const dir = scratch();
    const { path, raw } = plant(dir);
    const cache = join(dir, "cache");
    readAsset(path, cache);
    const [name] = cacheFiles(cache);
    writeFileSync(join(cache, name!), new Uint8Array(raw.length));
    expect(readAsset(path, cache)).toEqual(raw);
    expect(new Uint8Array(readFileSync(join(cache, name!)))).toEqual(raw);
  });

  test("two processes unpacking into the same cache at once both read whole, correct bytes", async () => {
    const dir = scratch();
    const { path, raw } = plant(dir);
    const cache = join(dir, "cache");
    const script = `const { readAsset } = await import(${JSON.stringify(join(import.meta.dir, "packed.ts"))}); const out = []; for (let i = 0; i < 20; i++) out.push(Bun.hash.crc32(readAsset(${JSON.stringify(path)}, ${JSON.stringify(cache)}))); console.log(out.join(","));`;
    const runs = [0, 1, 2].map(() => Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" }));
    const outputs = await Promise.all(runs.map(async (p) => ({ out: await new Response(p.stdout).text(), code: await p.exited })));
    const expected = Array(20).fill(Bun.hash.crc32(raw)).join(",");
    for (const o of outputs) {
      expect(o.code).toBe(0);
      expect(o.out.trim()).toBe(expected);
    }
    // One cache file, whole; no temp file left behind.
    const files = cacheFiles(cache);
    expect(files.length).toBe(1);
    expect(new Uint8Array(readFileSync(join(cache, files[0]!)))).toEqual(raw);
  });
});

/** A packed ES module in `dir/name` exporting `value`, padded to `pad` bytes of comment. */
function plantModule(dir: string, name: string, value: number, pad = 0): string {
  const path = join(dir, name);
  writeFileSync(path, packAsset(new TextEncoder().encode(`export const value = ${value};\n//${"x".repeat(pad)}\n`)));
  return path;
}

/**
 * `load` given a cache folder that cannot exist (its parent is a file), with TMPDIR a fresh
 * folder: what it returns, and what it left in that temporary folder.
 */
async function withoutCache<T>(dir: string, load: (cache: string) => T | Promise<T>): Promise<{ result: T; left: string[] }> {
  writeFileSync(join(dir, "not-a-folder"), "");
  const temp = join(dir, "tmp");
  mkdirSync(temp);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = temp;
  try {
    return { result: await load(join(dir, "not-a-folder", "cache")), left: readdirSync(temp) };
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

describe("packed library modules (importPacked)", () => {

  test("is imported from the user's cache as a checked .js file, once per process", async () => {
    const dir = scratch();
    const path = plantModule(dir, "web-a1.cdz", 42);
    const cache = join(dir, "cache");
    const first = importPacked(path, cache);
    expect(importPacked(path, cache)).toBe(first);
    expect((await first).value).toBe(42);
    const files = cacheFiles(cache);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^web-a1\.cdz-[0-9a-f]{8}\.js$/);
  });

  test("a cached copy with other code in it (same length) is not imported: it is replaced", async () => {
    const dir = scratch();
    const path = plantModule(dir, "web-b2.cdz", 7);
    const cache = join(dir, "cache");
    // What the cache file would be named, learned from another path's module of the same name.
    const probe = plantModule(join(dir, "probe") + (mkdirSync(join(dir, "probe")), ""), "web-b2.cdz", 7);
    await importPacked(probe, join(dir, "probe-cache"));
    const [name] = cacheFiles(join(dir, "probe-cache"));
    mkdirSync(cache);
    writeFileSync(join(cache, name!), "export const value = 9;\n//\n");
    expect((await importPacked(path, cache)).value).toBe(7);
    expect(readFileSync(join(cache, name!), "utf8")).toContain("value = 7");
  });

  test("without a writable cache it is imported from a private temporary folder, removed afterwards", async () => {
    const dir = scratch();
    const path = plantModule(dir, "media-c3.cdz", 5);
    const { result, left } = await withoutCache(dir, (cache) => importPacked(path, cache));
    expect(result.value).toBe(5);
    expect(left).toEqual([]);
  });

  test("a file that is not packed is refused with its path", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "plain.js"), "export const value = 1;\n");
    await expect(importPacked(join(dir, "plain.js"), join(dir, "cache"))).rejects.toThrow(`embedded library ${join(dir, "plain.js")} cannot be read`);
  });
});

describe("packed library modules loaded synchronously (requirePacked)", () => {

  test("is required from the user's cache as a checked .js file, once per process, without awaiting", () => {
    const dir = scratch();
    const path = plantModule(dir, "zod-d4.cdz", 11);
    const cache = join(dir, "cache");
    const first = requirePacked(path, cache);
    expect(first.value).toBe(11);
    expect(requirePacked(path, cache)).toBe(first);
    expect(cacheFiles(cache)).toEqual([expect.stringMatching(/^zod-d4\.cdz-[0-9a-f]{8}\.js$/)]);
  });

  test("a cached copy with other code in it (same length) is not required: it is replaced", () => {
    const dir = scratch();
    const path = plantModule(dir, "zod-e5.cdz", 3);
    const cache = join(dir, "cache");
    mkdirSync(join(dir, "probe"));
    requirePacked(plantModule(join(dir, "probe"), "zod-e5.cdz", 3), join(dir, "probe-cache"));
    const [name] = cacheFiles(join(dir, "probe-cache"));
    mkdirSync(cache);
    writeFileSync(join(cache, name!), "export const value = 8;\n//\n");
    expect(requirePacked(path, cache).value).toBe(3);
    expect(readFileSync(join(cache, name!), "utf8")).toContain("value = 3");
  });

  test("without a writable cache it is required from a private temporary folder, removed afterwards", async () => {
    const dir = scratch();
    const path = plantModule(dir, "zod-f6.cdz", 4);
    const { result, left } = await withoutCache(dir, (cache) => requirePacked(path, cache));
    expect(result.value).toBe(4);
    expect(left).toEqual([]);
  });

  test("a file that is not packed is refused with its path", () => {
    const dir = scratch();
    writeFileSync(join(dir, "plain.js"), "export const value = 1;\n");
    expect(() => requirePacked(join(dir, "plain.js"), join(dir, "cache"))).toThrow(`embedded library ${join(dir, "plain.js")} cannot be read`);
  });
});

test("an asset whose cache folder cannot exist (a file in its path) is still read, uncached", () => {
  const dir = scratch();
  const { path, raw } = plant(dir);
  writeFileSync(join(dir, "not-a-folder"), "");
  expect(readAsset(path, join(dir, "not-a-folder", "cache"))).toEqual(raw);
});

describe("files packed together in a group (memberPath)", () => {
  /** Three members packed as one brotli stream, as scripts/build.ts ASSET_GROUPS does; their paths. */
  function group(dir: string) {
    const members = ["first.cjs", "second.cjs", "third.cjs"].map((name, n) => {
      const raw = new Uint8Array(n === 1 ? 300 : CACHE_ABOVE * 2);
      for (let i = 0; i < raw.length; i++) raw[i] = (i * (n + 7) + (i >> 5)) & 0xff;
      return { name, raw };
    });
    const joined = new Uint8Array(members.reduce((sum, m) => sum + m.raw.length, 0));
    const file = join(dir, "group-x1.cdz");
    let at = 0;
    const paths = members.map((m) => {
      joined.set(m.raw, at);
      const path = memberPath(file, m.name, at, m.raw);
      at += m.raw.length;
      return path;
    });
    writeFileSync(file, packAsset(joined, 9, "brotli"));
    return { file, members, paths };
  }

  test("each member reads back exactly from the group; a large one is cached under its own name and read from there next time", () => {
    const dir = scratch();
    const cache = join(dir, "cache");
    const { members, paths } = group(dir);
    members.forEach((m, i) => expect(readAsset(paths[i]!, cache)).toEqual(m.raw));
    // The two members above the cache threshold, each on its own; the small one is cut again each time.
    expect(cacheFiles(cache).sort()).toEqual([expect.stringMatching(/^first\.cjs-[0-9a-f]{8}$/), expect.stringMatching(/^third\.cjs-[0-9a-f]{8}$/)]);
    // Read back from the cache: the group is not unpacked again (it is gone, and the member still reads).
    rmSync(join(dir, "group-x1.cdz"));
    expect(readAsset(paths[2]!, cache)).toEqual(members[2]!.raw);
    expect(() => readAsset(paths[1]!, cache)).toThrow("cannot be read");
  });

  test("a member whose place does not match its checksum is refused, naming it, and nothing is cached", () => {
    const dir = scratch();
    const cache = join(dir, "cache");
    const { paths } = group(dir);
    // Shifted by one byte: the length and checksum no longer describe what is there.
    const wrong = paths[0]!.replace(/,0,/, ",1,");
    expect(() => readAsset(wrong, cache)).toThrow("embedded asset " + wrong.slice(0, wrong.lastIndexOf("#")) + "#first.cjs is damaged");
    expect(cacheFiles(cache)).toEqual([]);
  });

  test("a real file whose name ends like a member's place is read as it is", () => {
    const dir = scratch();
    const path = join(dir, "notes#a.cjs,0,3,00000000");
    writeFileSync(path, "abc");
    expect(new TextDecoder().decode(readAsset(path, null))).toBe("abc");
  });
});
