// After argv: settings (config files, env, flags, trust), then the kernel
// (registry, kit, plugins), then a subcommand or a chat mode. main.ts hands in
// the built-in plugin list so core never imports formats/ or plugins/.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BuiltinPlugin } from "../../builtins.ts";
import type { App, Settings } from "../kernel.ts";
import { type ParsedArgv, readEnvOptions } from "./argv.ts";
import {
  type ConfigLayer,
  type LayerKind,
  checkVersionPins,
  configShowJson,
  displayPath,
  findGitRoot,
  globalConfigDir,
  keysNeedingTrust,
  lookupConfigFiles,
  mergeSettings,
  readDotenv,
  dotenvTrustKeys,
  renderConfigShow,
} from "../config/config.ts";
import { expandModelAliases } from "../config/aliases.ts";
import { fileScope, inSubtree } from "../chat/subtree.ts";
import { UsageError } from "../errors.ts";
import { checkStateDir } from "../edit/state.ts";
import { createKit } from "../plugins/kit.ts";
import { type PluginSource, loadPlugins, userSources } from "../plugins/loader.ts";
import type { Kit, Logger } from "../plugin.ts";
import { Registry, messageOf } from "../plugins/registry.ts";
import { askYesNo, decideTrust, projectConfigHash, rememberedTrust } from "../config/trust.ts";

export interface RunInput {
  version: string;
  args: ParsedArgv;
  /** plugins, plugin, config, models, map, doctor, mcp; undefined for a chat. */
  subcommand?: string;
  /** Positionals after the subcommand name (or all of them for a chat). */
  rest: string[];
  builtins: () => Promise<BuiltinPlugin[]>;
  /** The folder the settings are read for (default: the process's); `coder acp` loads one per session. */
  cwd?: string;
}

/** Everything known before plugins load. */
export interface Loaded {
  version: string;
  cwd: string;
  root: string;
  gitRoot: string | null;
  configDir: string;
  layers: ConfigLayer[];
  settings: Settings;
  env: Record<string, string | undefined>;
  trustKeys: string[];
  trusted: boolean;
  interactive: boolean;
  log: Logger;
  /** `coder doctor` only: config files left out because they could not be used (the error each would have thrown). */
  configErrors?: ConfigProblem[];
}

export interface ConfigProblem {
  file: string;
  kind: LayerKind;
  message: string;
}

/** Warnings and errors on stderr, one line each; debug only with --verbose. */
export function stderrLogger(verbose: () => boolean, quiet = false): Logger {
  const write = (prefix: string, message: string) => process.stderr.write(`${prefix}${message}\n`);
  return {
    debug: (m) => verbose() && write("coder: debug: ", m),
    info: (m) => !quiet && write("coder: ", m),
    warn: (m) => write("coder: warning: ", m),
    error: (m) => write("coder: error: ", m),
  };
}

