// Entry: parse argv, answer --version/--help at once, otherwise load settings,
// assemble the kernel (registry, kit, plugins) and run a subcommand or a chat
// mode (core/cli/dispatch.ts). Nothing is imported statically: `--version` evaluates
// this file's chunk alone; the help text and the option table with what the built-ins
// declare to the command line come next, and everything else, node:util included, is
// imported when a path needs it, so the cheap paths stay cheap.

declare const CODER_VERSION: string | undefined;

/** Baked in by scripts/build.ts; from source, read from package.json. */
export function version(): string {
  if (typeof CODER_VERSION === "string") return CODER_VERSION;
  try {
    const fs = require("node:fs") as typeof import("node:fs");
    return `${(JSON.parse(fs.readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }).version}-dev`;
  } catch {
    return "0.0.0-dev";
  }
}

export async function main(argv: string[]): Promise<number> {
  const v = version();
  // `coder --version` / `coder --help` alone: no argv parser, nothing else loaded.
  if (argv.length === 1 && argv[0] === "--version") return print(`coder ${v}`);
  // What the built-ins declare to the command line (their small options.ts files), not their code.
  const [{ BUILTINS, builtinSubcommands, builtinTable }, { helpText, subcommandHelpText }, { KERNEL_SUBCOMMANDS }] = await Promise.all([import("./builtins.ts"), import("./core/cli/help.ts"), import("./core/kernel.ts")]);
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) return print(helpText(v, builtinTable(), builtinSubcommands()));
  const { parseArgv } = await import("./core/config/argv.ts");
  const table = builtinTable();
  // A flag nobody knows yet may be a --plugin file's or a config plugin's: parsed again once they load.
  const args = parseArgv(argv, table, { lenient: true });
  const plugins = (args.values.plugin as string[] | undefined)?.length ?? 0;
  if (args.values.version) return print(`coder ${v}`);
  if (args.values.help && plugins === 0) {
    if (args.unknown.length) parseArgv(argv, table);
    // `coder eval --help`: a built-in's command, with the options its plugin declares.
    const owner = BUILTINS.find((b) => b.subcommands?.some((c) => c.name === args.positionals[0]));
    const command = owner?.subcommands?.find((c) => c.name === args.positionals[0]);
    if (owner && command) return print(subcommandHelpText(command, table.specs.filter((spec) => table.owner.get(spec.key) === owner.name)));
    return print(helpText(v, table, builtinSubcommands()));
  }
  const [first, ...rest] = args.positionals;
  const subcommand = first !== undefined && KERNEL_SUBCOMMANDS.includes(first) ? first : undefined;
  const input = { version: v, args, table, subcommand, rest: subcommand ? rest : args.positionals, builtins: async () => BUILTINS };
  // Two front ends: the editor's agent protocol (`coder acp`), and the command line (everything else).
  if (subcommand === "acp") return (await import("./core/acp/index.ts")).runAcp(input);
  const { runMain } = await import("./core/cli/dispatch.ts");
  return runMain(input);
}

function print(text: string): number {
  console.log(text);
  return 0;
}

/**
 * One line on stderr per failure, never a stack trace unless --verbose. With
 * --json, stdout also gets the `error` and `end` events, so a script reading
 * the event stream sees why the run ended even when it failed before starting.
 */
export async function reportFailure(error: unknown, options: { verbose: boolean; json: boolean }): Promise<number> {
  const { RuntimeFailure, exitCodeFor } = await import("./core/errors.ts");
  const code = exitCodeFor(error);
  const typed = code !== 1 || error instanceof RuntimeFailure;
  const raw = error instanceof Error ? error.message : String(error);
  const message = typed ? raw : `internal error: ${raw.split("\n")[0]}`;
  console.error(`coder: ${message}`);
  if (options.verbose && error instanceof Error && error.stack) console.error(error.stack);
  if (options.json) {
    const time = new Date().toISOString();
    const totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
    console.log(JSON.stringify({ type: "error", message, code, time }));
    console.log(JSON.stringify({ type: "end", exitCode: code, totals, time }));
  }
  return code;
}

/**
 * CODER_TRACE_MODULES=FILE: at exit, write the compiled binary's chunks that were evaluated, one
 * per line (each chunk records itself, see scripts/build.ts; dist/coder.modules.json names the
 * source modules in each). How the start-up's module graph is measured and tested.
 */
function traceModules(file: string): void {
  process.on("exit", () => {
    const chunks = (globalThis as { __coderChunks?: string[] }).__coderChunks ?? [];
    require("node:fs").writeFileSync(file, chunks.map((url) => url.slice(url.lastIndexOf("/") + 1)).join("\n") + "\n");
  });
}

if (import.meta.main) {
  if (process.env.CODER_TRACE_MODULES) traceModules(process.env.CODER_TRACE_MODULES);
  const argv = process.argv.slice(2);
  main(argv).then(
    (code) => {
      // The quick paths end on their own (process.exit costs start-up time); the others may hold stdin or timers.
      if (code === 0 && argv.length <= 1 && /^(--version|--help|-h)$/.test(argv[0] ?? "")) return;
      process.exit(code);
    },
    async (error) => {
      const flag = (name: string, env: string) => argv.includes(name) || /^(1|true|yes|on)$/i.test(process.env[env] ?? "");
      process.exit(await reportFailure(error, { verbose: flag("--verbose", "CODER_VERBOSE"), json: flag("--json", "CODER_JSON") }));
    },
  );
}
