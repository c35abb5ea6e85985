// Entry: parse argv, answer --version/--help at once, otherwise load settings,
// assemble the kernel (registry, kit, plugins) and run a subcommand or a chat
// mode (core/cli/dispatch.ts). Only the option table is imported statically: everything
// else, node:util included, is imported when a path needs it, so the cheap
// paths stay cheap.
import { RuntimeFailure, exitCodeFor } from "./core/errors.ts";
import { helpText } from "./core/cli/help.ts";

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

const SUBCOMMANDS = new Set(["plugins", "plugin", "config", "models", "map", "prompts", "doctor", "acp", "mcp"]);

export async function main(argv: string[]): Promise<number> {
  const v = version();
  // `coder --version` / `coder --help` alone: no argv parser, nothing else loaded.
  if (argv.length === 1 && argv[0] === "--version") return print(`coder ${v}`);
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) return print(helpText(v));
  const { parseArgv } = await import("./core/config/argv.ts");
  const args = parseArgv(argv);
  if (args.values.version) return print(`coder ${v}`);
  if (args.values.help) return print(helpText(v));
  const [first, ...rest] = args.positionals;
  const subcommand = first !== undefined && SUBCOMMANDS.has(first) ? first : undefined;
  const input = { version: v, args, subcommand, rest: subcommand ? rest : args.positionals, builtins: async () => (await import("./builtins.ts")).BUILTINS };
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
export function reportFailure(error: unknown, options: { verbose: boolean; json: boolean }): number {
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

if (import.meta.main) {
  const argv = process.argv.slice(2);
  main(argv).then(
    (code) => {
      // The quick paths end on their own (process.exit costs start-up time); the others may hold stdin or timers.
      if (code === 0 && argv.length <= 1 && /^(--version|--help|-h)$/.test(argv[0] ?? "")) return;
      process.exit(code);
    },
    (error) => {
      const flag = (name: string, env: string) => argv.includes(name) || /^(1|true|yes|on)$/i.test(process.env[env] ?? "");
      process.exit(reportFailure(error, { verbose: flag("--verbose", "CODER_VERBOSE"), json: flag("--json", "CODER_JSON") }));
    },
  );
}
