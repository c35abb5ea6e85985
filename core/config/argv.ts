// The command line and the CODER_* environment, derived from the option table:
// the parseArgs configuration, `--no-` forms, aliases, value coercion and the
// --help text. Light on purpose: `--version` and `--help` load nothing else.
import { parseArgs } from "node:util";
import { ConfigError, UsageError } from "../errors.ts";
import { type OptionSpec, type OptionTable, envName, flagName } from "./options.ts";

/** Values from one source (flags or env), keyed by option key, with where each came from. */
export interface SourceValues {
  values: Record<string, unknown>;
  /** Option key → "flag --map-tokens" / "env CODER_MAP_TOKENS". */
  origin: Record<string, string>;
}

export interface ParsedArgv extends SourceValues {
  positionals: string[];
  /**
   * Flags no option of the table spells (`--x`, as typed), when parsed `lenient`ly: a plugin not
   * loaded yet may declare them. The argv is parsed again once every plugin has (`final`).
   */
  unknown: string[];
  /** The argv as typed, for that second parse. */
  raw: readonly string[];
}

interface FlagTarget {
  spec: OptionSpec;
  negated: boolean;
  /** A preset flag (`--attribute-author`): the value it sets. */
  preset?: string | boolean;
}

function flagTable(table: OptionTable): { config: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }>; targets: Map<string, FlagTarget> } {
  const config: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }> = {};
  const targets = new Map<string, FlagTarget>();
  for (const spec of table.specs) {
    if (spec.configOnly) continue;
    const type = spec.type === "boolean" ? "boolean" : "string";
    const multiple = spec.type === "list" || spec.type === "command-map" ? true : undefined;
    for (const name of [flagName(spec.key), ...(spec.aliases ?? [])]) {
      config[name] = { type, multiple, ...(name === flagName(spec.key) && spec.short ? { short: spec.short } : {}) };
      targets.set(name, { spec, negated: false });
    }
    if (spec.type === "boolean" && spec.negatable) {
      for (const name of [flagName(spec.key), ...(spec.aliases ?? [])]) {
        config[`no-${name}`] = { type: "boolean" };
        targets.set(`no-${name}`, { spec, negated: true });
      }
    }
    for (const preset of spec.presets ?? []) {
      config[preset.flag] = { type: "boolean" };
      targets.set(preset.flag, { spec, negated: false, preset: preset.value });
      if (preset.negated === undefined) continue;
      config[`no-${preset.flag}`] = { type: "boolean" };
      targets.set(`no-${preset.flag}`, { spec, negated: true, preset: preset.negated });
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
      // Token budgets are often written 8k or 0.5M (k = 1024), as Aider takes them.
      const scaled = /^(\d+(?:\.\d+)?)\s*([kKmM])$/.exec(raw.trim());
      const n = scaled ? Math.round(Number(scaled[1]) * (scaled[2]!.toLowerCase() === "k" ? 1024 : 1024 * 1024)) : Number(raw.trim());
      if (raw.trim() === "" || !Number.isFinite(n)) throw new ErrorType(`${where} expects a number, got "${raw}"`);
      // Every number option is a budget, a count or a time: none means anything below 0.
      if (n < 0) throw new ErrorType(`${where} expects a number of 0 or more, got "${raw}"`);
      // A time bound of 0 would fail every request at once ("the time bound ran out").
      if (spec.positive && n === 0) throw new ErrorType(`${where} expects a number of ${spec.positive} above 0, got "${raw}"`);
      return n;
    }
    case "enum":
      if (!spec.values?.includes(raw)) throw new ErrorType(`${where} expects one of ${spec.values?.join(", ")}, got "${raw}"`);
      return raw;
    case "list":
      return raw.split(",").map((s) => s.trim()).filter(Boolean);
    case "command-map":
      return commandEntry(raw);
    default:
      return raw;
  }
}

