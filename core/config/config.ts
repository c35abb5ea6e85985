// Config files: lookup (global < .coder.json < .coder.local.json, or one
// --config file) and the merge with env and flags that records where every
// effective value came from. Parsing and validation live in config-file.ts,
// loaded only when a config file exists (zod and jsonc-parser cost start-up).
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { ParsedArgv, SourceValues } from "./argv.ts";
import { ConfigError } from "../errors.ts";
import { readCapped, SMALL_FILE_BYTES } from "../edit/read.ts";
import { type OptionSpec, type OptionTable, type Options, type PluginRef, flagName, initialValue } from "./options.ts";


/** The merged settings: every option with where its value came from. */
export interface Settings {
  /** Every option of the table, defaults applied; an option's `implies` applied (`--architect`: `editFormat`). Plugins' options are read through `kit.options.get`. */
  options: Options;
  /** The options in effect: the kernel's, then every loaded plugin's. */
  table: OptionTable;
  /** Where each effective value came from: "default", "flag --x", "env CODER_X", "<file>:<line>". */
  provenance: Record<string, string>;
  /** Command-line positionals (FILEs; after a subcommand name is removed). */
  positionals: string[];
  /** The config files that were read, lowest precedence first. */
  configFiles: string[];
  /** Keys whose effective value comes from the repository's own config (.coder.json, .coder.local.json), not the user. */
  fromProject: string[];
}

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
  /** Keys the table did not know when the file was read (a plugin may declare them); see config-file.ts `settlePending`. */
  pending?: Record<string, { value: unknown; line: number }>;
}

export const PROJECT_FILE = ".coder.json";
export const LOCAL_FILE = ".coder.local.json";

/** The project's own files (.coder.json, .coder.local.json): the ones whose code-running keys need trust. */
export function isProjectLayer(kind: LayerKind): boolean {
  return kind === "project" || kind === "local";
}

/** The global config folder: $XDG_CONFIG_HOME/coder, default ~/.config/coder. */
export function globalConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CONFIG_HOME;
  const home = env.HOME || env.USERPROFILE || homedir();
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, ".config"), "coder");
}

/** The file guided set-up (`coder init`) keeps keys and custom base URLs in, in the global folder: `NAME=value` lines, mode 0600. */
export const KEYS_FILE = "keys.env";

