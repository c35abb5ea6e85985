// Settings settled once every plugin has declared its options: the option table grows by
// theirs, the command line is parsed again with every flag known (an unknown one is now the
// usage error), config keys that waited for a plugin are checked, trust is applied to
// plugins' keys that need it, and their values merged with provenance like the kernel's.
import type { Loaded } from "../kernel.ts";
import { parseArgv, readEnvOptions } from "../config/argv.ts";
import { keysNeedingTrust, mergeSettings } from "../config/config.ts";
import { OptionClash, type OptionTable, optionTable } from "../config/options.ts";
import { rememberedTrust, projectConfigHash } from "../config/trust.ts";
import { PluginError } from "../errors.ts";
import type { Registry } from "../plugins/registry.ts";

/** The option table of the kernel and every registered plugin; a clash is the later plugin's error. */
export function tableOf(registry: Registry): OptionTable {
  const plugins = [...registry.plugins.values()];
  try {
    return optionTable(plugins.map((p) => ({ plugin: p.name, options: p.options })));
  } catch (error) {
    if (!(error instanceof OptionClash)) throw error;
    throw new PluginError(error.plugin, registry.plugins.get(error.plugin)?.origin ?? "?", error.message);
  }
}

/** Grow `loaded.settings` by the registered plugins' options (see the file's opening). */
export async function settleOptions(loaded: Loaded, registry: Registry): Promise<void> {
  const { settings, layers } = loaded;
  const table = tableOf(registry);
  // The table trust was decided with (before plugins declared theirs): the same hash, the same answer.
  const decidedWith = settings.table;
  const fresh = table.specs.filter((spec) => !settings.table.byKey.has(spec.key));
  const pending = layers.some((layer) => layer.pending);
  settings.table = table;
  if (!fresh.length && !pending && !loaded.args.unknown.length) return;
  const argv = loaded.args.unknown.length ? parseArgv(loaded.args.raw, table) : loaded.args;
  if (argv !== loaded.args) settings.positionals = loaded.subcommand ? argv.positionals.slice(1) : argv.positionals;
  if (pending) (await import("../config/config-file.ts")).settlePending(layers, table, loaded.cwd);
  if (!fresh.length) return;
  const freshKeys = new Set(fresh.map((spec) => spec.key));
  const needTrust = keysNeedingTrust(layers, table).filter((key) => freshKeys.has(key));
  // The trust answer covers the project's config text, so a decision made for it covers these keys too.
  const decided = loaded.trusted && loaded.trustKeys.length > 0;
  const trusted = decided || settings.options.trust === true || (needTrust.length > 0 && rememberedTrust(loaded.configDir, loaded.root, projectConfigHash(layers, loaded.root, undefined, decidedWith)) === "trusted");
  const drop = new Set(trusted ? [] : needTrust);
  if (drop.size) loaded.log.warn(`ignoring ${[...drop].join(", ")} from this repository's config (not trusted; run with --trust to use ${drop.size === 1 ? "it" : "them"})`);
  const merged = mergeSettings({ specs: fresh, table, layers, env: readEnvOptions(loaded.env, fresh), argv, positionals: settings.positionals, drop, cwd: loaded.cwd });
  Object.assign(settings.options, merged.options);
  Object.assign(settings.provenance, merged.provenance);
  settings.fromProject.push(...merged.fromProject);
}
