// The command line and the CODER_* environment, derived from the option table:
// the parseArgs configuration, `--no-` forms, aliases, value coercion and the
// --help text. Light on purpose: `--version` and `--help` load nothing else.
import { parseArgs } from "node:util";
import { ConfigError, UsageError } from "./errors.ts";
import { OPTIONS, type OptionSpec, envName, flagName } from "./options.ts";

/** Values from one source (flags or env), keyed by option key, with where each came from. */
export interface SourceValues {
  values: Record<string, unknown>;
  /** Option key → "flag --map-tokens" / "env CODER_MAP_TOKENS". */
  origin: Record<string, string>;
}

export interface ParsedArgv extends SourceValues {
  positionals: string[];
}

const TABLE = OPTIONS as readonly OptionSpec[];

interface FlagTarget {
  spec: OptionSpec;
  negated: boolean;
}

function flagTable(): { config: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }>; targets: Map<string, FlagTarget> } {
  const config: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }> = {};
  const targets = new Map<string, FlagTarget>();
  for (const spec of TABLE) {
    if (spec.configOnly) continue;
    const type = spec.type === "boolean" ? "boolean" : "string";
    const multiple = spec.type === "list" ? true : undefined;
    for (const name of [flagName(spec.key), ...(spec.aliases ?? [])]) {
      config[name] = { type, multiple, ...(name === flagName(spec.key) && spec.short ? { short: spec.short } : {}) };
      targets.set(name, { spec, negated: false });
    }
    if (spec.type === "boolean" && spec.negatable) {
      config[`no-${flagName(spec.key)}`] = { type: "boolean" };
      targets.set(`no-${flagName(spec.key)}`, { spec, negated: true });
    }
  }
  return { config, targets };
}

/** Turn the text of a flag or env var into the option's type; `where` names the source in errors. */
export function coerce(spec: OptionSpec, raw: string, where: string, ErrorType: typeof UsageError | typeof ConfigError): unknown {
  switch (spec.type) {
    case "boolean": {
      const v = raw.trim().toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off", ""].includes(v)) return false;
      throw new ErrorType(`${where} expects true or false (1/0, yes/no), got "${raw}"`);
    }
    case "number": {
      const n = Number(raw.trim());
      if (raw.trim() === "" || !Number.isFinite(n)) throw new ErrorType(`${where} expects a number, got "${raw}"`);
      return n;
    }
    case "enum":
      if (!spec.values?.includes(raw)) throw new ErrorType(`${where} expects one of ${spec.values?.join(", ")}, got "${raw}"`);
      return raw;
    case "list":
      return raw.split(",").map((s) => s.trim()).filter(Boolean);
    default:
      return raw;
  }
}

/** Parse argv with the table's flags. Unknown flags and bad values are UsageErrors. */
export function parseArgv(argv: string[]): ParsedArgv {
  const { config, targets } = flagTable();
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options: config, strict: true, allowPositionals: true, tokens: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const first = (message.split("\n")[0] ?? message).replace(/\. To specify a positional argument.*$/, "");
    throw new UsageError(`${first} (see coder --help)`);
  }
  const values: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== "option") continue;
    const target = targets.get(token.name);
    if (!target) continue;
    const { spec, negated } = target;
    const where = `flag ${token.rawName}`;
    if (spec.type === "boolean") {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value (got "${token.value}")`);
      values[spec.key] = !negated;
    } else {
      const raw = token.value ?? "";
      if (spec.type === "list") {
        const prev = (values[spec.key] as string[] | undefined) ?? [];
        values[spec.key] = [...prev, raw];
      } else {
        values[spec.key] = coerce(spec, raw, where, UsageError);
      }
    }
    origin[spec.key] = `flag ${token.rawName.startsWith("--") ? token.rawName : `${token.rawName}/--${flagName(spec.key)}`}`;
  }
  return { values, origin, positionals: parsed.positionals };
}

/** CODER_* variables from `env`. Bad values are ConfigErrors naming the variable. */
export function readEnvOptions(env: Readonly<Record<string, string | undefined>>): SourceValues {
  const values: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  for (const spec of TABLE) {
    if (spec.configOnly && spec.type !== "boolean" && spec.type !== "string") continue;
    if (spec.noEnv) continue;
    const name = envName(spec.key);
    const raw = env[name];
    if (raw === undefined) continue;
    values[spec.key] = coerce(spec, raw, name, ConfigError);
    origin[spec.key] = `env ${name}`;
  }
  return { values, origin };
}

const SUBCOMMANDS: [string, string][] = [
  ["plugins", "list registered formats, context providers, model adapters and commands, and their origin"],
  ["plugins pin", "write sha256 pins for the plugins listed in .coder.json"],
  ["plugin new NAME --kind K", "write a typed template plugin (K: format, context, model, command) and coder-plugin.d.ts"],
  ["config show", "the merged config and where each value came from"],
  ["config schema", "the config file's JSON Schema"],
  ["models [FILTER]", "the model table: context window, default edit format, prices"],
  ["map [FILE ...]", "print the repo map (same as --show-repo-map)"],
  ["doctor", "version, config files and their trust, plugins, embedded grammars"],
];

function flagLabel(spec: OptionSpec): string {
  const long = spec.negatable ? `--[no-]${flagName(spec.key)}` : `--${flagName(spec.key)}`;
  const parts = [spec.short ? `-${spec.short}, ${long}` : `    ${long}`];
  if (spec.type !== "boolean") parts.push(spec.arg ?? "VALUE");
  return parts.join(" ");
}

/** The --help text, grouped as the table groups options. */
export function helpText(version: string): string {
  const lines = [
    `coder ${version} — an AI pair programmer for the terminal`,
    "",
    "Usage: coder [options] [FILE ...]        chat about (and edit) FILEs",
    "       coder -m \"add a --verbose flag\" cli.py   one request, then exit",
    "       coder <command> [...]",
    "",
    "Commands:",
    ...SUBCOMMANDS.map(([name, help]) => `  ${name.padEnd(28)}${help}`),
  ];
  const groups = new Map<string, OptionSpec[]>();
  for (const spec of TABLE) {
    if (spec.configOnly) continue;
    const list = groups.get(spec.group) ?? [];
    list.push(spec);
    groups.set(spec.group, list);
  }
  const width = Math.max(...TABLE.filter((s) => !s.configOnly).map((s) => flagLabel(s).length)) + 2;
  for (const [group, specs] of groups) {
    lines.push("", `${group}:`);
    for (const spec of specs) {
      const aliases = spec.aliases?.length ? ` (alias ${spec.aliases.map((a) => `--${a}`).join(", ")})` : "";
      const dflt = spec.default !== undefined && spec.type !== "boolean" ? ` [default: ${String(spec.default)}]` : "";
      lines.push(`  ${flagLabel(spec).padEnd(width)}${spec.help}${aliases}${dflt}`);
    }
  }
  lines.push(
    "",
    "Every option can also be set as CODER_<OPTION> (CODER_MAP_TOKENS=2048) and as a camelCase key in a",
    "config file (mapTokens). Precedence: flag > environment > .coder.local.json > .coder.json >",
    "$XDG_CONFIG_HOME/coder/config.json > default. `coder config schema` prints every config key.",
    "Exit codes: 0 done, 1 edits not applied or runtime failure, 2 usage or config error, 130 interrupted.",
  );
  return lines.join("\n");
}
