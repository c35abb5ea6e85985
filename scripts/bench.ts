// `npm run bench`: start-up cost of dist/coder beside a Bun-compiled
// hello-world built here (same machine, same run), then every section file in
// scripts/bench/*.ts, each run as its own process with CODER_BIN set.
// A section file is a plain script that prints its own lines; add one to add a section.
// `npm run bench -- startup engine` runs only the sections named (startup is this file's own).
// `--baseline OLD_BINARY` runs the target table (scripts/bench-targets.ts) for an older build
// beside this one, in the same run: `npm run bench -- startup --baseline /tmp/coder-old`.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./bench-lib.ts";
import { printTargets } from "./bench-targets.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.CODER_BIN ?? join(ROOT, "dist", "coder");
const RUNS = Math.max(20, Number(process.env.BENCH_RUNS ?? 30));

export interface Sample {
  wallMs: number;
  rssMB: number;
}

export interface Summary {
  label: string;
  medianMs: number;
  medianRssMB: number;
  peakRssMB: number;
}

// A child's rusage as Bun reports it is the running maximum over all children of
// this process, so each RSS sample comes from a fresh helper process whose only
// child is the measured run.
const RSS_HELPER = "const p = Bun.spawnSync(process.argv.slice(1), { stdout: 'ignore', stderr: 'ignore' }); console.log(p.resourceUsage.maxRSS);";

function rssOnce(argv: string[], cwd?: string): number {
  const helper = Bun.spawnSync([process.execPath, "-e", RSS_HELPER, ...argv], { cwd, stdout: "pipe", stderr: "pipe" });
  return Number(helper.stdout.toString().trim()) / 1024 / 1024;
}

