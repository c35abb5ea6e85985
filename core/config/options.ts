// The kernel's option table, and the table of a running coder (the kernel's options plus
// every loaded plugin's): flags, `--no-` forms, short flags, CODER_* env vars, config-file
// keys, `--help` text and the JSON Schema are all derived from it. This file lists only what
// the kernel itself uses; a plugin declares its own options (`PluginObject.options`).
import type { ModelInfo, OptionValue, PluginOption } from "../plugin.ts";

/**
 * A plugin option's types, plus the kernel's structured config-only values with their own zod
 * schemas in config-file.ts (`models`, `plugins`). `command-map`: one command, or one per language
 * (`{"python": "ruff check"}`; on the command line `--lint-cmd "python: ruff check"`, repeatable).
 */
export type OptionType = PluginOption["type"] | "models" | "plugins" | "command-map";

export interface OptionSpec extends Omit<PluginOption, "type" | "group" | "default"> {
  type: OptionType;
  default?: boolean | string | number | readonly string[];
  group: string;
  short?: string;
  /** Extra flag spellings (Aider's), e.g. `--openai-api-base`. */
  aliases?: readonly string[];
  /**
   * Flags that set this option to a fixed value (Aider's spellings of one of its values), e.g.
   * `--attribute-author` sets `attribution` to "author"; `negated`, when given, is what `--no-<flag>` sets.
   */
  presets?: readonly { flag: string; value: string | boolean; negated?: string | boolean }[];
}

/** A command setting's command lines: a string, or the values of a per-language map (what trust covers). */
function commandLines(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value && typeof value === "object") return Object.values(value).filter((v): v is string => typeof v === "string");
  return [];
}

