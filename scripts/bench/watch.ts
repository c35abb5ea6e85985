// Bench section "watch": --watch-files on a 100,000-file repository (2,000 folders of 50
// files, beside an ignored 50,000-file node_modules/): time to start watching, folders
// watched, memory it adds, a change's delay until the batch reaches coder, and the cost of
// scanning one changed file for AI comments. Recursive fs.watch of the whole tree, which
// would also watch the ignored folders, is timed beside it for comparison.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findAiComments } from "../../core/watch/comments.ts";
import { RepoWatcher } from "../../core/watch/watcher.ts";
import { median } from "../bench-lib.ts";

const FOLDERS = 2000;
const PER_FOLDER = 50;
const IGNORED_FOLDERS = 1000;
const CHANGES = 20;

const rssMB = () => process.memoryUsage().rss / 1024 / 1024;

function generate(root: string): string[] {
  const files: string[] = [];
  const body = "def handler(event):\n    return event\n".repeat(20);
  for (let d = 0; d < FOLDERS; d++) {
    const folder = `pkg${d % 40}/mod${d}`;
    mkdirSync(join(root, folder), { recursive: true });
    for (let f = 0; f < PER_FOLDER; f++) {
      const path = `${folder}/file${f}.py`;
      writeFileSync(join(root, path), body);
      files.push(path);
    }
  }
  for (let d = 0; d < IGNORED_FOLDERS; d++) {
    mkdirSync(join(root, "node_modules", `dep${d}`), { recursive: true });
    for (let f = 0; f < PER_FOLDER; f++) writeFileSync(join(root, "node_modules", `dep${d}`, `i${f}.js`), "x\n");
  }
  return files;
}

const root = mkdtempSync(join(tmpdir(), "coder-bench-watch-"));
try {
  const files = generate(root);
  const before = rssMB();
  let resolveBatch: ((paths: string[]) => void) | null = null;
  const watcher = new RepoWatcher({
    root,
    listFiles: async () => files,
    accept: () => false,
    onChange: (paths) => resolveBatch?.(paths),
    quietMs: 0,
  });
  const t0 = performance.now();
  const folders = await watcher.start();
  const startMs = performance.now() - t0;
  const addedMB = rssMB() - before;

  const delays: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const path = files[(i * 4999) % files.length] as string;
    const batch = new Promise<string[]>((resolve) => {
      resolveBatch = resolve;
    });
    const t = performance.now();
    appendFileSync(join(root, path), `# change ${i} AI!\n`);
    const paths = await batch;
    delays.push(performance.now() - t);
    if (!paths.includes(path)) throw new Error(`the batch missed ${path}: ${paths.join(", ")}`);
  }
  watcher.stop();

  const text = `${"def handler(event):\n    return event\n".repeat(20)}# do it AI!\n`;
  const scans: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    findAiComments("a.py", text);
    scans.push(performance.now() - t);
  }

  const r0 = performance.now();
  const recursive = watch(root, { recursive: true }, () => {});
  const recursiveMs = performance.now() - r0;
  recursive.close();

  console.log(`watch: ${files.length.toLocaleString("en-US")} files in ${FOLDERS} folders (+${(IGNORED_FOLDERS * PER_FOLDER).toLocaleString("en-US")} ignored in node_modules/)`);
  console.log(`  start watching           ${startMs.toFixed(0).padStart(6)} ms   ${folders} folders watched (the ignored tree: none)`);
  console.log(`  memory added             ${addedMB.toFixed(1).padStart(6)} MB`);
  console.log(`  change → batch (median)  ${median(delays).toFixed(1).padStart(6)} ms   over ${CHANGES} appends (plus the 150 ms quiet time coder waits for more)`);
  console.log(`  scan one 40-line file    ${(median(scans) * 1000).toFixed(0).padStart(6)} µs`);
  console.log(`  recursive fs.watch       ${recursiveMs.toFixed(0).padStart(6)} ms   to set up over the whole tree, ignored folders included (for comparison)`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
