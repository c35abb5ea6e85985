// Every folder's README ends with a "May import:" line; the real imports (test files aside) are
// held to it. And the shape rules of STYLE.md: core/ never imports formats/ or plugins/, and
// a built-in format or plugin imports from core/ only the types of core/plugin.ts.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");
const IMPORT = /(?:^|\n)\s*(import(?:\s+type)?\b[^"']*?from\s*|export\s+[^"']*?from\s*|import\s*\(\s*)["'](\.[^"']+)["']/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sources(path);
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : [];
  });
}

/**
 * Each relative import of a file: the repository path it names and whether it is types only.
 * A path into node_modules/ (a package's data file embedded by path) is a package import, not ours.
 */
function importsOf(file: string): { target: string; typeOnly: boolean }[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(IMPORT)]
    .map((m) => ({ target: relative(ROOT, normalize(join(dirname(file), m[2]!))), typeOnly: /^\s*import\s+type\b/.test(m[1]!) }))
    .filter(({ target }) => !target.startsWith("node_modules/"));
}

/** What a README's "May import:" line allows: `x/` folders and `name.ts` files, by the names it gives. */
function allowed(readme: string): string[] {
  const line = readFileSync(readme, "utf8").split("\n").find((l) => l.startsWith("May import:"));
  if (!line) throw new Error(`${relative(ROOT, readme)} has no "May import:" line`);
  return [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

describe("core/*/README.md: may import", () => {
  for (const folder of readdirSync(join(ROOT, "core")).filter((n) => statSync(join(ROOT, "core", n)).isDirectory())) {
    test(`core/${folder}/`, () => {
      const names = allowed(join(ROOT, "core", folder, "README.md"));
      const broken: string[] = [];
      for (const file of sources(join(ROOT, "core", folder))) {
        for (const { target } of importsOf(file)) {
          const [top, sub] = target.split("/");
          // Within core/: a sibling folder (`chat/`) or a top-level file (`plugin.ts`); outside it, a top folder (`grammars/`).
          const name = top === "core" ? (target.split("/").length === 2 ? sub! : `${sub}/`) : `${top}/`;
          if (name === `${folder}/`) continue;
          if (!names.includes(name)) broken.push(`${relative(ROOT, file)} imports ${target} (${name} is not in its README's "May import:")`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});

describe("formats/ and plugins/: only the types of core/plugin.ts", () => {
  for (const top of ["formats", "plugins"]) {
    test(`${top}/`, () => {
      expect(allowed(join(ROOT, top, "README.md"))).toContain("core/plugin.ts");
      const broken: string[] = [];
      for (const file of sources(join(ROOT, top))) {
        for (const { target, typeOnly } of importsOf(file)) {
          if (!target.startsWith("core/")) continue;
          if (target !== "core/plugin.ts" || !typeOnly) broken.push(`${relative(ROOT, file)} imports ${target}${typeOnly ? "" : " at run time"}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  test("grammars/ imports nothing from core/, formats/ or plugins/", () => {
    const broken = sources(join(ROOT, "grammars")).flatMap((file) => importsOf(file).filter(({ target }) => /^(core|formats|plugins)\//.test(target)).map(({ target }) => `${relative(ROOT, file)} imports ${target}`));
    expect(broken).toEqual([]);
  });
});
