// `coder eval`: the plan (which tasks, models and formats), then the run: N workers take task ×
// model × format in order, each in its own workspace; every finished one is appended to the run
// directory at once. `--max-cost` starts no new task; Ctrl-C stops the running ones and keeps
// what is done; `--resume` skips what the directory already holds.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Kit, SubcommandContext } from "../../core/plugin.ts";
import { type Exercise, findExercises } from "./exercises.ts";
import { type CommitTask, DEFAULT_DEPTH, logArgs, parseLog, parseShard, qualifies, sample, shardOf } from "./history.ts";
import { EVAL_COMMITS, EVAL_EXERCISES, EVAL_JOBS, EVAL_MAX_COST, EVAL_NO_FILES, EVAL_OUT, EVAL_RESUME, EVAL_SAMPLE, EVAL_SEED, EVAL_SHARD } from "./options.ts";
import { Progress } from "./progress.ts";
import { RECORD_VERSION, type RunSpec, type TaskRecord } from "./record.ts";
import { textReport } from "./report-text.ts";
import { summarize } from "./summarize.ts";
import { RunDir } from "./rundir.ts";
import { runExercise, runHistoryTask, type TaskContext } from "./tasks.ts";
import { gitOk, Workspaces } from "./workspace.ts";

/** Flags of a chat that `coder eval` passes on to every task's coder when typed. */
const PASSED_ON: readonly [key: string, flag: string][] = [
  ["mapTokens", "--map-tokens"],
  ["maxReflections", "--max-reflections"],
  ["timeout", "--timeout"],
  ["reasoningEffort", "--reasoning-effort"],
  ["thinkingTokens", "--thinking-tokens"],
  ["editorModel", "--editor-model"],
  ["editorEditFormat", "--editor-edit-format"],
];

const CHILD_TIMEOUT_MS = 15 * 60_000;
const HANDLED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

type Task = { kind: "history"; commit: CommitTask } | { kind: "exercise"; exercise: Exercise };

async function commitsById(kit: Kit, ids: readonly string[]): Promise<Map<string, CommitTask>> {
  const shas = ids.map((id) => id.replace(/^history:/, ""));
  const out = shas.length ? await gitOk(kit, kit.root, [...logArgs(), "--no-walk=unsorted", ...shas]) : "";
  return new Map(parseLog(out).map((c) => [c.id, c]));
}

async function selectCommits(kit: Kit, range: string | null, n: number | undefined, seed: number): Promise<CommitTask[]> {
  const args = range ? [...logArgs(), range, "--"] : [...logArgs(), "-n", String(DEFAULT_DEPTH), "HEAD", "--"];
  const candidates = parseLog(await gitOk(kit, kit.root, args)).filter(qualifies);
  return sample(candidates, n ?? 20, seed);
}

function modelsAndFormats(kit: Kit, cli: SubcommandContext): { models: string[]; formats: string[] } {
  const typed = (key: string) => cli.flagValues?.(key) ?? [];
  const models = typed("model").length ? typed("model") : typeof cli.options.model === "string" ? [cli.options.model] : [];
  if (!models.length) cli.usage("coder eval needs a model: --model NAME (repeat it to compare models)");
  const formatsTyped = typed("editFormat").flatMap((f) => f.split(",").map((s) => s.trim()).filter(Boolean));
  const formats = formatsTyped.length ? formatsTyped : typeof cli.options.editFormat === "string" ? [cli.options.editFormat] : [];
  // No format named: each model in its own default one, as a chat would use.
  return { models, formats: formats.length ? [...new Set(formats)] : [...new Set(models.map((m) => kit.modelInfo(m).editFormat))] };
}