export const OPTIONS = [
  // Model
  { key: "model", type: "string", arg: "NAME", group: "Model", help: "model as provider/name, e.g. openai/gpt-4.1, ollama/qwen2.5-coder (a bare name is looked up in the model table)" },
  { key: "weakModel", type: "string", arg: "NAME", group: "Model", help: "model for commit messages and history summaries (default: from the model table, else the main model)" },
  { key: "editorModel", type: "string", arg: "NAME", group: "Model", help: "model for the editor step of architect mode" },
  { key: "editorEditFormat", type: "string", arg: "NAME", group: "Model", help: "edit format for the editor step of architect mode" },
  { key: "apiBase", type: "string", arg: "URL", aliases: ["openai-api-base"], group: "Model", notInProject: true, help: "base URL of an OpenAI-compatible endpoint (else OPENAI_BASE_URL, else the provider's default)" },
  { key: "apiKey", type: "string", arg: "KEY", aliases: ["openai-api-key"], group: "Model", notInProject: true, secret: true, help: "API key (else the provider's env var, e.g. OPENAI_API_KEY)" },
  { key: "timeout", type: "number", arg: "SECONDS", default: 600, positive: "seconds", group: "Model", help: "give up on a request (all retries included) after this many seconds" },
  { key: "cacheKeepalivePings", type: "number", arg: "N", default: 0, group: "Model", help: "keep the provider's prompt cache warm with up to N pings while idle" },
  { key: "reasoningEffort", type: "enum", values: ["low", "medium", "high"], arg: "LEVEL", group: "Model", help: "reasoning effort, for the models that take it (`coder models` says which); not sent to the others" },
  { key: "thinkingTokens", type: "number", arg: "N", group: "Model", help: "thinking-token budget, for the models that take one (`coder models` says which); 0 turns thinking off" },
  { key: "aliases", type: "list", arg: "NAME:MODEL", aliases: ["alias"], group: "Model", help: "a short name for a model, e.g. fast:openai/gpt-4.1-mini (repeatable)" },
  { key: "verifySsl", type: "boolean", default: true, negatable: true, needsTrust: "weakens your protections", safeValue: true, group: "Model", help: "check the endpoint's TLS certificate (--no-verify-ssl accepts any, e.g. a self-signed proxy)" },
  { key: "envFile", type: "string", arg: "FILE", notInProject: true, group: "Model", help: "read API keys from this file instead of the repository's .env" },
  { key: "listModels", type: "string", arg: "FILTER", aliases: ["models"], cliOnly: true, noEnv: true, group: "Model", help: "print the models whose name contains FILTER and exit (as `coder models FILTER`)" },
  { key: "models", type: "models", configOnly: true, group: "Model", help: "model table additions or overrides, keyed by model name" },

  // Editing
  { key: "editFormat", type: "string", arg: "NAME", aliases: ["chat-mode"], group: "Editing", help: "edit format: any registered one (`coder plugins` lists them; default: from the model table)" },
  { key: "autoAcceptArchitect", type: "boolean", default: false, negatable: true, group: "Editing", help: "hand architect's plan to the editor without asking \"Edit the files?\"" },
  { key: "dryRun", type: "boolean", default: false, group: "Editing", help: "parse and validate edits and show them; write nothing" },
  { key: "maxReflections", type: "number", arg: "N", default: 3, group: "Editing", help: "repair budget per request (failed edits, lint and test failures)" },
  { key: "yesAlways", type: "boolean", default: false, needsTrust: "weakens your protections", safeValue: false, group: "Editing", help: "answer yes to every confirmation (shell commands only with a trusted allowShell; tool calls are still asked)" },
  { key: "allowShell", type: "boolean", default: false, configOnly: true, needsTrust: "runs code", safeValue: false, group: "Editing", help: "let --yes-always run shell commands the model suggests" },
  { key: "lintCmd", type: "command-map", arg: "CMD", needsTrust: "runs code", runs: commandLines, group: "Editing", help: "linter to run on edited files, or \"LANG: CMD\" for one language (repeatable); failures go back to the model" },
  { key: "autoLint", type: "boolean", default: true, negatable: true, group: "Editing", help: "check the syntax of edited files, and run --lint-cmd, after every applied edit" },
  { key: "testCmd", type: "string", arg: "CMD", needsTrust: "runs code", runs: commandLines, group: "Editing", help: "test command; failures go back to the model" },
  { key: "autoTest", type: "boolean", default: false, negatable: true, group: "Editing", help: "run --test-cmd after every applied edit" },
  { key: "maxFileSize", type: "number", arg: "MB", default: 10, positive: "megabytes", group: "Editing", help: "largest file coder reads into a chat or edits, in megabytes" },
  { key: "lint", type: "boolean", cliOnly: true, group: "Editing", help: "lint the chat files (else the files with pending changes), offer to fix the problems, and exit with the result" },
  { key: "test", type: "boolean", cliOnly: true, group: "Editing", help: "run --test-cmd, offer to fix a failure, and exit with the result" },
  { key: "apply", type: "string", arg: "FILE", cliOnly: true, group: "Editing", help: "apply the edits of a reply saved in FILE (in the current edit format), without a model, and exit" },
  { key: "suggestShellCommands", type: "boolean", default: true, negatable: true, group: "Editing", help: "let the model suggest shell commands (each still runs only after a yes)" },
  { key: "encoding", type: "enum", values: ["utf-8", "latin-1", "windows-1252", "utf-16le", "utf-16be"], default: "utf-8", arg: "NAME", group: "Editing", help: "encoding of new files, and of existing files that are not valid UTF-8 (those keep it when written)" },
  { key: "lineEndings", type: "enum", values: ["platform", "lf", "crlf"], default: "platform", arg: "EOL", group: "Editing", help: "line endings of new files (existing files keep theirs)" },

  // Context
  { key: "read", type: "list", arg: "FILE", group: "Context", help: "add a read-only file, e.g. CONVENTIONS.md (repeatable)" },
  { key: "restoreChatHistory", type: "boolean", default: false, negatable: true, group: "Context", help: "reload the previous transcript into the history" },
  { key: "subtreeOnly", type: "boolean", default: false, group: "Context", help: "only the current directory's subtree goes into the repo map, completion and /add globs" },
  { key: "watchFiles", type: "boolean", default: false, negatable: true, group: "Context", help: "watch the repository for comments ending in AI! (make the change) or AI? (answer)" },
  { key: "chatLanguage", type: "string", arg: "LANGUAGE", group: "Context", help: "the language the model answers in (default: the language you write in)" },

  // Git
  { key: "git", type: "boolean", default: true, negatable: true, group: "Git", help: "use git (default on when inside a repository)" },
  { key: "autoCommits", type: "boolean", default: true, negatable: true, group: "Git", help: "commit each applied reply" },
  { key: "dirtyCommits", type: "boolean", default: true, negatable: true, group: "Git", help: "commit a file's pending changes on their own before editing it" },
  { key: "verify", type: "boolean", default: true, negatable: true, aliases: ["git-commit-verify"], needsTrust: "weakens your protections", safeValue: true, group: "Git", help: "run git commit hooks (--no-verify skips them)" },
  { key: "commitTimeout", type: "number", arg: "SECONDS", default: 120, positive: "seconds", group: "Git", help: "stop a commit (its hooks included) that takes longer than this; the commit fails" },
  {
    key: "attribution",
    type: "enum",
    values: ["trailer", "author", "committer", "none"],
    default: "trailer",
    arg: "HOW",
    presets: [
      { flag: "attribute-co-authored-by", value: "trailer", negated: "none" },
      { flag: "attribute-author", value: "author", negated: "none" },
      { flag: "attribute-committer", value: "committer", negated: "none" },
    ],
    group: "Git",
    help: "mark coder's commits: a Co-authored-by trailer, the author or committer name, or not at all",
  },
  { key: "ignoreFile", type: "string", arg: "FILE", aliases: ["aiderignore"], group: "Git", help: "gitignore-style file of paths coder leaves alone (default .coderignore)" },
  { key: "commitPrompt", type: "string", arg: "PROMPT", group: "Git", help: "the system prompt the weak model gets for writing commit messages" },
  { key: "commitLanguage", type: "string", arg: "LANGUAGE", group: "Git", help: "the language of commit messages" },
  { key: "commit", type: "boolean", cliOnly: true, group: "Git", help: "commit the pending changes with a written message, and exit" },

  // Request
  { key: "message", type: "string", short: "m", arg: "TEXT", aliases: ["msg"], cliOnly: true, group: "Request", help: "run this one request and exit" },
  { key: "messageFile", type: "string", short: "f", arg: "FILE", cliOnly: true, group: "Request", help: "run the request in FILE and exit" },
  { key: "load", type: "string", arg: "FILE", needsTrust: "runs code", group: "Request", help: "run the slash commands in FILE (as /load FILE) before the chat starts" },

  // Output
  { key: "stream", type: "boolean", default: true, negatable: true, group: "Output", help: "stream replies" },
  { key: "pretty", type: "boolean", negatable: true, group: "Output", help: "colours and markdown rendering (default: on for a terminal)" },
  { key: "json", type: "boolean", default: false, cliOnly: true, group: "Output", help: "one JSON event per line on stdout, nothing else" },
  { key: "chatHistoryFile", type: "string", arg: "FILE", group: "Output", notInProject: true, help: "transcript file (default .coder/chat.history.md)" },
  { key: "inputHistoryFile", type: "string", arg: "FILE", group: "Output", notInProject: true, help: "REPL input history (default .coder/input.history)" },
  { key: "verbose", type: "boolean", default: false, group: "Output", help: "show prompts, timings and stack traces" },
  { key: "notifications", type: "boolean", default: false, negatable: true, group: "Output", help: "ring the terminal bell (or run --notifications-command) when a reply is done" },
  { key: "notificationsCommand", type: "string", arg: "CMD", needsTrust: "runs code", group: "Output", help: "command to run instead of the bell when a reply is done" },
  { key: "showDiffs", type: "boolean", negatable: true, group: "Output", help: "show the coloured diff of each applied edit (default: on in the REPL)" },
  { key: "multiline", type: "boolean", default: false, negatable: true, group: "Output", help: "REPL: Enter inserts a newline and Alt-Enter sends (/multiline-mode switches)" },
  { key: "vim", type: "boolean", default: false, group: "Output", help: "REPL: vi keys in the line editor (Esc for normal mode)" },
  { key: "darkMode", type: "boolean", default: false, group: "Output", help: "colours for a dark terminal background (the default)" },
  { key: "lightMode", type: "boolean", default: false, group: "Output", help: "colours for a light terminal background" },
  { key: "codeTheme", type: "enum", values: ["default", "monokai", "solarized-dark", "solarized-light", "github"], default: "default", arg: "NAME", group: "Output", help: "colours of code in replies: default (the terminal's own palette), monokai, solarized-dark, solarized-light, github" },

  // Plugins and config
  { key: "plugin", type: "list", arg: "PATH", cliOnly: true, group: "Plugins and config", help: "load a plugin module (repeatable)" },
  { key: "plugins", type: "plugins", configOnly: true, needsTrust: "runs code", group: "Plugins and config", help: "plugins to load: \"./path.ts\" or { \"path\": \"./path.ts\", \"sha256\": \"<hex>\" }" },
  { key: "maxToolCalls", type: "number", arg: "N", default: 10, group: "Request", help: "tool calls the model may make to gather information per request; then it must answer" },
  { key: "coder", type: "string", configOnly: true, group: "Plugins and config", help: "semver range of coder versions this project works with" },
  { key: "trust", type: "boolean", default: false, cliOnly: true, group: "Plugins and config", help: "trust this repository's config (plugins, lintCmd, testCmd, allowShell, yesAlways, verify: false, and plugins' keys that run code) for this run" },
  { key: "config", type: "string", short: "c", arg: "FILE", cliOnly: true, group: "Plugins and config", help: "use this config file instead of the usual lookup" },
  { key: "kind", type: "enum", values: ["format", "context", "model", "command", "tool"], arg: "KIND", cliOnly: true, noEnv: true, group: "Plugins and config", help: "with `coder plugin new NAME`: the kind of template to write" },
  { key: "version", type: "boolean", cliOnly: true, noEnv: true, group: "Output", help: "print the version and exit" },
  { key: "help", type: "boolean", short: "h", cliOnly: true, noEnv: true, group: "Output", help: "print this help and exit" },
] as const satisfies readonly OptionSpec[];

