// The issue's target table, every row beside its floor in the same run, and with a baseline
// binary the same rows for an older build measured alongside (samples interleaved run by run, so
// a busy machine weighs on both alike). A row is one entry of TARGET_ROWS: add a row there.
import { chmodSync, closeSync, copyFileSync, fsyncSync, mkdirSync, openSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitAll, git, median } from "./bench-lib.ts";
import { generateRepo, instantServer } from "./bench/engine.ts";

export interface TargetContext {
  /** The Bun-compiled hello-world of this run. */
  hello: string;
  /** A scratch directory (empty but for what rows create in it). */
  dir: string;
  runs: number;
}

export interface TargetRow {
  figure: string;
  /** How a value prints: "x" (a ratio), "MB", "ms", "s". */
  unit: "x" | "MB" | "ms" | "s";
  /** The floor, met when the value is at most this. */
  floor: number;
  /** One value per binary; `bins` is [new] or [old, new], measured in the same loop. */
  measure: (bins: string[], ctx: TargetContext) => Promise<number[]>;
}

/** Wall time of one run of argv, in ms (the process must exit 0). */
function wallOnce(argv: string[], cwd: string): number {
  const started = performance.now();
  const proc = Bun.spawnSync(argv, { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const ms = performance.now() - started;
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${proc.exitCode}: ${proc.stderr.toString().slice(0, 500)}`);
  return ms;
}

/** Medians of each sampler, sampled in turn `runs` times after two warm-up rounds. */
async function interleaved(samplers: (() => number | Promise<number>)[], runs: number): Promise<number[]> {
  const samples = samplers.map(() => [] as number[]);
  for (let i = 0; i < runs + 2; i++) {
    for (const [k, sample] of samplers.entries()) {
      const value = await sample();
      if (i >= 2) samples[k]!.push(value);
    }
  }
  return samples.map(median);
}

/** Ratio of each binary's median to the hello-world's, sampled in the same rounds. */
async function ratioToHello(ctx: TargetContext, bins: string[], sample: (bin: string) => number | Promise<number>): Promise<number[]> {
  const [hello, ...rest] = await interleaved([() => wallOnce([ctx.hello], ctx.dir), ...bins.map((bin) => () => sample(bin))], ctx.runs);
  return rest.map((ms) => ms / hello!);
}

/** Spawn `coder acp`, send `initialize`, and time until its answer arrives. */
async function acpInitializeMs(bin: string, cwd: string): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([bin, "acp"], { cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore", env: { ...process.env, NO_COLOR: "1" } });
  proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
  proc.stdin.flush();
  let seen = "";
  const decoder = new TextDecoder();
  let ms = 0;
  for await (const chunk of proc.stdout) {
    seen += decoder.decode(chunk);
    if (/"id":1[,}]/.test(seen) && seen.includes("\n")) {
      ms = performance.now() - started;
      break;
    }
  }
  proc.kill();
  await proc.exited;
  if (!ms) throw new Error(`${bin} acp never answered initialize: ${seen.slice(0, 300)}`);
  return ms;
}

/** Peak RSS (MB) of one run of argv, from a fresh helper whose only child it is (async: the model server runs in this process). */
async function peakRssMB(argv: string[], cwd: string, env: Record<string, string>): Promise<number> {
  const script = "const p = Bun.spawnSync(process.argv.slice(1), { stdout: 'ignore', stderr: 'ignore' }); console.log(p.exitCode, p.resourceUsage.maxRSS);";
  const helper = Bun.spawn([process.execPath, "-e", script, ...argv], { cwd, env, stdout: "pipe" });
  const [code, rss] = (await new Response(helper.stdout).text()).trim().split(" ");
  await helper.exited;
  if (code !== "0") throw new Error(`${argv.join(" ")} exited ${code}`);
  return Number(rss) / 1024 / 1024;
}

/**
 * The issue's trivial task, set up in `dir`: a 20-file repository, committed (`head`), an instant
 * model (`server`, to stop), and the argv of the task for a binary: one SEARCH/REPLACE edit,
 * committed with a weak-model message. The bytecode profiles record the same task.
 */
export function trivialTask(dir: string): { repo: string; home: string; head: string; server: ReturnType<typeof instantServer>; argv(bin: string): string[] } {
  const repo = join(dir, "trivial");
  const home = join(dir, "trivial-home");
  mkdirSync(repo, { recursive: true });
  mkdirSync(home, { recursive: true });
  generateRepo(repo, 20);
  commitAll(repo);
  const head = git(repo, "rev-parse", "HEAD");
  const server = instantServer();
  const argv = (bin: string) => [bin, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak", "--api-base", server.url, "--api-key", "sk-bench", "--yes-always", "--no-pretty", "-m", "Raise LIMIT to 2.", "app.py"];
  return { repo, home, head, server, argv };
}

/**
 * Drop a binary's pages from the page cache (GNU dd's `iflag=nocache`: posix_fadvise DONTNEED on
 * the file alone; false where that is not available). Most of a short run's resident memory is
 * the binary's own pages, and how many a fault maps depends on how they came into the page cache:
 * written by the build (or a copy) in large writes, the kernel keeps them as large folios and maps
 * each whole, and the same binary's trivial task reads up to 4 MB higher than once its pages were
 * brought in by running it, which is how a binary's pages are cached after a reboot or eviction.
 * So each binary starts from nothing and its warm-up runs bring its pages in: old and new alike.
 */
function evictPageCache(bin: string): boolean {
  // Pages a build just wrote are dirty until written back, and only clean ones can be dropped.
  const fd = openSync(bin, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const dd = Bun.spawnSync(["dd", `if=${bin}`, "iflag=nocache", "count=0", "status=none"], { stdout: "ignore", stderr: "ignore" });
  return dd.exitCode === 0;
}

/**
 * The trivial task's peak RSS per binary. With `modelDelayMs`, the model answers that long after
 * each request, as a real one does: what a run holds while it waits (a background worker started
 * then, say) shows up here and not with the instant model. Each binary has a repository and home
 * of its own: two builds whose caches differ (the repo map's tags, the grammars) would otherwise
 * invalidate each other's every run, and both measure a cold cache.
 */
async function trivialTaskRss(given: string[], ctx: TargetContext, modelDelayMs = 0): Promise<number[]> {
  // Each binary is run from a private copy: pages another process has mapped (another bench, or a
  // session, running the same file) cannot be dropped, and a shared baseline read 3 MB high so.
  const bins = given.map((bin, i) => {
    const copy = join(ctx.dir, `rss-bin-${modelDelayMs}-${i}`);
    copyFileSync(bin, copy);
    chmodSync(copy, 0o755);
    return copy;
  });
  const tasks = bins.map((_, i) => trivialTask(join(ctx.dir, `rss-${modelDelayMs}-${i}`)));
  // A proxy that waits before passing each request on to the instant model.
  const proxies = tasks.map(({ server }) =>
    modelDelayMs
      ? Bun.serve({
          hostname: "127.0.0.1",
          port: 0,
          async fetch(req) {
            const body = await req.text();
            await Bun.sleep(modelDelayMs);
            return fetch(`${server.url}${new URL(req.url).pathname.replace(/^\/v1/, "")}`, { method: "POST", body, headers: { "content-type": "application/json" } });
          },
        })
      : null,
  );
  if (!bins.map(evictPageCache).every(Boolean)) console.log("  (the binaries' page cache could not be dropped: the RSS row measures them as cached, which can read several MB higher)");
  try {
    return await interleaved(
      bins.map((bin, i) => async () => {
        const { repo, home, head, server, argv } = tasks[i]!;
        const proxy = proxies[i];
        const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
        git(repo, "reset", "-q", "--hard", head);
        return peakRssMB(argv(bin).map((arg) => (proxy && arg === server.url ? `http://127.0.0.1:${proxy.port}/v1` : arg)), repo, env);
      }),
      Math.max(5, Math.round(ctx.runs / 4)),
    );
  } finally {
    for (const proxy of proxies) proxy?.stop(true);
    for (const { server } of tasks) server.stop();
  }
}

