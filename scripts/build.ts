// Compile the self-contained `coder` binary: dist/coder for this machine, or with
// --release every supported target into dist/release/ with SHA256SUMS.
// Bytecode on; the binary never auto-loads a bunfig.toml, .env, tsconfig.json or
// package.json from the directory it runs in (coder reads the repository's .env
// itself, for API keys only). The version and the plugin API text are baked in.
// Code is split into chunks loaded on first import(), so `--version` evaluates only
// main.ts's own chunk; embedded grammars and queries are stored zstd-packed
// (grammars/packed.ts). dist/coder.modules.json maps each chunk to its source modules,
// for CODER_TRACE_MODULES (main.ts) and the test that keeps heavy packages off the start.
// CODER_BYTECODE=0 builds without bytecode (about 10 MB smaller, but `coder acp` and a task
// start markedly slower), for measuring that trade. The bytecode is laid out by the start-up
// profiles in scripts/bytecode-order/ (scripts/bytecode-order.ts), and the binary starts with a
// raised JIT policy (JIT_POLICY): both keep a short run's resident memory down.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import type { BunPlugin } from "bun";
import { packAsset } from "../grammars/packed.ts";
import { assetName } from "./release-lib.ts";

const ROOT = join(import.meta.dir, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

export const RELEASE_TARGETS = [
  "bun-linux-x64",
  "bun-linux-arm64",
  "bun-linux-x64-musl",
  "bun-linux-arm64-musl",
  "bun-darwin-x64",
  "bun-darwin-arm64",
  "bun-windows-x64",
] as const;

/** Entry points: main.ts, plus the repo map's worker when it exists (workers need their own entry). */
function entrypoints(): string[] {
  const list = [join(ROOT, "main.ts")];
  const worker = join(ROOT, "plugins/repomap/worker.ts");
  if (existsSync(worker)) list.push(worker);
  return list;
}

/**
 * The files embedded with `type: "file"` (grammars, queries, and js-tiktoken's rank tables, which
 * nothing imports as code) are stored packed; grammars/packed.ts's readAsset unpacks them. The
 * loader does not tell an import's `type` attribute, hence the paths.
 */
const EMBEDDED_FILE = /(\.wasm|\.scm|\/js-tiktoken\/dist\/ranks\/\w+\.cjs)$/;

const packEmbedded: BunPlugin = {
  name: "pack-embedded-files",
  setup(build) {
    build.onLoad({ filter: EMBEDDED_FILE }, async (args) => ({ contents: packAsset(await Bun.file(args.path).bytes()), loader: "file" }));
  },
};

/**
 * Each chunk records itself when it is evaluated, if CODER_TRACE_MODULES is set (main.ts writes
 * the list at exit): one environment read per chunk otherwise.
 */
const TRACE_BANNER = "process.env.CODER_TRACE_MODULES&&(globalThis.__coderChunks??=[]).push(import.meta.url);";

/** The bytecode layout profiles (scripts/bytecode-order.ts records them), most common start first. */
export const BYTECODE_PROFILES = ["task", "version", "acp"] as const;
export const PROFILE_DIR = join(ROOT, "scripts", "bytecode-order");

export function profilePath(name: (typeof BYTECODE_PROFILES)[number]): string {
  return join(PROFILE_DIR, `${name}.order`);
}

/**
 * JavaScriptCore's tier-up thresholds times this: code that runs during one short task (start-up,
 * the map from the cache, one request) stays in the interpreter instead of waking the JIT
 * compilers, whose own code would be paged in (the trivial task's peak RSS is 3.5 MB lower,
 * and it is no slower); hot loops (a cold map, counting a long text) still reach the JIT within
 * moments. The REPL restores the normal policy once it waits for input (core/cli/chat-modes.ts).
 */
export const JIT_POLICY = 30;

/** Chunk file name -> the source modules bundled into it (repository-relative), from the build's metafile. */
export type ModuleMap = Record<string, string[]>;

function moduleMap(metafile: { outputs: Record<string, { inputs: Record<string, unknown> }> }): ModuleMap {
  const map: ModuleMap = {};
  for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
    if (!/\.(js|ts)$/.test(output) && !output.endsWith("coder")) continue;
    map[basename(output)] = Object.keys(inputs)
      .map((input) => (input.startsWith("/") ? relative(ROOT, input) : input).replace(/^(\.\.\/)+[^/]+\/node_modules\//, "node_modules/"))
      .sort();
  }
  return map;
}

/** The profiles present (none when they were never recorded: the default layout). */
export function bytecodeProfiles(): string[] | false {
  const present = BYTECODE_PROFILES.map(profilePath).filter((path) => existsSync(path));
  return present.length ? present : false;
}

/** The `compile` options of Bun.build for one binary. */
export function compileOptions(outfile: string, target?: (typeof RELEASE_TARGETS)[number]) {
  return {
    outfile,
    ...(target ? { target } : {}),
    autoloadBunfig: false,
    autoloadDotenv: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
    jitPolicy: JIT_POLICY,
    // The recorded start-ups' bytecode first: a run touches fewer of the binary's pages.
    bytecodeOrder: process.env.CODER_BYTECODE !== "0" && bytecodeProfiles(),
  } satisfies Bun.CompileBuildOptions;
}

export async function buildBinary(outfile: string, target?: (typeof RELEASE_TARGETS)[number]): Promise<void> {
  const result = await Bun.build({
    entrypoints: entrypoints(),
    root: ROOT,
    format: "esm",
    splitting: true,
    metafile: true,
    banner: TRACE_BANNER,
    plugins: [packEmbedded],
    compile: compileOptions(outfile, target),
    bytecode: process.env.CODER_BYTECODE !== "0",
    minify: true,
    sourcemap: "none",
    define: {
      CODER_VERSION: JSON.stringify(pkg.version),
      CODER_PLUGIN_API: JSON.stringify(readFileSync(join(ROOT, "core/plugin.ts"), "utf8")),
    },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`build failed for ${target ?? "this machine"}`);
  }
  if (!target && result.metafile) writeFileSync(`${outfile}.modules.json`, `${JSON.stringify(moduleMap(result.metafile), null, 1)}\n`);
}

async function main(): Promise<void> {
  const release = process.argv.includes("--release");
  const dist = join(ROOT, "dist");
  mkdirSync(dist, { recursive: true });
  const started = performance.now();
  await buildBinary(join(dist, "coder"));
  console.log(`built dist/coder (coder ${pkg.version}) in ${Math.round(performance.now() - started)} ms`);
  if (!release) return;
  const out = join(dist, "release");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const sums: string[] = [];
  for (const target of RELEASE_TARGETS) {
    const name = assetName(pkg.version, target);
    const file = join(out, name);
    const t = performance.now();
    await buildBinary(target.includes("windows") ? file.replace(/\.exe$/, "") : file, target);
    const hash = new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
    sums.push(`${hash}  ${basename(file)}`);
    console.log(`built dist/release/${name} in ${Math.round(performance.now() - t)} ms`);
  }
  writeFileSync(join(out, "SHA256SUMS"), `${sums.join("\n")}\n`);
  console.log(`wrote dist/release/SHA256SUMS (${sums.length} binaries)`);
}

if (import.meta.main) {
  main().catch((error) => {
    const details = error instanceof AggregateError ? error.errors.map(String) : [];
    console.error([error instanceof Error ? error.message : String(error), ...details].join("\n"));
    process.exit(1);
  });
}
