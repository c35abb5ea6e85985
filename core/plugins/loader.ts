// Loading plugins: built-ins, config `plugins` (with sha256 pins) and
// `--plugin PATH`, all through one door. The default export is validated
// strictly (unknown keys are errors, not silently ignored); a plugin that
// throws while loading is reported by name and skipped.
import { readCapped } from "../edit/read.ts";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { displayPath } from "../config/config.ts";
import { ConfigError, PluginError, UsageError } from "../errors.ts";
import type { PluginRef } from "../config/options.ts";
import type { Kit, Logger, Plugin, PluginObject } from "../plugin.ts";
import { type Registry, messageOf } from "./registry.ts";

/** The plugin API version this kernel implements. */
export const API_VERSION = 1;

/** One plugin to load. */
/** A plugin shipped in the binary; main.ts hands the list (builtins.ts) to the kernel. */
export interface BuiltinPlugin {
  /** Shown as the origin in `coder plugins`. */
  origin: string;
  load: () => Promise<{ default: Plugin }>;
}

export interface PluginSource {
  /** "built-in:formats/editblock" or an absolute file path. */
  origin: string;
  /** sha256 of the file (user plugins). */
  sha256?: string;
  load: () => Promise<unknown>;
}

/** An origin as the user sees it: "built-in:…" as is, a plugin file as `displayPath` shows it. */
export function displayOrigin(origin: string, cwd: string): string {
  return origin.startsWith("built-in") ? origin : displayPath(origin, cwd);
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** sha256 of a plugin file; a missing file is a UsageError naming it (and who named it). */
/** A plugin (one bundled file) larger than this is refused. */
const MAX_PLUGIN_BYTES = 64 * 1024 * 1024;

export function hashPluginFile(path: string, namedBy: string): string {
  // Through the capped reader: a plugin named as /dev/zero or a pipe is refused, not read without end.
  const read = readCapped(path, { maxBytes: MAX_PLUGIN_BYTES, name: `plugin file ${path}` });
  if (read.ok) return sha256Hex(read.bytes);
  throw new UsageError(read.reason === "missing" ? `plugin file ${path} (from ${namedBy}) cannot be read: not found` : `${read.message} (from ${namedBy})`);
}

/** A plugin file as a source; `pin` is the sha256 it must have (mismatch: ConfigError with both hashes). */
export function fileSource(path: string, namedBy: string, pin?: string): PluginSource {
  const sha256 = hashPluginFile(path, namedBy);
  if (pin && pin.toLowerCase() !== sha256) {
    throw new ConfigError(`plugin ${path} does not match its pin in ${namedBy}: pinned sha256 ${pin}, file has ${sha256}; review the file, then run \`coder plugins pin\``);
  }
  return { origin: path, sha256, load: () => import(pathToFileURL(path).href) };
}

/** Sources for config `plugins` entries (paths relative to their config file) and `--plugin` paths (relative to cwd). */
export function userSources(configPlugins: readonly PluginRef[], flagPlugins: readonly string[], cwd: string, display: (file: string) => string): PluginSource[] {
  const sources: PluginSource[] = [];
  for (const ref of configPlugins) {
    sources.push(fileSource(resolve(dirname(ref.source), ref.path), display(ref.source), ref.sha256));
  }
  for (const path of flagPlugins) sources.push(fileSource(resolve(cwd, path), "--plugin"));
  return sources;
}

const PLUGIN_KEYS = ["apiVersion", "name", "override", "formats", "context", "models", "commands", "tools"] as const;

type FieldRule = { kind: "string" | "function" | "array" | "boolean"; optional?: boolean } | { kind: "enum"; values: readonly string[]; optional?: boolean };

const ITEM_RULES: Record<"formats" | "context" | "models" | "commands" | "tools", Record<string, FieldRule>> = {
  formats: {
    name: { kind: "string" },
    summary: { kind: "string" },
    prompts: { kind: "function" },
    parse: { kind: "function" },
    apply: { kind: "function" },
    report: { kind: "function" },
    tools: { kind: "array", optional: true },
    mode: { kind: "enum", values: ["edit", "editor", "none", "files"], optional: true },
  },
  context: {
    name: { kind: "string" },
    stability: { kind: "enum", values: ["static", "session", "turn"] },
    provide: { kind: "function" },
    onMessage: { kind: "function", optional: true },
  },
  models: {
    name: { kind: "string" },
    matches: { kind: "function" },
    info: { kind: "function" },
    list: { kind: "function", optional: true },
    stream: { kind: "function" },
    defaultModel: { kind: "function", optional: true },
    defaultModelKeys: { kind: "array", optional: true },
    transcribe: { kind: "function", optional: true },
  },
  commands: {
    name: { kind: "string" },
    summary: { kind: "string" },
    usage: { kind: "string", optional: true },
    complete: { kind: "function", optional: true },
    run: { kind: "function" },
    matches: { kind: "function", optional: true },
  },
  tools: {
    name: { kind: "string" },
    tools: { kind: "function" },
    check: { kind: "function", optional: true },
  },
};

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

function checkField(value: unknown, rule: FieldRule): string | null {
  if (value === undefined) return rule.optional ? null : "is missing";
  const ok =
    rule.kind === "string"
      ? typeof value === "string" && value.length > 0
      : rule.kind === "function"
        ? typeof value === "function"
        : rule.kind === "array"
          ? Array.isArray(value)
          : rule.kind === "boolean"
            ? typeof value === "boolean"
            : typeof value === "string" && "values" in rule && rule.values.includes(value);
  if (ok) return null;
  const expected = "values" in rule ? `one of ${rule.values.map((v) => `"${v}"`).join(", ")}` : rule.kind === "array" ? "a list" : `a ${rule.kind === "string" ? "non-empty string" : rule.kind}`;
  return `expected ${expected}, got ${describe(value)}`;
}

/**
 * Check a plugin object's shape: known keys only, `apiVersion` present and not
 * newer than ours, each item's fields typed. Errors name the origin and the key.
 */
export function validatePluginObject(value: unknown, origin: string): PluginObject {
  const nameGuess = value && typeof value === "object" && typeof (value as { name?: unknown }).name === "string" ? (value as { name: string }).name : "?";
  const fail = (message: string) => new PluginError(nameGuess, origin, message);
  if (!value || typeof value !== "object" || Array.isArray(value)) throw fail(`the default export must be a plugin object or a function returning one, got ${describe(value)}`);
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!(PLUGIN_KEYS as readonly string[]).includes(key)) throw fail(`unknown key "${key}" in the plugin object (allowed: ${PLUGIN_KEYS.join(", ")})`);
  }
  if (obj.apiVersion === undefined) throw fail(`key "apiVersion" is missing (this coder implements plugin API version ${API_VERSION}; add \`apiVersion: ${API_VERSION}\`)`);
  if (typeof obj.apiVersion !== "number" || !Number.isInteger(obj.apiVersion) || obj.apiVersion < 1) throw fail(`key "apiVersion": expected a positive integer, got ${describe(obj.apiVersion)}`);
  if (obj.apiVersion > API_VERSION) throw fail(`key "apiVersion": the plugin needs plugin API version ${obj.apiVersion}, this coder implements ${API_VERSION}; upgrade coder`);
  if (typeof obj.name !== "string" || !/^[A-Za-z0-9@][A-Za-z0-9@._/-]*$/.test(obj.name)) throw fail(`key "name": expected a plugin name (letters, digits, . _ - / @), got ${describe(obj.name)}`);
  if (obj.override !== undefined && typeof obj.override !== "boolean") throw fail(`key "override": expected true or false, got ${describe(obj.override)}`);
  for (const kind of ["formats", "context", "models", "commands", "tools"] as const) {
    const list = obj[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw fail(`key "${kind}": expected a list, got ${describe(list)}`);
    const rules = ITEM_RULES[kind];
    list.forEach((item: unknown, i: number) => {
      const at = `${kind}[${i}]`;
      if (!item || typeof item !== "object" || Array.isArray(item)) throw fail(`${at}: expected an object, got ${describe(item)}`);
      const fields = item as Record<string, unknown>;
      const label = typeof fields.name === "string" ? `${at} ("${fields.name}")` : at;
      for (const key of Object.keys(fields)) {
        if (!(key in rules)) throw fail(`unknown key "${label}.${key}" (allowed: ${Object.keys(rules).join(", ")})`);
      }
      for (const [key, rule] of Object.entries(rules)) {
        const problem = checkField(fields[key], rule);
        if (problem) throw fail(`${label}.${key}: ${problem}`);
      }
    });
  }
  return obj as unknown as PluginObject;
}

