// `coder eval`'s options and its command line, declared apart from the plugin so builtins.ts
// can hand them to the kernel without loading the runner (`--help` stays cheap). Every one is
// command-line only: an eval is asked for, never configured by a repository.
import type { PluginOption, Subcommand } from "../../core/plugin.ts";

const GROUP = "Eval (coder eval)";
const cli = { cliOnly: true, noEnv: true, group: GROUP } as const;

export const EVAL_COMMITS = { key: "commits", type: "string", arg: "RANGE", ...cli, help: "history tasks from these commits (a git range, e.g. v1.0..HEAD) instead of the default selection" } as const satisfies PluginOption;
export const EVAL_SAMPLE = { key: "sample", type: "number", arg: "N", ...cli, help: "how many tasks to sample (default: 20 commits, or every exercise)" } as const satisfies PluginOption;
export const EVAL_SEED = { key: "seed", type: "number", arg: "S", default: 1, ...cli, help: "seed of the sample: the same seed picks the same tasks" } as const satisfies PluginOption;
export const EVAL_NO_FILES = { key: "noFiles", type: "boolean", ...cli, help: "history tasks start with an empty chat: the repo map must find the files" } as const satisfies PluginOption;
export const EVAL_EXERCISES = { key: "exercises", type: "string", arg: "DIR", ...cli, help: "exercise tasks from DIR (Aider's polyglot layout) instead of history" } as const satisfies PluginOption;
export const EVAL_JOBS = { key: "jobs", type: "number", arg: "N", default: 1, ...cli, help: "tasks run at once, each in its own temporary worktree" } as const satisfies PluginOption;
export const EVAL_SHARD = { key: "shard", type: "string", arg: "I/N", ...cli, help: "run only slice I of N (1-based): CI jobs each take one, `coder eval report` merges them" } as const satisfies PluginOption;
export const EVAL_RESUME = { key: "resume", type: "string", arg: "DIR", ...cli, help: "continue the run in DIR: same tasks, models and formats; finished ones are not run again" } as const satisfies PluginOption;
export const EVAL_MAX_COST = { key: "maxCost", type: "number", arg: "DOLLARS", ...cli, help: "start no new task once the run has cost this much" } as const satisfies PluginOption;
export const EVAL_OUT = { key: "out", type: "string", arg: "DIR", ...cli, help: "the run directory (default: .coder/eval/<time>/)" } as const satisfies PluginOption;
export const EVAL_HTML = {
  key: "html",
  type: "string",
  arg: "FILE",
  cliOnly: true,
  noEnv: true,
  group: GROUP,
  help: "coder eval report: also write the report as one self-contained HTML page to FILE (charts, every task's transcript)",
} as const satisfies PluginOption;

export const EVAL_REPORT_USAGE = "coder eval report [--html FILE] [--json] DIR...";

export const EVAL_OPTIONS: readonly PluginOption[] = [EVAL_COMMITS, EVAL_SAMPLE, EVAL_SEED, EVAL_NO_FILES, EVAL_EXERCISES, EVAL_JOBS, EVAL_SHARD, EVAL_RESUME, EVAL_MAX_COST, EVAL_OUT, EVAL_HTML];

/** `coder eval [...]`. */
export const EVAL_SUBCOMMAND = {
  name: "eval",
  usage: "[options] | report [--html FILE] [--json] DIR...",
  summary: "measure models and edit formats on this repository's history or an exercise set, in temporary worktrees (coder eval --help)",
  help: [
    "Every --model (repeat it) runs with every --edit-format (comma-separated); each task runs coder itself",
    "(--json --yes-always --no-auto-commits) in a temporary worktree outside your tree, which is never touched.",
    "",
    "History (default): of the last 500 non-merge commits, those changing 1-3 source files (tests, lock and",
    "generated files aside) by at most 80 lines, with a subject of 4 words or more; --sample N (default 20)",
    "picked with --seed. The request is the commit message; the result is compared with the commit: exact,",
    "equivalent (same syntax tree, whitespace and comments aside) or different (a silent wrong edit), and",
    "the F1 of changed lines. --test-cmd CMD, typed here, also runs your tests on a matching result.",
    "",
    "Exercises (--exercises DIR, Aider's polyglot layout): instructions and stubs to the model, the tests run",
    "in the temporary copy, their output goes back once: pass@1 and pass@2.",
    "",
    "Results: run.json, tasks.jsonl (one line per finished task, with its transcript) and summary.json in",
    ".coder/eval/<time>/ or --out DIR. Ctrl-C keeps what is done; --resume DIR continues; --max-cost stops",
    "starting tasks. `coder eval report [--html FILE] [--json] DIR...` merges run directories (a CI matrix's",
    "--shard slices) and prints the table; --html FILE also writes one self-contained page: charts and every",
    "task's transcript. Examples:",
    "  coder eval --model openai/gpt-4.1 --model deepseek/deepseek-chat --edit-format diff,udiff --jobs 4",
    "  coder eval --exercises polyglot-benchmark --model openai/gpt-4.1 --sample 50 --max-cost 5",
    "  coder eval --model openai/gpt-4.1 --shard 2/4 --out eval-2      (one CI job of four)",
    "  coder eval report --html eval.html eval-1 eval-2 eval-3 eval-4",
  ].join("\n"),
} as const satisfies Omit<Subcommand, "run">;
