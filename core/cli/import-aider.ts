// `coder config import-aider [FILE]`: Aider's `.aider.conf.yml` (and the `AIDER_*`
// entries of `.env`) as `.coder.json` settings, through the option table, with a line
// for every setting that does not map and why. Keys already in `.coder.json` are
// replaced in place (its comments and layout kept); the others are added.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { applyEdits, modify, parse } from "jsonc-parser";
import { parse as parseYaml } from "yaml";
import { coerce } from "../config/argv.ts";
import { displayPath, findGitRoot, PROJECT_FILE, parseDotenv } from "../config/config.ts";
import { describeTrustKeys } from "../config/trust.ts";
import { ConfigError, UsageError } from "../errors.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";
import { replaceNamedFile } from "../edit/state.ts";
import type { OptionTable } from "../config/options.ts";
import { messageOf } from "../plugins/registry.ts";

/** Aider settings with no coder setting, and why. */
const LEFT_OUT: Record<string, string> = {
  "openai-api-key": "API keys stay in the environment or .env, never in a project config",
  "anthropic-api-key": "API keys stay in the environment or .env, never in a project config",
  "api-key": "API keys stay in the environment or .env, never in a project config",
  "set-env": "environment variables stay in the environment or .env",
  "openai-api-base": "a project config may not set the endpoint: use --api-base, OPENAI_BASE_URL or the global config",
  "openai-api-type": "Azure's settings go in the environment (coder talks to OpenAI-compatible endpoints)",
  "openai-api-version": "Azure's settings go in the environment (coder talks to OpenAI-compatible endpoints)",
  "openai-api-deployment-id": "Azure's settings go in the environment (coder talks to OpenAI-compatible endpoints)",
  "openai-organization-id": "set OPENAI_ORGANIZATION in the environment",
  "env-file": "a project config may not choose where keys come from: use --env-file or the global config",
  "chat-history-file": "a project config may not set the paths coder writes",
  "input-history-file": "a project config may not set the paths coder writes",
  "llm-history-file": "coder has no raw model log; --verbose shows the prompts",
  "model-settings-file": "model settings go under `models` in .coder.json",
  "model-metadata-file": "context windows and prices go under `models` in .coder.json",
  "show-model-warnings": "coder warns once about a model missing from its table",
  "check-model-accepts-settings": "coder always leaves out a setting the model table says a model does not take",
  "max-chat-history-tokens": "coder sizes the history from the model's context window",
  "cache-prompts": "coder marks cache breakpoints whenever the model's provider takes them",
  "user-input-color": "coder's colours follow the terminal",
  "tool-output-color": "coder's colours follow the terminal",
  "tool-error-color": "coder's colours follow the terminal",
  "tool-warning-color": "coder's colours follow the terminal",
  "assistant-output-color": "coder's colours follow the terminal",
  "completion-menu-color": "coder's colours follow the terminal",
  "completion-menu-bg-color": "coder's colours follow the terminal",
  "completion-menu-current-color": "coder's colours follow the terminal",
  "completion-menu-current-bg-color": "coder's colours follow the terminal",
  gitignore: "coder adds .coder/ to .gitignore on first use (asking first)",
  "add-gitignore-files": "files git ignores are never sent unless you name them",
  "attribute-commit-message-author": "coder marks its commits with a trailer, the author or the committer (attribution)",
  "attribute-commit-message-committer": "coder marks its commits with a trailer, the author or the committer (attribution)",
  "skip-sanity-check-repo": "coder has no repository sanity check to skip",
  file: "files to edit are named on the command line or with /add",
  analytics: "coder collects no analytics",
  "analytics-log": "coder collects no analytics",
  "analytics-disable": "coder collects no analytics",
  "analytics-posthog-host": "coder collects no analytics",
  "analytics-posthog-project-api-key": "coder collects no analytics",
  "just-check-update": "coder does not check for updates",
  "check-update": "coder does not check for updates",
  "show-release-notes": "coder does not check for updates",
  "install-main-branch": "coder does not update itself",
  upgrade: "coder does not update itself",
  gui: "coder has no browser interface",
  "copy-paste": "coder does not watch the clipboard; /copy-context and /paste do it on request",
  "fancy-input": "the REPL's line editor is always on",
  "show-prompts": "--verbose shows the prompts of each request",
  exit: "coder starts only when there is something to do",
  navigator: "coder has no autonomous navigator mode: the harness chooses the context",
  "apply-clipboard-edits": "save the reply to a file and use --apply FILE",
  "disable-playwright": "coder fetches pages without a browser",
  "shell-completions": "coder does not print shell completion scripts",
  "message-file": "a one-shot request is given on the command line",
  message: "a one-shot request is given on the command line",
  apply: "--apply is given on the command line",
  lint: "--lint is given on the command line",
  test: "--test is given on the command line",
  commit: "--commit is given on the command line",
};

