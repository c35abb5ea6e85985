// Bench section "grammars": what packing the embedded grammars costs on first use. Per language,
// the .wasm packed as scripts/build.ts packs it: raw and packed size, the first read (unpack,
// check, write the user-cache copy), a later read (from that cache), and loading the grammar into
// web-tree-sitter for scale. Medians of a few runs, each first read into a fresh cache folder.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GRAMMAR_ASSETS } from "../../grammars/embedded.ts";
import { LANGUAGES } from "../../grammars/languages.ts";
import { packAsset, readAsset } from "../../grammars/packed.ts";
import { median } from "../bench-lib.ts";

const RUNS = 5;

function timed(fn: () => unknown): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

export default async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "coder-bench-grammars-"));
  const { Language, Parser } = await import("web-tree-sitter");
  const { upgradeLegacyDylink } = await import("../../grammars/dylink.ts");
  const { RUNTIME_WASM } = await import("../../grammars/embedded.ts");
  await Parser.init({ wasmBinary: readFileSync(RUNTIME_WASM) } as object);
  try {
    console.log("## grammars: first use of a packed grammar (ms, median of 5; the binary ships the packed size)");
    console.log(`  ${"language".padEnd(16)} ${"raw".padStart(8)} ${"packed".padStart(8)} ${"first use".padStart(10)} ${"cached".padStart(8)} ${"load".padStart(8)}`);
    let raw = 0;
    let packed = 0;
    const firsts: number[] = [];
    for (const spec of LANGUAGES) {
      const source = GRAMMAR_ASSETS[spec.wasm]!;
      const bytes = readFileSync(source);
      const pack = packAsset(bytes);
      const path = join(dir, `${spec.name}.wasm`);
      writeFileSync(path, pack);
      const first: number[] = [];
      const cached: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const cache = join(dir, `cache-${spec.name}-${i}`);
        first.push(timed(() => readAsset(path, cache)));
        cached.push(timed(() => readAsset(path, cache)));
      }
      const load = median(await Promise.all([0, 1, 2].map(async () => {
        const started = performance.now();
        await Language.load(upgradeLegacyDylink(Uint8Array.from(bytes)));
        return performance.now() - started;
      })));
      raw += bytes.length;
      packed += pack.length;
      firsts.push(median(first));
      console.log(`  ${spec.name.padEnd(16)} ${(bytes.length / 1e6).toFixed(2).padStart(6)}MB ${(pack.length / 1e6).toFixed(2).padStart(6)}MB ${median(first).toFixed(1).padStart(10)} ${median(cached).toFixed(1).padStart(8)} ${load.toFixed(1).padStart(8)}`);
    }
    console.log(`  all ${LANGUAGES.length} grammars: ${(raw / 1e6).toFixed(1)} MB raw, ${(packed / 1e6).toFixed(1)} MB packed; worst first use ${Math.max(...firsts).toFixed(1)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await run();
