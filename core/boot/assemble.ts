// The kernel assembled from loaded settings: the registry, the kit and every plugin
// (the built-ins main.ts hands in, then config plugins, then --plugin), as the App
// every front end runs.
import { homedir } from "node:os";
import { join } from "node:path";
import type { BuiltinPlugin } from "../plugins/loader.ts";
import type { App, Loaded } from "../kernel.ts";
import { displayPath } from "../config/config.ts";
import { fileScope, inSubtree } from "../edit/subtree.ts";
import { type BaseFiles, capReader, createKit } from "./kit.ts";
import { type PluginSource, loadPlugins, userSources } from "../plugins/loader.ts";
import type { Kit, Logger } from "../plugin.ts";
import { Registry, messageOf } from "../plugins/registry.ts";
import { settleOptions } from "./settle.ts";

/** Registry, kit and every plugin (built-ins first, then config plugins, then --plugin). */
export async function assembleApp(loaded: Loaded, builtins: () => Promise<BuiltinPlugin[]>): Promise<App> {
  const { settings, root, log } = loaded;
  const options = settings.options;
  const registry = new Registry({ modelOverrides: options.models, log });
  // Options are read from the settled settings: not before every plugin has declared its own.
  let settled = false;
  const readOption = (key: string): unknown => {
    if (!settled) throw new Error(`option "${key}" was read while plugins were loading; read options when they are used (in a provider, a command or a hook)`);
    if (!settings.table.byKey.has(key)) throw new Error(`option "${key}" is not declared by any plugin nor by coder (declare it in the plugin's \`options\`)`);
    return (settings.options as Record<string, unknown>)[key];
  };
  const ui: App["ui"] = { confirm: null };
  const kit = await createRealKit(loaded, registry, readOption, ui);
  const sources: PluginSource[] = (await builtins()).map((b) => ({ origin: b.origin, load: b.load }));
  sources.push(...userSources(options.plugins, options.plugin, loaded.cwd, (f) => displayPath(f, loaded.cwd)));
  await loadPlugins(registry, sources, kit, log);
  for (const plugin of registry.plugins.values()) {
    if (plugin.sha256) log.debug(`plugin ${plugin.name} from ${displayPath(plugin.origin, loaded.cwd)} sha256:${plugin.sha256}`);
  }
  await settleOptions(loaded, registry);
  settled = true;
  guardBackgroundErrors(registry, log);
  return {
    version: loaded.version,
    root,
    cwd: loaded.cwd,
    gitRoot: loaded.gitRoot,
    settings,
    registry,
    kit,
    env: loaded.env,
    trusted: loaded.trusted,
    interactive: loaded.interactive,
    ui,
  };
}

/**
 * An error thrown in a plugin's background work (a timer, an un-awaited
 * promise) reaches no `guard`; report it, naming the plugin when its file is in
 * the stack, instead of letting it end the session.
 */
function guardBackgroundErrors(registry: Registry, log: Logger): void {
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
async function createRealKit(loaded: Loaded, registry: Registry, readOption: (key: string) => unknown, ui: App["ui"]): Promise<Kit> {
  const { root, settings, log } = loaded;
  const options = settings.options;
  const deps = await kernelModules();
  // Encoding tables are cached per user: $XDG_CACHE_HOME/coder, default ~/.cache/coder.
  deps.setTokenCacheDir(join(loaded.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "coder"));
  const scope = fileScope(options, root, loaded.cwd);
  const useGit = options.git !== false && loaded.gitRoot !== null;
  const listAll = () => deps.listRepoFiles(root, { git: useGit, ignoreFile: scope.ignoreFile });
  const list = async () => inSubtree(await listAll(), scope);
  let encoding: string | undefined;
  return createKit({
    version: loaded.version,
    root,
    cwd: loaded.cwd,
    matcher: deps.matcher,
    reports: deps.reports,
    countTokens: deps.countTokens,
    encoding: () => {
      if (encoding === undefined && options.model) encoding = registry.modelInfo(options.model).encoding ?? "o200k_base";
      return encoding;
    },
    files: deps.files(root, list, options.maxFileSize * 1024 * 1024),
    ignoreFile: scope.ignoreFile,
    listAll,
    ...(useGit ? { gitIgnores: (rel: string) => deps.gitIgnores(root, rel) } : {}),
    registry,
    log,
    env: loaded.env,
    apiBase: options.apiBase,
    apiKey: options.apiKey,
    verifySsl: options.verifySsl,
    readOption,
    ui,
  });
}

interface KernelModules {
  matcher: Kit["matcher"];
  reports: Kit["reports"];
  countTokens: (text: string, encoding?: string) => number;
  setTokenCacheDir: (dir: string | null) => void;
  listRepoFiles: (root: string, opts?: { git?: boolean; ignoreFile?: string }) => Promise<string[]>;
  gitIgnores: (root: string, rel: string) => boolean;
  files: (root: string, list: () => Promise<string[]>, maxBytes: number) => BaseFiles;
}

/** The other kernel modules the kit is made of, imported once. */
let kernelImports: Promise<[typeof import("../chat/tokens.ts"), typeof import("../git/git.ts"), typeof import("../edit/matcher.ts"), typeof import("../edit/reports.ts"), typeof import("../edit/files.ts")]> | null = null;

function importKernel(): NonNullable<typeof kernelImports> {
  kernelImports ??= Promise.all([import("../chat/tokens.ts"), import("../git/git.ts"), import("../edit/matcher.ts"), import("../edit/reports.ts"), import("../edit/files.ts")]);
  return kernelImports;
}

/**
 * Imports what assembleApp will need, the kernel's modules and the built-in plugins' (each
 * module is evaluated once, whoever imports it first), while the caller waits on something
 * else (core/cli/dispatch.ts: the settings' git call). Failures are not reported here: the
 * same import fails again where it is awaited, and is reported there.
 */
export function preloadKernel(builtins: () => Promise<BuiltinPlugin[]>): void {
  importKernel().catch(() => {});
  void builtins().then((list) => {
    for (const b of list) b.load().catch(() => {});
  }, () => {});
}

/** The other kernel modules the kit is made of, loaded on demand. */
async function kernelModules(): Promise<KernelModules> {
  const [tokens, git, matcher, reports, files] = await importKernel();
  return {
    // One per kit: it learns the user's uncommitted changes while a reply is staged.
    matcher: new matcher.SharedMatcher(),
    reports: reports.reports,
    countTokens: tokens.countTokens,
    setTokenCacheDir: tokens.setTokenCacheDir,
    listRepoFiles: git.listRepoFiles,
    gitIgnores: git.gitIgnores,
    files: (root, list, maxBytes) => {
      const store = new files.FileStore(root, { maxBytes });
      return {
        list,
        read: async (path) => store.read(path),
        readBytes: capReader(root, maxBytes),
        absolute: (path) => join(store.root, store.toRelative(path, store.root)),
      };
    },
  };
}