/** Aider's names for coder's settings, where they differ. */
const RENAMED: Record<string, string> = {
  "chat-mode": "editFormat",
  "git-commit-verify": "verify",
  aiderignore: "ignoreFile",
  alias: "aliases",
  "list-models": "listModels",
};

export interface ImportResult {
  /** coder key → value. */
  settings: Record<string, unknown>;
  /** Aider key → coder key, for the report. */
  mapped: [string, string][];
  /** Aider key → why it was not mapped. */
  skipped: [string, string][];
}

const camel = (kebab: string) => kebab.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** `lint-cmd` entries ("python: flake8", or a plain command): one command, or one per language. */
function lintCommands(value: unknown): string | Record<string, string> {
  const entries = (Array.isArray(value) ? value : [value]).map(String);
  const map: Record<string, string> = {};
  for (const entry of entries) {
    const m = /^([A-Za-z][\w+#-]*):\s+(\S.*)$/.exec(entry.trim());
    if (m) map[(m[1] as string).toLowerCase()] = (m[2] as string).trim();
    else map["*"] = entry.trim();
  }
  return Object.keys(map).length === 1 && map["*"] !== undefined ? map["*"] : map;
}

/** Aider's three attribution switches as coder's one `attribution`. */
function attribution(flags: Record<string, unknown>): string | undefined {
  const set = (k: string) => (k in flags ? flags[k] === true || flags[k] === "true" : undefined);
  const trailer = set("attribute-co-authored-by");
  const author = set("attribute-author");
  const committer = set("attribute-committer");
  if (trailer === undefined && author === undefined && committer === undefined) return undefined;
  if (trailer) return "trailer";
  if (author !== false) return "author";
  if (committer !== false) return "committer";
  return "none";
}

/** Convert Aider's settings (kebab-case keys, YAML or .env values). */
export function convertAiderSettings(aider: Record<string, unknown>, table: OptionTable): ImportResult {
  const result: ImportResult = { settings: {}, mapped: [], skipped: [] };
  const attributionValue = attribution(aider);
  if (attributionValue !== undefined) {
    result.settings.attribution = attributionValue;
    for (const k of ["attribute-co-authored-by", "attribute-author", "attribute-committer"]) if (k in aider) result.mapped.push([k, "attribution"]);
  }
  for (const [aiderKey, value] of Object.entries(aider)) {
    if (aiderKey.startsWith("attribute-") && aiderKey !== "attribute-commit-message-author" && aiderKey !== "attribute-commit-message-committer") continue;
    if (value === null || value === undefined) continue;
    if (LEFT_OUT[aiderKey]) {
      result.skipped.push([aiderKey, LEFT_OUT[aiderKey]]);
      continue;
    }
    const key = RENAMED[aiderKey] ?? camel(aiderKey);
    const spec = table.byKey.get(key);
    // A flag that stands for other settings (`architect: true` is `editFormat: architect`): those are written.
    if (spec?.implies) {
      if (value === true || value === "true") {
        Object.assign(result.settings, spec.implies);
        for (const implied of Object.keys(spec.implies)) result.mapped.push([aiderKey, implied]);
      }
      continue;
    }
    if (!spec) {
      result.skipped.push([aiderKey, "coder has no such setting"]);
      continue;
    }
    if (spec.cliOnly || spec.notInProject) {
      result.skipped.push([aiderKey, spec.notInProject ? "a project config may not set it" : "it is given on the command line"]);
      continue;
    }
    try {
      let converted: unknown;
      if (key === "lintCmd") converted = lintCommands(value);
      else if (spec.type === "list") converted = (Array.isArray(value) ? value : [value]).map(String);
      else converted = coerce(spec, String(value), aiderKey, ConfigError);
      if (key === "testCmd" && Array.isArray(value)) converted = value.map(String).join(" && ");
      result.settings[key] = converted;
      result.mapped.push([aiderKey, key]);
    } catch (error) {
      result.skipped.push([aiderKey, messageOf(error)]);
    }
  }
  return result;
}

/** Aider's settings from `.env`: `AIDER_MAP_TOKENS=2048` → `map-tokens: "2048"`. */
export function aiderEnvSettings(dotenvText: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parseDotenv(dotenvText))) {
    if (name.startsWith("AIDER_")) out[name.slice(6).toLowerCase().replaceAll("_", "-")] = value;
  }
  return out;
}

