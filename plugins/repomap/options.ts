// The repo map's options and its command line, declared apart from the plugin so
// builtins.ts can hand them to the kernel without loading the map (`--help` stays cheap).
import type { PluginOption, Subcommand } from "../../core/plugin.ts";

export const MAP_TOKENS = { key: "mapTokens", type: "number", arg: "N", group: "Context", help: "repo-map token budget (0 disables the map; default: context window/8, 1024-4096)" } as const satisfies PluginOption;
export const MAP_REFRESH = { key: "mapRefresh", type: "enum", values: ["auto", "always", "files", "manual"], default: "auto", arg: "MODE", group: "Context", help: "when to rebuild the repo map" } as const satisfies PluginOption;
export const MAP_MULTIPLIER_NO_FILES = { key: "mapMultiplierNoFiles", type: "number", arg: "X", default: 2, group: "Context", help: "repo-map budget multiplier when no files are in the chat" } as const satisfies PluginOption;
export const SHOW_REPO_MAP = { key: "showRepoMap", type: "boolean", cliOnly: true, group: "Context", help: "print the repo map for the current chat and exit (needs no model)" } as const satisfies PluginOption;

export const REPOMAP_OPTIONS: readonly PluginOption[] = [MAP_TOKENS, MAP_REFRESH, MAP_MULTIPLIER_NO_FILES, SHOW_REPO_MAP];

/** `coder map [FILE ...]`, also run by `--show-repo-map`. */
export const MAP_SUBCOMMAND = { name: "map", usage: "[FILE ...]", summary: "print the repo map (same as --show-repo-map)", flag: SHOW_REPO_MAP.key } as const satisfies Omit<Subcommand, "run">;
