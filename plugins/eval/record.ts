// The shape of an eval run on disk: what `coder eval` writes and `coder eval report` reads.
// A run directory holds `run.json` (how the run was asked for), `tasks.jsonl` (one TaskRecord
// per line, appended as each task ends, so a killed run keeps what it finished) and
// `summary.json` (a Summary, rewritten at the end of a run and by `coder eval report`).

/** Bumped when a field changes meaning; readers refuse a version they do not know. */
export const RECORD_VERSION = 1;

/** `run.json`: the request that made the run, so `--resume DIR` can continue it exactly. */
export interface RunSpec {
  v: typeof RECORD_VERSION;
  /** The coder version that ran it. */
  coder: string;
  source: "history" | "exercises";
  /** History: the commit range or null for the default selection; exercises: the directory. */
  commits: string | null;
  exercises: string | null;
  sample: number;
  seed: number;
  models: string[];
  formats: string[];
  /** `--no-files`: the chat starts empty and the repo map must find the files. */
  noFiles: boolean;
  testCmd: string | null;
  /** `--shard i/n` as [i, n] (1-based i), or null. */
  shard: [number, number] | null;
  /** The task ids in this run's slice, in order, before pairing with models and formats. */
  tasks: string[];
  started: string;
}

/** How one task ended, in the order a reader should group failures. */
export type Outcome =
  | "exact" // history: every file byte-identical to the real child commit
  | "equivalent" // history: same syntax tree per file, ignoring whitespace and comments
  | "different" // history: edits applied, result not equivalent to the real change (a silent wrong edit)
  | "tests-passed" // exercises (or history with --test-cmd): the tests pass
  | "tests-failed"
  | "failed-edit" // edits did not apply even after reflections
  | "no-edit" // the model answered without any edit
  | "malformed" // the reply could not be parsed in the format
  | "model-error" // the endpoint failed (HTTP error, timeout, missing key)
  | "error"; // coder itself failed (exit code, crash); `error` says how

export interface TaskRecord {
  v: typeof RECORD_VERSION;
  /** "history:<full sha>" or "exercise:<language>/<name>". */
  task: string;
  model: string;
  format: string;
  /** The pass criterion: history, exact or equivalent (and tests pass when --test-cmd was given);
   * exercises, the tests pass on the first or second try. */
  passed: boolean;
  /** Exercises: passed on the first try. History: same as passed. */
  passedFirst: boolean;
  outcome: Outcome;
  /** Every reply parsed in the format. */
  wellFormed: boolean;
  edits: { applied: number; failed: number; refused: number };
  /** Applied, but the result is not equivalent to the real change. */
  silentWrong: boolean;
  /** History: F1 of changed lines against the real change, 0..1; null for exercises. */
  similarity: number | null;
  reflections: number;
  tokens: { in: number; out: number };
  /** Dollars, null when the model's price is unknown. */
  cost: number | null;
  seconds: number;
  /** Set when outcome is "error" or "model-error". */
  error: string | null;
  /** One line naming the task for a person (history: the commit's subject; exercises: the
   * exercise's name). Optional: readers fall back to `task`. Untrusted text (a commit message). */
  title?: string;
  /** The files the task edits (history: the commit's files; exercises: the solution files). */
  files: string[];
  /** The `--json` events of every coder run in the task, in order (the full transcript). */
  transcript: unknown[];
  finished: string;
}

/** One model × format pair's figures. Rates are 0..1; intervals are 95% Wilson intervals. */
export interface PairSummary {
  model: string;
  format: string;
  tasks: number;
  passed: number;
  passRate: number;
  passInterval: [number, number];
  /** Exercises only (null for history): pass@1 and pass@2 rates. */
  pass1: number | null;
  pass2: number | null;
  wellFormedRate: number;
  failedEdits: number;
  refusedEdits: number;
  silentWrong: number;
  reflections: number;
  tokensIn: number;
  tokensOut: number;
  /** Null when any task's cost was unknown. */
  cost: number | null;
  costPerTask: number | null;
  secondsPerTask: number;
  outcomes: Partial<Record<Outcome, number>>;
}

/** `summary.json`. */
export interface Summary {
  v: typeof RECORD_VERSION;
  source: "history" | "exercises";
  /** The run directories merged into this summary. */
  runs: string[];
  pairs: PairSummary[];
  /** Task records seen more than once across the merged runs (same task, model, format): kept once. */
  duplicates: number;
  generated: string;
}