/** The spec of a new run: its task source, sample, shard, models and formats, from the options typed. */
async function newSpec(kit: Kit, cli: SubcommandContext): Promise<RunSpec> {
  const get = kit.options.get;
  const exercisesDir = get(EVAL_EXERCISES);
  const commits = get(EVAL_COMMITS) ?? null;
  if (exercisesDir !== undefined && commits !== null) cli.usage("--exercises and --commits choose different task sources: give one");
  const shardText = get(EVAL_SHARD);
  const shard = shardText === undefined ? null : parseShard(shardText);
  if (typeof shard === "string") cli.usage(shard);
  const { models, formats } = modelsAndFormats(kit, cli);
  const seed = Math.floor(get(EVAL_SEED) ?? 1);
  const n = get(EVAL_SAMPLE);
  let ids: string[];
  if (exercisesDir !== undefined) {
    const root = resolve(kit.cwd, exercisesDir);
    if (!existsSync(root) || !statSync(root).isDirectory()) cli.usage(`--exercises ${exercisesDir}: no such directory`);
    ids = sample(findExercises(root), n, seed).map((e) => e.id);
  } else {
    if (!existsSync(resolve(kit.root, ".git"))) cli.usage("coder eval takes its tasks from git history: run it in a git repository, or give --exercises DIR");
    ids = (await selectCommits(kit, commits, n, seed)).map((c) => c.id);
  }
  if (!ids.length) cli.usage(exercisesDir !== undefined ? `--exercises ${exercisesDir}: no exercise found (folders with .meta/config.json)` : `no commit ${commits ? `in ${commits} ` : ""}qualifies as a task (1–3 source files, at most 80 changed lines, a subject of 4 words or more)`);
  return {
    v: RECORD_VERSION,
    coder: kit.version,
    source: exercisesDir !== undefined ? "exercises" : "history",
    commits,
    exercises: exercisesDir !== undefined ? resolve(kit.cwd, exercisesDir) : null,
    sample: n ?? (exercisesDir !== undefined ? ids.length : 20),
    seed,
    models,
    formats,
    noFiles: get(EVAL_NO_FILES) === true,
    testCmd: cli.flagValues?.("testCmd").at(-1) ?? null,
    shard: shard as [number, number] | null,
    tasks: shardOf(ids, shard as [number, number] | null),
    started: new Date().toISOString(),
  };
}

/** The run's tasks by id: the exercises of its folder, or its commits read again from git. */
async function loadTasks(kit: Kit, spec: RunSpec, dir: string): Promise<Map<string, Task>> {
  const tasks = new Map<string, Task>();
  if (spec.source === "exercises") {
    for (const e of findExercises(spec.exercises!)) tasks.set(e.id, { kind: "exercise", exercise: e });
  } else {
    for (const [id, commit] of await commitsById(kit, spec.tasks)) tasks.set(id, { kind: "history", commit });
  }
  const missing = spec.tasks.filter((id) => !tasks.has(id));
  if (missing.length) throw new Error(`${missing.length} task${missing.length === 1 ? "" : "s"} of ${dir} cannot be found here: ${missing.slice(0, 3).join(", ")}`);
  return tasks;
}

/** What every task's coder gets from the command line typed: chat flags, and the key and endpoint through the environment. */
function childSetup(cli: SubcommandContext): { flags: string[]; env: Record<string, string | undefined> } {
  const flags = PASSED_ON.flatMap(([k, flag]) => (cli.flagValues?.(k) ?? []).map((v) => `${flag}=${v}`));
  const env: Record<string, string | undefined> = { ...process.env };
  const apiKey = cli.flagValues?.("apiKey").at(-1);
  const apiBase = cli.flagValues?.("apiBase").at(-1);
  // Keys travel in the environment, never on a command line other users can read.
  if (apiKey) env.CODER_API_KEY = apiKey;
  if (apiBase) env.CODER_API_BASE = apiBase;
  return { flags, env };
}