export const TARGET_ROWS: TargetRow[] = [
  { figure: "--version / Bun hello-world", unit: "x", floor: 1.5, measure: (bins, ctx) => ratioToHello(ctx, bins, (bin) => wallOnce([bin, "--version"], ctx.dir)) },
  { figure: "binary size", unit: "MB", floor: 120, measure: async (bins) => bins.map((bin) => statSync(bin).size / 1e6) },
  { figure: "coder acp spawn → initialize / hello-world", unit: "x", floor: 8, measure: (bins, ctx) => ratioToHello(ctx, bins, (bin) => acpInitializeMs(bin, ctx.dir)) },
  { figure: "trivial task peak RSS", unit: "MB", floor: 60, measure: (bins, ctx) => trivialTaskRss(bins, ctx) },
  // The same task with a model that takes 1.5 s to answer, as a real one does (not a row of the issue's table).
  { figure: "… the model answering after 1.5 s", unit: "MB", floor: 60, measure: (bins, ctx) => trivialTaskRss(bins, ctx, 1500) },
];

function format(value: number, unit: TargetRow["unit"]): string {
  if (unit === "x") return `${value.toFixed(2)}x`;
  if (unit === "MB") return `${value.toFixed(1)} MB`;
  if (unit === "s") return `${value.toFixed(1)} s`;
  return `${value.toFixed(1)} ms`;
}

/** Measure and print every row: the new build's value beside its floor, and the baseline's when given. */
export async function printTargets(options: { bin: string; baseline?: string; hello: string; dir: string; runs: number }, rows: TargetRow[] = TARGET_ROWS): Promise<void> {
  const bins = options.baseline ? [options.baseline, options.bin] : [options.bin];
  const ctx: TargetContext = { hello: options.hello, dir: options.dir, runs: options.runs };
  writeFileSync(join(options.dir, ".keep"), "");
  console.log(`## targets (issue 26), same run${options.baseline ? `: baseline ${options.baseline} beside ${options.bin}` : ""}`);
  const header = options.baseline ? `${"old".padStart(10)}  ${"new".padStart(10)}` : `${"value".padStart(10)}`;
  console.log(`  ${"figure".padEnd(44)} ${header}  ${"floor".padStart(10)}`);
  for (const row of rows) {
    const values = await row.measure(bins, ctx);
    const now = values[values.length - 1]!;
    const cells = values.map((v) => format(v, row.unit).padStart(10)).join("  ");
    console.log(`  ${row.figure.padEnd(44)} ${cells}  ${`≤ ${format(row.floor, row.unit)}`.padStart(10)}  ${now <= row.floor ? "met" : "NOT met"}`);
  }
}