/** The keys and base URLs set-up saved: the user's own file, so they apply as given (below the environment and .env). */
export function savedKeys(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const file = join(globalConfigDir(env), KEYS_FILE);
  if (!isFile(file)) return {};
  const { keys, bases } = readDotenv("", file);
  return { ...keys, ...bases };
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

/** A path as shown in messages: relative to `cwd` (where coder runs) when inside it; as given without a `cwd`. */
export function displayPath(file: string, cwd?: string): string {
  if (cwd === undefined) return file;
  const rel = relative(cwd, file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** The config files that apply, lowest precedence first. `--config FILE` replaces the lookup. */
export function lookupConfigFiles(root: string, env: Readonly<Record<string, string | undefined>>, explicit: string | undefined, cwd: string): { file: string; kind: LayerKind }[] {
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
  /** The options merged (all of `table` by default; after plugins load, only theirs). */
  specs?: readonly OptionSpec[];
  table: OptionTable;
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
 * `plugins` lists from several config files add up (each entry keeps its file), and so do
 * `merge: "by-key"` objects (by key, a later file's entry winning); every other key is
 * replaced by the higher source.
 */
export function mergeSettings(input: MergeInput): Settings {
  const specs = input.specs ?? input.table.specs;
  const merged = new Set(specs.map((s) => s.key));
  const options: Record<string, unknown> = {};
  const provenance: Record<string, string> = {};
  for (const spec of specs) {
    options[spec.key] = initialValue(spec);
    provenance[spec.key] = "default";
  }
  const sources = new Map<string, string[]>();
  const fromProject = new Set<string>();
  for (const layer of input.layers) {
    const shown = displayPath(layer.file, input.cwd);
    for (const [key, value] of Object.entries(layer.values)) {
      if (!merged.has(key)) continue;
      const projectish = isProjectLayer(layer.kind);
      if (projectish && input.drop?.has(key)) continue;
      const spec = input.table.byKey.get(key);
      if (key === "plugins" || spec?.merge === "by-key") {
        options[key] = key === "plugins" ? [...(options.plugins as PluginRef[]), ...(value as PluginRef[])] : { ...(options[key] as Record<string, unknown>), ...(value as Record<string, unknown>) };
        const from = [...(sources.get(key) ?? []), `${shown}:${layer.lines[key]}`];
        sources.set(key, from);
        provenance[key] = from.join(", ");
        if (projectish && key !== "plugins") fromProject.add(key);
        continue;
      }
      // A project config's `read` paths are relative to the repository root (its folder), not to
      // wherever coder was started: made absolute here. (A global config's stay as written.)
      options[key] = key === "read" && projectish ? (value as string[]).map((p) => resolve(dirname(layer.file), p)) : value;
      provenance[key] = `${shown}:${layer.lines[key]}`;
      if (projectish) fromProject.add(key);
      else fromProject.delete(key);
    }
  }
  for (const source of [input.env, input.argv]) {
    for (const [key, value] of Object.entries(source.values)) {
      if (!merged.has(key)) continue;
      options[key] = value;
      provenance[key] = source.origin[key] ?? "?";
      fromProject.delete(key);
    }
  }
  // A flag that stands for other options' values (a plugin's `--architect`: `--edit-format architect`).
  for (const spec of input.table.specs) {
    if (!spec.implies || options[spec.key] !== true) continue;
    for (const [key, value] of Object.entries(spec.implies)) {
      options[key] = value;
      provenance[key] = provenance[spec.key] ?? `flag --${flagName(spec.key)}`;
    }
  }
  return {
    options: options as Options,
    table: input.table,
    provenance,
    positionals: input.positionals,
    configFiles: input.layers.map((l) => l.file),
    fromProject: [...fromProject],
  };
}

/**
 * Keys set by the project's own config files that run code or weaken coder's protections
 * (they need trust); a key set to its safe value (`verify: true`) needs none.
 */
export function keysNeedingTrust(layers: readonly ConfigLayer[], table: OptionTable): string[] {
  const keys = new Set<string>();
  for (const layer of layers) {
    if (!isProjectLayer(layer.kind)) continue;
    for (const [key, value] of Object.entries(layer.values)) {
      const spec = table.byKey.get(key);
      if (spec?.needsTrust && !(spec.safeValue !== undefined && value === spec.safeValue)) keys.add(key);
    }
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

/**
 * What coder takes from a `.env` (the repository's, or `--env-file`): API keys (`*_API_KEY`),
 * and base URLs (`*_API_BASE`, `*_BASE_URL`), which from the repository's `.env` take effect
 * only in a trusted repository (a hostile `.env` could otherwise send your key to its own
 * server). Nothing else is read.
 */
export function readDotenv(root: string, file = join(root, ".env")): { keys: Record<string, string>; bases: Record<string, string>; problem?: string } {
  const found = { keys: {} as Record<string, string>, bases: {} as Record<string, string> };
  const read = readCapped(file, { maxBytes: SMALL_FILE_BYTES, name: displayPath(file, root) });
  // A .env that is a link to /dev/zero or /dev/stdin, a pipe or huge is never read: it is ignored, and said.
  if (!read.ok && (read.reason === "not-regular" || read.reason === "too-large")) return { ...found, problem: `${read.message}; no API keys or base URLs read from it` };
  if (!read.ok) return found;
  for (const [name, value] of Object.entries(parseDotenv(new TextDecoder().decode(read.bytes)))) {
    if (/_API_KEY$/.test(name)) found.keys[name] = value;
    else if (/_(API_BASE|BASE_URL)$/.test(name)) found.bases[name] = value;
  }
  return found;
}

/** The trust keys a `.env` base URL stands for: ".env OPENAI_API_BASE". */
export function dotenvTrustKeys(bases: Readonly<Record<string, string>>): string[] {
  return Object.keys(bases).map((name) => `.env ${name}`);
}

/** Every `NAME=value` of a `.env` text (`export` prefixes, quotes and trailing comments handled). */
export function parseDotenv(text: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const [, name, rawValue] = m as unknown as [string, string, string];
    const quoted = /^(['"])(.*)\1$/.exec(rawValue);
    entries[name] = quoted ? quoted[2]! : rawValue.replace(/\s+#.*$/, "");
  }
  return entries;
}

// ─── config show ─────────────────────────────────────────────────────────────

/** What a secret's value is shown as, in `config show` and `config show --json` alike. */
export const MASKED = "********";

/** One row of `coder config show`: an option's effective value (secrets masked) and where it came from. */
export interface ConfigShowRow {
  key: string;
  /** undefined when unset; plugin entries without their internal `source`. */
  value: unknown;
  source: string;
}

/** Every option `config show` lists, in table order, with secrets already masked. */
export function configShowRows(settings: Settings): ConfigShowRow[] {
  const rows: ConfigShowRow[] = [];
  for (const spec of settings.table.specs) {
    if (spec.key === "help" || spec.key === "version" || spec.key === "kind") continue;
    const raw = (settings.options as Record<string, unknown>)[spec.key];
    let value: unknown = raw === undefined ? undefined : JSON.parse(JSON.stringify(raw, (k, v) => (k === "source" ? undefined : v)));
    if (spec.secret && raw !== undefined) value = MASKED;
    rows.push({ key: spec.key, value, source: settings.provenance[spec.key] ?? "default" });
  }
  return rows;
}

/** `coder config show`: every effective value and where it came from. */
export function renderConfigShow(settings: Settings, cwd: string): string {
  const rows: [string, string, string][] = configShowRows(settings).map((r) => [r.key, r.value === undefined ? "(unset)" : JSON.stringify(r.value), r.source]);
  const w1 = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.min(48, Math.max(...rows.map((r) => r[1].length)));
  const files = settings.configFiles.length ? settings.configFiles.map((f) => `  ${displayPath(f, cwd)}`).join("\n") : "  (none)";
  return [`config files (lowest precedence first):`, files, "", ...rows.map(([k, v, s]) => `${k.padEnd(w1)}  ${v.padEnd(w2)}  ${s}`)].join("\n");
}

/**
 * `coder config show --json` (the config part): the config files, lowest
 * precedence first, and every option as `{ value, source }` (value null when
 * unset; secrets masked exactly as in the text view).
 */
export function configShowJson(settings: Settings, layers: readonly ConfigLayer[]): {
  configFiles: { file: string; kind: LayerKind }[];
  options: Record<string, { value: unknown; source: string }>;
} {
  const kinds = new Map(layers.map((l) => [l.file, l.kind]));
  const options: Record<string, { value: unknown; source: string }> = {};
  for (const row of configShowRows(settings)) options[row.key] = { value: row.value === undefined ? null : row.value, source: row.source };
  return { configFiles: settings.configFiles.map((file) => ({ file, kind: kinds.get(file) ?? "explicit" })), options };
}
