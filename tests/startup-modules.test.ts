// What the compiled binary evaluates on its cheap paths (CODER_TRACE_MODULES, mapped to source
// modules through dist/coder.modules.json): --version and --help load no package at all, and a
// one-shot task none of the front ends or media it does not use. And `coder doctor` loads every
// embedded grammar through the packed path, leaving the unpacked grammars in the user's cache.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readTrace } from "../scripts/module-trace.ts";
import { BINARY, block, makeRepo, runCoder, serverPerTest } from "./engine-harness.ts";
import { LANGUAGES } from "../grammars/languages.ts";

const server = serverPerTest();

/** The Node built-ins a source module of the binary imports statically ("crypto" for `from "node:crypto"`); none for a module not on disk. */
function staticNodeImports(module: string): string[] {
  const path = join(import.meta.dir, "..", module.replace(/ \(library pack [^)]*\)$/, ""));
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s*["'](?:node:)?([a-z_/]+)["']|\brequire\(\s*["'](?:node:)?([a-z_/]+)["']\s*\)/gm)].map((m) => (m[1] ?? m[2])!);
}

/** Packages only a front end or a feature the run did not ask for needs. */
const HEAVY = [
  "@agentclientprotocol/sdk",
  "@modelcontextprotocol/sdk",
  "@mariozechner/pi-tui",
  "@jimp/core",
  "@mozilla/readability",
  "linkedom",
  "turndown",
  "zod",
  "@clack/prompts",
  "yaml",
];

