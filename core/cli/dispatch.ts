// After argv: settings (core/cli/settings.ts), then the kernel (core/boot/assemble.ts),
// then a subcommand or a chat mode. main.ts hands in the built-in plugin list so
// core never imports formats/ or plugins/.
import { type RunInput, loadSettings } from "./settings.ts";
import { assembleApp } from "../boot/assemble.ts";
import type { App } from "../kernel.ts";
import { configShowJson, renderConfigShow } from "../config/config.ts";
import { UsageError } from "../errors.ts";

export async function runMain(input: RunInput): Promise<number> {
  const { subcommand, rest } = input;
  if (subcommand === "config" && rest[0] === "schema") {
    const { jsonSchema } = await import("../config/config-file.ts");
    process.stdout.write(`${JSON.stringify(jsonSchema(), null, 2)}\n`);
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
    return importAider(rest[1], process.cwd());
  }
  // The ACP agent loads settings per session, for the folder each session names.
  const loaded = await loadSettings(input);
  if (subcommand === "config") {
    if (rest[0] === "forget") {
      const { forgetAnswers } = await import("../gate/gate.ts");
      const n = forgetAnswers(loaded.root, rest.slice(1).join(" ") || undefined);
      process.stdout.write(`forgot ${n} remembered answer${n === 1 ? "" : "s"}\n`);
      return 0;
    }
    if (rest[0] !== "show" && rest[0] !== undefined) throw new UsageError(`unknown command "coder config ${rest[0]}" (use \`coder config show\`, \`coder config forget [TEXT]\`, \`coder config schema\` or \`coder config import-aider [FILE]\`)`);
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
    case "map": {
      const { printRepoMap } = await import("./subcommands.ts");
      return printRepoMap(app, rest);
    }
  }
  if (subcommand === "mcp") {
    if (rest.length !== 1 || rest[0] !== "list") throw new UsageError(`unknown command "coder mcp ${rest.join(" ")}" (use \`coder mcp list\`)`);
    // The MCP plugin's /mcp command lists the servers, as in the REPL.
    app.settings.options.message = "/mcp list";
    return runChat({ ...app, interactive: false });
  }
  if (app.settings.options.listModels !== undefined) {
    const { listModels } = await import("./subcommands.ts");
    return listModels(app, app.settings.options.listModels);
  }
  if (app.settings.options.showRepoMap) {
    const { printRepoMap } = await import("./subcommands.ts");
    return printRepoMap(app, app.settings.positionals);
  }
  return runChat(app);
}

/** The conversation engine (core/cli/chat-modes.ts) runs every chat mode. */
async function runChat(app: App): Promise<number> {
  return (await import("./chat-modes.ts")).runCoder(app);
}
