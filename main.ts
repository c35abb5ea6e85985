// Entry: parse argv, answer --version/--help at once, otherwise load settings,
// assemble the kernel (registry, kit) and run a subcommand or a chat mode.
// Everything heavier than the option table is imported dynamically, so the
// cheap paths stay cheap.
import { helpText, parseArgv } from "./core/cli.ts";
import { RuntimeFailure, exitCodeFor } from "./core/errors.ts";

declare const CODER_VERSION: string | undefined;

/** Baked in by scripts/build.ts; from source, read from package.json. */
function version(): string {
  if (typeof CODER_VERSION === "string") return CODER_VERSION;
  try {
    const fs = require("node:fs") as typeof import("node:fs");
    return (JSON.parse(fs.readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }).version + "-dev";
  } catch {
    return "0.0.0-dev";
  }
}

const SUBCOMMANDS = new Set(["plugins", "plugin", "config", "models", "map", "doctor"]);

export async function main(argv: string[]): Promise<number> {
  const args = parseArgv(argv);
  const v = version();
  if (args.values.version) {
    process.stdout.write(`coder ${v}\n`);
    return 0;
  }
  if (args.values.help) {
    process.stdout.write(`${helpText(v)}\n`);
    return 0;
  }
  const [first, ...rest] = args.positionals;
  const subcommand = first !== undefined && SUBCOMMANDS.has(first) ? first : undefined;
  const run = await import("./core/run.ts");
  return run.runMain({
    version: v,
    args,
    subcommand,
    rest: subcommand ? rest : args.positionals,
    builtins: async () => (await import("./builtins.ts")).BUILTINS,
  });
}

/** One line on stderr per failure, never a stack trace unless --verbose. */
export function reportFailure(error: unknown, verbose: boolean): number {
  const code = exitCodeFor(error);
  const typed = code !== 1 || error instanceof RuntimeFailure;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`coder: ${typed ? message : `internal error: ${message.split("\n")[0]}`}\n`);
  if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return code;
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  main(argv).then(
    (code) => process.exit(code),
    (error) => process.exit(reportFailure(error, argv.includes("--verbose") || process.env.CODER_VERBOSE === "1")),
  );
}
