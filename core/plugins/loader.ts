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
import type { ContextProvider, EditFormat, HookName, Kit, Logger, ModelAdapter, Plugin, PluginObject, PluginOption, SlashCommand, Subcommand, ToolProvider } from "../plugin.ts";
import { type Registry, messageOf } from "./registry.ts";

/** The newest plugin API version this kernel implements (it loads every version from 1). */
export const API_VERSION = 2;

/** A plugin shipped in the binary; main.ts hands the list (builtins.ts) to the kernel. */
export interface BuiltinPlugin {
  /** Shown as the origin in `coder plugins`. */
  origin: string;
  /** The plugin object's `name`. */
  name: string;
  load: () => Promise<{ default: Plugin }>;
  /**
   * What the plugin declares to the command line, known without loading it, so `--help`, argv
   * and config files need no plugin code; the loaded plugin declares the very same (a test holds
   * each built-in to it).
   */
  options?: readonly PluginOption[];
  subcommands?: readonly Pick<Subcommand, "name" | "summary" | "usage">[];
  /**
   * The plugin registers model adapters (and the others none): `coder acp` loads only these to
   * answer `initialize` (core/acp/initialize.ts). A test holds each built-in to it.
   */
  models?: boolean;
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

/** The plugin object's keys, and the API version each arrived in (the README's table is held to it by a test). */
export const PLUGIN_KEYS: { [K in keyof Required<PluginObject>]: number } = {
  apiVersion: 1,
  name: 1,
  override: 1,
  formats: 1,
  context: 1,
  models: 1,
  commands: 1,
  tools: 1,
  options: 2,
  subcommands: 2,
  setup: 2,
  dispose: 2,
  onRequest: 2,
  onReply: 2,
  onEdit: 2,
  onCommit: 2,
  onToolCall: 2,
};

/** The plugin object's hooks: a function, or `{ order?, handler }`. */
const HOOK_SET: { [K in HookName]: true } = { onRequest: true, onReply: true, onEdit: true, onCommit: true, onToolCall: true };
const HOOK_KEYS = Object.keys(HOOK_SET) as HookName[];

type FieldRule =
  | { kind: "string" | "function" | "array" | "boolean" | "object" | "any"; optional?: boolean }
  | { kind: "enum"; values: readonly string[]; optional?: boolean };

/** Rules for every member of an item's interface: a member missing here is a compile error. */
type RulesFor<T> = { [K in keyof Required<T>]: FieldRule };

interface ItemTypes {
  formats: EditFormat;
  context: ContextProvider;
  models: ModelAdapter;
  commands: SlashCommand;
  tools: ToolProvider;
  subcommands: Subcommand;
  options: PluginOption;
}

export const ITEM_RULES: { [K in keyof ItemTypes]: RulesFor<ItemTypes[K]> } = {
  formats: {
    name: { kind: "string" },
    summary: { kind: "string" },
    prompts: { kind: "function" },
    parse: { kind: "function" },
    apply: { kind: "function" },
    report: { kind: "function" },
    tools: { kind: "array", optional: true },
    mode: { kind: "enum", values: ["edit", "editor", "none", "files"], optional: true },
    fallback: { kind: "boolean", optional: true },
  },
  context: {
    name: { kind: "string" },
    stability: { kind: "enum", values: ["static", "session", "turn"] },
    provide: { kind: "function" },
    onMessage: { kind: "function", optional: true },
    banner: { kind: "function", optional: true },
    budget: { kind: "object", optional: true },
  },
  models: {
    name: { kind: "string" },
    matches: { kind: "function" },
    info: { kind: "function" },
    list: { kind: "function", optional: true },
    stream: { kind: "function" },
    defaultModel: { kind: "function", optional: true },
    defaultModelKeys: { kind: "array", optional: true },
    fallbackModel: { kind: "string", optional: true },
    providers: { kind: "function", optional: true },
    transcribe: { kind: "function", optional: true },
    missingKey: { kind: "function", optional: true },
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
    runUnasked: { kind: "string", optional: true },
  },
  subcommands: {
    name: { kind: "string" },
    summary: { kind: "string" },
    usage: { kind: "string", optional: true },
    help: { kind: "string", optional: true },
    flag: { kind: "string", optional: true },
    run: { kind: "function" },
  },
  options: {
    key: { kind: "string" },
    type: { kind: "enum", values: ["boolean", "string", "number", "list", "enum", "object"] },
    values: { kind: "array", optional: true },
    default: { kind: "any", optional: true },
    help: { kind: "string" },
    arg: { kind: "string", optional: true },
    group: { kind: "string", optional: true },
    negatable: { kind: "boolean", optional: true },
    implies: { kind: "object", optional: true },
    cliOnly: { kind: "boolean", optional: true },
    configOnly: { kind: "boolean", optional: true },
    noEnv: { kind: "boolean", optional: true },
    needsTrust: { kind: "enum", values: ["runs code", "weakens your protections"], optional: true },
    safeValue: { kind: "boolean", optional: true },
    notInProject: { kind: "boolean", optional: true },
    positive: { kind: "enum", values: ["seconds", "megabytes"], optional: true },
    secret: { kind: "boolean", optional: true },
    merge: { kind: "enum", values: ["by-key"], optional: true },
    editorMcpServers: { kind: "boolean", optional: true },
    runs: { kind: "function", optional: true },
  },
};

/** The kinds of items a plugin object lists, in the order `coder plugins` shows them. */
const LISTED_KINDS = ["formats", "context", "models", "commands", "tools", "subcommands", "options"] as const satisfies readonly (keyof ItemTypes)[];

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
            : rule.kind === "object"
              ? typeof value === "object" && value !== null && !Array.isArray(value)
              : rule.kind === "any"
              ? true
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
  const keys = Object.keys(PLUGIN_KEYS);
  for (const key of Object.keys(obj)) {
    if (!keys.includes(key)) throw fail(`unknown key "${key}" in the plugin object (allowed: ${keys.join(", ")})`);
  }
  if (obj.apiVersion === undefined) throw fail(`key "apiVersion" is missing (this coder implements plugin API version ${API_VERSION}; add \`apiVersion: ${API_VERSION}\`)`);
  if (typeof obj.apiVersion !== "number" || !Number.isInteger(obj.apiVersion) || obj.apiVersion < 1) throw fail(`key "apiVersion": expected a positive integer, got ${describe(obj.apiVersion)}`);
  if (obj.apiVersion > API_VERSION) throw fail(`key "apiVersion": the plugin needs plugin API version ${obj.apiVersion}, this coder implements ${API_VERSION}; upgrade coder`);
  const version = obj.apiVersion;
  for (const key of Object.keys(obj)) {
    const since = PLUGIN_KEYS[key as keyof PluginObject];
    if (since > version) throw fail(`key "${key}" is plugin API version ${since}; declare \`apiVersion: ${since}\``);
  }
  if (typeof obj.name !== "string" || !/^[A-Za-z0-9@][A-Za-z0-9@._/-]*$/.test(obj.name)) throw fail(`key "name": expected a plugin name (letters, digits, . _ - / @), got ${describe(obj.name)}`);
  if (obj.override !== undefined && typeof obj.override !== "boolean") throw fail(`key "override": expected true or false, got ${describe(obj.override)}`);
  for (const key of ["setup", "dispose"] as const) {
    if (obj[key] !== undefined && typeof obj[key] !== "function") throw fail(`key "${key}": expected a function, got ${describe(obj[key])}`);
  }
  for (const key of HOOK_KEYS) {
    const problem = hookProblem(obj[key]);
    if (problem) throw fail(`key "${key}": ${problem}`);
  }
  for (const kind of LISTED_KINDS) {
    const list = obj[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw fail(`key "${kind}": expected a list, got ${describe(list)}`);
    const rules: Record<string, FieldRule> = ITEM_RULES[kind];
    list.forEach((item: unknown, i: number) => {
      const at = `${kind}[${i}]`;
      if (!item || typeof item !== "object" || Array.isArray(item)) throw fail(`${at}: expected an object, got ${describe(item)}`);
      const fields = item as Record<string, unknown>;
      const label = typeof fields.name === "string" ? `${at} ("${fields.name}")` : typeof fields.key === "string" ? `${at} ("${fields.key}")` : at;
      for (const key of Object.keys(fields)) {
        if (!(key in rules)) throw fail(`unknown key "${label}.${key}" (allowed: ${Object.keys(rules).join(", ")})`);
      }
      for (const [key, rule] of Object.entries(rules)) {
        const problem = checkField(fields[key], rule);
        if (problem) throw fail(`${label}.${key}: ${problem}`);
      }
      const problem =
        kind === "options" ? optionProblem(fields)
        : kind === "subcommands" ? subcommandProblem(fields, obj.options)
        : kind === "context" && fields.budget !== undefined ? budgetProblem(fields.budget as Record<string, unknown>, obj.options)
        : null;
      if (problem) throw fail(`${label}: ${problem}`);
    });
  }
  return obj as unknown as PluginObject;
}

/** A context provider's `budget`: a number priority, a number option of the same plugin, a share of the window. */
function budgetProblem(claim: Record<string, unknown>, options: unknown): string | null {
  const extra = Object.keys(claim).find((k) => !["priority", "option", "share"].includes(k));
  if (extra !== undefined) return `budget: unknown key "${extra}" (allowed: priority, option, share)`;
  if (claim.priority !== undefined && (typeof claim.priority !== "number" || !Number.isFinite(claim.priority))) return `budget.priority: expected a number, got ${describe(claim.priority)}`;
  if (claim.option !== undefined) {
    const key = (claim.option as { key?: unknown } | null)?.key;
    const declared = Array.isArray(options) ? (options as { key?: unknown; type?: unknown }[]).find((o) => o?.key === key) : undefined;
    if (!declared) return `budget.option: expected one of this plugin's own options, got ${describe(key)}`;
    if (declared.type !== "number") return `budget.option: option "${String(key)}" must be of type "number" (its value is the tokens), it is ${describe(declared.type)}`;
  }
  if (claim.share !== undefined) {
    const share = claim.share as { fraction?: unknown; min?: unknown; max?: unknown } | null;
    const f = share?.fraction;
    if (typeof f !== "number" || !(f > 0 && f <= 1)) return `budget.share.fraction: expected a number above 0 and at most 1, got ${describe(f)}`;
    for (const bound of ["min", "max"] as const) {
      const v = share?.[bound];
      if (v !== undefined && (typeof v !== "number" || v < 0)) return `budget.share.${bound}: expected a number of tokens, got ${describe(v)}`;
    }
  }
  return null;
}

/** A hook is a function, or `{ order?: "pre" | "post", handler }`. */
function hookProblem(hook: unknown): string | null {
  if (hook === undefined || typeof hook === "function") return null;
  if (!hook || typeof hook !== "object" || Array.isArray(hook)) return `expected a function or { order, handler }, got ${describe(hook)}`;
  const { order, handler, ...rest } = hook as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return `unknown key "${extra}" (allowed: order, handler)`;
  if (typeof handler !== "function") return `handler: expected a function, got ${describe(handler)}`;
  if (order !== undefined && order !== "pre" && order !== "post") return `order: expected "pre" or "post", got ${describe(order)}`;
  return null;
}

/** What the field rules cannot say about an option: the key's spelling, an enum's values, a default of the right type. */
function optionProblem(o: Record<string, unknown>): string | null {
  if (!/^[a-z][A-Za-z0-9]*$/.test(o.key as string)) return `key: expected a camelCase name (letters and digits, a lower-case first), got ${describe(o.key)}`;
  if (o.type === "enum" && (!Array.isArray(o.values) || !o.values.length || !o.values.every((v) => typeof v === "string"))) return "values: an enum needs a list of its values (strings)";
  if (o.type === "object" && !o.configOnly) return "configOnly: an object option is set in config files only (add `configOnly: true`)";
  if (o.merge !== undefined && o.type !== "object") return 'merge: only an object option merges "by-key"';
  if (o.default === undefined) return null;
  const ok =
    o.type === "boolean" ? typeof o.default === "boolean"
    : o.type === "number" ? typeof o.default === "number"
    : o.type === "list" ? Array.isArray(o.default) && o.default.every((v) => typeof v === "string")
    : o.type === "enum" ? (o.values as unknown[]).includes(o.default)
    : o.type === "object" ? false
    : typeof o.default === "string";
  return ok ? null : `default: ${describe(o.default)} is not a ${o.type === "enum" ? "value of the enum" : `${o.type}`}${o.type === "object" ? " option's default (an object option starts empty)" : ""}`;
}

/** A subcommand's `flag` names a boolean option the same plugin declares. */
function subcommandProblem(c: Record<string, unknown>, options: unknown): string | null {
  if (!/^[a-z][a-z0-9-]*$/.test(c.name as string)) return `name: expected a lower-case command name (letters, digits, -), got ${describe(c.name)}`;
  if (c.flag === undefined) return null;
  const declared = Array.isArray(options) ? (options as { key?: unknown; type?: unknown }[]).find((o) => o?.key === c.flag) : undefined;
  return declared?.type === "boolean" ? null : `flag: "${String(c.flag)}" must be a boolean option this plugin declares`;
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
