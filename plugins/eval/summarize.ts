// Reading eval run directories back and reducing their task records to per model × format
// figures. Pure apart from readRun's reads: merging shards gives exactly the unsharded summary,
// because records are put in one canonical order before anything is added up.
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Outcome, type PairSummary, RECORD_VERSION, type RunSpec, type Summary, type TaskRecord } from "./record.ts";

/** A run directory that cannot be read: the message names the directory or file (and line) and what is wrong. */
export class RunDirError extends Error {}

export interface RunRead {
  dir: string;
  spec: RunSpec;
  records: TaskRecord[];
  /** Things a person should know that did not stop the read (a truncated last line). */
  warnings: string[];
}

export const OUTCOMES: readonly Outcome[] = ["exact", "equivalent", "different", "tests-passed", "tests-failed", "failed-edit", "no-edit", "malformed", "model-error", "error"];

/**
 * Read `run.json` and `tasks.jsonl` of one run directory. A missing tasks.jsonl is a run that
 * finished no task. `name`: the directory as the user typed it, for messages (default: `dir`).
 */
export function readRun(dir: string, name = dir): RunRead {
  const stat = statOrNull(dir);
  if (!stat) throw new RunDirError(`${name}: no such directory (name a run directory written by coder eval)`);
  if (!stat.isDirectory()) throw new RunDirError(`${name}: not a directory (name a run directory written by coder eval)`);
  const specFile = join(name, "run.json");
  const specText = readText(join(dir, "run.json"), specFile);
  if (specText === null) throw new RunDirError(`${specFile}: missing; ${name} is not a coder eval run directory`);
  let spec: unknown;
  try {
    spec = JSON.parse(specText);
  } catch (error) {
    throw new RunDirError(`${specFile}: not valid JSON (${(error as Error).message})`);
  }
  checkSpec(spec, specFile);
  const tasksFile = join(name, "tasks.jsonl");
  const { records, warnings } = parseTaskLines(readText(join(dir, "tasks.jsonl"), tasksFile) ?? "", tasksFile);
  return { dir: name, spec: spec as RunSpec, records, warnings };
}

/**
 * The task records of a `tasks.jsonl` text (`file` names it in messages). A last line without
 * its newline that is not JSON is what a killed run left half-written: skipped with a warning.
 * Any other bad line, an unknown record version or a missing field is a RunDirError naming the
 * line.
 */
