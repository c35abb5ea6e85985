// The assembled kernel handed to a run mode: settings with provenance, the
// plugin registry, the kit, the environment (with the repository's API keys)
// and whether this run is trusted and interactive.
import type { Kit } from "./plugin.ts";
import type { Options } from "./config/options.ts";
import type { Registry } from "./plugins/registry.ts";

export interface Settings {
  /** Every option of core/config/options.ts, defaults applied; `editFormat` is "architect" with `--architect`. */
  options: Options;
  /** Where each effective value came from: "default", "flag --x", "env CODER_X", "<file>:<line>". */
  provenance: Record<string, string>;
  /** Command-line positionals (FILEs; after a subcommand name is removed). */
  positionals: string[];
  /** The config files that were read, lowest precedence first. */
  configFiles: string[];
  /** Keys whose effective value comes from the repository's own config (.coder.json, .coder.local.json), not the user. */
  fromProject: string[];
}

export interface App {
  version: string;
  /** Repository root, or the current directory without git. */
  root: string;
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
}
