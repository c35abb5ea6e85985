// The kernel's two shapes: what is known before plugins load (Loaded: settings
// with provenance, the environment with the repository's API keys, trust), and
// the assembled kernel a front end runs (App: plus the plugin registry and the kit).
import type { ParsedArgv } from "./config/argv.ts";
import type { ConfigLayer, LayerKind, Settings } from "./config/config.ts";
import type { Kit, Logger } from "./plugin.ts";
import type { Registry } from "./plugins/registry.ts";

/** The command line's own subcommands (`coder NAME`); a plugin's subcommand may not take these names. */
export const KERNEL_SUBCOMMANDS: readonly string[] = ["plugins", "plugin", "config", "models", "prompts", "init", "doctor", "acp"];

export interface App {
  version: string;
  /** Repository root, or the current directory without git. */
  root: string;
  /** The directory coder was started in (ACP: the session's folder): paths the user types are relative to it. */
  cwd: string;
  gitRoot: string | null;
  settings: Settings;
  registry: Registry;
  kit: Kit;
  /** Process environment plus the API keys of the repository's `.env` (process wins). */
  env: Record<string, string | undefined>;
  /** The project config's keys that run code (plugins, lintCmd, testCmd, allowShell) are in effect. */
  trusted: boolean;
  /** stdin and stdout are terminals, and no --message / --message-file / --json. */
  interactive: boolean;
  /** A chat that outlives one request without a terminal (`coder acp`): history is summarised and the cache kept warm as in the REPL. */
  persistent?: boolean;
  /** Who answers `kit.ui`: the chat's gate once one is created (core/chat/create.ts); until then nobody (no, or the declared default). */
  ui: {
    confirm: ((question: string, options: { key?: string; detail?: string }) => Promise<boolean>) | null;
    select?: ((question: string, choices: readonly string[], options: { default?: string; detail?: string }) => Promise<string | null>) | null;
    input?: ((question: string, options: { default?: string; detail?: string }) => Promise<string | null>) | null;
  };
}

/** Everything known before plugins load. */
export interface Loaded {
  version: string;
  cwd: string;
  root: string;
  gitRoot: string | null;
  configDir: string;
  layers: ConfigLayer[];
  settings: Settings;
  env: Record<string, string | undefined>;
  trustKeys: string[];
  trusted: boolean;
  interactive: boolean;
  log: Logger;
  /** `coder doctor` only: config files left out because they could not be used (the error each would have thrown). */
  configErrors?: ConfigProblem[];
  /** The command line as first parsed (before plugins declared their flags). */
  args: ParsedArgv;
  /** The kernel's subcommand named on the command line, if any. */
  subcommand?: string;
}

export interface ConfigProblem {
  file: string;
  kind: LayerKind;
  message: string;
}