/** `"python: ruff check"` → `{ python: "ruff check" }`; a plain command applies to every language (`*`). */
export function commandEntry(raw: string): Record<string, string> {
  const m = /^([A-Za-z][\w+#-]*):\s+(\S.*)$/.exec(raw.trim());
  return m ? { [m[1]!.toLowerCase()]: m[2]!.trim() } : { "*": raw.trim() };
}

/**
 * Parse argv with the table's flags. Bad values are UsageErrors; so are unknown flags, unless
 * `lenient` (before plugins have declared theirs): they are then listed in `unknown`, and the
 * positionals are provisional (an unknown flag's value may have been taken for one).
 */
export function parseArgv(argv: readonly string[], table: OptionTable, options: { lenient?: boolean } = {}): ParsedArgv {
  const { config, targets } = flagTable(table);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: true, tokens: true });
  } catch (error) {
    const unknown = (error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION";
    if (!(unknown && options.lenient)) throw usageOf(error, argv, table);
    parsed = parseArgs({ args: [...argv], options: config, strict: false, allowPositionals: true, tokens: true });
  }
  return readTokens(parsed, targets, argv);
}

function usageOf(error: unknown, argv: readonly string[], table: OptionTable): UsageError {
  const message = error instanceof Error ? error.message : String(error);
  const ambiguous = /^Option '(-[^']+)' argument is ambiguous/.exec(message);
  if (ambiguous) {
    // `--max-reflections -1`, `-m "-x..."`: the value starts with a dash, so parseArgs will not take it.
    const flag = ambiguous[1]!;
    const value = argv[argv.indexOf(flag) + 1] ?? "";
    const long = flag.startsWith("--") ? flag : `--${flagName(table.specs.find((s) => s.short === flag.slice(1))?.key ?? flag.slice(1))}`;
    return new UsageError(`${flag} is followed by "${value}", which looks like an option; to pass it as the value, write ${long}=${value}`);
  }
  const first = (message.split("\n")[0] ?? message).replace(/\. To specify a positional argument.*$/, "");
  return new UsageError(`${first.charAt(0).toLowerCase()}${first.slice(1)} (see coder --help)`);
}

function readTokens(parsed: ReturnType<typeof parseArgs>, targets: Map<string, FlagTarget>, argv: readonly string[]): ParsedArgv {
  const values: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  const unknown: string[] = [];
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== "option") continue;
    const target = targets.get(token.name);
    if (!target) {
      unknown.push(token.rawName);
      continue;
    }
    const { spec, negated } = target;
    const where = `flag ${token.rawName}`;
    if (target.preset !== undefined) {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value (got "${token.value}")`);
      values[spec.key] = target.preset;
    } else if (spec.type === "boolean") {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value (got "${token.value}")`);
      values[spec.key] = !negated;
    } else {
      const raw = token.value ?? "";
      if (spec.type === "list") {
        const prev = (values[spec.key] as string[] | undefined) ?? [];
        values[spec.key] = [...prev, raw];
      } else if (spec.type === "command-map") {
        const prev = values[spec.key] as Record<string, string> | undefined;
        values[spec.key] = { ...prev, ...commandEntry(raw) };
      } else {
        values[spec.key] = coerce(spec, raw, where, UsageError);
      }
    }
    origin[spec.key] = `flag ${token.rawName.startsWith("--") ? token.rawName : `${token.rawName}/--${flagName(spec.key)}`}`;
  }
  return { values, origin, positionals: parsed.positionals, unknown, raw: argv };
}

/**
 * Every value the command line gave option `key` (any of its spellings), in the order typed:
 * a string option given twice (`--model A --model B`) keeps only the last in the settings, and a
 * subcommand that runs a matrix needs them all. Empty when the flag was not typed.
 */
export function flagValues(argv: readonly string[], table: OptionTable, key: string): string[] {
  const { config, targets } = flagTable(table);
  const parsed = parseArgs({ args: [...argv], options: config, strict: false, allowPositionals: true, tokens: true });
  const values: string[] = [];
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== "option" || token.value === undefined) continue;
    const target = targets.get(token.name);
    if (target?.spec.key === key && target.preset === undefined && !target.negated) values.push(token.value);
  }
  return values;
}

/** CODER_* variables from `env` for the given options. Bad values are ConfigErrors naming the variable. */
export function readEnvOptions(env: Readonly<Record<string, string | undefined>>, specs: readonly OptionSpec[]): SourceValues {
  const values: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  for (const spec of specs) {
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
