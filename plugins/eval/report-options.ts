// `coder eval report`'s own flag and usage, declared apart from the report code so the plugin's
// option list (and `--help`) can name them without loading it.
import type { PluginOption } from "../../core/plugin.ts";

export const EVAL_HTML = {
  key: "html",
  type: "string",
  arg: "FILE",
  cliOnly: true,
  noEnv: true,
  group: "Eval (coder eval)",
  help: "coder eval report: also write the report as one self-contained HTML page to FILE (charts, every task's transcript)",
} as const satisfies PluginOption;

export const EVAL_REPORT_USAGE = "coder eval report [--html FILE] [--json] DIR...";
