// After argv: settings (core/cli/settings.ts), then the kernel (core/boot/assemble.ts),
// then a subcommand or a chat mode. main.ts hands in the built-in plugin list so
// core never imports formats/ or plugins/.
import { type RunInput, loadSettings } from "./settings.ts";
import { assembleApp, preloadKernel } from "../boot/assemble.ts";
import type { App } from "../kernel.ts";
import { configShowJson, renderConfigShow } from "../config/config.ts";
import { UsageError } from "../errors.ts";

export async function runMain(input: RunInput): Promise<number> {
  const { subcommand, rest } = input;
  const withPlugins = ((input.args.values.plugin as string[] | undefined)?.length ?? 0) > 0;
  // --help and the schema cover what --plugin files declare: those load first.
  if (input.args.values.help) {
    const app = await assembleApp(await loadSettings(input), input.builtins);
    const { helpText, subcommandHelpText } = await import("./help.ts");
    // `coder eval --help`: that command's own help and its plugin's options.
    const named = app.settings.positionals[0] === undefined ? undefined : app.registry.subcommands.get(app.settings.positionals[0]);
    if (named) {
      const own = app.settings.table.specs.filter((spec) => app.settings.table.owner.get(spec.key) === named.plugin);
      process.stdout.write(`${subcommandHelpText(named.item, own)}\n`);
      return 0;
    }
    process.stdout.write(`${helpText(input.version, app.settings.table, [...app.registry.subcommands.values()].map((e) => e.item))}\n`);
    return 0;
  }
  if (subcommand === "config" && rest[0] === "schema") {
    const { jsonSchema } = await import("../config/config-file.ts");
    const table = withPlugins ? (await assembleApp(await loadSettings(input), input.builtins)).settings.table : input.table;
    process.stdout.write(`${JSON.stringify(jsonSchema(table), null, 2)}\n`);
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
    return importAider(rest[1], process.cwd(), input.table);
  }
  // The ACP agent loads settings per session, for the folder each session names.
  const loading = loadSettings(input);
  // While the settings wait for git (the check of .coder), the kernel's and the built-ins' modules
  // are evaluated, on the paths that assemble the kernel (all but these three).
  if (subcommand !== "config" && subcommand !== "doctor" && !(subcommand === "plugins" && rest[0] === "pin")) preloadKernel(input.builtins);
  const loaded = await loading;
  if (subcommand === "config") {
    if (rest[0] === "forget") {
      const { forgetAnswers } = await import("../gate/gate.ts");
      const n = forgetAnswers(loaded.root, rest.slice(1).join(" ") || undefined);
      process.stdout.write(`forgot ${n} remembered answer${n === 1 ? "" : "s"}\n`);
      return 0;
    }
    if (rest[0] !== "show" && rest[0] !== undefined) throw new UsageError(`unknown command "coder config ${rest[0]}" (use \`coder config show\`, \`coder config forget [TEXT]\`, \`coder config schema\` or \`coder config import-aider [FILE]\`)`);
    // A plugin's options are shown like the kernel's, with where each value came from: plugins other than the built-ins load first.
    const userPlugins = withPlugins || loaded.settings.options.plugins.length > 0 || loaded.layers.some((l) => l.pending) || input.args.unknown.length > 0;
    if (userPlugins) await assembleApp(loaded, input.builtins);
    const { rememberedAnswers, describeRemembered } = await import("../gate/gate.ts");
    if (loaded.settings.options.json) {
      const trust = { keys: loaded.trustKeys, trusted: loaded.trusted };
      const remembered = rememberedAnswers(loaded.root).map(({ key, answer, question, time }) => ({ key, answer, question, time }));
      process.stdout.write(`${JSON.stringify({ ...configShowJson(loaded.settings, loaded.layers), trust, remembered })}\n`);
      return 0;
    }
    process.stdout.write(`${renderConfigShow(loaded.settings, loaded.cwd)}\n`);
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
  // Plugins start once, before the first command or request; they are disposed on the way out, whatever happens.
  await app.registry.hooks.setup();
  try {
    return await runAssembled(app, subcommand, rest, input.args.raw);
  } finally {
    await app.registry.hooks.dispose();
  }
}

/** A subcommand or a chat mode over the assembled kernel. */
async function runAssembled(app: App, subcommand: string | undefined, rest: string[], argv: readonly string[]): Promise<number> {
  if (subcommand === "init") {
    if (rest.length) throw new UsageError(`coder init takes no arguments, got ${rest.join(" ")}`);
    const { runInit } = await import("./init.ts");
    return runInit(app);
  }
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
    case "prompts": {
      const { printPrompts } = await import("./prompts.ts");
      return printPrompts(app, rest);
    }
  }
  // A plugin's subcommand: named first on the command line, or run by its flag (`--show-repo-map`).
  const [first, ...args] = app.settings.positionals;
  const named = first === undefined ? undefined : app.registry.subcommands.get(first);
  if (named) return (await import("./subcommands.ts")).runSubcommand(app, named, args, argv);
  if (app.settings.options.listModels !== undefined) {
    const { listModels } = await import("./subcommands.ts");
    return listModels(app, app.settings.options.listModels);
  }
  const options = app.settings.options as Record<string, unknown>;
  const flagged = [...app.registry.subcommands.values()].find((e) => e.item.flag !== undefined && options[e.item.flag] === true);
  if (flagged) return (await import("./subcommands.ts")).runSubcommand(app, flagged, app.settings.positionals, argv);
  return runChat(app);
}

/** The conversation engine (core/cli/chat-modes.ts) runs every chat mode. */
async function runChat(app: App): Promise<number> {
  return (await import("./chat-modes.ts")).runCoder(app);
}
