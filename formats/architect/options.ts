// The architect format's option, declared apart from the format so builtins.ts can hand it
// to the kernel without loading the format (`--help` stays cheap).
import type { PluginOption } from "../../core/plugin.ts";

/** `--architect`: Aider's shorthand for `--edit-format architect`. */
export const ARCHITECT = { key: "architect", type: "boolean", cliOnly: true, group: "Editing", implies: { editFormat: "architect" }, help: "shorthand for --edit-format architect" } as const satisfies PluginOption;

export const ARCHITECT_OPTIONS: readonly PluginOption[] = [ARCHITECT];
