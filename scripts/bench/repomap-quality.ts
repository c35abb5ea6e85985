// Bench section "repomap-quality": does the map show what a chat file depends on?
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
//   bun scripts/bench/repomap-quality.ts [--budget 1024] [--per-repo 20] [--verbose] [--no-ablation]
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";

const ROOT = join(import.meta.dir, "..", "..");

/** A source tree to sample: its root and which files may be chat files. */
interface Tree {
  label: string;
  root: string;
  files: string[];
  /** Ground truth of one chat file, or null when it has no local import. */
  truth: (chat: string) => Truth | null;
  candidates: (file: string) => boolean;
}

interface Truth {
  /** Imported files that define something. */
  files: Set<string>;
  /** "file\0name" of used definitions. */
  defs: Set<string>;
}

export interface Score {
  importRecall: number;
  defRecall: number | null;
  bareShare: number;
}

// ─── Ground truth: TS/JS ─────────────────────────────────────────────────────

const TS_EXTENSIONS = [".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
const TS_DEF = (name: string) =>
  new RegExp(`^[ \\t]*(export[ \\t]+)?(default[ \\t]+)?(declare[ \\t]+)?(abstract[ \\t]+)?(async[ \\t]+)?(function\\*?|class|interface|type|enum|const|let|var|namespace)[ \\t]+${escape(name)}\\b`, "m");
const PY_DEF = (name: string) => new RegExp(`^([ \\t]*(async[ \\t]+)?(def|class)[ \\t]+${escape(name)}\\b|${escape(name)}[ \\t]*(:[^=\\n]*)?=)`, "m");

function escape(name: string): string {
  return name.replace(/[$.*+?^(){}[\]|\\]/g, "\\$&");
}

interface TsImport {
  spec: string;
  /** Imported names (original), or null for a namespace/side-effect import. */
  names: string[] | null;
  namespace: string | null;
}

function tsImports(text: string): TsImport[] {
  const out: TsImport[] = [];
  const statement = /(?:^|[;\n])[ \t]*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const m of text.matchAll(statement)) {
    const clause = m[3]!.trim();
    const spec = m[4]!;
    const ns = /\*\s+as\s+([\w$]+)/.exec(clause);
    const braces = /\{([^}]*)\}/.exec(clause);
    const names = braces
      ? braces[1]!.split(",").map((part) => part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!.trim()).filter((n) => /^[\w$]+$/.test(n))
      : [];
    if (ns) out.push({ spec, names: null, namespace: ns[1]! });
    else if (clause === "*") out.push({ spec, names: null, namespace: null });
    else out.push({ spec, names, namespace: null });
  }
  for (const m of text.matchAll(/(?:^|[;\n])[ \t]*import\s*['"]([^'"]+)['"]/g)) out.push({ spec: m[1]!, names: [], namespace: null });
  for (const m of text.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, names: [], namespace: null });
  return out;
}

interface TsPaths {
  base: string;
  patterns: [string, string[]][];
}

function readTsPaths(root: string): TsPaths | null {
  const file = join(root, "tsconfig.json");
  if (!existsSync(file)) return null;
  try {
    const config = parseJsonc(readFileSync(file, "utf8")) as { compilerOptions?: { baseUrl?: string; paths?: Record<string, string[]> } };
    const paths = config.compilerOptions?.paths;
    if (!paths) return null;
    return { base: config.compilerOptions?.baseUrl ?? ".", patterns: Object.entries(paths) };
  } catch {
    return null;
  }
}

function resolveTs(from: string, spec: string, listed: ReadonlySet<string>, paths: TsPaths | null): string | null {
  const bases: string[] = [];
  if (spec.startsWith("./") || spec.startsWith("../")) bases.push(posix.normalize(posix.join(posix.dirname(from), spec)));
  else if (paths) {
    for (const [pattern, targets] of paths.patterns) {
      const star = pattern.indexOf("*");
      const matched = star < 0 ? (spec === pattern ? "" : null) : spec.startsWith(pattern.slice(0, star)) && spec.endsWith(pattern.slice(star + 1)) ? spec.slice(star, spec.length - (pattern.length - star - 1)) : null;
      if (matched === null) continue;
      for (const target of targets) bases.push(posix.normalize(posix.join(paths.base, target.replace("*", matched))));
    }
  }
  for (const base of bases) {
    const stripped = base.replace(/\.(m|c)?js$/, "");
    for (const candidate of [base, ...TS_EXTENSIONS.map((e) => stripped + e), ...TS_EXTENSIONS.map((e) => base + "/index" + e)]) {
      if (listed.has(candidate)) return candidate;
    }
  }
  return null;
}

