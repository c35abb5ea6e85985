// Generates a deterministic multi-language repository of N source files with
// realistic cross-references (for the repo-map benchmark and tests):
//   bun scripts/gen-repo.ts <dir> <files> [--seed N] [--no-git]
// Files define 4–12 functions/classes and call 8–23 definitions of other files,
// with a skew towards a few popular modules, plus very common names (`get`,
// `run`, `update`, ...) defined in many files, the case that makes a naive
// reference graph grow with the square of the files.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const VERBS = "get set load save parse render build create update delete find make read write send fetch check apply merge split format compute resolve validate convert handle init open close start stop".split(" ");
const NOUNS = "user order config item account session token cache index record report invoice payment message queue event stream buffer node graph tree path file folder request response header client server route model view table column row field schema query result error logger metric timer job task worker plan".split(" ");
const QUALIFIERS = ["", "", "", "", "All", "ById", "Async", "Batch", "Local", "Remote", "Default", "Safe", "Fast", "Raw"];
const COMMON = ["get", "run", "update", "init", "close", "render", "handle", "toString", "process", "apply"];
const LANGS = [
  { ext: "ts", weight: 30 },
  { ext: "py", weight: 25 },
  { ext: "go", weight: 15 },
  { ext: "js", weight: 10 },
  { ext: "java", weight: 10 },
  { ext: "rs", weight: 10 },
] as const;
type Ext = (typeof LANGS)[number]["ext"];

