// The command line's settings step: config files, environment (CODER_*, .env) and
// flags merged with their provenance, version pins checked, and trust decided
// (asking on the terminal when there is one). Front ends (the CLI, the ACP agent)
// start here; the result (Loaded) goes to core/boot/assemble.ts.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { BuiltinPlugin } from "../plugins/loader.ts";
import type { ConfigProblem, Loaded } from "../kernel.ts";
import { type ParsedArgv, readEnvOptions } from "../config/argv.ts";
import type { OptionTable } from "../config/options.ts";
import { wrapStatus } from "../term/style.ts";
import { type ConfigLayer, type LayerKind, checkVersionPins, findGitRoot, globalConfigDir, keysNeedingTrust, lookupConfigFiles, mergeSettings, readDotenv, dotenvTrustKeys, savedKeys } from "../config/config.ts";
import { expandModelAliases } from "../config/aliases.ts";
import { checkStateDir, STATE_DIR, stateDirOf, trackedStateProblem } from "../edit/state.ts";
import { trackedStateFiles } from "../git/git.ts";
import { ConfigError } from "../errors.ts";
import type { Logger } from "../plugin.ts";
import { messageOf } from "../plugins/registry.ts";
import { decideTrust, projectConfigHash, rememberedTrust } from "../config/trust.ts";