/** Turn a module namespace into a plugin object (calling the factory with `kit`). Throws from the plugin propagate. */
export async function instantiate(mod: unknown, origin: string, kit: Kit): Promise<PluginObject> {
  if (!mod || typeof mod !== "object" || !("default" in mod)) {
    throw new PluginError("?", origin, "the module has no default export (export default a plugin object or `(kit) => ({ ... })`)");
  }
  const exported = (mod as { default: unknown }).default;
  const value = typeof exported === "function" ? await (exported as (kit: Kit) => unknown)(kit) : exported;
  return validatePluginObject(value, origin);
}

/**
 * Load each source in order and register it. Validation errors, duplicate
 * names and pin mismatches throw (exit 2); a plugin whose module or factory
 * throws is reported through `log.error`, recorded in `registry.failures`
 * and skipped.
 */
export async function loadPlugins(registry: Registry, sources: readonly PluginSource[], kit: Kit, log: Logger): Promise<void> {
  for (const source of sources) {
    let mod: unknown;
    try {
      mod = await source.load();
    } catch (error) {
      const message = loadErrorText(error);
      registry.failures.push({ origin: source.origin, message });
      log.error(`plugin ${source.origin} failed to load and was skipped: ${firstLine(message)}`);
      continue;
    }
    let plugin: PluginObject;
    try {
      plugin = await instantiate(mod, source.origin, kit);
    } catch (error) {
      if (error instanceof PluginError) throw error;
      const name = guessName(mod);
      registry.failures.push({ origin: source.origin, plugin: name, message: messageOf(error) });
      log.error(`plugin ${name ?? "?"} (${source.origin}) threw while loading and was skipped: ${firstLine(messageOf(error))}`);
      continue;
    }
    registry.register(plugin, source.origin, source.sha256);
  }
}

function guessName(mod: unknown): string | undefined {
  const exported = (mod as { default?: { name?: unknown } } | undefined)?.default;
  const name = exported && typeof exported === "object" ? exported.name : undefined;
  return typeof name === "string" ? name : undefined;
}

/**
 * Why a module did not load. Bun reports a syntax error as an AggregateError whose
 * message is only "2 errors building <file>"; the first error's place and text are
 * what the author needs to fix it.
 */
export function loadErrorText(error: unknown): string {
  const errors = (error as { errors?: unknown } | null)?.errors;
  if (error instanceof Error && Array.isArray(errors) && errors.length) {
    const first = errors[0] as { message?: unknown; position?: { line?: number; column?: number; lineText?: string } | null };
    const where = first.position?.line ? `line ${first.position.line}, column ${first.position.column ?? 1}` : "syntax error";
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more error${errors.length > 2 ? "s" : ""})` : "";
    const text = typeof first.message === "string" ? first.message : String(first);
    const line = first.position?.lineText ? `\n  ${first.position.lineText}` : "";
    return `${where}: ${text}${more}${line}`;
  }
  return messageOf(error);
}

/** The first line of a (possibly multi-line) error message. */
export function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}
