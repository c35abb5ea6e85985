// Compile the self-contained `coder` binary: dist/coder for this machine, or with
// --release every supported target into dist/release/ with SHA256SUMS.
// Bytecode on; the binary never auto-loads a bunfig.toml, .env, tsconfig.json or
// package.json from the directory it runs in (coder reads the repository's .env
// itself, for API keys only). The version and the plugin API text are baked in.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
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

export async function buildBinary(outfile: string, target?: (typeof RELEASE_TARGETS)[number]): Promise<void> {
  const result = await Bun.build({
    entrypoints: entrypoints(),
    root: ROOT,
    compile: {
      outfile,
      ...(target ? { target } : {}),
      autoloadBunfig: false,
      autoloadDotenv: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
    bytecode: true,
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
