// Model names → provider, wire id and table entry. `--model` takes "provider/model" or a
// bare name; bare names are looked up in the table (ids and aliases), then guessed from
// well-known prefixes (gpt-, claude-, gemini-...). Dated snapshots and ollama tags fall
// back to their base entry; OpenRouter's "vendor/model" ids and an openai-compatible
// gateway's usual ids borrow the vendor's entry.
import type { ModelInfo } from "../../core/plugin.ts";
import { capabilitiesOf, IMAGE_RULES, MODELS, OPENROUTER_VENDORS, type ModelEntry } from "./models.ts";
import { providerNamed, splitModelName, type Provider } from "./providers.ts";

export interface ResolvedModel {
  provider: Provider;
  /** The model id sent to the endpoint. */
  id: string;
  /** "provider/id". */
  fullName: string;
  /** The table entry describing it, when known. */
  entry?: ModelEntry;
}

const BY_NAME = new Map<string, ModelEntry>();
const BY_BARE = new Map<string, ModelEntry>();
for (const entry of MODELS) {
  BY_NAME.set(entry.name, entry);
  const id = entry.name.slice(entry.name.indexOf("/") + 1);
  if (!BY_BARE.has(id)) BY_BARE.set(id, entry);
  for (const alias of entry.aliases ?? []) {
    if (!BY_BARE.has(alias)) BY_BARE.set(alias, entry);
  }
}

/** Bare-name prefixes that identify a provider even when the table lacks the model. */
const BARE_PREFIXES: readonly [RegExp, string][] = [
  [/^(gpt-|o\d(-|$)|chatgpt-|codex-)/, "openai"],
  [/^claude-/, "anthropic"],
  [/^gemini-/, "gemini"],
  [/^deepseek-/, "deepseek"],
  [/^grok-/, "xai"],
  [/^(mistral-|codestral-|devstral-|magistral-)/, "mistral"],
];

/** A dated snapshot's suffix: "-20250929", "-2025-04-14". */
const DATED_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** Entry for "provider/id", trying dated snapshots ("-20250929", "-2025-04-14") and tags (":32b") as their base. */
function entryFor(provider: string, id: string): ModelEntry | undefined {
  const candidates = [id, id.replace(DATED_SUFFIX, ""), id.replace(/:[^/:]+$/, ""), id.replace(/:latest$/, "")];
  for (const c of candidates) {
    const found = BY_NAME.get(`${provider}/${c}`);
    if (found) return found;
    const bare = BY_BARE.get(c);
    if (bare && bare.name.startsWith(provider + "/")) return bare;
  }
  if (provider === "openai-compatible") {
    // A gateway serving a known model under its usual id ("openai-compatible/gpt-4.1").
    const bare = BY_BARE.get(id) ?? BY_BARE.get(id.replace(DATED_SUFFIX, ""));
    if (bare) return bare;
  }
  if (provider === "openrouter") {
    // "openrouter/anthropic/claude-sonnet-4.5" → the anthropic entry for claude-sonnet-4-5.
    const slash = id.indexOf("/");
    const vendor = OPENROUTER_VENDORS[id.slice(0, slash)];
    if (slash > 0 && vendor) return entryFor(vendor, id.slice(slash + 1).replace(/(\d)\.(\d)/g, "$1-$2")) ?? entryFor(vendor, id.slice(slash + 1));
  }
  return undefined;
}

/** Resolve a `--model` value; undefined when no provider can be told (the adapter then does not match). */
export function resolveModel(model: string): ResolvedModel | undefined {
  const name = model.trim();
  const split = splitModelName(name);
  if (split) {
    const entry = entryFor(split.provider.name, split.id);
    return { provider: split.provider, id: split.id, fullName: `${split.provider.name}/${split.id}`, entry };
  }
  if (!name || name.includes("/")) return undefined;
  const entry = BY_BARE.get(name);
  if (entry) {
    const provider = providerNamed(entry.name.slice(0, entry.name.indexOf("/")))!;
    const id = entry.name.slice(provider.name.length + 1);
    // An alias ("sonnet") is sent as the entry's id; a dated id ("claude-sonnet-4-5-20250929") as typed.
    const wireId = entry.aliases?.includes(name) && !/\d{8}$/.test(name) ? id : name;
    return { provider, id: wireId, fullName: `${provider.name}/${wireId}`, entry };
  }
  for (const [pattern, providerName] of BARE_PREFIXES) {
    if (pattern.test(name)) {
      const provider = providerNamed(providerName)!;
      return { provider, id: name, fullName: `${providerName}/${name}`, entry: entryFor(providerName, name) };
    }
  }
  return undefined;
}

