import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KINDS, pluginDeclarations, pluginTemplate } from "./scaffold.ts";

setDefaultTimeout(60_000);

const TSC = join(import.meta.dir, "..", "..", "node_modules", ".bin", "tsc");

test("coder-plugin.d.ts is core/plugin.ts with a header", () => {
  const text = pluginDeclarations("9.9.9");
  expect(text).toContain("written by coder 9.9.9");
  expect(text).toContain(readFileSync(join(import.meta.dir, "..", "plugin.ts"), "utf8"));
});

test.skipIf(!existsSync(TSC))("every template type-checks, strict, against coder-plugin.d.ts alone", () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "coder-scaffold-")));
  writeFileSync(join(dir, "coder-plugin.d.ts"), pluginDeclarations("test"));
  for (const kind of KINDS) writeFileSync(join(dir, `t-${kind}.ts`), pluginTemplate(`t-${kind}`, kind));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ESNext", module: "ESNext", moduleResolution: "bundler", lib: ["ESNext"], types: [], noUncheckedIndexedAccess: true }, include: ["*.ts"] }),
  );
  const r = Bun.spawnSync([TSC, "-p", dir], { cwd: dir });
  expect(r.stdout.toString()).toBe("");
  expect(r.exitCode).toBe(0);
});
