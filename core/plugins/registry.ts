// The typed registry: every edit format, context provider, model adapter and
// slash command, with the plugin and file it came from. Built-ins and user
// plugins register through the same `register` door; calls into plugin code go
// through `guard` so a throwing plugin is reported by name, never a crash.
import { PluginError, UsageError } from "../errors.ts";
import { guard, messageOf } from "./guard.ts";
import { Hooks } from "./hooks.ts";
import type { ModelOverride } from "../config/options.ts";
import type { ContextProvider, EditFormat, Logger, ModelAdapter, ModelInfo, PluginObject, PluginOption, SlashCommand, Subcommand, ToolProvider } from "../plugin.ts";
import { KERNEL_SUBCOMMANDS } from "../kernel.ts";

/** A registered item and where it came from. */
export interface Registered<T> {
  item: T;
  /** The plugin's name. */
  plugin: string;
  /** "built-in:formats/editblock" or the plugin file's absolute path. */
  origin: string;
}

/** A plugin that registered successfully. */
export interface LoadedPlugin {
  name: string;
  origin: string;
  /** sha256 of the plugin file (user plugins only). */
  sha256?: string;
  override: boolean;
  /** The options it declares (apiVersion 2), in the option table after the kernel's. */
  options: readonly PluginOption[];
}

/** A plugin that threw while loading: reported, skipped, the session goes on. */
export interface PluginFailure {
  origin: string;
  plugin?: string;
  message: string;
}

export type ItemKind = "formats" | "context" | "models" | "commands" | "tools" | "subcommands";

export const ITEM_KINDS: readonly ItemKind[] = ["formats", "context", "models", "commands", "tools", "subcommands"];

const KIND_NOUN: Record<ItemKind, string> = {
  formats: "edit format",
  context: "context provider",
  models: "model adapter",
  commands: "slash command",
  tools: "tool provider",
  subcommands: "subcommand",
};

/** Model info for a model no adapter knows: conservative defaults, and the registry's fallback format (`Registry.fallbackFormat`). */
export function defaultModelInfo(name: string, editFormat: string): ModelInfo {
  return {
    name,
    contextWindow: 128_000,
    maxOutput: 8_192,
    prices: { input: 0, output: 0 },
    editFormat,
    capabilities: { tools: true, systemPrompt: true, temperature: true, reasoningEffort: false, prefill: false, cache: "none" },
    unknown: true,
  };
}