/** Run argv `runs` times (after two warm-up runs): wall time and peak RSS of each run. */
export async function measure(label: string, argv: string[], runs = RUNS, cwd?: string): Promise<Summary> {
  const samples: Sample[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const started = performance.now();
    const proc = Bun.spawn(argv, { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    const exitCode = await proc.exited;
    const wallMs = performance.now() - started;
    if (exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${exitCode}: ${await new Response(proc.stderr).text()}`);
    if (i >= 2) samples.push({ wallMs, rssMB: rssOnce(argv, cwd) });
  }
  return {
    label,
    medianMs: median(samples.map((s) => s.wallMs)),
    medianRssMB: median(samples.map((s) => s.rssMB)),
    peakRssMB: Math.max(...samples.map((s) => s.rssMB)),
  };
}

/** A Bun-compiled hello-world, built with the same options as coder (bytecode on). */
async function buildHello(dir: string): Promise<string> {
  const source = join(dir, "hello.ts");
  writeFileSync(source, 'console.log("hello");\n');
  const outfile = join(dir, "hello");
  await Bun.build({ entrypoints: [source], compile: { outfile, autoloadBunfig: false, autoloadDotenv: false }, bytecode: true, minify: true });
  return outfile;
}

function row(s: Summary, base?: Summary): string {
  const ratio = base ? `  ${(s.medianMs / base.medianMs).toFixed(2)}x time  ${(s.medianRssMB / base.medianRssMB).toFixed(2)}x rss` : "";
  return `  ${s.label.padEnd(22)} ${s.medianMs.toFixed(1).padStart(7)} ms  ${s.medianRssMB.toFixed(1).padStart(6)} MB (peak ${s.peakRssMB.toFixed(1)} MB)${ratio}`;
}

async function startupSection(baseline: string | undefined): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: run \`npm run build\` first`);
  if (baseline && !existsSync(baseline)) throw new Error(`--baseline ${baseline} does not exist`);
  const dir = mkdtempSync(join(tmpdir(), "coder-bench-"));
  try {
    const hello = await buildHello(dir);
    await printTargets({ bin: BIN, baseline, hello, dir, runs: RUNS });
    // Run from an empty directory so no config or repository is in play.
    const hw = await measure("hello-world", [hello], RUNS, dir);
    const version = await measure("coder --version", [BIN, "--version"], RUNS, dir);
    const help = await measure("coder --help", [BIN, "--help"], RUNS, dir);
    // For reference: argv, config lookup and every built-in plugin registered (the kernel's share of a chat's start).
    const plugins = await measure("coder plugins", [BIN, "plugins"], RUNS, dir);
    console.log(`## start-up (median of ${RUNS} runs; ratios against the hello-world of this run)`);
    console.log(row(hw));
    console.log(row(version, hw));
    console.log(row(help, hw));
    console.log(row(plugins, hw));
    const ratio = version.medianMs / hw.medianMs;
    console.log(`  target: --version within 2.5x of hello-world: ${ratio <= 2.5 ? "met" : "NOT met"} (${ratio.toFixed(2)}x)`);
    await replSection(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));

/** Milliseconds from spawning `argv` in a pseudo-terminal until `ready` appears in its output; then Ctrl-D. */
async function inPty(argv: string[], ready: string, cwd: string, env: Record<string, string | undefined>): Promise<number> {
  const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const started = performance.now();
  const proc = Bun.spawn([SCRIPT as string, "-qfec", `exec ${command}`, "/dev/null"], { cwd, env, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  let seen = "";
  let at = 0;
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) {
    seen += decoder.decode(chunk);
    if (!at && seen.includes(ready)) {
      at = performance.now() - started;
      proc.stdin.write("\x04");
      proc.stdin.flush();
    }
  }
  await proc.exited;
  if (!at) throw new Error(`${argv.join(" ")} never showed ${JSON.stringify(ready)}: ${seen.slice(-300)}`);
  return at;
}

/**
 * The REPL from start to its prompt (the line editor drawn, bracketed paste on), in a pseudo-terminal
 * in a git repository, beside --version through the same pseudo-terminal (the pty's own cost).
 */
async function replSection(dir: string): Promise<void> {
  if (!SCRIPT) return console.log("  (REPL start-up not measured: util-linux `script` is missing)");
  const repo = join(dir, "repo");
  mkdirSync(repo, { recursive: true });
  Bun.spawnSync(["git", "init", "-q", "-b", "main", repo]);
  writeFileSync(join(repo, ".gitignore"), ".coder/\n");
  const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, ".config"), TERM: "xterm-256color", OPENAI_API_KEY: "sk-bench" };
  const sample = async (argv: string[], ready: string) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const ms = await inPty(argv, ready, repo, env);
      if (i >= 2) times.push(ms);
    }
    return median(times);
  };
  const version = await sample([BIN, "--version"], "coder ");
  const repl = await sample([BIN, "--map-tokens", "0", "--api-base", "http://127.0.0.1:9/v1"], "\x1b[?2004h");
  console.log(`  in a pseudo-terminal (median of ${RUNS}):`);
  console.log(`  ${"coder --version".padEnd(22)} ${version.toFixed(1).padStart(7)} ms`);
  console.log(`  ${"REPL start to prompt".padEnd(22)} ${repl.toFixed(1).padStart(7)} ms  (${(repl - version).toFixed(1)} ms more; target <= 60 ms: ${repl <= 60 ? "met" : "NOT met"})`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--baseline");
  const baseline = at >= 0 ? args.splice(at, 2)[1] : undefined;
  if (at >= 0 && !baseline) throw new Error("--baseline needs the path of an older coder binary");
  const only = new Set(args);
  const wanted = (name: string) => only.size === 0 || only.has(name);
  if (wanted("startup")) await startupSection(baseline);
  const sections = join(import.meta.dir, "bench");
  if (!existsSync(sections)) return;
  const files = readdirSync(sections).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts")).sort();
  const known = new Set(["startup", ...files.map((f) => f.slice(0, -3))]);
  const unknown = [...only].filter((name) => !known.has(name));
  if (unknown.length > 0) throw new Error(`unknown bench section ${unknown.join(", ")}; sections: ${[...known].join(", ")}`);
  for (const file of files.filter((f) => wanted(f.slice(0, -3)))) {
    console.log("");
    const proc = Bun.spawnSync([process.execPath, join(sections, file)], { cwd: ROOT, stdout: "inherit", stderr: "inherit", env: { ...process.env, CODER_BIN: BIN } });
    if (proc.exitCode !== 0) console.log(`  (section ${file} failed with exit code ${proc.exitCode})`);
  }
}

if (import.meta.main) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
