// Generates a deterministic multi-language repository of N source files with
// realistic cross-references (for the repo-map benchmark and tests):
//   bun scripts/gen-repo.ts <dir> <files> [--seed N] [--no-git]
// Files define 4–12 functions/classes and call 8–23 definitions of other files of
// their language, which they import as the language does (TS/JS relative imports,
// Python modules, Go packages, Java classes, Rust `use crate::`), with a skew towards
// a few popular modules; very common names (`get`, `run`, `update`, ...) are
// defined as methods in many files and called on unknown receivers (`value.get()`),
// the case that makes a naive reference graph grow with the square of the files.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { seededRandom } from "../plugins/eval/history.ts";

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

/** A file to be written: where, in which language, what it defines. */
interface PlannedFile {
  path: string;
  ext: Ext;
  defs: Def[];
}

/** One imported file and the names used from it (the benchmark's ground truth). */
export interface GeneratedImport {
  file: string;
  names: string[];
}

/** The path without extension as a module path (`pkg1/mod2/get_user_3`). */
const stem = (path: string) => path.slice(0, path.lastIndexOf("."));
/** Go files of one folder form one package; imported under an alias unique to the folder. */
const goAlias = (path: string) => dirname(path).replace(/[^A-Za-z0-9]/g, "");
/** A Java file's class: its file name. */
const javaClass = (path: string) => stem(path).slice(stem(path).lastIndexOf("/") + 1);

function relativeSpec(from: string, to: string): string {
  const a = dirname(from).split("/");
  const b = to.split("/");
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const up = a.length - i;
  return (up === 0 ? "./" : "../".repeat(up)) + b.slice(i).join("/");
}

/** A call of `def` (defined in `target`) as `file`'s language spells it, with the import it needs (or none). */
function callOf(file: PlannedFile, target: PlannedFile, def: Def): string {
  const name = nameIn(target.ext, def);
  const local = target.path === file.path || (target.ext === "go" && dirname(target.path) === dirname(file.path));
  if (local) return `${name}(value)`;
  if (target.ext === "go") return `${goAlias(target.path)}.${name}(value)`;
  if (target.ext === "java") return `${javaClass(target.path)}.${name}(value)`;
  return `${name}(value)`;
}

function importLines(file: PlannedFile, imports: Map<PlannedFile, Set<string>>): string[] {
  const out: string[] = [];
  for (const [target, names] of imports) {
    const list = [...names].sort();
    switch (file.ext) {
      case "ts":
        out.push(`import { ${list.join(", ")} } from "${relativeSpec(file.path, stem(target.path))}";`);
        break;
      case "js":
        out.push(`import { ${list.join(", ")} } from "${relativeSpec(file.path, target.path)}";`);
        break;
      case "py":
        out.push(`from ${stem(target.path).replaceAll("/", ".")} import ${list.join(", ")}`);
        break;
      case "go":
        out.push(`import ${goAlias(target.path)} "example.com/gen/${dirname(target.path)}"`);
        break;
      case "java":
        out.push(`import ${stem(target.path).replaceAll("/", ".")};`);
        break;
      case "rs":
        out.push(`use crate::${stem(target.path).replaceAll("/", "::")}::{${list.join(", ")}};`);
        break;
    }
  }
  return [...new Set(out)];
}

