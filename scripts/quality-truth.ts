// Ground truth for the repo-map quality bench (scripts/bench/repomap-quality.ts):
// a chat file's local imports and the definitions it uses from them, read from its
// source by the rule stated in that file's header, independent of the map's own
// tags and import resolver.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";

const ROOT = join(import.meta.dir, "..");

/** What a chat file depends on. */
export interface Truth {
  /** Imported files that define something. */
  files: Set<string>;
  /** "file\0name" of used definitions. */
  defs: Set<string>;
}

/** A source tree to sample: its root and which files may be chat files. */
export interface Tree {
  label: string;
  root: string;
  files: string[];
  /** Ground truth of one chat file, or null when it has no local import. */
  truth: (chat: string) => Truth | null;
  candidates: (file: string) => boolean;
}

export function escape(name: string): string {
  return name.replace(/[$.*+?^(){}[\]|\\]/g, "\\$&");
}

// ─── Ground truth: TS/JS ─────────────────────────────────────────────────────

const TS_EXTENSIONS = [".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
const TS_DEF = (name: string) =>
  new RegExp(`^[ \\t]*(export[ \\t]+)?(default[ \\t]+)?(declare[ \\t]+)?(abstract[ \\t]+)?(async[ \\t]+)?(function\\*?|class|interface|type|enum|const|let|var|namespace)[ \\t]+${escape(name)}\\b`, "m");
const PY_DEF = (name: string) => new RegExp(`^([ \\t]*(async[ \\t]+)?(def|class)[ \\t]+${escape(name)}\\b|${escape(name)}[ \\t]*(:[^=\\n]*)?=)`, "m");

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

export function sourceTree(label: string, root: string, candidates: (file: string) => boolean): Tree {
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
export function nodeGypRoot(): string | null {
  const local = join(ROOT, "node_modules", "node-gyp");
  if (existsSync(join(local, "gyp"))) return local;
  const npmRoot = Bun.spawnSync(["npm", "root", "-g"], { stdout: "pipe", stderr: "ignore" }).stdout.toString().trim();
  const bundled = join(npmRoot, "npm", "node_modules", "node-gyp");
  return npmRoot && existsSync(join(bundled, "gyp")) ? bundled : null;
}

export function packageVersion(root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: string }).version ?? "?";
  } catch {
    return "?";
  }
}
