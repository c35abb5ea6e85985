// The build's settings that keep a short run's resident memory down (issue 26): the bytecode laid
// out by the recorded start-up profiles, and a raised JIT policy the REPL lowers again. And its
// library packs: an import of a packed library resolves to the pack's stand-in, and one by a
// specifier the pack does not list fails the build with the fix.
import { afterEach, expect, test } from "bun:test";
import type { BunPlugin } from "bun";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BYTECODE_PROFILES, builtinsAtRunTime, codePackImports, compileOptions, JIT_POLICY, packImports, packingOf, profilePath, RUNTIME_BUILTINS, runtimeBuiltinImporters } from "./build.ts";
import { CACHE_ABOVE } from "../grammars/packed.ts";

test("the binary's bytecode is laid out by the recorded start-up profiles, the one-shot task's first", () => {
  const options = compileOptions("/tmp/coder-test-out");
  expect(options.bytecodeOrder).toEqual(BYTECODE_PROFILES.map(profilePath));
  expect(BYTECODE_PROFILES[0]).toBe("task");
  for (const name of BYTECODE_PROFILES) {
    const lines = readFileSync(profilePath(name), "utf8").split("\n");
    // Bun's profile format: a version line, then a line per function or code block the run used.
    expect(lines[0]).toBe("v2");
    expect(lines.filter((l) => /^[A-Z] [0-9a-f]+/.test(l)).length).toBeGreaterThan(1000);
  }
});

test("the binary starts with a raised JIT policy, and a session that waits for input (the REPL, coder acp) restores the normal one", () => {
  expect(compileOptions("/tmp/coder-test-out").jitPolicy).toBe(JIT_POLICY);
  expect(JIT_POLICY).toBeGreaterThan(1);
  const modes = readFileSync(new URL("../core/cli/chat-modes.ts", import.meta.url), "utf8");
  expect(modes).toContain("if (message === null) Bun.unsafe.setJITPolicy(1);");
  // coder acp serves an editor for hours.
  expect(readFileSync(new URL("../core/acp/agent.ts", import.meta.url), "utf8")).toContain("Bun.unsafe.setJITPolicy(1);");
});

const ROOT = join(import.meta.dir, "..");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Bundle one entry (inside the repository, so its packages resolve) with `plugins`, by default the
 * pack plugin and a stand-in yaml pack (the file is only embedded, and only the names below are known).
 */
async function bundle(source: string, plugins?: (dir: string) => BunPlugin[]) {
  mkdirSync(join(ROOT, "dist"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, "dist", "build-test-"));
  dirs.push(dir);
  const entry = join(dir, "entry.ts");
  writeFileSync(entry, source);
  writeFileSync(join(dir, "yaml.cdz"), "packed");
  const using = plugins ? plugins(dir) : [packImports({ yaml: { file: join(dir, "yaml.cdz"), exports: [["parse", "stringify"]] } })];
  return Bun.build({ entrypoints: [entry], root: dir, outdir: join(dir, "out"), target: "bun", format: "esm", metafile: true, throw: false, plugins: using });
}

test("an import of a packed library by a specifier its pack does not list fails the build, naming the fix", async () => {
  const result = await bundle('import { Server } from "@modelcontextprotocol/sdk/server/index.js";\nconsole.log(Server);\n');
  expect(result.success).toBe(false);
  expect(result.logs.map(String).join("\n")).toContain("imports @modelcontextprotocol/sdk/server/index.js, which belongs to the mcp library pack but is not one of its specifiers: add it to LIBRARY_PACKS in scripts/build.ts");
});

test("a listed specifier is bundled as the pack's stand-in, not as the library's code", async () => {
  const result = await bundle('const { parse } = await import("yaml");\nconsole.log(parse("a: 1"));\n');
  expect(result.success).toBe(true);
  const inputs = Object.keys(result.metafile!.inputs);
  expect(inputs.filter((i) => i.includes("node_modules/yaml"))).toEqual([]);
  expect(inputs).toContain("library-pack:yaml:yaml");
  const code = (await Promise.all(result.outputs.filter((o) => o.path.endsWith(".js")).map((o) => o.text()))).join("\n");
  expect(code).toContain("importPacked");
  expect(code).toContain('["parse"]');
});

