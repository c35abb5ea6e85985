// Guided set-up (`coder init`, and a first run with no key for the chosen model): pick a
// provider from the model adapters' provider tables, paste a key (masked, checked at once
// against the provider's models endpoint, saved to the global config folder with mode
// 0600, never in the repository), pick a default model from what the endpoint lists, and
// optionally write the project's .coder.json. Loaded (with @clack/prompts) only here.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { App } from "../kernel.ts";
import type { ProviderSetup } from "../plugin.ts";
import { globalConfigDir, KEYS_FILE, PROJECT_FILE } from "../config/config.ts";
import { setupProviders } from "../chat/create.ts";
import { replaceRecord } from "../edit/state.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";
import { UsageError } from "../errors.ts";

/** `coder init`: set-up on a terminal; anywhere else one line on what to set, exit 2. */
export async function runInit(app: App): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError("coder init asks its questions on a terminal; without one, set the provider's key variable (e.g. OPENAI_API_KEY) and pass --model");
  }
  const done = await guidedSetup(app, "Set up coder: a provider, its key and a default model.", true);
  return done ? 0 : 1;
}

interface Checked {
  ok: boolean;
  models: string[];
  problem?: string;
}

/** GET {base}/models with the key: the models the endpoint lists, or why it refused. */
async function checkEndpoint(base: string, key: string | null): Promise<Checked> {
  const url = `${base.replace(/\/+$/, "")}/models`;
  try {
    const response = await fetch(url, { headers: key ? { Authorization: `Bearer ${key}`, "x-api-key": key } : {}, signal: AbortSignal.timeout(15_000) });
    if (response.status === 401 || response.status === 403) return { ok: false, models: [], problem: `the endpoint refused the key (HTTP ${response.status})` };
    if (!response.ok) return { ok: false, models: [], problem: `${url} answered HTTP ${response.status}` };
    const body = (await response.json()) as { data?: { id?: unknown }[]; models?: { name?: unknown; id?: unknown }[] };
    const list = body.data ?? body.models ?? [];
    const models = list.map((m) => String((m as { id?: unknown }).id ?? (m as { name?: unknown }).name ?? "")).filter(Boolean);
    return { ok: true, models: [...new Set(models)].sort() };
  } catch (error) {
    return { ok: false, models: [], problem: `could not reach ${url}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** What a project's manifest says its lint and test commands are, to offer for .coder.json. */
export function guessProjectCommands(root: string): { lintCmd?: string; testCmd?: string; from?: string } {
  const has = (f: string) => existsSync(join(root, f));
  // Through the capped reader: a manifest the repository made a link to /dev/zero, or a pipe, is read as none.
  const manifest = (f: string) => readCappedText(join(root, f), { maxBytes: SMALL_FILE_BYTES, name: f }).text ?? "";
  if (has("package.json")) {
    try {
      const scripts = (JSON.parse(manifest("package.json")) as { scripts?: Record<string, string> }).scripts ?? {};
      const runner = has("bun.lock") || has("bun.lockb") ? "bun run" : has("pnpm-lock.yaml") ? "pnpm" : has("yarn.lock") ? "yarn" : "npm run";
      return { from: "package.json", ...(scripts.lint ? { lintCmd: `${runner} lint` } : {}), ...(scripts.test ? { testCmd: runner === "npm run" ? "npm test" : `${runner} test` } : {}) };
    } catch {
      return { from: "package.json" };
    }
  }
  if (has("pyproject.toml")) {
    const text = manifest("pyproject.toml");
    return { from: "pyproject.toml", ...(/\[tool\.ruff/.test(text) ? { lintCmd: "ruff check" } : {}), testCmd: "pytest" };
  }
  if (has("go.mod")) return { from: "go.mod", lintCmd: "go vet", testCmd: "go test ./..." };
  if (has("Cargo.toml")) return { from: "Cargo.toml", lintCmd: "cargo clippy", testCmd: "cargo test" };
  return {};
}

/** Save `values` into the global keys file (kept: its other lines), mode 0600. */
function saveKeys(app: App, values: Record<string, string>): string {
  const file = join(globalConfigDir(app.env), KEYS_FILE);
  const kept = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.trim() && !Object.keys(values).some((k) => l.startsWith(`${k}=`))) : [];
  replaceRecord(file, `${[...kept, ...Object.entries(values).map(([k, v]) => `${k}=${v}`)].join("\n")}\n`, 0o600);
  return file;
}

/** Set `model` in the global config.json (its other keys kept). */
function saveDefaultModel(app: App, model: string): string {
  const file = join(globalConfigDir(app.env), "config.json");
  let config: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    } catch {
      throw new UsageError(`${file} is not valid JSON; fix it, or remove it and run coder init again`);
    }
  }
  replaceRecord(file, `${JSON.stringify({ ...config, model }, null, 2)}\n`);
  return file;
}

/**
 * The questions, on the terminal. On success the key and model are saved and applied to
 * `app` (its env and --model), so the run goes on with them; false when the user gave up.
 */
export async function guidedSetup(app: App, reason: string, offerProject: boolean): Promise<boolean> {
  const p = await import("@clack/prompts");
  const gaveUp = (value: unknown): value is symbol => {
    if (!p.isCancel(value)) return false;
    p.cancel("Set-up stopped; nothing was saved.");
    return true;
  };
  p.intro("coder set-up");
  p.log.info(reason);
  const providers = setupProviders(app);
  const choice = await p.select({
    message: "Which provider?",
    options: providers.map((pr) => ({
      value: pr.name,
      label: pr.baseUrl ? pr.name : `${pr.name} (a custom base URL: llama.cpp, vLLM, a gateway…)`,
      ...(pr.baseUrl ? { hint: pr.baseUrl } : {}),
    })),
  });
  if (gaveUp(choice)) return false;
  const provider = providers.find((pr) => pr.name === choice) as ProviderSetup;
  const saved: Record<string, string> = {};
  // --api-base or the provider's base variable (OPENAI_BASE_URL, ...) point elsewhere: the key is checked there.
  const configured = app.settings.options.apiBase ?? provider.baseEnv?.map((k) => app.env[k]?.trim()).find(Boolean);
  let base = configured ?? provider.baseUrl ?? "";
  // Local servers and custom endpoints: where is it?
  if (!configured && (!provider.baseUrl || provider.keyOptional)) {
    const typed = await p.text({
      message: "Base URL of the server",
      placeholder: provider.baseUrl ?? "http://127.0.0.1:8080/v1",
      ...(provider.baseUrl ? { defaultValue: provider.baseUrl } : {}),
      validate: (v) => (!v && provider.baseUrl) || /^https?:\/\/\S+$/.test(v ?? "") ? undefined : "a URL starting with http:// or https://",
    });
    if (gaveUp(typed)) return false;
    base = typed || (provider.baseUrl as string);
    if (base !== provider.baseUrl && provider.baseEnv?.[0]) saved[provider.baseEnv[0]] = base;
  }
  let key: string | null = null;
  let checked: Checked = { ok: false, models: [] };
  for (;;) {
    if (!provider.keyOptional) {
      const typed = await p.password({ message: `API key (${provider.keyEnv[0]})`, mask: "•", validate: (v) => (v?.trim() ? undefined : "paste the key (Esc or Ctrl-C stops)") });
      if (gaveUp(typed)) return false;
      key = typed.trim();
    }
    const spin = p.spinner();
    spin.start(`Checking against ${base.replace(/\/+$/, "")}/models`);
    checked = await checkEndpoint(base, key);
    spin.stop(checked.ok ? `The endpoint answered: ${checked.models.length} model${checked.models.length === 1 ? "" : "s"}` : `Not usable: ${checked.problem}`);
    if (checked.ok) break;
    const again = await p.confirm({ message: provider.keyOptional ? "Try again?" : "Paste another key?", initialValue: true });
    if (gaveUp(again) || !again) {
      p.cancel("Set-up stopped; nothing was saved.");
      return false;
    }
  }
  if (key && provider.keyEnv[0]) saved[provider.keyEnv[0]] = key;
  let model: string;
  if (checked.models.length) {
    const picked = await p.select({ message: "Default model", options: checked.models.map((id) => ({ value: `${provider.name}/${id}`, label: id })), maxItems: 10 });
    if (gaveUp(picked)) return false;
    model = picked;
  } else {
    const typed = await p.text({ message: "Default model (the endpoint listed none)", placeholder: "model id", validate: (v) => (v?.trim() ? undefined : "a model id") });
    if (gaveUp(typed)) return false;
    model = `${provider.name}/${typed.trim()}`;
  }
  if (Object.keys(saved).length) p.log.success(`Saved ${Object.keys(saved).join(", ")} to ${saveKeys(app, saved)} (mode 600; never in the repository)`);
  p.log.success(`Default model ${model} in ${saveDefaultModel(app, model)}`);
  Object.assign(app.env, saved);
  app.settings.options.model = model;
  if (offerProject) await offerProjectConfig(app, p, model);
  p.outro(`Ready: ${model}`);
  return true;
}

type Clack = typeof import("@clack/prompts");

/** Optionally, the project's .coder.json: model, edit format, lint and test commands, each confirmed. */
async function offerProjectConfig(app: App, p: Clack, model: string): Promise<void> {
  const file = join(app.root, PROJECT_FILE);
  const write = await p.confirm({ message: existsSync(file) ? `${PROJECT_FILE} exists: replace it for this project?` : `Write a ${PROJECT_FILE} for this project (committed with it)?`, initialValue: !existsSync(file) });
  if (p.isCancel(write) || !write) return;
  const guess = guessProjectCommands(app.root);
  if (guess.from) p.log.info(`Commands guessed from ${guess.from}; change or clear them.`);
  const format = await p.select({
    message: "Edit format",
    options: [{ value: "", label: "the model's default" }, ...[...app.registry.formats.keys()].map((f) => ({ value: f, label: f }))],
  });
  if (p.isCancel(format)) return;
  const lint = await p.text({ message: "Lint command (empty: none)", initialValue: guess.lintCmd ?? "" });
  if (p.isCancel(lint)) return;
  const test = await p.text({ message: "Test command (empty: none)", initialValue: guess.testCmd ?? "" });
  if (p.isCancel(test)) return;
  const config = { model, ...(format ? { editFormat: format } : {}), ...(lint?.trim() ? { lintCmd: lint.trim() } : {}), ...(test?.trim() ? { testCmd: test.trim() } : {}) };
  replaceRecord(file, `${JSON.stringify(config, null, 2)}\n`);
  p.log.success(`Wrote ${PROJECT_FILE}: ${JSON.stringify(config)}`);
}
