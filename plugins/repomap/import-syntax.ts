// The syntax side of import resolution (pure): import statements of TS/JS, Go and
// Rust read by pattern, names used through a namespace, and the `paths`/`baseUrl`
// of a tsconfig.json. imports.ts resolves what these name to repository files.
import { parse as parseJsoncText } from "jsonc-parser";
import { posix } from "node:path";

// ─── Statements ──────────────────────────────────────────────────────────────

export interface TsImport {
  spec: string;
  /** Names taken (original names, and the local name of a default import). */
  names: string[];
  /** `import * as ns`: the namespace's local name. */
  namespace: string | null;
  /** `export … from`: re-exported. */
  reexport: boolean;
  /** `export * from` (every name). */
  star: boolean;
  /** Re-exported name → its name in the source module (`export { A as B }`: B → A). */
  exported: Map<string, string>;
}

const STATIC_IMPORT = /(?:^|[;\n}])[ \t]*(import|export)[ \t]+(?:type[ \t]+)?([\w$\s,{}*]*?)[ \t\n]*from[ \t]*['"]([^'"\n]+)['"]/g;
const SIDE_EFFECT_IMPORT = /(?:^|[;\n])[ \t]*import[ \t]*['"]([^'"\n]+)['"]/g;
const REQUIRE_BINDING = /(?:const|let|var)\s+(\{[^}]*\}|[\w$]+)\s*=\s*require\(\s*['"]([^'"\n]+)['"]\s*\)/g;
const CALL_IMPORT = /\b(?:require|import)\(\s*['"]([^'"\n]+)['"]\s*\)/g;
const PLAIN_NAME = /^[\w$]+$/;

/**
 * Static imports and re-exports, side-effect imports, require() and import() calls.
 * The cold map's pre-scan reads every file with this: the common shapes (`{ A, B }`,
 * no `require(`) take no regular expression beyond the statement's own.
 */
export function tsImportStatements(text: string): TsImport[] {
  const out: TsImport[] = [];
  const plain = (spec: string, names: string[], namespace: string | null): TsImport => ({ spec, names, namespace, reexport: false, star: false, exported: new Map() });
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const clause = m[2]!;
    const namespace = clause.includes("*") ? (/\*\s*as\s+([\w$]+)/.exec(clause)?.[1] ?? null) : null;
    const names: string[] = [];
    const exported = new Map<string, string>();
    // The first `{` and the first `}` after it (what /\{([^}]*)\}/ finds).
    const open = clause.indexOf("{");
    const close = open < 0 ? -1 : clause.indexOf("}", open);
    if (close >= 0) {
      for (const item of clause.slice(open + 1, close).split(",")) {
        const part = item.trim();
        let original = part;
        let alias: string | undefined;
        if (!PLAIN_NAME.test(part)) [original = "", alias] = part.replace(/^type\s+/, "").split(/\s+as\s+/).map((n) => n.trim());
        if (!PLAIN_NAME.test(original)) continue;
        names.push(original);
        exported.set(alias ?? original, original);
      }
    }
    // A default name: the clause does not start with `{` or `*`.
    const lead = /\S/.exec(clause)?.[0];
    if (lead !== undefined && lead !== "{" && lead !== "*") {
      const defaultName = /^\s*([\w$]+)\s*(,|$)/.exec(clause.replace(/^\s*type\s+/, ""))?.[1];
      if (defaultName && defaultName !== "type") names.push(defaultName);
    }
    const reexport = m[1] === "export";
    out.push({ spec: m[3]!, names, namespace, reexport, star: reexport && clause.trim() === "*", exported });
  }
  for (const m of text.matchAll(SIDE_EFFECT_IMPORT)) out.push(plain(m[1]!, [], null));
  const requires = text.includes("require(");
  if (requires) {
    for (const m of text.matchAll(REQUIRE_BINDING)) {
      const binding = m[1]!;
      if (binding.startsWith("{")) {
        const names = binding.slice(1, -1).split(",").map((p) => p.trim().split(":")[0]!.trim()).filter((n) => /^[\w$]+$/.test(n));
        out.push(plain(m[2]!, names, null));
      } else out.push(plain(m[2]!, [], binding));
    }
  }
  if (requires || text.includes("import(")) for (const m of text.matchAll(CALL_IMPORT)) out.push(plain(m[1]!, [], null));
  return out;
}

export function goImports(text: string): { alias: string | null; path: string }[] {
  const out: { alias: string | null; path: string }[] = [];
  const one = /^[ \t]*(?:([\w.]+)[ \t]+)?"([^"\n]+)"/gm;
  for (const block of text.matchAll(/^import[ \t]*\(([^)]*)\)/gm)) {
    for (const m of block[1]!.matchAll(one)) out.push({ alias: m[1] ?? null, path: m[2]! });
  }
  for (const m of text.matchAll(/^import[ \t]+(?:([\w.]+)[ \t]+)?"([^"\n]+)"/gm)) out.push({ alias: m[1] ?? null, path: m[2]! });
  return out;
}

