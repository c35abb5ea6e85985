// Bench section "repomap-quality": does the map show what a chat file depends on?
// (The ground truth is computed in scripts/quality-truth.ts.)
// For sampled chat files of real source trees (npm packages' sources) and of a
// generated repository, the map at 1,024 tokens is compared with a ground truth
// read from the chat file's source by the rule below, independent of the map's
// own tags and import resolver:
//
//   - Local imports. TS/JS: `import … from "s"`, `import "s"`, `export … from "s"`,
//     `require("s")`, `import("s")`, where s is relative or matches a `paths`
//     pattern of the tree's root tsconfig.json; resolved as TypeScript does (the
//     path itself, + .ts .tsx .d.ts .js .jsx .mjs .cjs, a `.js` written for a `.ts`,
//     then /index.*). Python: `from .x import a`, `from a.b import c`, `import a.b`,
//     a module resolving to a listed `a/b.py` or `a/b/__init__.py` (relative to the
//     file for leading dots, else any listed file whose path ends so, the one
//     sharing the longest prefix with the chat file). Generated repositories: the
//     generator's own record of each file's imports.
//   - Used definitions: the names a file imports (`{ A, B as C }` → A, B; Python
//     `from m import a`), and for namespace imports (`import * as ns`, `import a.b`)
//     the names it uses as `ns.Name` / `a.b.Name`, each paired with the file that
//     defines it: the imported file, or, when it only re-exports the name
//     (`export { A } from`, `export * from`, `from .x import A`), the file it comes
//     from (up to 3 hops). A definition is a line `[export] [default] [declare]
//     [abstract] [async] function|class|interface|type|enum|const|let|var|namespace
//     Name` (TS/JS) or `[async] def|class Name`, or `Name =` at the start of a line
//     (Python).
//   - An imported file counts only when it defines something by that rule.
//
// Measures per chat file, then averaged: import recall (imported files the map
// shows with at least one excerpt line), used-definition recall (used definitions
// whose name appears on a shown line of their file's excerpt), and the share of
// the map's tokens spent on files listed by name only.
// A second pass over the same samples lists imported names by rank only (not first),
// to show what the edge weights alone achieve.
// A third pass builds each map as the first map of a cold start (RepoMapInput.coldFirst).
//   bun scripts/bench/repomap-quality.ts [--budget 1024] [--per-repo 20] [--verbose] [--no-ablation]
//     [--trees openai,zod,node-gyp,generated] (only the trees whose label starts so) [--cold-only] (only the cold first maps)
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { escape, nodeGypRoot, packageVersion, sourceTree, type Tree, type Truth } from "../quality-truth.ts";

const ROOT = join(import.meta.dir, "..", "..");

export interface Score {
  importRecall: number;
  defRecall: number | null;
  bareShare: number;
}

// ─── Scoring ─────────────────────────────────────────────────────────────────

/** The map's text as blocks: each file shown with an excerpt (its lines), and files listed by name only. */
export function parseMap(text: string): { shown: Map<string, string[]>; bare: string[] } {
  const shown = new Map<string, string[]>();
  const bare: string[] = [];
  let current: string[] | null = null;
  for (const line of text.split("\n")) {
    if (line === "") {
      current = null;
      continue;
    }
    if (line.startsWith("│")) current?.push(line.slice(1));
    else if (line === "⋮") continue;
    else if (line.endsWith(":")) {
      current = [];
      shown.set(line.slice(0, -1), current);
    } else {
      current = null;
      bare.push(line);
    }
  }
  return { shown, bare };
}

export function scoreMap(text: string, truth: Truth, countTokens: (t: string) => number): Score {
  const { shown, bare } = parseMap(text);
  const hasExcerpt = (file: string) => (shown.get(file)?.length ?? 0) > 0;
  const importRecall = [...truth.files].filter(hasExcerpt).length / truth.files.size;
  let defRecall: number | null = null;
  if (truth.defs.size > 0) {
    let hit = 0;
    for (const key of truth.defs) {
      const [file, name] = key.split("\0") as [string, string];
      const word = new RegExp(`(^|[^\\w$])${escape(name)}($|[^\\w$])`);
      if (shown.get(file)?.some((line) => word.test(line))) hit++;
    }
    defRecall = hit / truth.defs.size;
  }
  const total = countTokens(text);
  const bareTokens = bare.length === 0 ? 0 : countTokens(bare.map((b) => "\n" + b + "\n").join(""));
  return { importRecall, defRecall, bareShare: total > 0 ? Math.min(1, bareTokens / total) : 0 };
}