/** mulberry32: small, fast, deterministic. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Def {
  name: string;
  kind: "function" | "class";
}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
const pascal = (s: string) => s[0]!.toUpperCase() + s.slice(1);

function nameIn(ext: Ext, def: Def): string {
  if (def.kind === "class") return pascal(def.name);
  if (ext === "py" || ext === "rs") return snake(def.name);
  if (ext === "go") return pascal(def.name);
  return def.name;
}

function renderFile(ext: Ext, defs: Def[], calls: { def: Def; ext: Ext }[], rnd: () => number): string {
  // Calls use the callee's own spelling, so references resolve across languages too.
  const call = (i: number) => {
    const target = calls[i % Math.max(1, calls.length)];
    if (!target) return "0";
    // A call spelled the way the caller's language would see the callee.
    const name = nameIn(target.ext, target.def);
    return `${name}(value)`;
  };
  const lines: string[] = [];
  let callIndex = 0;
  const body = (indent: string, ret: (expr: string) => string) => {
    const n = 3 + Math.floor(rnd() * 8);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(`${indent}${ext === "py" ? "" : ext === "rs" ? "let " : ext === "go" ? "" : "const "}v${i}${ext === "go" ? " :=" : " ="} ${call(callIndex++)}${ext === "py" || ext === "go" ? "" : ";"}`);
    out.push(`${indent}${ret(`v0`)}`);
    return out;
  };
  switch (ext) {
    case "py":
      lines.push("import os", "");
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`class ${pascal(d.name)}:`, `    def __init__(self, value):`, `        self.value = value`, "");
          lines.push(`    def ${snake(COMMON[Math.floor(rnd() * COMMON.length)]!)}(self, value):`, ...body("        ", (e) => `return ${e}`), "");
        } else lines.push(`def ${snake(d.name)}(value):`, `    """${d.name} for the generated benchmark."""`, ...body("    ", (e) => `return ${e}`), "");
      }
      break;
    case "ts":
    case "js":
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`export class ${pascal(d.name)} {`, `  constructor(private value${ext === "ts" ? ": number" : ""}) {}`, "");
          lines.push(`  ${COMMON[Math.floor(rnd() * COMMON.length)]}(value${ext === "ts" ? ": number" : ""}) {`, ...body("    ", (e) => `return ${e};`), "  }", "}", "");
        } else lines.push(`export function ${d.name}(value${ext === "ts" ? ": number" : ""}) {`, ...body("  ", (e) => `return ${e};`), "}", "");
      }
      break;
    case "go":
      lines.push("package gen", "");
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`type ${pascal(d.name)} struct {`, "\tValue int", "}", "");
          lines.push(`func (s *${pascal(d.name)}) ${pascal(COMMON[Math.floor(rnd() * COMMON.length)]!)}(value int) int {`, ...body("\t", (e) => `return ${e}`), "}", "");
        } else lines.push(`func ${pascal(d.name)}(value int) int {`, ...body("\t", (e) => `return ${e}`), "}", "");
      }
      break;
    case "java":
      lines.push("package gen;", "", `public class ${pascal(defs[0]!.name)}Module {`);
      for (const d of defs) {
        if (d.kind === "class") lines.push(`  static class ${pascal(d.name)} {`, `    int ${COMMON[Math.floor(rnd() * COMMON.length)]}(int value) {`, ...body("      ", (e) => `return ${e};`).map((l) => l.replace("const ", "int ")), "    }", "  }", "");
        else lines.push(`  static int ${d.name}(int value) {`, ...body("    ", (e) => `return ${e};`).map((l) => l.replace("const ", "int ")), "  }", "");
      }
      lines.push("}");
      break;
    case "rs":
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`pub struct ${pascal(d.name)} {`, "    value: i64,", "}", "", `impl ${pascal(d.name)} {`);
          lines.push(`    pub fn ${snake(COMMON[Math.floor(rnd() * COMMON.length)]!)}(&self, value: i64) -> i64 {`, ...body("        ", (e) => e), "    }", "}", "");
        } else lines.push(`pub fn ${snake(d.name)}(value: i64) -> i64 {`, ...body("    ", (e) => e), "}", "");
      }
      break;
  }
  return lines.join("\n") + "\n";
}

export interface GeneratedRepo {
  files: string[];
  bytes: number;
}

/** Writes `count` files under `dir` (deterministic for a seed) and returns their paths. */
export function generateRepo(dir: string, count: number, seed = 1): GeneratedRepo {
  const rnd = random(seed);
  const totalWeight = LANGS.reduce((s, l) => s + l.weight, 0);
  const pickExt = (): Ext => {
    let r = rnd() * totalWeight;
    for (const l of LANGS) if ((r -= l.weight) < 0) return l.ext;
    return "ts";
  };
  const used = new Map<string, number>();
  const files: { path: string; ext: Ext; defs: Def[] }[] = [];
  const topDirs = Math.max(1, Math.round(Math.sqrt(count) / 4));
  for (let i = 0; i < count; i++) {
    const ext = pickExt();
    const defs: Def[] = [];
    const n = 4 + Math.floor(rnd() * 9);
    for (let d = 0; d < n; d++) {
      let name = VERBS[Math.floor(rnd() * VERBS.length)]! + pascal(NOUNS[Math.floor(rnd() * NOUNS.length)]!) + QUALIFIERS[Math.floor(rnd() * QUALIFIERS.length)]!;
      const seen = used.get(name) ?? 0;
      used.set(name, seen + 1);
      if (seen >= 3) name += String(seen);
      defs.push({ name, kind: rnd() < 0.25 ? "class" : "function" });
    }
    const top = `pkg${Math.floor(rnd() * topDirs)}`;
    const sub = `mod${Math.floor(rnd() * 8)}`;
    const base = snake(defs[0]!.name).replace(/^_/, "");
    files.push({ path: `${top}/${sub}/${base}_${i}.${ext}`, ext, defs });
  }
  let bytes = 0;
  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    const calls: { def: Def; ext: Ext }[] = [];
    const n = 8 + Math.floor(rnd() * 16);
    for (let c = 0; c < n; c++) {
      // Skewed: a quarter of calls go to the first 2% of files ("core" modules).
      const j = rnd() < 0.25 ? Math.floor(rnd() * Math.max(1, count * 0.02)) : Math.floor(rnd() * count);
      const target = files[j]!;
      calls.push({ def: target.defs[Math.floor(rnd() * target.defs.length)]!, ext: target.ext });
    }
    const text = renderFile(file.ext, file.defs, calls, rnd);
    const abs = join(dir, file.path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
    bytes += text.length;
  }
  writeFileSync(join(dir, "README.md"), `# generated repository\n\n${count} files, seed ${seed}.\n`);
  return { files: ["README.md", ...files.map((f) => f.path)], bytes };
}

/** `git init` + commit everything, so `git ls-files` lists the files. */
export function commitRepo(dir: string): void {
  const git = (...args: string[]) => {
    const r = Bun.spawnSync(["git", "-c", "user.name=gen", "-c", "user.email=gen@example.invalid", ...args], { cwd: dir, stdout: "ignore", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  };
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "generated");
}

if (import.meta.main) {
  const [dir, countArg] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const seedAt = process.argv.indexOf("--seed");
  if (!dir || !countArg) {
    console.error("usage: bun scripts/gen-repo.ts <dir> <files> [--seed N] [--no-git]");
    process.exit(2);
  }
  const started = performance.now();
  const repo = generateRepo(dir, Number(countArg), seedAt > 0 ? Number(process.argv[seedAt + 1]) : 1);
  if (!process.argv.includes("--no-git")) commitRepo(dir);
  console.log(`wrote ${repo.files.length} files (${(repo.bytes / 1e6).toFixed(1)} MB) to ${dir} in ${Math.round(performance.now() - started)} ms`);
}
