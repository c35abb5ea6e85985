// The small subcommands over an assembled kernel: `coder plugins`, `coder
// plugins pin`, `coder models [FILTER]`, and any plugin's `coder NAME`. With
// --json, `plugins` and `models` print one JSON document on one line instead
// of a table.
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { applyEdits, findNodeAtLocation, modify, parseTree, type Node } from "jsonc-parser";
import type { App, Loaded } from "../kernel.ts";
import { PROJECT_FILE, displayPath } from "../config/config.ts";
import { UsageError } from "../errors.ts";
import { replaceNamedFile } from "../edit/state.ts";
import { flagValues } from "../config/argv.ts";
import { displayOrigin, hashPluginFile } from "../plugins/loader.ts";
import type { ModelInfo, Subcommand, SubcommandContext, TurnContext } from "../plugin.ts";
import { ITEM_KINDS, type ItemKind, type Registered, defaultModelInfo, guard } from "../plugins/registry.ts";
import { reasoningColumn } from "../chat/reasoning.ts";
import { shareContextWindow } from "../chat/budget.ts";

const HEADINGS: Record<ItemKind, string> = {
  formats: "Edit formats",
  context: "Context providers",
  models: "Model adapters",
  commands: "Slash commands",
  tools: "Tool providers",
  subcommands: "Subcommands",
};

function table(rows: string[][], indent = "  "): string[] {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd());
}

/** The `kind` of an item in `coder plugins --json` (the words `coder plugin new --kind` uses). */
const JSON_KIND: Record<ItemKind, string> = { formats: "format", context: "context", models: "model", commands: "command", tools: "tool", subcommands: "subcommand" };

/**
 * `coder plugins --json`: `{ items, plugins, failures }`. Origins are "built-in:…"
 * or the plugin file's absolute path; absent values are null.
 */
export function pluginsJson(app: App) {
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const items = ITEM_KINDS.flatMap((kind) =>
    [...app.registry.table(kind).values()].map((e) => {
      const item = e.item as { name: string; summary?: unknown; stability?: unknown };
      return { kind: JSON_KIND[kind], name: item.name, plugin: e.plugin, origin: e.origin, summary: text(item.summary), stability: text(item.stability) };
    }),
  );
  const plugins = [...app.registry.plugins.values()].map((p) => ({ name: p.name, origin: p.origin, sha256: p.sha256 ?? null, override: p.override }));
  const failures = app.registry.failures.map((f) => ({ plugin: f.plugin ?? null, origin: f.origin, message: f.message }));
  return { items, plugins, failures };
}

/** `coder plugins`: every registered item, its plugin and origin; `--verbose` adds each plugin's sha256. */
export function listPlugins(app: App): number {
  if (app.settings.options.json) {
    process.stdout.write(`${JSON.stringify(pluginsJson(app))}\n`);
    return 0;
  }
  const out: string[] = [];
  for (const kind of ITEM_KINDS) {
    const entries = [...app.registry.table(kind).values()];
    out.push(`${HEADINGS[kind]} (${entries.length}):`);
    if (!entries.length) out.push("  (none)");
    const prefix = kind === "commands" ? "/" : "";
    const summary = (item: { name: string; summary?: unknown; stability?: unknown }) =>
      typeof item.summary === "string" ? item.summary : typeof item.stability === "string" ? `(${item.stability})` : "";
    out.push(...table(entries.map((e) => [`${prefix}${e.item.name}`, e.plugin, displayOrigin(e.origin, app.cwd), summary(e.item)])));
    out.push("");
  }
  out.push(`Plugins (${app.registry.plugins.size}):`);
  const verbose = app.settings.options.verbose === true;
  out.push(...table([...app.registry.plugins.values()].map((p) => [p.name, displayOrigin(p.origin, app.cwd), ...(verbose && p.sha256 ? [`sha256:${p.sha256}`] : [])])));
  if (app.registry.failures.length) {
    out.push("", `Failed to load (${app.registry.failures.length}):`);
    for (const f of app.registry.failures) out.push(`  ${f.plugin ?? "?"}  ${displayOrigin(f.origin, app.cwd)}  ${f.message.split("\n")[0]}`);
  }
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}