/** The ModelInfo of a table entry, named as the user will see it. */
export function infoOf(entry: ModelEntry, name: string = entry.name): ModelInfo {
  const [input, output, cacheRead, cacheWrite] = entry.price;
  const info: ModelInfo = {
    name,
    contextWindow: entry.context,
    maxOutput: entry.maxOutput,
    prices: { input, output, ...(cacheRead !== undefined ? { cacheRead } : {}), ...(cacheWrite !== undefined ? { cacheWrite } : {}) },
    editFormat: entry.format,
    capabilities: capabilitiesOf(entry),
  };
  if (entry.weak) info.weakModel = entry.weak;
  if (entry.editor) info.editorModel = entry.editor;
  if (entry.editorFormat) info.editorFormat = entry.editorFormat;
  if (entry.encoding) info.encoding = entry.encoding;
  if (entry.prompting) info.prompting = { ...entry.prompting };
  const rules = IMAGE_RULES[entry.name.slice(0, entry.name.indexOf("/"))];
  if (rules && info.capabilities.images) info.imageRules = rules;
  // Through OpenRouter, Anthropic models take cache_control breakpoints.
  if (name.startsWith("openrouter/anthropic/")) info.capabilities = { ...info.capabilities, cache: "breakpoints", prefill: true };
  return info;
}

/** What is known of a resolved model; undefined when the table lacks it. */
export function infoForResolved(resolved: ResolvedModel): ModelInfo | undefined {
  if (!resolved.entry) return undefined;
  const info = infoOf(resolved.entry, resolved.fullName);
  const entryProvider = resolved.entry.name.slice(0, resolved.entry.name.indexOf("/"));
  // OpenRouter reads PDFs for every model (natively where the model can, else as extracted text).
  if (resolved.provider.name === "openrouter") info.capabilities = { ...info.capabilities, pdf: true };
  if (resolved.provider.name === "openrouter" && entryProvider !== "openrouter") {
    // A vendor's entry reached through OpenRouter: its weak/editor models must go through OpenRouter too.
    const viaOpenRouter = (model: string | undefined) => (model ? toOpenRouter(model) : undefined);
    const weak = viaOpenRouter(info.weakModel);
    const editor = viaOpenRouter(info.editorModel);
    if (weak) info.weakModel = weak;
    else delete info.weakModel;
    if (editor) info.editorModel = editor;
    else delete info.editorModel;
  }
  if (resolved.provider.name === "openai-compatible") {
    // Borrowed from another provider's entry: its weak/editor models live elsewhere, and
    // the gateway's caching is unknown.
    delete info.weakModel;
    delete info.editorModel;
    info.capabilities = { ...info.capabilities, cache: info.capabilities.cache === "auto" ? "auto" : "none" };
  }
  return info;
}

/** "anthropic/claude-haiku-4-5" → "openrouter/anthropic/claude-haiku-4.5" (OpenRouter's slugs). */
function toOpenRouter(model: string): string | undefined {
  const slash = model.indexOf("/");
  const provider = model.slice(0, slash);
  const vendor = Object.entries(OPENROUTER_VENDORS).find(([, ours]) => ours === provider)?.[0];
  if (!vendor) return undefined;
  let id = model.slice(slash + 1);
  if (provider === "anthropic") id = id.replace(/-(\d+)-(\d+)$/, "-$1.$2");
  return `openrouter/${vendor}/${id}`;
}

export function listModels(): ModelInfo[] {
  return MODELS.map((entry) => infoOf(entry));
}