export type OptionKey = (typeof OPTIONS)[number]["key"];

// ─── The typed view of the table ─────────────────────────────────────────────

/** A config `models` entry: overrides merged over an adapter's model info. */
export type ModelOverride = Partial<Omit<ModelInfo, "name" | "prices" | "capabilities" | "prompting">> & {
  prompting?: Partial<NonNullable<ModelInfo["prompting"]>>;
  prices?: Partial<ModelInfo["prices"]>;
  capabilities?: Partial<ModelInfo["capabilities"]>;
};

/** A plugin named in a config file; `path` is relative to the folder of `source` (the config file). */
export interface PluginRef {
  path: string;
  sha256?: string;
  source: string;
}

type Spec = (typeof OPTIONS)[number];
type SpecFor<K> = Extract<Spec, { key: K }>;
/** The kernel's own kinds of value, then what every option declaration says (the plugin API's `OptionValue`). */
type ValueFor<S> = S extends { type: "models" }
  ? Record<string, ModelOverride>
  : S extends { type: "command-map" }
    ? string | Record<string, string>
    : S extends { type: "plugins" }
      ? PluginRef[]
      : OptionValue<S>;
type AlwaysSet<S> = S extends { default: unknown } ? true : S extends { type: "list" | "models" | "plugins" } ? true : false;

