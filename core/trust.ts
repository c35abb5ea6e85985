// Trust for project configs that would run code (plugins, lintCmd, testCmd,
// allowShell). Answers are remembered in the global config folder, keyed by
// repository path and a hash of the project's config files, so an edited
// config is asked about again.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ConfigLayer, isProjectLayer } from "./config.ts";
import { ConfigError } from "./errors.ts";

export type TrustAnswer = "trusted" | "refused" | "unknown";

interface TrustStore {
  version: 1;
  repos: Record<string, { hash: string; trusted: boolean; at: string }>;
}

export function trustStorePath(configDir: string): string {
  return join(configDir, "trust.json");
}

/** sha256 over the project's own config files (name + content), in lookup order. */
export function projectConfigHash(layers: readonly ConfigLayer[]): string {
  const hasher = new Bun.CryptoHasher("sha256");
  for (const layer of layers) {
    if (!isProjectLayer(layer.kind)) continue;
    hasher.update(`${layer.kind}\0${layer.text}\0`);
  }
  return hasher.digest("hex");
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
  mkdirSync(configDir, { recursive: true });
  const file = trustStorePath(configDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
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
  if (input.keys.length === 0 || input.trustFlag) return true;
  const hash = projectConfigHash(input.layers);
  const remembered = rememberedTrust(input.configDir, input.root, hash);
  if (remembered === "trusted") return true;
  const keys = input.keys.join(", ");
  const run = input.keys.length === 1 ? "runs" : "run";
  if (!input.canAsk) {
    throw new ConfigError(
      `this repository's config sets ${keys}, which ${run} code, and the repository is not trusted; run with --trust (or CODER_TRUST=1) to trust it for this run, or once interactively to remember it`,
    );
  }
  if (remembered === "refused") {
    input.warn(`ignoring ${keys} from this repository's config (not trusted; run with --trust to use them)`);
    return false;
  }
  const yes = await input.ask(`This repository's config sets ${keys}, which ${run} code on this machine. Trust ${input.root}?`);
  rememberTrust(input.configDir, input.root, hash, yes);
  if (!yes) input.warn(`ignoring ${keys} from this repository's config`);
  return yes;
}

/** A yes/no question on stderr, answered on stdin (default no). */
export async function askYesNo(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