function renderFile(file: PlannedFile, calls: string[], imports: Map<PlannedFile, Set<string>>, rnd: () => number): string {
  const { ext, defs } = file;
  let callIndex = 0;
  const call = () => calls[callIndex++ % Math.max(1, calls.length)] ?? "0";
  // A member call on an unknown receiver (`value.get()`): the noise of real code, where
  // every class with such a method looks referenced.
  const memberCall = () => {
    const name = COMMON[Math.floor(rnd() * COMMON.length)]!;
    return `value.${ext === "go" ? pascal(name) : ext === "py" || ext === "rs" ? snake(name) : name}()`;
  };
  const body = (indent: string, ret: (expr: string) => string) => {
    const n = 3 + Math.floor(rnd() * 8);
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const expr = rnd() < 0.2 ? memberCall() : call();
      out.push(`${indent}${ext === "py" ? "" : ext === "rs" ? "let " : ext === "go" ? "" : "const "}v${i}${ext === "go" ? " :=" : " ="} ${expr}${ext === "py" || ext === "go" ? "" : ";"}`);
    }
    out.push(`${indent}${ret(`v0`)}`);
    return out;
  };
  const lines: string[] = [];
  const imported = importLines(file, imports);
  switch (ext) {
    case "py":
      lines.push("import os", ...imported, "");
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`class ${pascal(d.name)}:`, `    def __init__(self, value):`, `        self.value = value`, "");
          lines.push(`    def ${snake(COMMON[Math.floor(rnd() * COMMON.length)]!)}(self, value):`, ...body("        ", (e) => `return ${e}`), "");
        } else lines.push(`def ${snake(d.name)}(value):`, `    """${d.name} for the generated benchmark."""`, ...body("    ", (e) => `return ${e}`), "");
      }
      break;
    case "ts":
    case "js":
      if (imported.length > 0) lines.push(...imported, "");
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`export class ${pascal(d.name)} {`, `  constructor(private value${ext === "ts" ? ": number" : ""}) {}`, "");
          lines.push(`  ${COMMON[Math.floor(rnd() * COMMON.length)]}(value${ext === "ts" ? ": number" : ""}) {`, ...body("    ", (e) => `return ${e};`), "  }", "}", "");
        } else lines.push(`export function ${d.name}(value${ext === "ts" ? ": number" : ""}) {`, ...body("  ", (e) => `return ${e};`), "}", "");
      }
      break;
    case "go":
      lines.push(`package ${goAlias(file.path)}`, "", ...imported, "");
      for (const d of defs) {
        if (d.kind === "class") {
          lines.push(`type ${pascal(d.name)} struct {`, "\tValue int", "}", "");
          lines.push(`func (s *${pascal(d.name)}) ${pascal(COMMON[Math.floor(rnd() * COMMON.length)]!)}(value int) int {`, ...body("\t", (e) => `return ${e}`), "}", "");
        } else lines.push(`func ${pascal(d.name)}(value int) int {`, ...body("\t", (e) => `return ${e}`), "}", "");
      }
      break;
    case "java":
      lines.push(`package ${dirname(file.path).replaceAll("/", ".")};`, "", ...imported, "", `public class ${javaClass(file.path)} {`);
      for (const d of defs) {
        if (d.kind === "class") lines.push(`  static class ${pascal(d.name)} {`, `    int ${COMMON[Math.floor(rnd() * COMMON.length)]}(int value) {`, ...body("      ", (e) => `return ${e};`).map((l) => l.replace("const ", "int ")), "    }", "  }", "");
        else lines.push(`  static int ${d.name}(int value) {`, ...body("    ", (e) => `return ${e};`).map((l) => l.replace("const ", "int ")), "  }", "");
      }
      lines.push("}");
      break;
    case "rs":
      if (imported.length > 0) lines.push(...imported, "");
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
  /** Per file, the other files it imports (Go: every file of an imported package that it calls into) and the names it uses from each. */
  imports: Map<string, GeneratedImport[]>;
}

/** Writes `count` files under `dir` (deterministic for a seed) and returns their paths. */
export function generateRepo(dir: string, count: number, seed = 1): GeneratedRepo {
  const rnd = seededRandom(seed);
  const totalWeight = LANGS.reduce((s, l) => s + l.weight, 0);
  const pickExt = (): Ext => {
    let r = rnd() * totalWeight;
    for (const l of LANGS) if ((r -= l.weight) < 0) return l.ext;
    return "ts";
  };
  const used = new Map<string, number>();
  const files: PlannedFile[] = [];
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
    const base = ext === "java" ? pascal(defs[0]!.name) + "Module" : snake(defs[0]!.name).replace(/^_/, "");
    files.push({ path: `${top}/${sub}/${base}_${i}.${ext}`, ext, defs });
  }
  // Calls stay within a language (as imports do); a quarter go to the first 2% of
  // that language's files ("core" modules).
  const byExt = new Map<Ext, PlannedFile[]>();
  for (const file of files) byExt.set(file.ext, [...(byExt.get(file.ext) ?? []), file]);
  let bytes = 0;
  const imports = new Map<string, GeneratedImport[]>();
  for (const file of files) {
    const peers = byExt.get(file.ext)!;
    const calls: string[] = [];
    const importedNames = new Map<PlannedFile, Set<string>>();
    const n = 8 + Math.floor(rnd() * 16);
    for (let c = 0; c < n; c++) {
      const j = rnd() < 0.25 ? Math.floor(rnd() * Math.max(1, peers.length * 0.02)) : Math.floor(rnd() * peers.length);
      const target = peers[j]!;
      const def = target.defs[Math.floor(rnd() * target.defs.length)]!;
      calls.push(callOf(file, target, def));
      if (target === file) continue;
      const names = importedNames.get(target) ?? new Set<string>();
      names.add(nameIn(target.ext, def));
      importedNames.set(target, names);
    }
    const text = renderFile(file, calls, new Map([...importedNames].filter(([t]) => !(t.ext === "go" && dirname(t.path) === dirname(file.path)))), rnd);
    imports.set(file.path, [...importedNames].map(([t, names]) => ({ file: t.path, names: [...names].sort() })));
    const abs = join(dir, file.path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
    bytes += text.length;
  }
  writeFileSync(join(dir, "README.md"), `# generated repository\n\n${count} files, seed ${seed}.\n`);
  writeFileSync(join(dir, "go.mod"), "module example.com/gen\n\ngo 1.22\n");
  // CI workflows, as large repositories have dozens: files without definitions.
  const workflows = Array.from({ length: Math.min(40, Math.ceil(count / 50)) }, (_, i) => `.github/workflows/${VERBS[i % VERBS.length]}-${NOUNS[i % NOUNS.length]}.yml`);
  for (const workflow of workflows) {
    mkdirSync(join(dir, ".github", "workflows"), { recursive: true });
    writeFileSync(join(dir, workflow), `name: ${workflow}\non: [push]\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make check\n`);
  }
  return { files: ["README.md", "go.mod", ...workflows, ...files.map((f) => f.path)], bytes, imports };
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