/** Every option of the kernel's table, typed; defaults applied (lists, `models` and `plugins` are never undefined). Plugins' options are read through `kit.options.get`. */
export type Options = {
  [K in OptionKey]: AlwaysSet<SpecFor<K>> extends true ? ValueFor<SpecFor<K>> : ValueFor<SpecFor<K>> | undefined;
};

/** The kernel's table as plain OptionSpecs. */
export const OPTION_SPECS: readonly OptionSpec[] = OPTIONS;

/**
 * The options of one running coder: the kernel's, then each plugin's in load order, with the
 * plugin that declared each (absent for the kernel's). Every consumer (argv, env, config files,
 * `--help`, the schema, `config show`, `/settings`, trust) walks this, never the kernel's list alone.
 */
export interface OptionTable {
  readonly specs: readonly OptionSpec[];
  readonly byKey: ReadonlyMap<string, OptionSpec>;
  /** Option key → the plugin that declared it. */
  readonly owner: ReadonlyMap<string, string>;
}

/** A plugin's declared options, as the table takes them (`group` defaults to the plugin's name). */
export function pluginSpecs(plugin: string, options: readonly PluginOption[]): OptionSpec[] {
  return options.map((o) => ({ ...o, group: o.group ?? `Plugin ${plugin}` }) as OptionSpec);
}