function price(n: number | undefined): string {
  return n === undefined ? "-" : `$${n}`;
}

/** One model of `coder models --json`: every ModelInfo field, absent ones as null. */
export function modelJson(m: ModelInfo) {
  return {
    name: m.name,
    contextWindow: m.contextWindow,
    maxOutput: m.maxOutput,
    editFormat: m.editFormat,
    weakModel: m.weakModel ?? null,
    editorModel: m.editorModel ?? null,
    editorFormat: m.editorFormat ?? null,
    encoding: m.encoding ?? null,
    prices: { input: m.prices.input, output: m.prices.output, cacheRead: m.prices.cacheRead ?? null, cacheWrite: m.prices.cacheWrite ?? null },
    capabilities: { ...m.capabilities, images: m.capabilities.images ?? false, pdf: m.capabilities.pdf ?? false },
    imageRules: m.imageRules ?? null,
    prompting: m.prompting ?? null,
  };
}

/** What a model takes besides text, for the `coder models` table. */
const mediaColumn = (m: ModelInfo) => (m.capabilities.pdf ? (m.capabilities.images ? "images+pdf" : "pdf") : m.capabilities.images ? "images" : "-");

/** `coder models [FILTER]`: the model table from the adapters (and config `models`). */
export function listModels(app: App, filter?: string): number {
  const needle = filter?.toLowerCase();
  const models = app.registry.listModels().filter((m) => !needle || m.name.toLowerCase().includes(needle));
  if (app.settings.options.json) {
    process.stdout.write(`${JSON.stringify({ models: models.map(modelJson) })}\n`);
    return 0;
  }
  if (!models.length) {
    process.stdout.write(filter ? `no model matches "${filter}"\n` : "no models known (no model adapter lists any)\n");
    return 0;
  }
  const rows = [["model", "context", "output", "format", "input $/M", "output $/M", "media", "reasoning"]];
  for (const m of models) rows.push([m.name, String(m.contextWindow), String(m.maxOutput), m.editFormat, price(m.prices.input), price(m.prices.output), mediaColumn(m), reasoningColumn(m)]);
  process.stdout.write(`${table(rows, "").join("\n")}\n`);
  return 0;
}

/** Repository-relative paths for FILE arguments; outside the repository is a UsageError. */
export function repoPaths(root: string, cwd: string, files: readonly string[]): string[] {
  return files.map((file) => {
    const rel = relative(root, resolve(cwd, file));
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new UsageError(`${file} is outside the repository (${root})`);
    return rel.split(sep).join("/");
  });
}

/**
 * A plugin's `coder NAME [ARG ...]`: its exit code, its text or one JSON document on stdout.
 * A throw is reported naming the plugin (exit 2 for `cli.usage`).
 */
