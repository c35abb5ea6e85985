// Config files: lookup (global < .coder.json < .coder.local.json, or one
// --config file), JSONC parsing, validation against the schema derived from the
// option table, and the merge with env and flags that records where every
// effective value came from.
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { findNodeAtLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { z } from "zod";
import type { Settings } from "./app.ts";
import type { ParsedArgv, SourceValues } from "./cli.ts";
import { ConfigError } from "./errors.ts";
import { OPTIONS, type OptionSpec, type Options, type PluginRef, configKeys } from "./options.ts";

export type LayerKind = "global" | "project" | "local" | "explicit";

/** One parsed, validated config file. */
export interface ConfigLayer {
  kind: LayerKind;
  file: string;
  text: string;
  /** Validated values (plugins normalised to PluginRef). */
  values: Record<string, unknown>;
  /** Key → 1-based line of the key in the file. */
  lines: Record<string, number>;
}

export const PROJECT_FILE = ".coder.json";
export const LOCAL_FILE = ".coder.local.json";

/** The global config folder: $XDG_CONFIG_HOME/coder, default ~/.config/coder. */
export function globalConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CONFIG_HOME;
  const home = env.HOME || env.USERPROFILE || homedir();
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, ".config"), "coder");
}

/** The nearest folder at or above `cwd` holding `.git` (a folder or a worktree file). */
export function findGitRoot(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, ".git"))) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** A path as shown in messages: relative to the current directory when inside it. */
export function displayPath(file: string, cwd = process.cwd()): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

// ─── Schema ──────────────────────────────────────────────────────────────────

const modelOverrideSchema = z
  .object({
    contextWindow: z.number().int().positive(),
    maxOutput: z.number().int().positive(),
    prices: z.object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() }).partial().strict(),
    editFormat: z.string(),
    weakModel: z.string(),
    editorModel: z.string(),
    editorFormat: z.string(),
    encoding: z.string(),
    capabilities: z
      .object({
        tools: z.boolean(),
        systemPrompt: z.boolean(),
        temperature: z.boolean(),
        reasoningEffort: z.boolean(),
        prefill: z.boolean(),
        cache: z.enum(["auto", "breakpoints", "none"]),
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

const pluginEntrySchema = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/, "a 64-digit lowercase hex sha256").optional() }).strict(),
]);

function valueSchema(spec: OptionSpec): z.ZodType {
  switch (spec.type) {
    case "boolean":
      return z.boolean();
    case "number":
      return z.number();
    case "string":
      return z.string();
    case "list":
      return z.array(z.string());
    case "enum":
      return z.enum(spec.values as [string, ...string[]]);
    case "models":
      return z.record(z.string(), modelOverrideSchema);
    case "plugins":
      return z.array(pluginEntrySchema);
  }
}

/** The zod schema of a config file, derived from the option table. */
export function configSchema() {
  const shape: Record<string, z.ZodType> = { $schema: z.string().optional().describe("JSON Schema reference (ignored)") };
  for (const spec of configKeys()) shape[spec.key] = valueSchema(spec).optional().describe(spec.help);
  return z.object(shape).strict();
}

/** The JSON Schema that `coder config schema` prints. */
export function jsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema(), { target: "draft-2020-12" }) as Record<string, unknown>;
  return { ...schema, title: "coder config (.coder.json, .coder.local.json, $XDG_CONFIG_HOME/coder/config.json)" };
}

function expectedText(spec: OptionSpec | undefined): string | undefined {
  if (!spec) return undefined;
  switch (spec.type) {
    case "boolean":
      return "true or false";
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "list":
      return "a list of strings";
    case "enum":
      return `one of ${spec.values?.map((v) => `"${v}"`).join(", ")}`;
    case "models":
      return "an object of model name → { contextWindow, maxOutput, prices, editFormat, ... }";
    case "plugins":
      return 'a list of "./path.ts" or { "path": "./path.ts", "sha256": "<hex>" }';
  }
}

function typeOfJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${JSON.stringify(value)}`;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function nodeLine(text: string, tree: Node | undefined, path: (string | number)[]): number {
  if (!tree) return 1;
  for (let n = path.length; n >= 0; n--) {
    const node = findNodeAtLocation(tree, path.slice(0, n));
    if (node) return lineAt(text, node.parent?.type === "property" ? node.parent.offset : node.offset);
  }
  return 1;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

function closestKey(key: string): string | undefined {
  const keys = configKeys().map((s) => s.key);
  const lower = key.toLowerCase().replace(/[-_]/g, "");
  return keys.find((k) => k.toLowerCase() === lower) ?? keys.find((k) => distance(k.toLowerCase(), lower) <= 2);
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * Parse and validate one config file's text. Every problem becomes one line
 * `file:line: key.path: what was expected`; all lines go in one ConfigError.
 */
export function parseConfigText(text: string, file: string, kind: LayerKind): ConfigLayer {
  const shown = displayPath(file);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  if (errors.length) {
    const first = errors[0]!;
    throw new ConfigError(`${shown}:${lineAt(text, first.offset)}: invalid JSON (${printParseErrorCode(first.error)})`);
  }
  const raw: unknown = tree ? nodeValue(tree) : {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new ConfigError(`${shown}:1: a config file must hold a JSON object, got ${typeOfJson(raw)}`);
  const result = configSchema().safeParse(raw);
  const problems: string[] = [];
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path as (string | number)[];
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          const line = nodeLine(text, tree, [...path, key]);
          const where = pathText([...path, key]);
          if (path.length === 0) {
            const hint = closestKey(key);
            problems.push(`${shown}:${line}: unknown key "${where}"${hint ? ` (did you mean "${hint}"?)` : ""}; expected one of the keys in \`coder config schema\``);
          } else {
            problems.push(`${shown}:${line}: unknown key "${where}"`);
          }
        }
        continue;
      }
      const line = nodeLine(text, tree, path);
      const spec = path.length === 1 ? (OPTIONS as readonly OptionSpec[]).find((s) => s.key === path[0]) : undefined;
      const value = path.reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string | number, unknown>)[k] : undefined), raw);
      const expected = expectedText(spec);
      problems.push(`${shown}:${line}: ${pathText(path)}: ${expected ? `expected ${expected}, got ${typeOfJson(value)}` : issue.message}`);
    }
  }
  const data = (result.success ? result.data : {}) as Record<string, unknown>;
  if (kind === "project" || kind === "local") {
    for (const spec of configKeys()) {
      if (spec.notInProject && data[spec.key] !== undefined) {
        problems.push(`${shown}:${nodeLine(text, tree, [spec.key])}: ${spec.key} may not be set in a project config (use the environment, the repository's .env or the global config)`);
      }
    }
  }
  if (problems.length) throw new ConfigError(problems.join("\n"));
  const values: Record<string, unknown> = {};
  const lines: Record<string, number> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === "$schema" || value === undefined) continue;
    values[key] = key === "plugins" ? (value as (string | { path: string; sha256?: string })[]).map((p) => toPluginRef(p, file)) : value;
    lines[key] = nodeLine(text, tree, [key]);
  }
  return { kind, file, text, values, lines };
}

function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object":
      return Object.fromEntries((node.children ?? []).map((p) => [p.children![0]!.value as string, p.children![1] ? nodeValue(p.children![1]) : undefined]));
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

function toPluginRef(entry: string | { path: string; sha256?: string }, file: string): PluginRef {
  return typeof entry === "string" ? { path: entry, source: file } : { path: entry.path, sha256: entry.sha256, source: file };
}

/** Read and validate a config file. */
export function readConfigFile(file: string, kind: LayerKind): ConfigLayer {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`${displayPath(file)}: cannot read config file (${code === "ENOENT" ? "not found" : code ?? String(error)})`);
  }
  return parseConfigText(text, file, kind);
}