/** The kernel's table plus plugins' options; a key declared twice is an error naming both owners. */
export function optionTable(plugins: readonly { plugin: string; options: readonly PluginOption[] }[] = []): OptionTable {
  const specs: OptionSpec[] = [...OPTION_SPECS];
  const byKey = new Map(specs.map((o) => [o.key, o]));
  const owner = new Map<string, string>();
  const flags = new Map<string, string>();
  for (const spec of specs) for (const f of flagSpellings(spec)) flags.set(f, "the kernel");
  for (const { plugin, options } of plugins) {
    for (const spec of pluginSpecs(plugin, options)) {
      const clash = byKey.has(spec.key) ? spec.key : flagSpellings(spec).find((f) => flags.has(f));
      if (clash !== undefined) {
        const other = owner.get(spec.key) ?? flags.get(clash) ?? "the kernel";
        throw new OptionClash(plugin, `option "${clash}" is already declared by ${other === "the kernel" ? "the kernel" : `plugin ${other}`}; rename it`);
      }
      specs.push(spec);
      byKey.set(spec.key, spec);
      owner.set(spec.key, plugin);
      for (const f of flagSpellings(spec)) flags.set(f, plugin);
    }
  }
  return { specs, byKey, owner };
}

/** Two declarations of one option or flag (the loader reports it as the plugin's error). */
export class OptionClash extends Error {
  constructor(
    readonly plugin: string,
    message: string,
  ) {
    super(message);
  }
}

/** Every flag spelling of an option (without dashes): its name, aliases, `no-` forms and presets. */
function flagSpellings(spec: OptionSpec): string[] {
  if (spec.configOnly) return [];
  const names = [flagName(spec.key), ...(spec.aliases ?? []), ...(spec.presets ?? []).map((p) => p.flag)];
  return spec.type === "boolean" && spec.negatable ? [...names, ...names.map((n) => `no-${n}`)] : names;
}

/** The kernel's table alone. */
export const KERNEL_TABLE: OptionTable = optionTable();

/** `mapTokens` → `map-tokens`. */
export function flagName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `mapTokens` → `CODER_MAP_TOKENS`. */
export function envName(key: string): string {
  return `CODER_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/** Keys a config file may hold. */
export function configKeys(table: OptionTable): OptionSpec[] {
  return table.specs.filter((o) => !o.cliOnly);
}

/** The value an option has before any source sets it: its default, or an empty list / object. */
export function initialValue(spec: OptionSpec): unknown {
  if (spec.default !== undefined) return structuredClone(spec.default);
  if (spec.type === "list" || spec.type === "plugins") return [];
  if (spec.type === "models" || spec.type === "object") return {};
  return undefined;
}