export async function runMain(input: RunInput): Promise<number> {
  const { subcommand, rest } = input;
  if (subcommand === "config" && rest[0] === "schema") {
    const { jsonSchema } = await import("../config/config-file.ts");
    process.stdout.write(`${JSON.stringify(jsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (subcommand === "plugin") {
    if (rest[0] !== "new") throw new UsageError(`unknown command "coder plugin ${rest[0] ?? ""}" (did you mean \`coder plugin new NAME --kind KIND\` or \`coder plugins\`?)`);
    const { writePluginTemplate } = await import("./scaffold.ts");
    return writePluginTemplate(rest.slice(1), input.args.values.kind as string | undefined, process.cwd(), input.version);
  }
  if (subcommand === "config" && rest[0] === "import-aider") {
    if (rest.length > 2) throw new UsageError(`coder config import-aider takes one FILE, got ${rest.length - 1}`);
    const { importAider } = await import("./import-aider.ts");
    return importAider(rest[1], process.cwd());
  }
  // The ACP agent loads settings per session, for the folder each session names.
  if (subcommand === "acp") return (await import("../acp/index.ts")).runAcp(input);
  const loaded = await loadSettings(input);
  if (subcommand === "config") {
    if (rest[0] === "forget") {
      const { forgetAnswers } = await import("../gate/gate.ts");
      const n = forgetAnswers(loaded.root, rest.slice(1).join(" ") || undefined);
      process.stdout.write(`forgot ${n} remembered answer${n === 1 ? "" : "s"}\n`);
      return 0;
    }
    if (rest[0] !== "show" && rest[0] !== undefined) throw new UsageError(`unknown command "coder config ${rest[0]}" (use \`coder config show\`, \`coder config forget [TEXT]\`, \`coder config schema\` or \`coder config import-aider [FILE]\`)`);
    const { rememberedAnswers, describeRemembered } = await import("../gate/gate.ts");
    if (loaded.settings.options.json) {
      const trust = { keys: loaded.trustKeys, trusted: loaded.trusted };
      const remembered = rememberedAnswers(loaded.root).map(({ key, answer, question, time }) => ({ key, answer, question, time }));
      process.stdout.write(`${JSON.stringify({ ...configShowJson(loaded.settings, loaded.layers), trust, remembered })}\n`);
      return 0;
    }
    process.stdout.write(`${renderConfigShow(loaded.settings)}\n`);
    if (loaded.trustKeys.length) process.stdout.write(`\nneeds trust: ${loaded.trustKeys.join(", ")} (${loaded.trusted ? "trusted" : "not trusted"})\n`);
    process.stdout.write(`\n${describeRemembered(loaded.root)}\n`);
    return 0;
  }
  if (subcommand === "plugins" && rest[0] === "pin") {
    const { pinPlugins } = await import("./subcommands.ts");
    return pinPlugins(loaded);
  }
  if (subcommand === "doctor") {
    const { runDoctor } = await import("./doctor.ts");
    return runDoctor(loaded, () => assembleApp(loaded, input.builtins));
  }
  const app = await assembleApp(loaded, input.builtins);
  switch (subcommand) {
    case "plugins": {
      if (rest.length) throw new UsageError(`unknown command "coder plugins ${rest.join(" ")}" (use \`coder plugins\` or \`coder plugins pin\`)`);
      const { listPlugins } = await import("./subcommands.ts");
      return listPlugins(app);
    }
    case "models": {
      if (rest.length > 1) throw new UsageError(`coder models takes one FILTER, got ${rest.length} (${rest.join(" ")}); the filter matches part of a model name`);
      const { listModels } = await import("./subcommands.ts");
      return listModels(app, rest[0]);
    }
    case "map": {
      const { printRepoMap } = await import("./subcommands.ts");
      return printRepoMap(app, rest);
    }
  }
  if (subcommand === "mcp") {
    if (rest.length !== 1 || rest[0] !== "list") throw new UsageError(`unknown command "coder mcp ${rest.join(" ")}" (use \`coder mcp list\`)`);
    // The MCP plugin's /mcp command lists the servers, as in the REPL.
    app.settings.options.message = "/mcp list";
    return runChat({ ...app, interactive: false });
  }
  if (app.settings.options.listModels !== undefined) {
    const { listModels } = await import("./subcommands.ts");
    return listModels(app, app.settings.options.listModels);
  }
  if (app.settings.options.showRepoMap) {
    const { printRepoMap } = await import("./subcommands.ts");
    return printRepoMap(app, app.settings.positionals);
  }
  return runChat(app);
}

/** The conversation engine (core/cli/chat-modes.ts) runs every chat mode. */
async function runChat(app: App): Promise<number> {
  return (await import("./chat-modes.ts")).runCoder(app);
}

/** Config files, env and flags merged; version pins checked; trust decided. */
export async function loadSettings(input: RunInput): Promise<Loaded> {
  const cwd = input.cwd ?? process.cwd();
  const processEnv = process.env as Record<string, string | undefined>;
  const gitRoot = findGitRoot(cwd);
  const root = gitRoot ?? cwd;
  // Before anything writes a record: a cloned repository must not point .coder/ elsewhere (doctor reports it instead).
  if (input.subcommand !== "doctor") checkStateDir(root);
  const envValues = readEnvOptions(processEnv);
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
    for (const f of files) usable(f, () => layers.push(readConfigFile(f.file, f.kind)));
  }
  layers = layers.filter((layer) => usable(layer, () => checkVersionPins([layer], input.version, cwd)));
  const merge = (drop?: Set<string>) => mergeSettings({ layers, env: envValues, argv: input.args, positionals: input.rest, drop, cwd });
  let settings = merge();
  const options = settings.options;
  const log = stderrLogger(() => settings.options.verbose === true, options.json === true);
  const configDir = globalConfigDir(processEnv);
  // A base URL in the repository's .env needs trust like a config key: it could send the user's key elsewhere.
  const dotenv = readDotenv(root);
  const trustKeys = [...keysNeedingTrust(layers), ...dotenvTrustKeys(dotenv.bases)];
  // Questions on the terminal only in a conversation: not with --message, --message-file or --json.
  const conversational = !options.message && !options.messageFile && !options.json;
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY) && conversational;
  let trusted = trustKeys.length === 0 || options.trust === true;
  // Reading or showing the config needs no trust; everything that loads plugins or runs a chat does.
  const needsDecision = input.subcommand !== "config" && input.subcommand !== "doctor" && !(input.subcommand === "plugins" && input.rest[0] === "pin");
  if (needsDecision) {
    trusted = await decideTrust({
      root,
      configDir,
      layers,
      keys: trustKeys,
      trustFlag: options.trust === true,
      canAsk: Boolean(process.stdin.isTTY && process.stderr.isTTY) && conversational,
      ask: askYesNo,
      warn: log.warn,
    });
  } else if (!trusted) {
    trusted = rememberedTrust(configDir, root, projectConfigHash(layers, root)) === "trusted";
  }
  if (!trusted) settings = merge(new Set(trustKeys));
  expandModelAliases(settings.options);
  // --env-file is the user's own file: its keys and base URLs apply as given.
  const envFile = settings.options.envFile === undefined ? undefined : resolve(cwd, settings.options.envFile);
  if (envFile && !existsSync(envFile)) log.warn(`--env-file ${settings.options.envFile}: no such file (${settings.provenance.envFile}); no API keys read from it`);
  const own = envFile ? readDotenv(root, envFile) : { keys: {}, bases: {} };
  const env: Record<string, string | undefined> = { ...dotenv.keys, ...(trusted ? dotenv.bases : {}), ...own.keys, ...own.bases, ...processEnv };
  return { version: input.version, cwd, root, gitRoot, configDir, layers, settings, env, trustKeys, trusted, interactive, log, configErrors };
}