/** Up to `count` chat files with a ground truth, spread evenly over the sorted candidates. */
function sample(tree: Tree, count: number): { chat: string; truth: Truth }[] {
  const withTruth: { chat: string; truth: Truth }[] = [];
  for (const file of tree.files) {
    if (!tree.candidates(file)) continue;
    const truth = tree.truth(file);
    if (truth) withTruth.push({ chat: file, truth });
  }
  if (withTruth.length <= count) return withTruth;
  return Array.from({ length: count }, (_, i) => withTruth[Math.floor((i * withTruth.length) / count)]!);
}

const mean = (values: number[]) => (values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length);
const pct = (value: number) => (Number.isNaN(value) ? "  n/a" : `${(value * 100).toFixed(0).padStart(3)}%`);

interface RepoResult {
  label: string;
  chats: number;
  importRecall: number;
  defRecall: number;
  bareShare: number;
  /** Cold first maps: the share of the tree's files parsed before the map. */
  parsedShare?: number;
}

/**
 * `cold`: each chat file's map is a cold first map (a fresh cache, and only the files
 * the first map needs parsed: RepoMapInput.coldFirst), as a session's first request
 * in a repository never mapped before gets it; else one cache per tree, every file parsed.
 */
async function scoreTree(tree: Tree, samples: { chat: string; truth: Truth }[], budget: number, verbose: boolean, cold = false): Promise<RepoResult> {
  const { buildRepoMap } = await import("../../plugins/repomap/map.ts");
  const { CACHE_VERSION, TagCache } = await import("../../plugins/repomap/cache.ts");
  const { memoryCacheStore } = await import("../../core/edit/cache-store.ts");
  const { countTokens } = await import("../../core/chat/tokens.ts");
  let cache = new TagCache(memoryCacheStore(CACHE_VERSION));
  const scores: Score[] = [];
  const parsedShares: number[] = [];
  for (const { chat, truth } of samples) {
    if (cold) {
      cache.close();
      cache = new TagCache(memoryCacheStore(CACHE_VERSION));
    }
    const result = await buildRepoMap({
      root: tree.root,
      files: tree.files,
      chatFiles: [chat],
      mentionedFiles: [],
      mentionedIdents: [],
      budget,
      countTokens: (t) => countTokens(t),
      cache,
      assets: async () => (await import("../../grammars/embedded.ts")).EMBEDDED_ASSETS,
      warn: () => {},
      reuse: "none",
      coldFirst: cold ? 0 : undefined,
    });
    if (cold) parsedShares.push(result.stats.parsed / Math.max(1, result.stats.parsed + result.pending.length));
    const score = scoreMap(result.text, truth, (t) => countTokens(t));
    scores.push(score);
    if (verbose) {
      const { shown } = parseMap(result.text);
      const missed = [...truth.files].filter((f) => !(shown.get(f)?.length ?? 0));
      console.log(`    ${chat}: imports ${pct(score.importRecall)} defs ${pct(score.defRecall ?? NaN)} bare ${pct(score.bareShare)}${missed.length ? `  missed ${missed.join(" ")}` : ""}`);
    }
  }
  cache.close();
  return {
    label: tree.label,
    chats: samples.length,
    importRecall: mean(scores.map((s) => s.importRecall)),
    defRecall: mean(scores.flatMap((s) => (s.defRecall === null ? [] : [s.defRecall]))),
    bareShare: mean(scores.map((s) => s.bareShare)),
    parsedShare: cold ? mean(parsedShares) : undefined,
  };
}

// ─── Generated repositories: the generator records each file's imports ───────

async function generatedTree(size: number): Promise<{ tree: Tree; dir: string }> {
  const { generateRepo } = await import("../gen-repo.ts");
  const dir = mkdtempSync(join(tmpdir(), "coder-bench-quality-"));
  const repo = generateRepo(dir, size, 7);
  const tree: Tree = {
    label: `generated ${size} (seed 7)`,
    root: dir,
    files: repo.files,
    candidates: (file) => (repo.imports.get(file)?.length ?? 0) > 0,
    truth: (chat) => {
      const imports = repo.imports.get(chat) ?? [];
      if (imports.length === 0) return null;
      return { files: new Set(imports.map((i) => i.file)), defs: new Set(imports.flatMap((i) => i.names.map((n) => i.file + "\0" + n))) };
    },
  };
  return { tree, dir };
}