function mergeModelInfo(base: ModelInfo, over: ModelOverride | undefined): ModelInfo {
  if (!over) return base;
  return {
    ...base,
    ...over,
    name: base.name,
    prices: { ...base.prices, ...over.prices },
    capabilities: { ...base.capabilities, ...over.capabilities },
    ...(base.prompting || over.prompting ? { prompting: { ...base.prompting, ...over.prompting } } : {}),
    unknown: false,
  } as ModelInfo;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface RegistryOptions {
  /** Config `models`: merged over adapters' info, keyed by model name. */
  modelOverrides?: Record<string, ModelOverride>;
  log?: Logger;
}

export class Registry {
  readonly formats = new Map<string, Registered<EditFormat>>();
  readonly context = new Map<string, Registered<ContextProvider>>();
  readonly models = new Map<string, Registered<ModelAdapter>>();
  readonly commands = new Map<string, Registered<SlashCommand>>();
  readonly tools = new Map<string, Registered<ToolProvider>>();
  readonly subcommands = new Map<string, Registered<Subcommand>>();
  readonly plugins = new Map<string, LoadedPlugin>();
  /** Every plugin's lifecycle and event hooks, run by kind (core/plugins/hooks.ts). */
  readonly hooks: Hooks;
  readonly failures: PluginFailure[] = [];
  private readonly modelOverrides: Record<string, ModelOverride>;
  private readonly log: Logger;
  private readonly warnedModels = new Set<string>();

  constructor(options: RegistryOptions = {}) {
    this.modelOverrides = options.modelOverrides ?? {};
    this.log = options.log ?? silent;
    this.hooks = new Hooks(this.log);
  }

  /**
   * Register every item of a validated plugin object, all or nothing. A name
   * already taken (plugin or item) is a PluginError naming both origins, unless
   * the newcomer sets `override: true`.
   */
  register(plugin: PluginObject, origin: string, sha256?: string): void {
    const override = plugin.override === true;
    const clash = (what: string, name: string, other: { plugin: string; origin: string }) =>
      new PluginError(
        plugin.name,
        origin,
        `${what} "${name}" is already registered by plugin ${other.plugin} (${other.origin}); rename it or set \`override: true\` to replace it`,
      );
    const previous = this.plugins.get(plugin.name);
    if (previous && !override) throw clash("plugin name", plugin.name, { plugin: previous.name, origin: previous.origin });
    for (const kind of ITEM_KINDS) {
      const seen = new Set<string>();
      for (const item of plugin[kind] ?? []) {
        if (seen.has(item.name)) throw new PluginError(plugin.name, origin, `${KIND_NOUN[kind]} "${item.name}" is listed twice`);
        seen.add(item.name);
        const taken = this.table(kind).get(item.name);
        if (taken && !override) throw clash(KIND_NOUN[kind], item.name, taken);
        if (kind === "subcommands" && KERNEL_SUBCOMMANDS.includes(item.name)) throw new PluginError(plugin.name, origin, `subcommand "${item.name}" is one of coder's own (${KERNEL_SUBCOMMANDS.join(", ")}); rename it`);
      }
    }
    this.plugins.set(plugin.name, { name: plugin.name, origin, sha256, override, options: plugin.options ?? [] });
    this.hooks.add(plugin, origin);
    for (const kind of ITEM_KINDS) {
      const table = this.table(kind) as Map<string, Registered<unknown>>;
      for (const item of plugin[kind] ?? []) table.set(item.name, { item, plugin: plugin.name, origin });
    }
  }

  /** A registered table by kind (for listing). */
  table(kind: ItemKind): Map<string, Registered<{ name: string }>> {
    return this[kind] as Map<string, Registered<{ name: string }>>;
  }

  /** The edit format named `name`; a UsageError naming the known ones if there is none. */
  format(name: string): EditFormat {
    return this.formatEntry(name).item;
  }

  /**
   * The format a model gets when its table names none registered: the first format declaring
   * `fallback`, else the first that edits files itself, else the first registered ("" with none).
   */
  fallbackFormat(): string {
    const formats = [...this.formats.values()].map((e) => e.item);
    const chosen = formats.find((f) => f.fallback === true) ?? formats.find((f) => (f.mode ?? "edit") === "edit") ?? formats[0];
    return chosen?.name ?? "";
  }

  formatEntry(name: string): Registered<EditFormat> {
    const found = this.formats.get(name);
    if (!found) {
      const known = [...this.formats.keys()].sort().join(", ") || "none registered";
      throw new UsageError(`unknown edit format "${name}" (known: ${known})`);
    }
    return found;
  }

  /** The adapter serving `model`; a UsageError when none does (unknown provider). */
  adapterFor(model: string): ModelAdapter {
    return this.adapterEntry(model).item;
  }

  adapterEntry(model: string): Registered<ModelAdapter> {
    for (const entry of this.models.values()) {
      if (this.reported(entry, `matches("${model}")`, () => entry.item.matches(model), false)) return entry;
    }
    const known = [...this.models.keys()].join(", ") || "none registered";
    throw new UsageError(`no model adapter serves "${model}" (unknown provider? adapters: ${known}; see \`coder models\`)`);
  }

  /**
   * What is known of `model`: the adapter's info with config `models` overrides
   * merged over it. A model nobody knows gets defaults and one warning.
   */
  modelInfo(model: string): ModelInfo {
    const override = this.modelOverrides[model];
    let info: ModelInfo | undefined;
    for (const entry of this.models.values()) {
      if (!this.reported(entry, `matches("${model}")`, () => entry.item.matches(model), false)) continue;
      info = this.reported(entry, `info("${model}")`, () => entry.item.info(model), undefined);
      break;
    }
    if (info) return mergeModelInfo(info, override);
    if (override) return mergeModelInfo(defaultModelInfo(model, this.fallbackFormat()), override);
    if (!this.warnedModels.has(model)) {
      this.warnedModels.add(model);
      this.log.warn(`model "${model}" is not in the model table: using defaults (128k context, no prices); add it under "models" in the config to fix`);
    }
    return defaultModelInfo(model, this.fallbackFormat());
  }

  /** Every model the adapters list, with config overrides merged (and config-only models). */
  listModels(): ModelInfo[] {
    const byName = new Map<string, ModelInfo>();
    for (const entry of this.models.values()) {
      const listed = this.reported(entry, "list()", () => entry.item.list?.() ?? [], [] as ModelInfo[]);
      for (const info of listed) if (!byName.has(info.name)) byName.set(info.name, mergeModelInfo(info, this.modelOverrides[info.name]));
    }
    for (const [name, over] of Object.entries(this.modelOverrides)) {
      if (!byName.has(name)) byName.set(name, mergeModelInfo(defaultModelInfo(name, this.fallbackFormat()), over));
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** A synchronous call into a plugin through the guard; a throw is reported and `fallback` returned. */
  private reported<T>(owner: { plugin: string; origin: string }, what: string, fn: () => T, fallback: T): T {
    try {
      return guard(owner, what, fn);
    } catch (error) {
      this.log.error(messageOf(error));
      return fallback;
    }
  }
}

export { guard, messageOf };