export interface RunInput {
  version: string;
  /** The argv parsed with `table` (leniently: a plugin may declare the flags it does not know). */
  args: ParsedArgv;
  /** The options known before plugins load: the kernel's and the built-ins' declared ones. */
  table: OptionTable;
  /** The kernel's own subcommand (plugins, plugin, config, models, doctor, acp); undefined for a chat or a plugin's subcommand. */
  subcommand?: string;
  /** Positionals after the subcommand name (or all of them for a chat). */
  rest: string[];
  builtins: () => Promise<BuiltinPlugin[]>;
  /** The folder the settings are read for (default: the process's); `coder acp` loads one per session. */
  cwd?: string;
  /** The environment the settings are read from (default: the process's). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A front end that owns the terminal: log lines go through it (see `routeLog`). */
export interface LogSink {
  /** A whole line of text, e.g. "coder: error: …". */
  line(text: string): void;
  warn(message: string): void;
}

let sink: LogSink | null = null;

/**
 * Send the log's lines through `to` (the REPL's renderer, which draws its live box under the
 * reply) instead of straight to stderr, where they would land inside the box; null: stderr again.
 */
export function routeLog(to: LogSink | null): void {
  sink = to;
}

/** Warnings and errors on stderr, one line each; debug only with --verbose. */
function stderrLogger(verbose: () => boolean, quiet = false): Logger {
  const write = (prefix: string, message: string) => (sink ? sink.line(`${prefix}${message}`) : process.stderr.write(`${prefix}${message}\n`));
  // A warning on a terminal breaks between words, under the message (the terminal would break words).
  const warning = (message: string) => {
    if (sink) return sink.warn(message);
    process.stderr.write(`${process.stderr.isTTY ? wrapStatus(`warning: ${message}`, process.stderr.columns || 80, "warning: ".length) : `warning: ${message}`}\n`);
  };
  return {
    debug: (m) => verbose() && write("coder: debug: ", m),
    info: (m) => !quiet && write("coder: ", m),
    // The same prefix as the session's warnings (core/term/render.ts).
    warn: warning,
    error: (m) => write("coder: error: ", m),
  };
}

/** Config files, env and flags merged; version pins checked; trust decided. */
export async function loadSettings(input: RunInput): Promise<Loaded> {
  const cwd = input.cwd ?? process.cwd();
  const processEnv = (input.env ?? process.env) as Record<string, string | undefined>;
  const gitRoot = findGitRoot(cwd);
  const root = gitRoot ?? cwd;
  // Before anything writes a record: a cloned repository must not point .coder/ elsewhere (doctor reports it instead).
  if (input.subcommand !== "doctor") checkStateDir(root);
  // Anything git tracks under .coder/ came with the repository (coder keeps the folder out of git).
  // Asked of git now, while the config files are read; answered before anything is decided or written.
  const tracked = input.subcommand !== "doctor" && gitRoot && existsSync(stateDirOf(root)) ? trackedStateFiles(root) : null;
  const table = input.table;
  const envValues = readEnvOptions(processEnv, table.specs);
  const explicit = (input.args.values.config ?? envValues.values.config) as string | undefined;
  const files = lookupConfigFiles(root, processEnv, explicit, cwd);
  // `coder doctor` reports a config file it cannot use as a failed check and goes on without it; everything else stops at it.
  const configErrors: ConfigProblem[] = [];
  const usable = (f: { file: string; kind: LayerKind }, check: () => void): boolean => {
    try {
      check();
      return true;
    } catch (error) {
      if (input.subcommand !== "doctor") throw error;
      configErrors.push({ file: f.file, kind: f.kind, message: messageOf(error) });
      return false;
    }
  };
  let layers: ConfigLayer[] = [];
  if (files.length) {
    const { readConfigFile } = await import("../config/config-file.ts");
    // A key no option knows yet waits for the plugins (boot/settle.ts), which may declare it.
    for (const f of files) usable(f, () => layers.push(readConfigFile(f.file, f.kind, cwd, table, true)));
  }
  layers = layers.filter((layer) => usable(layer, () => checkVersionPins([layer], input.version, cwd)));
  const merge = (drop?: Set<string>) => mergeSettings({ table, layers, env: envValues, argv: input.args, positionals: input.rest, drop, cwd });
  let settings = merge();
  const options = settings.options;
  const log = stderrLogger(() => settings.options.verbose === true, options.json === true);
  const configDir = globalConfigDir(processEnv);
  // A base URL in the repository's .env needs trust like a config key: it could send the user's key elsewhere.
  const dotenv = readDotenv(root);
  if (dotenv.problem) log.warn(dotenv.problem);
  const trustKeys = [...keysNeedingTrust(layers, table), ...dotenvTrustKeys(dotenv.bases)];
  // Questions on the terminal only in a conversation: not with --message, --message-file or --json,
  // nor in `coder acp`, whose stdin is the protocol. Terminals are looked at only then: the first
  // touch of process.stdin builds Node's tty and stream objects, which `coder acp` need not wait for.
  const conversational = input.subcommand !== "acp" && !options.message && !options.messageFile && !options.json;
  const interactive = conversational && Boolean(process.stdin.isTTY && process.stdout.isTTY);
  let trusted = trustKeys.length === 0 || options.trust === true;
  // Reading or showing the config needs no trust; everything that loads plugins or runs a chat does.
  const needsDecision = input.subcommand !== "config" && input.subcommand !== "doctor" && !(input.subcommand === "plugins" && input.rest[0] === "pin");
  // Before the trust question: a repository coder refuses is not worth one.
  const trackedProblem = tracked && trackedStateProblem(await tracked);
  if (trackedProblem) throw new ConfigError(`cannot use this repository's ${STATE_DIR} folder: ${trackedProblem}`);
  if (needsDecision) {
    trusted = await decideTrust({
      root,
      configDir,
      layers,
      keys: trustKeys,
      table,
      trustFlag: options.trust === true,
      canAsk: conversational && Boolean(process.stdin.isTTY && process.stderr.isTTY),
      ask: askYesNo,
      warn: log.warn,
    });
  } else if (!trusted) {
    trusted = rememberedTrust(configDir, root, projectConfigHash(layers, root, undefined, table)) === "trusted";
  }
  if (!trusted) settings = merge(new Set(trustKeys));
  expandModelAliases(settings.options);
  // --env-file is the user's own file: its keys and base URLs apply as given.
  const envFile = settings.options.envFile === undefined ? undefined : resolve(cwd, settings.options.envFile);
  if (envFile && !existsSync(envFile)) log.warn(`--env-file ${settings.options.envFile}: no such file (${settings.provenance.envFile}); no API keys read from it`);
  const own = envFile ? readDotenv(root, envFile) : { keys: {}, bases: {} };
  if ("problem" in own && own.problem) log.warn(`--env-file: ${own.problem}`);
  const env: Record<string, string | undefined> = { ...savedKeys(processEnv), ...dotenv.keys, ...(trusted ? dotenv.bases : {}), ...own.keys, ...own.bases, ...processEnv };
  return { version: input.version, cwd, root, gitRoot, configDir, layers, settings, env, trustKeys, trusted, interactive, log, configErrors, args: input.args, subcommand: input.subcommand };
}

/** The trust question on stderr, answered on stdin (default No), in the style of every confirmation (core/term/confirm.ts). */
async function askYesNo(question: string): Promise<boolean> {
  const [{ askYesNoOnTerminal }, { makeTheme, wantsColour }] = await Promise.all([import("../term/confirm.ts"), import("../term/style.ts")]);
  return askYesNoOnTerminal(question, wantsColour(process.env, undefined, Boolean(process.stderr.isTTY)) ? makeTheme() : null);
}