/** The file that defines `name`, starting at `file` and following re-exports up to 3 hops. */
function tsDefiner(file: string, name: string, tree: TextTree, paths: TsPaths | null, hops = 3): string | null {
  const text = tree.text(file);
  if (text === null) return null;
  if (TS_DEF(name).test(text)) return file;
  if (hops === 0) return null;
  for (const imp of tsImports(text)) {
    const target = resolveTs(file, imp.spec, tree.listed, paths);
    if (!target) continue;
    const reexported = new RegExp(`export\\s+(type\\s+)?(\\*|\\{[^}]*\\b${escape(name)}\\b[^}]*\\})\\s*from\\s*['"]${escape(imp.spec)}['"]`).test(text);
    if (!reexported) continue;
    const found = tsDefiner(target, name, tree, paths, hops - 1);
    if (found) return found;
  }
  return null;
}

function tsTruth(chat: string, tree: TextTree, paths: TsPaths | null): Truth | null {
  const text = tree.text(chat);
  if (text === null) return null;
  const truth: Truth = { files: new Set(), defs: new Set() };
  for (const imp of tsImports(text)) {
    const target = resolveTs(chat, imp.spec, tree.listed, paths);
    if (!target || target === chat) continue;
    const used = imp.namespace ? [...new Set([...text.matchAll(new RegExp(`\\b${escape(imp.namespace)}\\.([\\w$]+)`, "g"))].map((m) => m[1]!))] : (imp.names ?? []);
    for (const name of used) {
      const definer = tsDefiner(target, name, tree, paths);
      if (definer && definer !== chat) truth.defs.add(definer + "\0" + name);
    }
    if (definesAnything(tree.text(target) ?? "", "ts")) truth.files.add(target);
  }
  return truth.files.size > 0 ? truth : null;
}

// ─── Ground truth: Python ────────────────────────────────────────────────────

function resolvePy(from: string, module: string, listed: ReadonlySet<string>, byEnding: (ending: string) => string[]): string | null {
  const dots = /^\.*/.exec(module)![0].length;
  const parts = module.slice(dots).split(".").filter(Boolean);
  if (dots > 0) {
    let dir = posix.dirname(from);
    for (let i = 1; i < dots; i++) dir = posix.dirname(dir);
    const base = posix.join(dir, ...parts);
    for (const candidate of [base + ".py", base + "/__init__.py"]) if (listed.has(posix.normalize(candidate))) return posix.normalize(candidate);
    return null;
  }
  const rel = parts.join("/");
  for (const ending of [rel + ".py", rel + "/__init__.py"]) {
    const found = byEnding(ending);
    if (found.length > 0) return nearest(from, found);
  }
  return null;
}

function nearest(from: string, candidates: string[]): string {
  const shared = (p: string) => {
    let i = 0;
    while (i < p.length && p[i] === from[i]) i++;
    return i;
  };
  return [...candidates].sort((a, b) => shared(b) - shared(a) || (a < b ? -1 : 1))[0]!;
}

function pyDefiner(file: string, name: string, tree: TextTree, hops = 3): string | null {
  const text = tree.text(file);
  if (text === null) return null;
  if (PY_DEF(name).test(text)) return file;
  if (hops === 0) return null;
  for (const m of text.matchAll(/^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^)\n]*)/gm)) {
    if (!m[2]!.split(",").some((part) => part.trim().split(/\s+as\s+/)[0] === name)) continue;
    const target = resolvePy(file, m[1]!, tree.listed, tree.byEnding);
    if (target) return pyDefiner(target, name, tree, hops - 1);
  }
  return null;
}

function pyTruth(chat: string, tree: TextTree): Truth | null {
  const text = tree.text(chat);
  if (text === null) return null;
  const truth: Truth = { files: new Set(), defs: new Set() };
  const add = (target: string, names: string[]) => {
    if (target === chat) return;
    for (const name of names) {
      const definer = pyDefiner(target, name, tree);
      if (definer && definer !== chat) truth.defs.add(definer + "\0" + name);
    }
    if (definesAnything(tree.text(target) ?? "", "py")) truth.files.add(target);
  };
  for (const m of text.matchAll(/^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)/gm)) {
    const names = m[2]!.replace(/[()]/g, "").split(",").map((part) => part.trim().split(/\s+as\s+/)[0]!).filter((n) => /^\w+$/.test(n));
    const module = m[1]!;
    const target = resolvePy(chat, module, tree.listed, tree.byEnding);
    if (target) add(target, names);
    // `from package import module`: each name may be a module of its own.
    for (const name of names) {
      const sub = resolvePy(chat, module.endsWith(".") ? module + name : `${module}.${name}`, tree.listed, tree.byEnding);
      if (sub && sub !== target) add(sub, [...new Set([...text.matchAll(new RegExp(`\\b${name}\\.(\\w+)`, "g"))].map((u) => u[1]!))]);
    }
  }
  for (const m of text.matchAll(/^[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)/gm)) {
    for (const module of m[1]!.split(",").map((s) => s.trim())) {
      const target = resolvePy(chat, module, tree.listed, tree.byEnding);
      if (target) add(target, [...new Set([...text.matchAll(new RegExp(`\\b${escape(module)}\\.(\\w+)`, "g"))].map((u) => u[1]!))]);
    }
  }
  return truth.files.size > 0 ? truth : null;
}