test("what is unpacked once into the user's cache is packed with brotli, what is unpacked on every use with zstd", () => {
  expect(packingOf(CACHE_ABOVE + 1)).toEqual({ codec: "brotli", level: 11 });
  expect(packingOf(CACHE_ABOVE)).toEqual({ codec: "zstd", level: 19 });
  expect(packingOf(300)).toEqual({ codec: "zstd", level: 19 });
});

/** Bundle one entry with the built-ins plugin (no bytecode: what the plugin does is in the code). */
const bundleBuiltins = (source: string) => bundle(source, () => [builtinsAtRunTime]);

test("imports and require() of the built-ins in RUNTIME_BUILTINS are taken at run time (no bytecode of theirs embedded), and work the same", async () => {
  expect(RUNTIME_BUILTINS).toEqual(["child_process", "net", "dns/promises", "crypto"]);
  const result = await bundleBuiltins(
    [
      'import { readFileSync } from "node:fs";',
      'import * as net from "net";',
      'const { spawnSync } = require("node:child_process");',
      'const { lookup } = await import("node:dns/promises");',
      'import { createHash, randomUUID } from "crypto";',
      'console.log(JSON.stringify({ self: readFileSync(import.meta.path, "utf8").length > 0, ip: net.isIP("127.0.0.1"), v6: net.isIPv6("::1"), echo: spawnSync("echo", ["hi"]).stdout.toString(), lookup: typeof lookup, sha: createHash("sha256").update("a").digest("hex").slice(0, 8), uuid: randomUUID().length }));',
    ].join("\n"),
  );
  expect(result.logs.map(String).join("\n")).toBe("");
  expect(runtimeBuiltinImporters(result.metafile!)).toEqual([]);
  const code = await result.outputs[0]!.text();
  for (const name of RUNTIME_BUILTINS) expect(code).toContain(`process.getBuiltinModule("node:${name}")`);
  expect(code).not.toMatch(/(from\s*|import\(|require\()"(node:)?(net|child_process|dns\/promises|crypto)"/);
  // node:fs stays an import: every start uses it.
  expect(code).toMatch(/from\s*"(node:)?fs"/);
  // Only the names used are kept.
  expect(code).not.toContain("execFileSync");
  const run = Bun.spawnSync([process.execPath, result.outputs[0]!.path], { stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  expect(JSON.parse(run.stdout.toString())).toEqual({ self: true, ip: 4, v6: true, echo: "hi\n", lookup: "function", sha: "ca978112", uuid: 36 });
});

test("a module with an import of a run-time built-in and a string that reads like one fails the build instead of changing the string", async () => {
  const result = await bundleBuiltins('import { isIP } from "node:net";\nexport const advice = \'check it with import("node:net")\';\nconsole.log(advice, isIP);\n');
  expect(result.success).toBe(false);
  expect(result.logs.map(String).join("\n")).toContain("2 texts read as imports of a Node built-in but 1 are imports");
});

test("a string that reads like an import of a built-in, in a module that imports none, is left as it is", async () => {
  const result = await bundleBuiltins("console.log('see import(\"node:net\")');\n");
  expect(result.success).toBe(true);
  expect(await result.outputs[0]!.text()).toContain('see import("node:net")');
});

test("an import of a code pack's own file that is not one of its entries fails the build, naming the fix", async () => {
  const result = await bundle('import { summarize } from "../../plugins/eval/summarize.ts";\nconsole.log(summarize);\n', (dir) => [codePackImports({ eval: { file: join(dir, "eval.cdz"), hosts: [], exports: [[], []] } })]);
  expect(result.success).toBe(false);
  expect(result.logs.map(String).join("\n")).toContain("imports plugins/eval/summarize.ts, which is in the eval code pack but is not one of its entries: add it to CODE_PACKS in scripts/build.ts");
});
