// Entry: parse argv, answer --version/--help at once, otherwise load settings,
// assemble the kernel (registry, kit, plugins) and run a subcommand or a chat
// mode (core/run.ts). Only the option table is imported statically: everything
// else, node:util included, is imported when a path needs it, so the cheap
// paths stay cheap.
import { RuntimeFailure, exitCodeFor } from "./core/errors.ts";
import { helpText } from "./core/help.ts";

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

const SUBCOMMANDS = new Set(["plugins", "plugin", "config", "models", "map", "doctor"]);

export async function main(argv: string[]): Promise<number> {
  const v = version();
  // `coder --version` / `coder --help` alone: no argv parser, nothing else loaded.
  if (argv.length === 1 && argv[0] === "--version") return print(`coder ${v}`);
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) return print(helpText(v));
  const { parseArgv } = await import("./core/cli.ts");
  const args = parseArgv(argv);
  if (args.values.version) return print(`coder ${v}`);
  if (args.values.help) return print(helpText(v));
  const [first, ...rest] = args.positionals;
  const subcommand = first !== undefined && SUBCOMMANDS.has(first) ? first : undefined;
  const { runMain } = await import("./core/run.ts");
  return runMain({
    version: v,
    args,
    subcommand,
    rest: subcommand ? rest : args.positionals,
    builtins: async () => (await import("./builtins.ts")).BUILTINS,
  });
}

function print(text: string): number {
  console.log(text);
  return 0;
}

/** One line on stderr per failure, never a stack trace unless --verbose. */
export function reportFailure(error: unknown, verbose: boolean): number {
  const code = exitCodeFor(error);
  const typed = code !== 1 || error instanceof RuntimeFailure;
  const message = error instanceof Error ? error.message : String(error);
  console.error(`coder: ${typed ? message : `internal error: ${message.split("\n")[0]}`}`);
  if (verbose && error instanceof Error && error.stack) console.error(error.stack);
  return code;
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  main(argv).then(
    (code) => {
      // The quick paths end on their own (process.exit costs start-up time); the others may hold stdin or timers.
      if (code === 0 && argv.length <= 1 && /^(--version|--help|-h)$/.test(argv[0] ?? "")) return;
      process.exit(code);
    },
    (error) => process.exit(reportFailure(error, argv.includes("--verbose") || process.env.CODER_VERBOSE === "1")),
  );
}
