// The --help text, generated from the option table and the plugins' subcommands. Kept
// apart from the rest of cli/ so `coder --help` loads nothing but the table (no node:util).
import { type OptionSpec, type OptionTable, flagName } from "../config/options.ts";
import type { Subcommand } from "../plugin.ts";

const SUBCOMMANDS: [string, string][] = [
  ["init", "guided set-up: provider, key (checked, saved with mode 600 in the global config folder), default model, .coder.json"],
  ["plugins", "list registered formats, context providers, model adapters, commands and tool providers, and their origin"],
  ["plugins pin", "write sha256 pins for the plugins listed in .coder.json"],
  ["plugin new NAME --kind K", "write a typed template plugin (K: format, context, model, command, tool) and coder-plugin.d.ts"],
  ["config show", "the merged config and where each value came from"],
  ["config schema", "the config file's JSON Schema"],
  ["config forget [TEXT]", "forget remembered \"Don't ask again\" answers (those matching TEXT)"],
  ["config import-aider [FILE]", "write .coder.json from .aider.conf.yml (and .env's AIDER_*), listing what did not map"],
  ["models [FILTER]", "the model table: context window, default edit format, prices"],
  ["prompts [FILE ...]", "print the messages a request would carry (with --edit-format, --model, -m), each with its token count; sends nothing"],
  ["doctor", "version, config files and their trust, plugins and their checks, embedded grammars"],
  ["acp", "run as an Agent Client Protocol agent on stdin/stdout (for Zed, JetBrains, Neovim, Emacs)"],
];

function flagLabel(spec: OptionSpec): string {
  const long = spec.negatable ? `--[no-]${flagName(spec.key)}` : `--${flagName(spec.key)}`;
  const parts = [spec.short ? `-${spec.short}, ${long}` : `    ${long}`];
  if (spec.type !== "boolean") parts.push(spec.arg ?? "VALUE");
  return parts.join(" ");
}

/** The options' lines, grouped as the table groups them (config-only keys left out). */
function optionLines(specs: readonly OptionSpec[]): string[] {
  const lines: string[] = [];
  const flags = specs.filter((s) => !s.configOnly);
  const groups = new Map<string, OptionSpec[]>();
  for (const spec of flags) {
    const list = groups.get(spec.group) ?? [];
    list.push(spec);
    groups.set(spec.group, list);
  }
  const width = Math.max(...flags.map((s) => flagLabel(s).length)) + 2;
  for (const [group, specs] of groups) {
    lines.push("", `${group}:`);
    for (const spec of specs) {
      const aliases = spec.aliases?.length ? ` (alias ${spec.aliases.map((a) => `--${a}`).join(", ")})` : "";
      const presets = spec.presets?.length ? ` (${spec.presets.map((p) => `--${p.flag} = ${String(p.value)}`).join(", ")})` : "";
      const dflt = spec.default !== undefined && spec.type !== "boolean" ? ` [default: ${String(spec.default)}]` : "";
      // An enum's values, unless the help text already names every one (--kind, --attribution).
      const values = spec.type === "enum" && spec.values && !spec.values.every((v) => spec.help.includes(v)) ? ` (${spec.values.join(", ")})` : "";
      lines.push(`  ${flagLabel(spec).padEnd(width)}${spec.help}${values}${aliases}${presets}${dflt}`);
    }
  }
  return lines;
}

/** `coder NAME --help` for a plugin's subcommand: its usage, summary and longer help, and the options its plugin declares. */
export function subcommandHelpText(command: Pick<Subcommand, "name" | "usage" | "summary" | "help">, specs: readonly OptionSpec[]): string {
  const lines = [`Usage: coder ${command.usage ? `${command.name} ${command.usage}` : command.name}`, "", command.summary];
  if (command.help) lines.push("", command.help.replace(/\n+$/, ""));
  lines.push(...optionLines(specs), "", "Every other option of coder (coder --help) is taken too.");
  return lines.join("\n");
}

/** The --help text: the kernel's commands, then the plugins', and every option, grouped as the table groups them. */
export function helpText(version: string, table: OptionTable, subcommands: readonly Pick<Subcommand, "name" | "usage" | "summary">[]): string {
  const commands: [string, string][] = [...SUBCOMMANDS, ...subcommands.map((c): [string, string] => [c.usage ? `${c.name} ${c.usage}` : c.name, c.summary])];
  const lines = [
    `coder ${version} — an AI pair programmer for the terminal`,
    "",
    "Usage: coder [options] [FILE ...]        chat about (and edit) FILEs",
    "       coder -m \"add a --verbose flag\" cli.py   one request, then exit",
    "       coder <command> [...]",
    "",
    "Commands:",
    ...commands.map(([name, help]) => `  ${name.padEnd(28)}${help}`),
    "  With --json, plugins, config show, models and doctor print one JSON document instead of text.",
  ];
  lines.push(...optionLines(table.specs));
  lines.push(
    "",
    "Every option can also be set as CODER_<OPTION> (CODER_MAP_TOKENS=2048) and as a camelCase key in a",
    "config file (mapTokens). Precedence: flag > environment > .coder.local.json > .coder.json >",
    "$XDG_CONFIG_HOME/coder/config.json > default. `coder config schema` prints every config key.",
    "Exit codes: 0 done, 1 edits not applied or runtime failure, 2 usage or config error, 130 interrupted.",
  );
  return lines.join("\n");
}
