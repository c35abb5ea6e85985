// The one list of built-in plugins. They register through the same door as a
// user's --plugin file; each is loaded lazily so start-up stays cheap. What a
// built-in declares to the command line (options, subcommands) is listed here too,
// from the plugin's own small options.ts, so `--help` loads no plugin; and `models`
// marks those that register model adapters, the only ones `coder acp` loads to answer
// `initialize` (tests/builtins.test.ts holds each built-in to what is said here).
import type { BuiltinPlugin } from "./core/plugins/loader.ts";
import { type OptionTable, optionTable } from "./core/config/options.ts";
import { ARCHITECT_OPTIONS } from "./formats/architect/options.ts";
import { MCP_OPTIONS, MCP_SUBCOMMAND } from "./plugins/mcp/options.ts";
import { EVAL_OPTIONS, EVAL_SUBCOMMAND } from "./plugins/eval/options.ts";
import { MEDIA_OPTIONS } from "./plugins/media/options.ts";
import { MAP_SUBCOMMAND, REPOMAP_OPTIONS } from "./plugins/repomap/options.ts";

export const BUILTINS: BuiltinPlugin[] = [
  // formats
  { origin: "built-in:formats/editblock", name: "editblock", load: () => import("./formats/editblock/index.ts") },
  { origin: "built-in:formats/wholefile", name: "wholefile", load: () => import("./formats/wholefile/index.ts") },
  { origin: "built-in:formats/udiff", name: "udiff", load: () => import("./formats/udiff/index.ts") },
  { origin: "built-in:formats/patch", name: "patch", load: () => import("./formats/patch/index.ts") },
  { origin: "built-in:formats/tool", name: "tool", load: () => import("./formats/tool/index.ts") },
  { origin: "built-in:formats/ask", name: "ask", load: () => import("./formats/ask/index.ts") },
  { origin: "built-in:formats/architect", name: "architect", load: () => import("./formats/architect/index.ts"), options: ARCHITECT_OPTIONS },
  { origin: "built-in:formats/context", name: "context", load: () => import("./formats/context/index.ts") },
  // model adapters
  { origin: "built-in:plugins/openai", name: "openai", load: () => import("./plugins/openai/index.ts"), models: true },
  // context providers
  { origin: "built-in:plugins/repomap", name: "repomap", load: () => import("./plugins/repomap/index.ts"), options: REPOMAP_OPTIONS, subcommands: [MAP_SUBCOMMAND] },
  // commands
  { origin: "built-in:plugins/commands", name: "commands", load: () => import("./plugins/commands/index.ts") },
  { origin: "built-in:plugins/media", name: "media", load: () => import("./plugins/media/index.ts"), options: MEDIA_OPTIONS },
  // MCP servers: tools, resources and prompts
  { origin: "built-in:plugins/mcp", name: "mcp", load: () => import("./plugins/mcp/index.ts"), options: MCP_OPTIONS, subcommands: [MCP_SUBCOMMAND] },
  // measurement: `coder eval`
  { origin: "built-in:plugins/eval", name: "eval", load: () => import("./plugins/eval/index.ts"), options: EVAL_OPTIONS, subcommands: [EVAL_SUBCOMMAND] },
];

/** The options known before any plugin loads: the kernel's and what the built-ins declare. */
export function builtinTable(): OptionTable {
  return optionTable(BUILTINS.map((b) => ({ plugin: b.name, options: b.options ?? [] })));
}

/** The built-ins' subcommands, for `--help`. */
export function builtinSubcommands(): NonNullable<BuiltinPlugin["subcommands"]> {
  return BUILTINS.flatMap((b) => b.subcommands ?? []);
}