function definesAnything(text: string, lang: "ts" | "py"): boolean {
  return lang === "ts"
    ? /^[ \t]*(export[ \t]+)?(default[ \t]+)?(declare[ \t]+)?(abstract[ \t]+)?(async[ \t]+)?(function\*?|class|interface|type|enum|const|let|var|namespace)[ \t]+[\w$]+/m.test(text)
    : /^[ \t]*(async[ \t]+)?(def|class)[ \t]+\w+|^\w+[ \t]*=/m.test(text);
}

// ─── Trees ───────────────────────────────────────────────────────────────────

interface TextTree {
  listed: ReadonlySet<string>;
  text(path: string): string | null;
  byEnding(ending: string): string[];
}

function textTree(root: string, files: string[]): TextTree {
  const texts = new Map<string, string | null>();
  const listed = new Set(files);
  return {
    listed,
    text(path) {
      if (!texts.has(path)) {
        try {
          texts.set(path, readFileSync(join(root, path), "utf8"));
        } catch {
          texts.set(path, null);
        }
      }
      return texts.get(path)!;
    },
    byEnding: (ending) => files.filter((f) => f === ending || f.endsWith("/" + ending)),
  };
}

function walk(dir: string, base: string, out: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(abs, base, out);
    } else if (entry.isFile()) out.push(relative(base, abs));
  }
  return out.sort();
}

function sourceTree(label: string, root: string, candidates: (file: string) => boolean): Tree {
  const files = walk(root, root, []);
  const tree = textTree(root, files);
  const paths = readTsPaths(root);
  return {
    label,
    root,
    files,
    candidates,
    truth: (chat) => (chat.endsWith(".py") ? pyTruth(chat, tree) : tsTruth(chat, tree, paths)),
  };
}

/** node-gyp ships gyp's Python sources: from node_modules, else the npm that is running. */
function nodeGypRoot(): string | null {
  const local = join(ROOT, "node_modules", "node-gyp");
  if (existsSync(join(local, "gyp"))) return local;
  const npmRoot = Bun.spawnSync(["npm", "root", "-g"], { stdout: "pipe", stderr: "ignore" }).stdout.toString().trim();
  const bundled = join(npmRoot, "npm", "node_modules", "node-gyp");
  return npmRoot && existsSync(join(bundled, "gyp")) ? bundled : null;
}

function packageVersion(root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: string }).version ?? "?";
  } catch {
    return "?";
  }
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
}

async function scoreTree(tree: Tree, samples: { chat: string; truth: Truth }[], budget: number, verbose: boolean): Promise<RepoResult> {
  const { buildRepoMap } = await import("../../plugins/repomap/map.ts");
  const { TagCache } = await import("../../plugins/repomap/cache.ts");
  const { countTokens } = await import("../../core/tokens.ts");
  const cache = TagCache.memory();
  const scores: Score[] = [];
  for (const { chat, truth } of samples) {
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
    });
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

  console.log(`## repo map quality (budget ${budget} tokens, one chat file; up to ${perRepo} chat files per tree; rule in scripts/bench/repomap-quality.ts)`);
  const { WEIGHTS } = await import("../../plugins/repomap/graph.ts");
  const sampled = trees.map((tree) => ({ tree, samples: sample(tree, perRepo) }));
  try {
    const results: RepoResult[] = [];
    for (const { tree, samples } of sampled) {
      const tests = samples.filter((s) => isTest(s.chat)).length;
      if (verbose) console.log(`  ${tree.label}:`);
      const result = await scoreTree(tree, samples, budget, verbose);
      results.push(result);
      console.log(`  ${tree.label.padEnd(44)} ${String(result.chats).padStart(3)} chat files (${tests} tests)  import recall ${pct(result.importRecall)}  used-definition recall ${pct(result.defRecall)}  bare names ${pct(result.bareShare)} of tokens`);
    }
    summary("mean over the real trees", results);
    if (!process.argv.includes("--no-ablation")) {
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