export async function runSubcommand(app: App, entry: Registered<Subcommand>, args: readonly string[], argv: readonly string[] = []): Promise<number> {
  const options = app.settings.options as unknown as Readonly<Record<string, unknown>>;
  let usage: UsageError | null = null;
  const cli: SubcommandContext = {
    options,
    json: options.json === true,
    print: (text) => process.stdout.write(`${text.replace(/\n*$/, "")}\n`),
    printJson: (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
    warn: (text) => app.kit.log.warn(text),
    flagValues: (key) => flagValues(argv, app.settings.table, key),
    usage: (message) => {
      usage = new UsageError(message);
      throw usage;
    },
    context: async (provider, files) => {
      const entries = [...app.registry.context.values()];
      const at = entries.findIndex((e) => e.item.name === provider);
      const entry = entries[at];
      if (!entry) throw new Error(`no context provider named ${provider}`);
      const turn: TurnContext = {
        root: app.root,
        chatFiles: repoPaths(app.root, app.cwd, files),
        readOnlyFiles: repoPaths(app.root, app.cwd, app.settings.options.read),
        message: "",
        mentionedFiles: [],
        mentionedIdents: [],
        model: app.settings.options.model ? app.registry.modelInfo(app.settings.options.model) : { ...defaultModelInfo("default", app.registry.fallbackFormat()), unknown: false },
        options,
        interactive: false,
        signal: new AbortController().signal,
      };
      // Outside a request the providers share the window as if the prompt held nothing else.
      const budget = shareContextWindow(entries.map((e) => e.item), turn.model, options)[at]!;
      if (budget.tokens <= 0) return { block: null, budget };
      return { block: (await guard(entry, "provide", () => entry.item.provide(turn, budget))) ?? null, budget };
    },
  };
  try {
    const code = await guard(entry, `subcommand ${entry.item.name}`, () => entry.item.run(args, cli));
    return typeof code === "number" && Number.isInteger(code) && code >= 0 ? code : 0;
  } catch (error) {
    if (usage) throw usage;
    throw error;
  }
}

function indentOf(text: string): { insertSpaces: boolean; tabSize: number } {
  const m = /\n([ \t]+)"/.exec(text);
  if (m?.[1]?.startsWith("\t")) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: m?.[1]?.length ?? 2 };
}

/**
 * `coder plugins pin`: rewrite each `plugins` entry of the project config as
 * `{ "path", "sha256" }` with the file's current hash, keeping comments and
 * formatting. The only time coder edits a config file, on explicit request.
 */
export async function pinPlugins(loaded: Loaded): Promise<number> {
  const explicit = loaded.layers.find((l) => l.kind === "explicit");
  const file = explicit?.file ?? join(loaded.root, PROJECT_FILE);
  // The file as loadSettings read it: every config file that exists is one of the layers.
  const layer = loaded.layers.find((l) => l.file === file);
  if (!layer) throw new UsageError(`${displayPath(file, process.cwd())} does not exist: nothing to pin`);
  let text = layer.text;
  const tree = parseTree(text, [], { allowTrailingComma: true });
  const list = tree ? findNodeAtLocation(tree, ["plugins"]) : undefined;
  if (!list || list.type !== "array" || !list.children?.length) {
    process.stdout.write(`${displayPath(file, process.cwd())} lists no plugins: nothing to pin\n`);
    return 0;
  }
  const formatting = { ...indentOf(text), eol: text.includes("\r\n") ? "\r\n" : "\n" };
  const entries = list.children.map((node: Node) => (node.type === "string" ? (node.value as string) : (findNodeAtLocation(node, ["path"])?.value as string | undefined)));
  const { projectConfigHash, rememberedTrust, rememberTrust } = await import("../config/trust.ts");
  const before = rememberedTrust(loaded.configDir, loaded.root, projectConfigHash(loaded.layers, loaded.root, undefined, loaded.settings.table));
  const lines: string[] = [];
  entries.forEach((path, i) => {
    if (typeof path !== "string") throw new UsageError(`${displayPath(file, process.cwd())}: plugins[${i}] has no "path"`);
    const sha256 = hashPluginFile(resolve(dirname(file), path), displayPath(file, process.cwd()));
    text = applyEdits(text, modify(text, ["plugins", i], { path, sha256 }, { formattingOptions: formatting }));
    lines.push(`  ${path}  sha256:${sha256}`);
  });
  replaceNamedFile(file, text);
  if (before === "trusted") {
    const layers = loaded.layers.map((l) => (l.file === file ? { ...l, text } : l));
    rememberTrust(loaded.configDir, loaded.root, projectConfigHash(layers, loaded.root, undefined, loaded.settings.table), true);
  }
  process.stdout.write(`pinned ${entries.length} plugin${entries.length === 1 ? "" : "s"} in ${displayPath(file, process.cwd())}:\n${lines.join("\n")}\n`);
  return 0;
}
