// The build's library packs (scripts/build.ts): an import of a packed library resolves to the
// pack's stand-in, and one by a specifier the pack does not list fails the build with the fix.
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packImports } from "./build.ts";

const ROOT = join(import.meta.dir, "..");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Bundle one entry (inside the repository, so its packages resolve) with the pack plugin and a stand-in media pack. */
async function bundle(source: string) {
  mkdirSync(join(ROOT, "dist"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, "dist", "build-test-"));
  dirs.push(dir);
  const entry = join(dir, "entry.ts");
  writeFileSync(entry, source);
  // A stand-in media pack: the file is only embedded, and only image-size's names are known.
  writeFileSync(join(dir, "media.cdz"), "packed");
  const exports = [[], [], [], [], [], ["imageSize", "types"]];
  return Bun.build({ entrypoints: [entry], root: dir, outdir: join(dir, "out"), target: "bun", format: "esm", metafile: true, throw: false, plugins: [packImports({ media: { file: join(dir, "media.cdz"), exports } })] });
}

test("an import of a packed library by a specifier its pack does not list fails the build, naming the fix", async () => {
  const result = await bundle('import { Jimp } from "@jimp/utils";\nconsole.log(Jimp);\n');
  expect(result.success).toBe(false);
  expect(result.logs.map(String).join("\n")).toContain("imports @jimp/utils, which belongs to the media library pack but is not one of its specifiers: add it to LIBRARY_PACKS in scripts/build.ts");
});

test("a listed specifier is bundled as the pack's stand-in, not as the library's code", async () => {
  const result = await bundle('const { imageSize } = await import("image-size");\nconsole.log(imageSize);\n');
  expect(result.success).toBe(true);
  const inputs = Object.keys(result.metafile!.inputs);
  expect(inputs.filter((i) => i.includes("node_modules/image-size"))).toEqual([]);
  expect(inputs).toContain("library-pack:media:image-size");
  const code = (await Promise.all(result.outputs.filter((o) => o.path.endsWith(".js")).map((o) => o.text()))).join("\n");
  expect(code).toContain("importPacked");
  expect(code).toContain('m5;');
  expect(code).toContain('["imageSize"]');
});
