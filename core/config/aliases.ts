// Model aliases (`--alias NAME:MODEL`, config `aliases`): a short name the user types
// for a model, expanded wherever a model name enters (flags, config, /model, /weak-model).
import { ConfigError } from "../errors.ts";

/** The alias table; an entry that is not NAME:MODEL is a ConfigError naming it. */
export function aliasTable(entries: readonly string[]): Map<string, string> {
  const table = new Map<string, string>();
  for (const entry of entries) {
    const colon = entry.indexOf(":");
    const name = entry.slice(0, colon).trim();
    const model = entry.slice(colon + 1).trim();
    if (colon <= 0 || !name || !model) throw new ConfigError(`alias "${entry}" should be NAME:MODEL, e.g. fast:openai/gpt-4.1-mini`);
    table.set(name, model);
  }
  return table;
}

/** `name` itself, or the model its alias names. */
export function expandAlias(name: string, entries: readonly string[]): string {
  return aliasTable(entries).get(name.trim()) ?? name;
}

/** The model settings with their aliases expanded (the main, weak and editor models). */
export function expandModelAliases<T extends { aliases: string[]; model?: string; weakModel?: string; editorModel?: string }>(options: T): void {
  const table = aliasTable(options.aliases);
  if (!table.size) return;
  for (const key of ["model", "weakModel", "editorModel"] as const) {
    const value = options[key];
    if (value !== undefined) options[key] = table.get(value.trim()) ?? value;
  }
}