/** `coder config import-aider [FILE]`: write the settings into the project's .coder.json and report. */
export function importAider(file: string | undefined, cwd: string, table: OptionTable, home = homedir()): number {
  const root = findGitRoot(cwd) ?? cwd;
  const candidates = file ? [resolve(cwd, file)] : [join(root, ".aider.conf.yml"), join(cwd, ".aider.conf.yml"), join(home, ".aider.conf.yml")];
  const source = candidates.find((f) => existsSync(f));
  if (file && !source) throw new UsageError(`cannot read ${file}: no such file`);
  let fromYaml: Record<string, unknown> = {};
  if (source) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(source, "utf8"));
    } catch (error) {
      throw new ConfigError(`${displayPath(source, cwd)} is not valid YAML: ${messageOf(error).split("\n")[0]}`);
    }
    if (parsed !== null && (typeof parsed !== "object" || Array.isArray(parsed))) throw new ConfigError(`${displayPath(source, cwd)} should hold settings as "key: value" lines`);
    fromYaml = (parsed ?? {}) as Record<string, unknown>;
  }
  const envFile = join(root, ".env");
  const envRead = readCappedText(envFile, { maxBytes: SMALL_FILE_BYTES, name: ".env" });
  if (envRead.problem) throw new UsageError(`${envRead.problem}; AIDER_* settings are not read from it`);
  const fromEnv = envRead.text === null ? {} : aiderEnvSettings(envRead.text);
  if (!source && !Object.keys(fromEnv).length) {
    throw new UsageError(`no Aider settings found: no .aider.conf.yml in ${displayPath(root, cwd) || "."} (or the current folder, or ${home}), and no AIDER_* entries in .env; name the file: coder config import-aider FILE`);
  }
  // As in Aider, the environment wins over the config file.
  const result = convertAiderSettings({ ...fromYaml, ...fromEnv }, table);
  const target = join(root, PROJECT_FILE);
  writeSettings(target, result.settings);
  const lines = [`wrote ${Object.keys(result.settings).length} setting${Object.keys(result.settings).length === 1 ? "" : "s"} to ${displayPath(target, cwd)} from ${[source && displayPath(source, cwd), Object.keys(fromEnv).length ? ".env (AIDER_*)" : ""].filter(Boolean).join(" and ")}:`];
  for (const [from, to] of result.mapped) lines.push(`  ${from} → ${to}: ${JSON.stringify(result.settings[to])}`);
  if (result.skipped.length) {
    lines.push("not mapped:");
    for (const [key, why] of result.skipped) lines.push(`  ${key}: ${why}`);
  }
  const trust = Object.entries(result.settings)
    .filter(([key, value]) => {
      const spec = table.byKey.get(key);
      return spec?.needsTrust && !(spec.safeValue !== undefined && value === spec.safeValue);
    })
    .map(([key]) => key);
  if (trust.length) lines.push(`This repository's config sets ${describeTrustKeys(trust, table)}: coder asks whether to trust this repository before using ${trust.length === 1 ? "it" : "them"}.`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Set each key in `.coder.json`, keeping what is there (comments, other keys, layout). */
function writeSettings(target: string, settings: Record<string, unknown>): void {
  let text = existsSync(target) ? readFileSync(target, "utf8") : "{}\n";
  if (typeof parse(text) !== "object" || parse(text) === null) throw new ConfigError(`${target} does not hold a JSON object; fix it before importing into it`);
  for (const [key, value] of Object.entries(settings)) {
    text = applyEdits(text, modify(text, [key], value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } }));
  }
  replaceNamedFile(target, text.endsWith("\n") ? text : `${text}\n`);
}
