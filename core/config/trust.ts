// Trust for project configs that would run code or weaken protections (plugins,
// lintCmd, testCmd, allowShell, and any option declaring `needsTrust`). Answers are remembered in the global config folder, keyed by
// repository path and a hash of the project's config files, so an edited
// config is asked about again.
import { readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { commandPaths } from "./command-words.ts";
import { readCapped } from "../edit/read.ts";
import { type ConfigLayer, isProjectLayer, readDotenv } from "./config.ts";
import { ConfigError } from "../errors.ts";
import { OPTION_SPECS, type OptionTable, type PluginRef } from "./options.ts";
import type { RunsProgram } from "../plugin.ts";
import { replaceRecord } from "../edit/state.ts";

export type TrustAnswer = "trusted" | "refused" | "unknown";

interface TrustStore {
  version: 1;
  repos: Record<string, { hash: string; trusted: boolean; at: string }>;
}

export function trustStorePath(configDir: string): string {
  return join(configDir, "trust.json");
}

/** What a trust answer covers: the hash, and the words of commands whose value only shows when they run. */
export interface TrustScope {
  hash: string;
  /** "lintCmd: $(cat x) (a command substitution $(...) is only known when it runs)". */
  unresolved: string[];
}

/**
 * sha256 over what a trust answer covers: the project's own config files (kind + content,
 * in lookup order), every plugin file they name, and what options that run commands (`runs`: lintCmd, testCmd, a plugin's such as MCP's servers) run from
 * outside the repository (no diff in the repository would show its change): each word resolved
 * as the command will resolve it (its `cwd`, `cd DIR &&`, `~`, `$VAR`), every file so named
 * (or its absence), and a program's `cwd`. A change to any of them asks again.
 */
export function projectConfigHash(layers: readonly ConfigLayer[], root: string, env: Readonly<Record<string, string | undefined>> = process.env, table?: OptionTable): string {
  return projectTrustScope(layers, root, env, table).hash;
}


export function projectTrustScope(layers: readonly ConfigLayer[], root: string, env: Readonly<Record<string, string | undefined>> = process.env, table?: OptionTable): TrustScope {
  const hasher = new Bun.CryptoHasher("sha256");
  const unresolved: string[] = [];
  const outside = new OutsideFiles(root);
  for (const layer of layers) {
    if (!isProjectLayer(layer.kind)) continue;
    hasher.update(`${layer.kind}\0${layer.text}\0`);
    for (const plugin of (layer.values.plugins as PluginRef[] | undefined) ?? []) {
      const file = resolve(dirname(layer.file), plugin.path);
      hasher.update(`plugin\0${file}\0${contentOf(file)}\0`);
    }
    // Each option that runs commands says what (`runs`): the kernel's lintCmd and testCmd, a plugin's (MCP's servers) alike.
    for (const spec of table?.specs ?? OPTION_SPECS) {
      if (!spec.runs || layer.values[spec.key] === undefined) continue;
      let runs: (string | RunsProgram)[] = [];
      try {
        runs = spec.runs(layer.values[spec.key]);
      } catch {
        // A `runs` that cannot read the value: the config text, hashed above, still covers it.
      }
      for (const run of runs) {
        // A command line runs through the shell in the repository root; a program in its own `cwd`.
        const named = typeof run === "string" ? commandPaths(run, root, env, { home: env.HOME }) : programPaths(run, root, env);
        const label = typeof run === "string" || !run.label ? spec.key : `${spec.key}.${run.label}`;
        for (const note of named.unresolved) unresolved.push(`${label}: ${note}`);
        for (const entry of outside.describe([...named.paths, ...named.dirs])) hasher.update(`${spec.key}\0${entry}\0`);
      }
    }
  }
  for (const [name, value] of Object.entries(readDotenv(root).bases).sort()) hasher.update(`.env\0${name}\0${value}\0`);
  return { hash: hasher.digest("hex"), unresolved: [...new Set(unresolved)] };
}

/**
 * What a program run without a shell names: its `cwd` (relative to the repository root, `${VAR}`
 * and `~` expanded), its command resolved there, and every word of its args (each arg read as
 * shell text too, for `sh -c "cd x && python3 srv.py"`).
 */
function programPaths(program: RunsProgram, root: string, env: Readonly<Record<string, string | undefined>>): { paths: string[]; dirs: string[]; unresolved: string[] } {
  const paths: string[] = [];
  const unresolved: string[] = [];
  let cwd = root;
  if (typeof program.cwd === "string") {
    const named = commandPaths(quoteWord(program.cwd), root, env, { programWords: false, home: env.HOME });
    unresolved.push(...named.unresolved);
    cwd = named.paths[0] ?? root;
    paths.push(cwd);
  }
  for (const [i, word] of program.argv.entries()) {
    // The word as one argv entry, and as shell text (an arg of `sh -c`).
    const whole = commandPaths(quoteWord(word), cwd, env, { programWords: i > 0 ? false : undefined, home: env.HOME });
    const asShell = commandPaths(word, cwd, env, { home: env.HOME });
    unresolved.push(...whole.unresolved);
    paths.push(...whole.paths, ...asShell.paths, ...asShell.dirs);
  }
  return { paths, dirs: [], unresolved: [...new Set(unresolved)] };
}

/** One argv entry as shell text that keeps it one word, `${VAR}` and `~` still expanded. */
function quoteWord(word: string): string {
  return word.replace(/[\s;&|()<>'"`\\#]/g, (c) => `\\${c}`);
}

/** The outside-the-repository entries of a list of paths, each described for the hash. */
class OutsideFiles {
  private readonly realRoot: string;

  constructor(private readonly root: string) {
    this.realRoot = realOrSelf(root);
  }

  /** "path\0sha256" for a file, "path\0dir\0real path" for a folder, "path\0missing"; paths inside the repository are left out. */
  describe(paths: readonly string[]): string[] {
    const out: string[] = [];
    for (const path of new Set(paths)) {
      const real = realOrSelf(path);
      if (isInside(this.root, path) && isInside(this.realRoot, real)) continue;
      let stat: ReturnType<typeof statSync> | undefined;
      try {
        stat = statSync(path);
      } catch {
        stat = undefined;
      }
      if (!stat) out.push(`${path}\0missing`);
      else if (stat.isDirectory()) out.push(`${path}\0dir\0${real}`);
      else out.push(`${path}\0${real}\0${contentOf(path)}`);
    }
    return out;
  }
}

const isInside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** sha256 of a file through the capped reader; a file that is not one (a device, a FIFO) or is huge is named by what it is. */
function contentOf(file: string): string {
  const r = readCapped(file, { maxBytes: HASHED_FILE_BYTES });
  if (r.ok) return new Bun.CryptoHasher("sha256").update(r.bytes).digest("hex");
  if (r.reason === "too-large") {
    const stat = statSync(file);
    return `large:${stat.size}:${stat.mtimeMs}`;
  }
  return r.reason;
}

/** Files up to this size are hashed by content; larger ones (an interpreter binary) by size and time. */
const HASHED_FILE_BYTES = 64 * 1024 * 1024;

function readStore(configDir: string): TrustStore {
  try {
    const data = JSON.parse(readFileSync(trustStorePath(configDir), "utf8")) as TrustStore;
    if (data && typeof data === "object" && data.repos && typeof data.repos === "object") return data;
  } catch {
    // missing or unreadable: nothing remembered
  }
  return { version: 1, repos: {} };
}

/** What was remembered for this repository and config hash. */
export function rememberedTrust(configDir: string, root: string, hash: string): TrustAnswer {
  const entry = readStore(configDir).repos[root];
  if (!entry || entry.hash !== hash) return "unknown";
  return entry.trusted ? "trusted" : "refused";
}

export function rememberTrust(configDir: string, root: string, hash: string, trusted: boolean): void {
  const store = readStore(configDir);
  store.repos[root] = { hash, trusted, at: new Date().toISOString() };
  replaceRecord(trustStorePath(configDir), `${JSON.stringify(store, null, 2)}\n`, 0o600);
}

export interface TrustDecisionInput {
  root: string;
  configDir: string;
  layers: readonly ConfigLayer[];
  /** Project keys that need trust (config.ts keysNeedingTrust). */
  keys: readonly string[];
  /** The options in effect (what each key's trust is needed for; plugins' `runs`). */
  table: OptionTable;
  /** --trust or CODER_TRUST=1. */
  trustFlag: boolean;
  /** May we ask on the terminal? (stdin and stderr are TTYs, no --json / --message.) */
  canAsk: boolean;
  ask: (question: string) => Promise<boolean>;
  warn: (message: string) => void;
  /** The environment commands will see (`$VAR` in lintCmd); default coder's. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Decide whether the project's code-running keys take effect. Returns true when
 * they do (or there are none). Without a way to ask and without --trust, it is
 * a ConfigError naming the keys; a refusal given interactively drops the keys.
 */
export async function decideTrust(input: TrustDecisionInput): Promise<boolean> {
  if (input.keys.length === 0) return true;
  const scope = projectTrustScope(input.layers, input.root, input.env, input.table);
  const hash = scope.hash;
  // --trust is the user's explicit answer: remembered, for this config and the files it runs.
  if (input.trustFlag) {
    rememberTrust(input.configDir, input.root, hash, true);
    return true;
  }
  const remembered = rememberedTrust(input.configDir, input.root, hash);
  if (remembered === "trusted") return true;
  const keys = input.keys.join(", ");
  const what = describeTrustKeys(input.keys, input.table) + unresolvedNote(scope.unresolved);
  // A standing "no" is the user's decision: the keys are left out, with or without a terminal.
  if (remembered === "refused") {
    input.warn(`ignoring ${keys} from this repository's config (not trusted; run with --trust to use them)`);
    return false;
  }
  if (!input.canAsk && input.keys.every(isDotenvKey)) {
    // Only a .env base URL: the run goes on against the provider's own address.
    input.warn(`ignoring ${input.keys.map((k) => k.slice(5)).join(", ")} in this repository's .env: a base URL from a repository you have not trusted could send your API key elsewhere (run with --trust to use it)`);
    return false;
  }
  if (!input.canAsk) {
    throw new ConfigError(
      `this repository's config sets ${what}, and the repository is not trusted; run with --trust (or CODER_TRUST=1) to trust it, or once interactively to remember it`,
    );
  }
  // The commands and values themselves, not just the keys: what would run is what the user judges.
  const shown = trustedValues(input.layers, input.keys);
  const yes = await input.ask(`This repository's config sets ${what}${shown.length ? ":" : "."}\n${shown.map((l) => `  ${l}`).join("\n")}${shown.length ? "\n" : ""}Trust ${input.root}?`);
  rememberTrust(input.configDir, input.root, hash, yes);
  if (!yes) input.warn(`ignoring ${keys} from this repository's config`);
  return yes;
}

/** Each trust key with the value the project's config gives it ("lintCmd: ruff check"). */
function trustedValues(layers: readonly ConfigLayer[], keys: readonly string[]): string[] {
  const lines: string[] = [];
  for (const key of keys) {
    if (isDotenvKey(key)) continue;
    const layer = [...layers].reverse().find((l) => isProjectLayer(l.kind) && key in l.values);
    if (!layer) continue;
    const value = layer.values[key];
    const text = typeof value === "string" ? value : key === "plugins" && Array.isArray(value) ? value.map((p) => (typeof p === "string" ? p : String((p as PluginRef).path))).join(", ") : JSON.stringify(value);
    lines.push(`${key}: ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`);
  }
  return lines;
}

/** The words trust could not follow, for the question: what runs there is not covered by the answer. */
function unresolvedNote(unresolved: readonly string[]): string {
  if (!unresolved.length) return "";
  return `; what these words name is only known when the command runs, so a change there is not asked about again: ${unresolved.join("; ")}`;
}

/** "plugins, lintCmd (they run code on this machine) and yesAlways (it weakens your protections)". */
export function describeTrustKeys(keys: readonly string[], table: OptionTable): string {
  const byReason = new Map<string, string[]>();
  for (const key of keys) {
    const reason = isDotenvKey(key) ? "sends your API key to that address" : (table.byKey.get(key)?.needsTrust ?? "runs code");
    byReason.set(reason, [...(byReason.get(reason) ?? []), key]);
  }
  const parts = [...byReason].map(([reason, names]) => {
    const verb = names.length === 1 ? reason : reason.replace(/^runs/, "run").replace(/^weakens/, "weaken").replace(/^sends your API key/, "send your API keys").replace("that address", "those addresses");
    return `${names.join(", ")} (${names.length === 1 ? "it" : "they"} ${verb}${reason === "runs code" ? " on this machine" : ""})`;
  });
  return parts.join(" and ");
}

/** A trust key that stands for a base URL in the repository's .env (config.ts dotenvTrustKeys). */
const isDotenvKey = (key: string) => key.startsWith(".env ");