export default async function run(): Promise<void> {
  const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
  const budget = Number(arg("--budget") ?? 1024);
  const perRepo = Number(arg("--per-repo") ?? 20);
  const verbose = process.argv.includes("--verbose");
  const isTest = (f: string) => /(^|\/)(tests?|__tests__)\/|[._](test|spec)\.[a-z]+$|(^|\/)test_[^/]*\.py$/.test(f);
  const trees: Tree[] = [];
  const openai = join(ROOT, "node_modules", "openai", "src");
  if (existsSync(openai)) trees.push(sourceTree(`openai ${packageVersion(dirname(openai))} src/`, openai, (f) => /\.ts$/.test(f)));
  const zod = join(ROOT, "node_modules", "zod", "src");
  if (existsSync(zod)) trees.push(sourceTree(`zod ${packageVersion(dirname(zod))} src/ (with tests)`, zod, (f) => /\.ts$/.test(f)));
  const gyp = nodeGypRoot();
  if (gyp) trees.push(sourceTree(`node-gyp ${packageVersion(gyp)} (gyp's Python + JS)`, gyp, (f) => /\.(py|js)$/.test(f) && f.includes("gyp/pylib/")));
  else console.log("  node-gyp not found (neither in node_modules nor in npm's own): its Python sources are not sampled");
  const generated = await generatedTree(1000);
  trees.push(generated.tree);
  const only = arg("--trees")?.split(",").filter(Boolean);
  if (only) trees.splice(0, trees.length, ...trees.filter((tree) => only.some((name) => tree.label.startsWith(name))));
  const coldOnly = process.argv.includes("--cold-only");

  console.log(`## repo map quality (budget ${budget} tokens, one chat file; up to ${perRepo} chat files per tree; rule in scripts/bench/repomap-quality.ts)`);
  const { WEIGHTS } = await import("../../plugins/repomap/graph.ts");
  const sampled = trees.map((tree) => ({ tree, samples: sample(tree, perRepo) }));
  try {
    const results: RepoResult[] = [];
    for (const { tree, samples } of coldOnly ? [] : sampled) {
      const tests = samples.filter((s) => isTest(s.chat)).length;
      if (verbose) console.log(`  ${tree.label}:`);
      const result = await scoreTree(tree, samples, budget, verbose);
      results.push(result);
      console.log(`  ${tree.label.padEnd(44)} ${String(result.chats).padStart(3)} chat files (${tests} tests)  import recall ${pct(result.importRecall)}  used-definition recall ${pct(result.defRecall)}  bare names ${pct(result.bareShare)} of tokens`);
    }
    if (!coldOnly) summary("mean over the real trees", results);
    // The same samples, each map the first of a cold start (only what it needs parsed).
    const cold: RepoResult[] = [];
    for (const { tree, samples } of sampled) {
      const result = await scoreTree(tree, samples, budget, verbose, true);
      cold.push(result);
      console.log(`  cold first map: ${tree.label.padEnd(28)} import recall ${pct(result.importRecall)}  used-definition recall ${pct(result.defRecall)}  bare names ${pct(result.bareShare)} of tokens  (${pct(result.parsedShare ?? NaN)} of its files parsed first)`);
    }
    summary("cold first maps (only the files they need parsed; the rest in the background)", cold);
    if (!coldOnly && !process.argv.includes("--no-ablation")) {
      // The same samples with the imported names not listed first: what the edge weights achieve alone.
      WEIGHTS.importedFirst = false;
      const alone: RepoResult[] = [];
      for (const { tree, samples } of sampled) alone.push(await scoreTree(tree, samples, budget, false));
      WEIGHTS.importedFirst = true;
      summary("the same, imported names not listed first (edge weights alone)", alone);
    }
  } finally {
    rmSync(generated.dir, { recursive: true, force: true });
  }
}

function summary(label: string, results: readonly RepoResult[]): void {
  const real = results.filter((r) => !r.label.startsWith("generated"));
  const generated = results.filter((r) => r.label.startsWith("generated"));
  const worstBare = Math.max(...results.map((r) => r.bareShare));
  console.log(
    `  ${label}: import recall ${pct(mean(real.map((r) => r.importRecall)))} (goal ≥ 70%), used-definition recall ${pct(mean(real.map((r) => r.defRecall)))}; generated: ${pct(mean(generated.map((r) => r.importRecall)))} / ${pct(mean(generated.map((r) => r.defRecall)))}; bare names at most ${pct(worstBare)} of tokens (goal ≤ 5%)`,
  );
}

if (import.meta.main) await run();

