// Trust for project configs that would run code (plugins, lintCmd, testCmd,
// allowShell). Answers are remembered in the global config folder, keyed by
// repository path and a hash of the project's config files, so an edited
// config is asked about again.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { type ConfigLayer, isProjectLayer, readDotenv } from "./config.ts";
import { ConfigError } from "../errors.ts";
import { OPTION_BY_KEY, type PluginRef } from "./options.ts";
import { replaceRecord } from "../edit/state.ts";

export type TrustAnswer = "trusted" | "refused" | "unknown";

interface TrustStore {
  version: 1;
  repos: Record<string, { hash: string; trusted: boolean; at: string }>;
}

export function trustStorePath(configDir: string): string {
  return join(configDir, "trust.json");
}

/**
 * sha256 over what a trust answer covers: the project's own config files (kind + content,
 * in lookup order), every plugin file they name, and the files lintCmd/testCmd/mcpServers run that
 * live outside the repository (no diff in the repository would show their change). A
 * change to any of them asks again.
 */
export function projectConfigHash(layers: readonly ConfigLayer[], root: string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  for (const layer of layers) {
    if (!isProjectLayer(layer.kind)) continue;
    hasher.update(`${layer.kind}\0${layer.text}\0`);
    for (const plugin of (layer.values.plugins as PluginRef[] | undefined) ?? []) {
      const file = resolve(dirname(layer.file), plugin.path);
      hasher.update(`plugin\0${file}\0${contentOf(file)}\0`);
    }
    for (const key of ["lintCmd", "testCmd"]) {
      for (const file of scriptsOutside(commandsOf(layer.values[key]), root)) hasher.update(`${key}\0${file}\0${contentOf(file)}\0`);
    }
    for (const file of scriptsOutside(serverCommandsOf(layer.values.mcpServers), root)) hasher.update(`mcpServers\0${file}\0${contentOf(file)}\0`);
  }
  for (const [name, value] of Object.entries(readDotenv(root).bases).sort()) hasher.update(`.env\0${name}\0${value}\0`);
  return hasher.digest("hex");
}

/** A command setting's commands: a string, or the values of a per-language map. */
function commandsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).filter((v): v is string => typeof v === "string");
  return [];
}

/** The command lines of `mcpServers` entries (command and args), for the scripts they run. */
function serverCommandsOf(value: unknown): string[] {
  if (!value || typeof value !== "object") return [];
  return Object.values(value as Record<string, { command?: unknown; args?: unknown }>).map((entry) =>
    [entry?.command, ...(Array.isArray(entry?.args) ? entry.args : [])].filter((w): w is string => typeof w === "string").join(" "),
  );
}

/** Words of the commands that name an existing file outside the repository (`~/bin/lint.sh`, `bash /opt/check`). */
function scriptsOutside(commands: readonly string[], root: string): string[] {
  const files: string[] = [];
  for (const command of commands) {
    for (const word of command.split(/\s+/)) {
      const bare = word.replace(/^['"]|['"]$/g, "");
      if (!bare.includes("/")) continue;
      const file = resolve(root, bare.startsWith("~/") ? join(homedir(), bare.slice(2)) : bare);
      const rel = relative(root, file);
      if ((rel.startsWith("..") || isAbsolute(rel)) && existsSync(file)) files.push(file);
    }
  }
  return files;
}

function contentOf(file: string): string {
  try {
    return new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
  } catch {
    return "missing";
  }
}

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
  /** --trust or CODER_TRUST=1. */
  trustFlag: boolean;
  /** May we ask on the terminal? (stdin and stderr are TTYs, no --json / --message.) */
  canAsk: boolean;
  ask: (question: string) => Promise<boolean>;
  warn: (message: string) => void;
}

/**
 * Decide whether the project's code-running keys take effect. Returns true when
 * they do (or there are none). Without a way to ask and without --trust, it is
 * a ConfigError naming the keys; a refusal given interactively drops the keys.
 */
export async function decideTrust(input: TrustDecisionInput): Promise<boolean> {
  if (input.keys.length === 0) return true;
  const hash = projectConfigHash(input.layers, input.root);
  // --trust is the user's explicit answer: remembered, for this config and the files it runs.
  if (input.trustFlag) {
    rememberTrust(input.configDir, input.root, hash, true);
    return true;
  }
  const remembered = rememberedTrust(input.configDir, input.root, hash);
  if (remembered === "trusted") return true;
  const keys = input.keys.join(", ");
  const what = describeTrustKeys(input.keys);
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

/** "plugins, lintCmd (they run code on this machine) and yesAlways (it weakens your protections)". */
export function describeTrustKeys(keys: readonly string[]): string {
  const byReason = new Map<string, string[]>();
  for (const key of keys) {
    const reason = isDotenvKey(key) ? "sends your API key to that address" : (OPTION_BY_KEY.get(key)?.needsTrust ?? "runs code");
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