export async function runEval(kit: Kit, args: readonly string[], cli: SubcommandContext): Promise<number> {
  if (args.length) cli.usage(`coder eval takes no arguments (got "${args[0]}"); see coder eval --help`);
  const get = kit.options.get;
  const jobs = Math.max(1, Math.floor(get(EVAL_JOBS) ?? 1));
  const maxCost = get(EVAL_MAX_COST);

  let spec: RunSpec;
  let run: RunDir;
  let done: TaskRecord[] = [];
  const resume = get(EVAL_RESUME);
  if (resume !== undefined) {
    const dir = resolve(kit.cwd, resume);
    try {
      let warnings: string[];
      ({ run, spec, records: done, warnings } = RunDir.resume(kit, dir));
      for (const warning of warnings) cli.warn(warning);
    } catch (error) {
      return cli.usage((error as Error).message);
    }
    if ((cli.flagValues?.("model").length ?? 0) > 0 || get(EVAL_SHARD) || get(EVAL_COMMITS) || get(EVAL_EXERCISES)) cli.warn(`--resume ${resume}: the run's own tasks, models and formats are used (run.json); the ones typed are ignored`);
  } else {
    spec = await newSpec(kit, cli);
    try {
      run = RunDir.create(kit, get(EVAL_OUT) === undefined ? undefined : resolve(kit.cwd, get(EVAL_OUT)!), spec);
    } catch (error) {
      return cli.usage((error as Error).message);
    }
  }

  const tasks = await loadTasks(kit, spec, run.dir);

  const key = (task: string, model: string, format: string) => `${task}\u0000${model}\u0000${format}`;
  const finished = new Set(done.map((r) => key(r.task, r.model, r.format)));
  const queue: { task: Task; id: string; model: string; format: string }[] = [];
  for (const id of spec.tasks) for (const model of spec.models) for (const format of spec.formats) if (!finished.has(key(id, model, format))) queue.push({ task: tasks.get(id)!, id, model, format });

  const stderr = (text: string) => process.stderr.write(text);
  const progress = new Progress(queue.length, done.length, process.stderr.isTTY === true, stderr);
  for (const r of done) progress.carry(r);
  cli.warn(`coder eval: ${queue.length} task${queue.length === 1 ? "" : "s"} to run${done.length ? ` (${done.length} already done)` : ""}, ${jobs} at a time; results in ${run.dir}`);

  const abort = new AbortController();
  let interrupted: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted ??= signal;
    abort.abort();
  };
  for (const s of HANDLED) process.on(s, onSignal);

  const { flags, env } = childSetup(cli);
  const workspaces = new Workspaces(kit);
  if (spec.source === "history") {
    const swept = await workspaces.sweep(kit.root);
    if (swept) cli.warn(`coder eval: removed ${swept} temporary worktree${swept === 1 ? "" : "s"} a killed run left behind`);
  }
  const ctx: TaskContext = { kit, root: kit.root, workspaces, flags, env, signal: abort.signal, noFiles: spec.noFiles, testCmd: spec.testCmd, timeoutMs: CHILD_TIMEOUT_MS };
  const records = [...done];
  let costStop = false;
  let next = 0;
  progress.draw();

  const worker = async (_: unknown, slot: number) => {
    for (;;) {
      if (abort.signal.aborted) return;
      if (maxCost !== undefined && progress.cost >= maxCost) {
        costStop = true;
        return;
      }
      const item = queue[next++];
      if (!item) return;
      let record: TaskRecord | null;
      try {
        record = item.task.kind === "history" ? await runHistoryTask(ctx, item.task.commit, item.model, item.format, slot) : await runExercise(ctx, item.task.exercise, item.model, item.format);
      } catch (error) {
        if (abort.signal.aborted) return;
        throw error;
      }
      if (!record) return;
      run.append(record);
      records.push(record);
      progress.finished(record);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, worker));
  } finally {
    for (const s of HANDLED) process.off(s, onSignal);
    progress.end();
    await workspaces.removeAll();
  }

  const summary = summarize(records, [run.dir], spec.source, { models: spec.models, formats: spec.formats });
  run.writeSummary(summary);
  const ran = records.length - done.length;
  const left = queue.length - ran;
  if (interrupted) {
    cli.warn(`coder eval: interrupted; ${ran} task${ran === 1 ? "" : "s"} kept, ${left} not run. Continue with: coder eval --resume ${run.dir}`);
    return interrupted === "SIGINT" ? 130 : interrupted === "SIGTERM" ? 143 : 129;
  }
  if (costStop && left > 0) cli.warn(`coder eval: --max-cost $${maxCost} reached ($${progress.cost.toFixed(4)} spent); ${left} task${left === 1 ? "" : "s"} not run. Continue with: coder eval --resume ${run.dir}`);
  if (cli.json) {
    cli.printJson(summary);
    return 0;
  }
  cli.print(textReport(summary, { color: process.stdout.isTTY === true && !process.env.NO_COLOR }));
  cli.print(`Run directory: ${run.dir} (coder eval report --html FILE ${run.dir} draws it as a page)`);
  return 0;
}