/** The config files that apply, lowest precedence first. `--config FILE` replaces the lookup. */
export function lookupConfigFiles(root: string, env: Readonly<Record<string, string | undefined>>, explicit?: string, cwd = process.cwd()): { file: string; kind: LayerKind }[] {
  if (explicit) return [{ file: resolve(cwd, explicit), kind: "explicit" }];
  const found: { file: string; kind: LayerKind }[] = [];
  const global = join(globalConfigDir(env), "config.json");
  if (isFile(global)) found.push({ file: global, kind: "global" });
  const project = join(root, PROJECT_FILE);
  if (isFile(project)) found.push({ file: project, kind: "project" });
  const local = join(root, LOCAL_FILE);
  if (isFile(local)) found.push({ file: local, kind: "local" });
  return found;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

// ─── Merge ───────────────────────────────────────────────────────────────────

export interface MergeInput {
  layers: ConfigLayer[];
  env: SourceValues;
  argv: ParsedArgv;
  /** Positionals left after a subcommand name. */
  positionals: string[];
  /** Keys of project/local layers to ignore (an untrusted project's keys that run code). */
  drop?: ReadonlySet<string>;
  cwd?: string;
}

/**
 * Merge defaults < config layers < env < flags, recording each value's source.
 * `plugins` lists from several config files add up (each entry keeps its file);
 * every other key is replaced by the higher source.
 */
export function mergeSettings(input: MergeInput): Settings {
  const options: Record<string, unknown> = {};
  const provenance: Record<string, string> = {};
  for (const spec of OPTIONS as readonly OptionSpec[]) {
    const empty = spec.type === "list" || spec.type === "plugins" ? [] : spec.type === "models" ? {} : undefined;
    options[spec.key] = spec.default !== undefined ? structuredClone(spec.default) : empty;
    provenance[spec.key] = "default";
  }
  const pluginSources: string[] = [];
  for (const layer of input.layers) {
    const shown = displayPath(layer.file, input.cwd);
    for (const [key, value] of Object.entries(layer.values)) {
      const projectish = layer.kind === "project" || layer.kind === "local";
      if (projectish && input.drop?.has(key)) continue;
      if (key === "plugins") {
        options.plugins = [...(options.plugins as PluginRef[]), ...(value as PluginRef[])];
        pluginSources.push(`${shown}:${layer.lines[key]}`);
        provenance.plugins = pluginSources.join(", ");
        continue;
      }
      options[key] = value;
      provenance[key] = `${shown}:${layer.lines[key]}`;
    }
  }
  for (const source of [input.env, input.argv]) {
    for (const [key, value] of Object.entries(source.values)) {
      options[key] = value;
      provenance[key] = source.origin[key] ?? "?";
    }
  }
  if (options.architect === true) {
    options.editFormat = "architect";
    provenance.editFormat = provenance.architect ?? "flag --architect";
  }
  return {
    options: options as Options,
    provenance,
    positionals: input.positionals,
    configFiles: input.layers.map((l) => l.file),
  };
}

/** Keys that run code, as set by the project's own config files (they need trust). */
export function keysNeedingTrust(layers: ConfigLayer[]): string[] {
  const needs = new Set((OPTIONS as readonly OptionSpec[]).filter((s) => s.needsTrust).map((s) => s.key));
  const keys = new Set<string>();
  for (const layer of layers) {
    if (layer.kind !== "project" && layer.kind !== "local") continue;
    for (const key of Object.keys(layer.values)) if (needs.has(key)) keys.add(key);
  }
  return [...keys];
}

const COMPARATOR = /^(?:[<>]=?|=|\^|~)?v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** A semver range as npm writes them: comparators, `||`, hyphen ranges, x-ranges. */
export function isSemverRange(range: string): boolean {
  const sets = range.split("||").map((set) => set.trim().split(/\s+/).filter(Boolean));
  return sets.every((tokens) => tokens.length > 0 && tokens.every((t, i) => (t === "-" ? i > 0 && i < tokens.length - 1 : COMPARATOR.test(t))));
}

/** The `coder` semver-range pin of any config layer must admit this binary's version. */
export function checkVersionPins(layers: ConfigLayer[], version: string, cwd?: string): void {
  const plain = version.replace(/-dev$/, "");
  for (const layer of layers) {
    const range = layer.values.coder;
    if (typeof range !== "string") continue;
    const where = `${displayPath(layer.file, cwd)}:${layer.lines.coder}`;
    if (!isSemverRange(range)) throw new ConfigError(`${where}: coder: expected a semver range such as "^${plain}" or ">=0.1 <2", got "${range}"`);
    let ok: boolean;
    try {
      ok = Bun.semver.satisfies(plain, range);
    } catch {
      ok = false;
    }
    if (!ok) {
      throw new ConfigError(
        `${where}: this project needs coder ${range}, but this is coder ${version}; install a matching version or update the "coder" pin`,
      );
    }
  }
}

// ─── .env ────────────────────────────────────────────────────────────────────

/** API keys (`*_API_KEY`) from the repository's `.env`; nothing else from it is used. */
export function readDotenvKeys(root: string): Record<string, string> {
  const file = join(root, ".env");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return {};
  }
  const keys: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const [, name, rawValue] = m as unknown as [string, string, string];
    if (!/_API_KEY$/.test(name)) continue;
    let value = rawValue;
    const quoted = /^(['"])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2]!;
    else value = value.replace(/\s+#.*$/, "");
    keys[name] = value;
  }
  return keys;
}

// ─── config show ─────────────────────────────────────────────────────────────

const SECRET = new Set(["apiKey"]);

/** `coder config show`: every effective value and where it came from. */
export function renderConfigShow(settings: Settings): string {
  const rows: [string, string, string][] = [];
  for (const spec of OPTIONS as readonly OptionSpec[]) {
    if (spec.key === "help" || spec.key === "version" || spec.key === "kind") continue;
    const value = settings.options[spec.key as keyof Options];
    let shown = value === undefined ? "(unset)" : JSON.stringify(value, (k, v) => (k === "source" ? undefined : v));
    if (SECRET.has(spec.key) && value !== undefined) shown = '"********"';
    rows.push([spec.key, shown, settings.provenance[spec.key] ?? "default"]);
  }
  const w1 = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.min(48, Math.max(...rows.map((r) => r[1].length)));
  const files = settings.configFiles.length ? settings.configFiles.map((f) => `  ${displayPath(f)}`).join("\n") : "  (none)";
  return [`config files (lowest precedence first):`, files, "", ...rows.map(([k, v, s]) => `${k.padEnd(w1)}  ${v.padEnd(w2)}  ${s}`)].join("\n");
}
