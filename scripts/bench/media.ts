// Bench section "media": what the media libraries add to the compiled binary and what
// they cost when first used. Each group is compiled into its own small binary (bytecode
// and minify on, as scripts/build.ts does) beside an empty one; the binary loads the group
// and does one real job: downscale a 3000×2000 screenshot (jimp), read an image's size
// (image-size), turn a documentation page into Markdown (readability + linkedom + turndown).
// Run by scripts/bench.ts, or alone: bun scripts/bench/media.ts
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { png } from "../../plugins/media/testdata/make.ts";

const ROOT = join(import.meta.dir, "..", "..");
const RUNS = Math.max(5, Number(process.env.BENCH_RUNS ?? 10) >> 1);

interface Group {
  label: string;
  /** Module source: loads the group (timed), then does its job (timed). */
  source: string;
}

/** A package's entry as an absolute path, so the generated sources in a temp folder find it. */
const pkg = (name: string) => JSON.stringify(Bun.resolveSync(name, ROOT));
const attach = JSON.stringify(join(ROOT, "plugins", "media", "attach.ts"));
const markdown = JSON.stringify(join(ROOT, "plugins", "media", "markdown.ts"));

const GROUPS: Group[] = [
  { label: "empty", source: "console.log(JSON.stringify({ loadMs: 0, jobMs: 0 }));" },
  {
    label: "jimp (png, jpeg, gif, resize)",
    source: `const t0 = performance.now();
const { fitImage } = await import(${attach});
await Promise.all([import(${pkg("@jimp/core")}), import(${pkg("@jimp/js-png")}), import(${pkg("@jimp/js-jpeg")}), import(${pkg("@jimp/js-gif")}), import(${pkg("@jimp/plugin-resize")})]);
const loadMs = performance.now() - t0;
const bytes = new Uint8Array(await Bun.file(process.argv[2]).arrayBuffer());
const kit = { media: { fit: (w, h) => { const s = Math.min(1, 2048 / Math.max(w, h), 768 / Math.min(w, h)); return { width: Math.floor(w * s), height: Math.floor(h * s) }; } } };
const t1 = performance.now();
const out = await fitImage(kit, bytes, "image/png", "shot.png", undefined);
if (!out.ok) throw new Error(out.problem);
console.log(JSON.stringify({ loadMs, jobMs: performance.now() - t1 }));`,
  },
  {
    label: "image-size",
    source: `const t0 = performance.now();
const { imageSize } = await import(${pkg("image-size")});
const loadMs = performance.now() - t0;
const bytes = new Uint8Array(await Bun.file(process.argv[2]).arrayBuffer());
const t1 = performance.now();
imageSize(bytes);
console.log(JSON.stringify({ loadMs, jobMs: performance.now() - t1 }));`,
  },
  {
    label: "readability+linkedom+turndown",
    source: `const t0 = performance.now();
const { htmlToMarkdown } = await import(${markdown});
await Promise.all([import(${pkg("linkedom")}), import(${pkg("@mozilla/readability")}), import(${pkg("turndown")}), import(${pkg("@joplin/turndown-plugin-gfm")})]);
const loadMs = performance.now() - t0;
const html = await Bun.file(process.argv[3]).text();
const t1 = performance.now();
await htmlToMarkdown(html, "https://docs.example.com/widgets");
console.log(JSON.stringify({ loadMs, jobMs: performance.now() - t1 }));`,
  },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function compile(dir: string, group: Group, index: number): Promise<string> {
  const source = join(dir, `group${index}.ts`);
  // Top-level await is not allowed with bytecode: the job runs in an async function.
  writeFileSync(source, `(async () => {\n${group.source}\n})();\n`);
  const outfile = join(dir, `group${index}`);
  const result = await Bun.build({ entrypoints: [source], root: ROOT, compile: { outfile, autoloadBunfig: false, autoloadDotenv: false }, bytecode: true, minify: true });
  if (!result.success) throw new Error(`could not compile ${group.label}: ${result.logs.join("\n")}`);
  return outfile;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "coder-bench-media-"));
  try {
    const shot = join(dir, "shot.png");
    writeFileSync(shot, await png(3000, 2000));
    const page = join(ROOT, "plugins", "media", "testdata", "widgets.html");
    console.log(`## media libraries in a compiled binary (median of ${RUNS} runs; each loaded lazily, only when used)`);
    let emptySize = 0;
    for (const [i, group] of GROUPS.entries()) {
      const bin = await compile(dir, group, i);
      const size = statSync(bin).size;
      if (i === 0) emptySize = size;
      const runs: { loadMs: number; jobMs: number }[] = [];
      const wall: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        const t0 = performance.now();
        const proc = Bun.spawnSync([bin, shot, page], { stdout: "pipe", stderr: "pipe" });
        wall.push(performance.now() - t0);
        if (proc.exitCode !== 0) throw new Error(`${group.label}: ${proc.stderr.toString()}`);
        runs.push(JSON.parse(proc.stdout.toString()));
      }
      const added = i === 0 ? "" : `  +${((size - emptySize) / 1e6).toFixed(2)} MB`;
      console.log(
        `  ${group.label.padEnd(32)} ${(size / 1e6).toFixed(1).padStart(6)} MB${added.padEnd(12)}  load ${median(runs.map((x) => x.loadMs)).toFixed(1).padStart(6)} ms  job ${median(runs.map((x) => x.jobMs)).toFixed(1).padStart(7)} ms  process ${median(wall).toFixed(1).padStart(6)} ms`,
      );
    }
    console.log("  jobs: jimp downscales a 3000×2000 PNG to 1152×768; image-size reads its header; the page is plugins/media/testdata/widgets.html.");
    const bin = process.env.CODER_BIN ?? join(ROOT, "dist", "coder");
    try {
      console.log(`  dist/coder: ${(statSync(bin).size / 1e6).toFixed(1)} MB in all (${readFileSync(bin).includes("readability-page") ? "media libraries embedded" : "media libraries not found in it"})`);
    } catch {
      console.log("  dist/coder: not built");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