/** Registry, kit and every plugin (built-ins first, then config plugins, then --plugin). */
export async function assembleApp(loaded: Loaded, builtins: () => Promise<BuiltinPlugin[]>): Promise<App> {
  const { settings, root, log } = loaded;
  const options = settings.options;
  const registry = new Registry({ modelOverrides: options.models, log });
  const kit = await createRealKit(loaded, registry);
  const sources: PluginSource[] = (await builtins()).map((b) => ({ origin: b.origin, load: b.load }));
  sources.push(...userSources(options.plugins, options.plugin, loaded.cwd, (f) => displayPath(f, loaded.cwd)));
  await loadPlugins(registry, sources, kit, log);
  for (const plugin of registry.plugins.values()) {
    if (plugin.sha256) log.debug(`plugin ${plugin.name} from ${displayPath(plugin.origin, loaded.cwd)} sha256:${plugin.sha256}`);
  }
  guardBackgroundErrors(registry, log);
  return {
    version: loaded.version,
    root,
    gitRoot: loaded.gitRoot,
    settings,
    registry,
    kit,
    env: loaded.env,
    trusted: loaded.trusted,
    interactive: loaded.interactive,
  };
}

/**
 * An error thrown in a plugin's background work (a timer, an un-awaited
 * promise) reaches no `guard`; report it, naming the plugin when its file is in
 * the stack, instead of letting it end the session.
 */
export function guardBackgroundErrors(registry: Registry, log: Logger): void {
  const report = (error: unknown) => {
    const stack = error instanceof Error ? (error.stack ?? "") : "";
    const culprit = [...registry.plugins.values()].find((p) => !p.origin.startsWith("built-in") && stack.includes(p.origin));
    const message = messageOf(error);
    log.error(culprit ? `plugin ${culprit.name} (${culprit.origin}) failed in the background: ${message}` : `background error (ignored): ${message}`);
    if (stack) log.debug(stack);
  };
  process.on("uncaughtException", report);
  process.on("unhandledRejection", report);
}

/** The kit with the real matcher, reports, tokens and file store. */
async function createRealKit(loaded: Loaded, registry: Registry): Promise<Kit> {
  const { root, settings, log } = loaded;
  const options = settings.options;
  const deps = await kernelModules();
  const scope = fileScope(options, root, loaded.cwd);
  const list = async () => inSubtree(await deps.listRepoFiles(root, { git: options.git !== false && loaded.gitRoot !== null, ignoreFile: scope.ignoreFile }), scope);
  let encoding: string | undefined;
  return createKit({
    version: loaded.version,
    root,
    matcher: deps.matcher,
    reports: deps.reports,
    countTokens: deps.countTokens,
    encoding: () => {
      if (encoding === undefined && options.model) encoding = registry.modelInfo(options.model).encoding ?? "o200k_base";
      return encoding;
    },
    files: deps.files(root, list),
    registry,
    log,
    env: loaded.env,
    apiBase: options.apiBase,
    apiKey: options.apiKey,
    verifySsl: options.verifySsl,
  });
}

interface KernelModules {
  matcher: Kit["matcher"];
  reports: Kit["reports"];
  countTokens: (text: string, encoding?: string) => number;
  listRepoFiles: (root: string, opts?: { git?: boolean; ignoreFile?: string }) => Promise<string[]>;
  files: (root: string, list: () => Promise<string[]>) => Kit["files"];
}

/** The other kernel modules the kit is made of, loaded on demand. */
async function kernelModules(): Promise<KernelModules> {
  const [tokens, git, matcher, reports, files] = await Promise.all([
    import("../chat/tokens.ts"),
    import("../git/git.ts"),
    import("../edit/matcher.ts"),
    import("../edit/reports.ts"),
    import("../edit/files.ts"),
  ]);
  return {
    matcher: matcher.matcher,
    reports: reports.reports,
    countTokens: tokens.countTokens,
    listRepoFiles: git.listRepoFiles,
    files: (root, list) => {
      const store = new files.FileStore(root);
      return {
        list,
        read: async (path) => store.read(path),
        absolute: (path) => join(store.root, store.toRelative(path, store.root)),
      };
    },
  };
}
