// MCP's options and its command line, declared apart from the plugin so builtins.ts can
// hand them to the kernel without loading it (`--help` stays cheap).
import type { PluginOption, RunsProgram, Subcommand } from "../../core/plugin.ts";

/**
 * What `mcpServers` entries run (command and args, without a shell, in the entry's `cwd` relative
 * to the repository root): trust covers the scripts they name outside the repository.
 */
function serverPrograms(value: unknown): RunsProgram[] {
  if (!value || typeof value !== "object") return [];
  return Object.entries(value as Record<string, { command?: unknown; args?: unknown; cwd?: unknown }>).map(([name, entry]) => ({
    label: name,
    argv: [entry?.command, ...(Array.isArray(entry?.args) ? entry.args : [])].filter((w): w is string => typeof w === "string"),
    ...(typeof entry?.cwd === "string" ? { cwd: entry.cwd } : {}),
  }));
}

export const MCP_SERVERS = {
  key: "mcpServers",
  type: "object",
  configOnly: true,
  merge: "by-key",
  editorMcpServers: true,
  needsTrust: "runs code",
  runs: serverPrograms,
  group: "Plugins and config",
  help: 'MCP servers: name → { "command", "args", "env", "cwd" } or { "url", "headers" }, as other tools write them',
} as const satisfies PluginOption;
export const MCP_CONFIG = { key: "mcpConfig", type: "string", arg: "FILE", cliOnly: true, group: "Plugins and config", help: 'add the MCP servers of FILE (a JSON file with "mcpServers") for this run' } as const satisfies PluginOption;
export const MCP_TOOLS = {
  key: "mcpTools",
  type: "enum",
  values: ["ask", "auto", "off"],
  default: "ask",
  arg: "MODE",
  needsTrust: "weakens your protections",
  group: "Plugins and config",
  help: "offer MCP servers' tools to the model: ask before each call (also under --yes-always), run them without asking, or off",
} as const satisfies PluginOption;

export const MCP_OPTIONS: readonly PluginOption[] = [MCP_SERVERS, MCP_CONFIG, MCP_TOOLS];

/** `coder mcp list [--json]`. */
export const MCP_SUBCOMMAND = { name: "mcp", usage: "list [--json]", summary: "each MCP server's status, tools, prompts and resources (as /mcp); exit 1 if one failed to start" } as const satisfies Omit<Subcommand, "run">;