export function parseTaskLines(text: string, file: string): { records: TaskRecord[]; warnings: string[] } {
  const warnings: string[] = [];
  const records: TaskRecord[] = [];
  const lines = text.split("\n");
  // A complete file ends with a newline, so its last piece is empty; anything else there is a line a killed run left half-written.
  const last = lines.length - 1;
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${file}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      if (i === last) {
        warnings.push(`${where}: skipped an unfinished last line (${line.length} characters; the run was stopped while writing it)`);
        return;
      }
      throw new RunDirError(`${where}: not valid JSON (${(error as Error).message})`);
    }
    records.push(checkRecord(value, where));
  });
  return { records, warnings };
}

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** A regular file's text, or null when it is missing; `shown` names it in errors. */
function readText(file: string, shown: string): string | null {
  const stat = statOrNull(file);
  if (!stat) return null;
  if (!stat.isFile()) throw new RunDirError(`${shown}: not a regular file`);
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new RunDirError(`${shown}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkVersion(value: Record<string, unknown>, where: string): void {
  if (value.v !== RECORD_VERSION) {
    throw new RunDirError(`${where}: record version ${JSON.stringify(value.v ?? null)}; this coder reads version ${RECORD_VERSION} (use the coder that wrote the run)`);
  }
}

function checkSpec(value: unknown, where: string): void {
  if (!isObject(value)) throw new RunDirError(`${where}: not a JSON object`);
  checkVersion(value, where);
  if (value.source !== "history" && value.source !== "exercises") throw new RunDirError(`${where}: "source" must be "history" or "exercises"`);
  for (const key of ["models", "formats", "tasks"]) {
    const list = value[key];
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string")) throw new RunDirError(`${where}: "${key}" must be a list of strings`);
  }
}

const FIELDS: Record<string, (x: unknown) => boolean> = {
  task: (x) => typeof x === "string",
  model: (x) => typeof x === "string",
  format: (x) => typeof x === "string",
  passed: (x) => typeof x === "boolean",
  passedFirst: (x) => typeof x === "boolean",
  outcome: (x) => OUTCOMES.includes(x as Outcome),
  wellFormed: (x) => typeof x === "boolean",
  edits: (x) => isObject(x) && [x.applied, x.failed, x.refused].every(isCount),
  silentWrong: (x) => typeof x === "boolean",
  similarity: (x) => x === null || (typeof x === "number" && x >= 0 && x <= 1),
  reflections: isCount,
  tokens: (x) => isObject(x) && isCount(x.in) && isCount(x.out),
  cost: (x) => x === null || (typeof x === "number" && Number.isFinite(x) && x >= 0),
  seconds: (x) => typeof x === "number" && Number.isFinite(x) && x >= 0,
  error: (x) => x === null || typeof x === "string",
  files: (x) => Array.isArray(x) && x.every((f) => typeof f === "string"),
  transcript: Array.isArray,
};

function isCount(x: unknown): boolean {
  return typeof x === "number" && Number.isInteger(x) && x >= 0;
}

function checkRecord(value: unknown, where: string): TaskRecord {
  if (!isObject(value)) throw new RunDirError(`${where}: not a JSON object`);
  checkVersion(value, where);
  for (const [key, ok] of Object.entries(FIELDS)) {
    if (!ok(value[key])) throw new RunDirError(`${where}: field "${key}" is ${key in value ? `not what coder eval writes (${JSON.stringify(value[key])?.slice(0, 60)})` : "missing"}`);
  }
  if (value.title !== undefined && typeof value.title !== "string") throw new RunDirError(`${where}: field "title" must be a string`);
  return value as unknown as TaskRecord;
}

/** z for a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/** The 95% Wilson score interval of `passed` successes in `n` trials; [0, 1] when n is 0. */
export function wilsonInterval(passed: number, n: number, z = Z95): [number, number] {
  if (n <= 0) return [0, 1];
  const p = passed / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // Clamp the rounding at the ends: 0 of n has a lower bound of exactly 0, n of n an upper one of exactly 1.
  return [passed === 0 ? 0 : Math.max(0, centre - half), passed === n ? 1 : Math.min(1, centre + half)];
}

/** The key a task record is unique by across merged runs. */
export function recordKey(r: Pick<TaskRecord, "task" | "model" | "format">): string {
  return JSON.stringify([r.task, r.model, r.format]);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Records in one order whatever the shards or their order: by task, model and format. */
function canonical(records: readonly TaskRecord[]): TaskRecord[] {
  return [...records].sort((a, b) => compareText(a.task, b.task) || compareText(a.model, b.model) || compareText(a.format, b.format));
}

/** Each (task, model, format) once: the first seen wins (runs in the order given); the rest are counted. */
export function dedupe(records: readonly TaskRecord[]): { records: TaskRecord[]; duplicates: number } {
  const seen = new Set<string>();
  const kept: TaskRecord[] = [];
  for (const r of records) {
    const key = recordKey(r);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(r);
  }
  return { records: kept, duplicates: records.length - kept.length };
}

export interface SummarizeOptions {
  /** Models and formats in the order the runs asked for them (pairs are listed in this order; others follow, sorted). */
  models?: readonly string[];
  formats?: readonly string[];
  /** The `generated` timestamp (default: now). */
  now?: Date;
}

/** Per model × format figures of the task records of `runs` (duplicates across runs counted and kept once). */
export function summarize(records: readonly TaskRecord[], runs: readonly string[], source: Summary["source"], options: SummarizeOptions = {}): Summary {
  const { records: unique, duplicates } = dedupe(records);
  const byPair = new Map<string, TaskRecord[]>();
  for (const r of canonical(unique)) {
    const key = JSON.stringify([r.model, r.format]);
    const list = byPair.get(key);
    if (list) list.push(r);
    else byPair.set(key, [r]);
  }
  const rank = (order: readonly string[] | undefined, name: string) => {
    const i = order?.indexOf(name) ?? -1;
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  const pairs = [...byPair.values()]
    .map((list) => pairSummary(list, source))
    .sort(
      (a, b) =>
        rank(options.models, a.model) - rank(options.models, b.model) ||
        compareText(a.model, b.model) ||
        rank(options.formats, a.format) - rank(options.formats, b.format) ||
        compareText(a.format, b.format),
    );
  return { v: RECORD_VERSION, source, runs: [...runs], pairs, duplicates, generated: (options.now ?? new Date()).toISOString() };
}

function pairSummary(records: readonly TaskRecord[], source: Summary["source"]): PairSummary {
  const first = records[0]!;
  const n = records.length;
  const count = (test: (r: TaskRecord) => boolean) => records.filter(test).length;
  const sum = (value: (r: TaskRecord) => number) => records.reduce((total, r) => total + value(r), 0);
  const passed = count((r) => r.passed);
  const costs = records.map((r) => r.cost);
  const cost = costs.every((c): c is number => c !== null) ? costs.reduce((a, b) => a + b, 0) : null;
  const outcomes: Partial<Record<Outcome, number>> = {};
  for (const outcome of OUTCOMES) {
    const k = count((r) => r.outcome === outcome);
    if (k) outcomes[outcome] = k;
  }
  return {
    model: first.model,
    format: first.format,
    tasks: n,
    passed,
    passRate: passed / n,
    passInterval: wilsonInterval(passed, n),
    pass1: source === "exercises" ? count((r) => r.passedFirst) / n : null,
    pass2: source === "exercises" ? passed / n : null,
    wellFormedRate: count((r) => r.wellFormed) / n,
    failedEdits: sum((r) => r.edits.failed),
    refusedEdits: sum((r) => r.edits.refused),
    silentWrong: count((r) => r.silentWrong),
    reflections: sum((r) => r.reflections),
    tokensIn: sum((r) => r.tokens.in),
    tokensOut: sum((r) => r.tokens.out),
    cost,
    costPerTask: cost === null ? null : cost / n,
    secondsPerTask: sum((r) => r.seconds) / n,
    outcomes,
  };
}

/**
 * Read and merge run directories (shards of one run, or runs to compare): the summary, the records
 * kept, and warnings. Relative directories are read from `cwd` and named as given.
 */
export function mergeRuns(dirs: readonly string[], options: { cwd?: string; now?: Date } = {}): { summary: Summary; records: TaskRecord[]; runs: RunRead[]; warnings: string[] } {
  if (!dirs.length) throw new RunDirError("no run directory named (give one or more directories written by coder eval)");
  const runs = dirs.map((dir) => readRun(resolve(options.cwd ?? ".", dir), dir));
  const source = runs[0]!.spec.source;
  const other = runs.find((r) => r.spec.source !== source);
  if (other) throw new RunDirError(`${other.dir}: a ${other.spec.source} run cannot be merged with ${runs[0]!.dir}, a ${source} run (report them apart)`);
  const all = runs.flatMap((r) => r.records);
  const unique = (lists: string[][]) => [...new Set(lists.flat())];
  const summary = summarize(all, dirs, source, { models: unique(runs.map((r) => r.spec.models)), formats: unique(runs.map((r) => r.spec.formats)), now: options.now });
  return { summary, records: canonical(dedupe(all).records), runs, warnings: runs.flatMap((r) => r.warnings) };
}