async function traced(args: string[], opts: { cwd?: string; env?: Record<string, string>; stdin?: string; until?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "coder-trace-"));
  const file = join(dir, "trace.txt");
  try {
    const stdin = opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin);
    const proc = Bun.spawn([BINARY, ...args], { cwd: opts.cwd ?? dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...opts.env, CODER_TRACE_MODULES: file }, stdin, stdout: "pipe", stderr: "pipe" });
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    return { code, stdout, trace: readTrace(file, BINARY, opts.until) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!existsSync(BINARY))("start-up module graph (dist/coder)", () => {
  test("--version evaluates main.ts's own chunk and nothing else: no package, not even the help text or the option table", async () => {
    const r = await traced(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("coder ");
    expect(r.trace.modules).toEqual(["main.ts"]);
  });

  test("--help evaluates no package", async () => {
    const r = await traced(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--model");
    expect(r.trace.packages).toEqual([]);
  });

  test("a one-shot edit evaluates none of the ACP or MCP SDKs, the REPL, the media or web libraries (nor the media plugin's clipboard, voice and web modules), zod (even with model overrides in the config), the documentation /help answers from, or node:crypto, net, dns or readline", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    mkdirSync(join(repo.home, ".config", "coder"), { recursive: true });
    writeFileSync(join(repo.home, ".config", "coder", "config.json"), JSON.stringify({ models: { "openai/gpt-4.1": { contextWindow: 1000000, prices: { input: 2, output: 8 }, capabilities: { images: true } } } }));
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n") }]);
    const file = join(repo.home, "trace.txt");
    const r = await runCoder(repo, s, ["--yes-always", "-m", "x=2", "a.py"], { env: { CODER_TRACE_MODULES: file } });
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\n");
    const { packages, modules } = readTrace(file, BINARY);
    expect(packages).toContain("openai");
    expect(packages.filter((p) => HEAVY.some((h) => p === h || p.startsWith("@jimp/")))).toEqual([]);
    expect(modules.filter((m) => /^core\/(acp|term\/repl|watch)\b/.test(m))).toEqual([]);
    expect(modules.filter((m) => m.endsWith(".md"))).toEqual([]);
    // The media plugin's clipboard, voice and web modules load with their commands only.
    expect(modules.filter((m) => /^plugins\/media\/(clipboard|voice|web|fetch|markdown)\.ts$/.test(m))).toEqual([]);
    // Nor does any module it evaluated import, at its top, a Node module the task has no use for
    // (UUIDs and hashes come from Bun's own crypto, which is already loaded).
    expect(modules.filter((m) => staticNodeImports(m).some((n) => /^(crypto|net|dns|dns\/promises|readline)$/.test(n)))).toEqual([]);
  });

  test("the web page, image, MCP, ACP, set-up, YAML and zod libraries are not in the binary's code, only a stand-in that imports their pack", () => {
    const map = JSON.parse(readFileSync(`${BINARY}.modules.json`, "utf8")) as Record<string, string[]>;
    const modules = Object.values(map).flat();
    const packed = /^node_modules\/(linkedom|@mozilla\/readability|turndown|@joplin\/turndown-plugin-gfm|@mixmark-io|htmlparser2|@jimp\/|image-size|file-type|@modelcontextprotocol\/|ajv|@clack\/|yaml|@agentclientprotocol\/|zod)\b/;
    const bundled = modules.filter((m) => packed.test(m) && !/ \(library pack \w+\)$/.test(m));
    expect(bundled).toEqual([]);
    expect(modules).toContain("node_modules/linkedom (library pack web)");
    expect(modules).toContain("node_modules/yaml (library pack yaml)");
    expect(modules).toContain("node_modules/@modelcontextprotocol/sdk/client/index.js (library pack mcp)");
    expect(modules).toContain("node_modules/@agentclientprotocol/sdk (library pack acp)");
    expect(modules).toContain("node_modules/zod (library pack zod)");
  });

  test("coder eval's runner and report, and /paste, /copy and /voice, are not in the binary's code, only a stand-in that imports their code pack (tests/eval.test.ts and media-repl.test.ts run them)", () => {
    const map = JSON.parse(readFileSync(`${BINARY}.modules.json`, "utf8")) as Record<string, string[]>;
    const modules = Object.values(map).flat();
    expect(modules.filter((m) => m.startsWith("plugins/eval/") && !/ \(code pack eval\)$/.test(m)).sort()).toEqual(["plugins/eval/index.ts", "plugins/eval/options.ts"]);
    expect(modules.filter((m) => /^plugins\/media\/(clipboard|voice)\.ts/.test(m)).sort()).toEqual(["plugins/media/clipboard.ts (code pack media)", "plugins/media/voice.ts (code pack media)"]);
    expect(modules).toContain("plugins/eval/runner.ts (code pack eval)");
    expect(modules).toContain("plugins/eval/report.ts (code pack eval)");
  });

  test("coder acp answers initialize before it evaluates any package (the ACP SDK, zod; with a config file, only its JSONC parser) or the kernel past the settings and the model adapter", async () => {
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    const repo = makeRepo({ ".coder.json": '{ "model": "anthropic/claude-sonnet-4", "autoCommits": false, "read": ["AGENTS.md"] }\n' });
    const withConfig = await traced(["acp"], { cwd: repo.root, stdin: `${initialize}\n`, until: "acp initialize answered" });
    expect(withConfig.code).toBe(0);
    expect(JSON.parse(withConfig.stdout.split("\n")[0]!).result.authMethods[0].description).toContain("ANTHROPIC_API_KEY");
    expect(withConfig.trace.packages).toEqual(["jsonc-parser"]);
    const r = await traced(["acp"], { stdin: `${initialize}\n`, until: "acp initialize answered" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.split("\n")[0]!).result.authMethods[0].id).toBe("api-key");
    expect(r.trace.packages).toEqual([]);
    expect(r.trace.modules).toContain("core/acp/initialize.ts");
    // No engine, kit or front end; of the plugins only the model adapter, and what the built-ins declare to the command line.
    expect(r.trace.modules.filter((m) => /^(core\/(boot|term\/(?!style\.ts)|chat\/(?!model-choice\.ts)|acp\/(agent|session)))/.test(m))).toEqual([]);
    expect(r.trace.modules.filter((m) => /^(formats|plugins)\//.test(m) && !/\/options\.ts$/.test(m) && !m.startsWith("plugins/openai/"))).toEqual([]);
  });

  test("js-tiktoken's four rank tables are embedded as one packed group: /tokens through the binary counts as from source with each encoding", async () => {
    const bytes = readFileSync(BINARY);
    const has = (text: string) => bytes.includes(Buffer.from(text));
    expect(has("/$bunfs/root/tiktoken-ranks-")).toBe(true);
    for (const name of ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"]) expect(has(`/$bunfs/root/${name}-`), name).toBe(false);
    const repo = makeRepo({ "a.py": 'def greet(name):\n    return "Hello, " + name + "!"  # ünïcode ✓ ゆ\n    # spaces:            end\n' });
    const cache = join(repo.home, "cache");
    for (const encoding of ["p50k_base", "r50k_base", "cl100k_base", "o200k_base"]) {
      mkdirSync(join(repo.home, ".config", "coder"), { recursive: true });
      writeFileSync(join(repo.home, ".config", "coder", "config.json"), JSON.stringify({ models: { "openai/gpt-4.1": { encoding } } }));
      const args = ["--model", "openai/gpt-4.1", "--api-base", "http://127.0.0.1:9/v1", "--no-pretty", "--map-tokens", "0", "-m", "/tokens", "a.py"];
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CACHE_HOME: cache, OPENAI_API_KEY: "sk-test" };
      const run = async (argv: string[]) => {
        const proc = Bun.spawn(argv, { cwd: repo.root, env, stdout: "pipe", stderr: "pipe" });
        const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
        return { out, code };
      };
      const [compiled, source] = [await run([BINARY, ...args]), await run([process.execPath, join(import.meta.dir, "..", "main.ts"), ...args])];
      expect(compiled.code, encoding).toBe(0);
      expect(compiled.out, encoding).toMatch(/\d+ +\$[\d.]+ +a\.py/);
      expect(compiled.out, encoding).toBe(source.out);
    }
    // Each table was cut from the group once and cached under its own name.
    const versions = readdirSync(join(cache, "coder", "grammars"));
    expect(readdirSync(join(cache, "coder", "grammars", versions[0]!)).filter((f) => f.endsWith(".cjs") || /\.cjs-[0-9a-f]{8}$/.test(f)).sort()).toEqual([
      expect.stringMatching(/^cl100k_base\.cjs-/),
      expect.stringMatching(/^o200k_base\.cjs-/),
      expect.stringMatching(/^p50k_base\.cjs-/),
      expect.stringMatching(/^r50k_base\.cjs-/),
    ]);
  }, 120_000);

  test("coder doctor loads every embedded grammar from its packed form, unpacked once into the user's cache", async () => {
    const home = mkdtempSync(join(tmpdir(), "coder-doctor-cache-"));
    try {
      const env = { XDG_CACHE_HOME: join(home, "cache") };
      const r = await traced(["doctor"], { env });
      expect(r.stdout).toContain("Grammars:");
      for (const spec of LANGUAGES) expect(r.stdout, spec.name).toMatch(new RegExp(`ok\\s+${spec.name}\\s`));
      const versions = readdirSync(join(home, "cache", "coder", "grammars"));
      expect(versions.length).toBe(1);
      const cached = readdirSync(join(home, "cache", "coder", "grammars", versions[0]!));
      // Every grammar above the cache threshold is there once (tiny ones are unpacked in memory).
      expect(cached.filter((f) => /\.wasm-[0-9a-f]{8}$/.test(f)).length).toBeGreaterThanOrEqual(20);
      // A second doctor reads them back and still passes.
      const again = await traced(["doctor"], { env });
      for (const spec of LANGUAGES) expect(again.stdout, spec.name).toMatch(new RegExp(`ok\\s+${spec.name}\\s`));
      expect(readdirSync(join(home, "cache", "coder", "grammars", versions[0]!)).sort()).toEqual(cached.sort());
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
