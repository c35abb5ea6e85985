// `coder eval`: measure models and edit formats on this repository's history or an exercise
// set, from the same binary. Each task runs the running coder as a child in a temporary
// workspace (runner.ts); this file only declares the command, so nothing loads until it runs.
import type { Kit, PluginObject } from "../../core/plugin.ts";
import { EVAL_OPTIONS, EVAL_SUBCOMMAND } from "./options.ts";

export default function evalPlugin(kit: Kit): PluginObject {
  return {
    apiVersion: 2,
    name: "eval",
    options: [...EVAL_OPTIONS],
    subcommands: [{ ...EVAL_SUBCOMMAND, run: async (args, cli) => (await import("./runner.ts")).runEval(kit, args, cli) }],
  };
}