/** `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`. */
export function expandUse(tree: string): string[] {
  const open = tree.indexOf("{");
  if (open < 0) return [tree.replace(/\bas\w+$/, "")];
  const prefix = tree.slice(0, open);
  const inner = tree.slice(open + 1, tree.lastIndexOf("}"));
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === "{") depth++;
    else if (inner[i] === "}") depth--;
    else if (inner[i] === "," && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(inner.slice(start));
  return parts.filter(Boolean).flatMap((part) => expandUse(prefix + part));
}

/** Names used as `qualifier.Name` in `text`. */
export function usedMembers(text: string, qualifier: string): string[] {
  // A scan by character codes rather than a RegExp (built per call, or tested per
  // character): the cold map's pre-scan calls this for every import of every file.
  const names = new Set<string>();
  const needle = qualifier + ".";
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    // Not the tail of a longer name or of another member access (/[\w$.]/ before it).
    if (at > 0) {
      const before = text.charCodeAt(at - 1);
      if (before === 46 || isNameCode(before)) continue;
    }
    const start = at + needle.length;
    // A name starts with /[A-Za-z_$]/ and goes on with /[\w$]/.
    if (start >= text.length) continue;
    const first = text.charCodeAt(start);
    if (!isNameCode(first) || (first >= 48 && first <= 57)) continue;
    let end = start + 1;
    while (end < text.length && isNameCode(text.charCodeAt(end))) end++;
    names.add(text.slice(start, end));
  }
  return [...names];
}

/** /[\w$]/ of one UTF-16 code unit. */
function isNameCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/** The local name of `name` in a Python import list (`a as b` → b). */
export function aliasOf(list: string, name: string): string {
  return new RegExp(`\\b${name}\\s+as\\s+(\\w+)`).exec(list)?.[1] ?? name;
}

// ─── tsconfig.json ───────────────────────────────────────────────────────────

export interface TsPaths {
  /** Candidate paths (repository-relative, without extension resolution) for a bare specifier. */
  resolve(spec: string): string[];
}

export function readTsPaths(path: string, read: (path: string) => string | null, depth = 0): TsPaths | null {
  const text = read(path);
  if (text === null) return null;
  let config: { extends?: unknown; compilerOptions?: { baseUrl?: unknown; paths?: unknown } };
  try {
    config = parseJsonc(text);
  } catch {
    return null;
  }
  const dir = posix.dirname(path);
  const options = config.compilerOptions ?? {};
  let inherited: TsPaths | null = null;
  if (typeof config.extends === "string" && config.extends.startsWith(".") && depth < 3) {
    const parent = posix.normalize(posix.join(dir, config.extends.endsWith(".json") ? config.extends : `${config.extends}.json`));
    inherited = readTsPaths(parent, read, depth + 1);
  }
  const baseUrl = typeof options.baseUrl === "string" ? posix.normalize(posix.join(dir, options.baseUrl)) : null;
  const paths = options.paths && typeof options.paths === "object" ? Object.entries(options.paths as Record<string, unknown>) : [];
  if (baseUrl === null && paths.length === 0) return inherited;
  const base = baseUrl ?? dir;
  return {
    resolve(spec) {
      const out: string[] = [];
      for (const [pattern, targets] of paths) {
        if (!Array.isArray(targets)) continue;
        const star = pattern.indexOf("*");
        let matched: string | null = null;
        if (star < 0) matched = spec === pattern ? "" : null;
        else if (spec.startsWith(pattern.slice(0, star)) && spec.endsWith(pattern.slice(star + 1)) && spec.length >= pattern.length - 1) {
          matched = spec.slice(star, spec.length - (pattern.length - star - 1));
        }
        if (matched === null) continue;
        for (const target of targets) if (typeof target === "string") out.push(posix.join(base, target.replace("*", matched)));
      }
      if (baseUrl !== null) out.push(posix.join(baseUrl, spec));
      return [...out, ...(inherited?.resolve(spec) ?? [])];
    },
  };
}

/** JSON with comments and trailing commas (tsconfig.json's dialect). */
function parseJsonc(text: string): { extends?: unknown; compilerOptions?: { baseUrl?: unknown; paths?: unknown } } {
  const value = parseJsoncText(text, [], { allowTrailingComma: true }) as unknown;
  if (!value || typeof value !== "object") throw new Error("not an object");
  return value as { extends?: unknown; compilerOptions?: { baseUrl?: unknown; paths?: unknown } };
}
