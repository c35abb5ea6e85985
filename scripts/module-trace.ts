// What a run of dist/coder evaluated, by package: `bun scripts/module-trace.ts -- ARGS...` runs
// dist/coder ARGS with CODER_TRACE_MODULES and prints the source modules of every chunk it
// evaluated (grouped by npm package; our own files listed by folder), and what came before each
// mark the run set (`bun scripts/module-trace.ts -- acp < initialize.jsonl`: before the answer to
// initialize). The test tests/startup-modules.test.ts holds the start-up paths to what they need.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface ModuleTrace {
  chunks: string[];
  /** Every source module evaluated (repository-relative; packages as node_modules/...). */
  modules: string[];
  /** The npm packages among them. */
  packages: string[];
}

/**
 * Map the chunk names a CODER_TRACE_MODULES file lists to their modules (dist/coder.modules.json);
 * with `until`, only the chunks evaluated before that mark (core/trace.ts markModules).
 */
export function readTrace(traceFile: string, binary: string, until?: string): ModuleTrace {
  const map = JSON.parse(readFileSync(`${binary}.modules.json`, "utf8")) as Record<string, string[]>;
  let lines = readFileSync(traceFile, "utf8").split("\n").filter(Boolean);
  if (until !== undefined) {
    const at = lines.indexOf(`#${until}`);
    if (at < 0) throw new Error(`${traceFile} has no mark "${until}"`);
    lines = lines.slice(0, at);
  }
  const chunks = lines.filter((line) => !line.startsWith("#"));
  const modules = [...new Set(chunks.flatMap((c) => map[c] ?? [`(unknown chunk ${c})`]))].sort();
  const packages = [...new Set(modules.flatMap((m) => (m.startsWith("node_modules/") ? [packageOf(m)] : [])))].sort();
  return { chunks, modules, packages };
}

export function packageOf(module: string): string {
  // A library pack's stand-in is named "node_modules/zod (library pack zod)": the package is zod.
  const parts = module.replace(/ \(library pack [^)]*\)$/, "").split("/");
  return parts[1]!.startsWith("@") ? `${parts[1]}/${parts[2]}` : parts[1]!;
}

if (import.meta.main) {
  const binary = process.env.CODER_BIN ?? join(import.meta.dir, "..", "dist", "coder");
  const args = process.argv.slice(2).filter((a, i) => !(i === 0 && a === "--"));
  const trace = join(require("node:os").tmpdir(), `coder-trace-${process.pid}.txt`);
  const proc = Bun.spawnSync([binary, ...args], { stdin: "inherit", stdout: "ignore", stderr: "inherit", env: { ...process.env, CODER_TRACE_MODULES: trace } });
  const print = (title: string, t: ModuleTrace) => {
    const own = [...new Set(t.modules.filter((m) => !m.startsWith("node_modules/")).map((m) => m.split("/").slice(0, -1).join("/") || m))];
    console.log(`${title}: ${t.chunks.length} chunks, ${t.modules.length} modules`);
    console.log(`  packages: ${t.packages.join(", ") || "(none)"}`);
    console.log(`  our folders: ${own.join(", ")}`);
  };
  print(`coder ${args.join(" ")} (exit ${proc.exitCode})`, readTrace(trace, binary));
  // What came before each mark (\`coder acp\`: before its answer to initialize).
  for (const mark of readFileSync(trace, "utf8").split("\n").filter((line) => line.startsWith("#"))) print(`  before "${mark.slice(1)}"`, readTrace(trace, binary, mark.slice(1)));
}
