// One task × model × format, from a fresh workspace to its TaskRecord: run coder, then score
// (history: against the real child commit; exercises: the tests, twice at most). Returns null
// when the run was interrupted: an unfinished task is not recorded, so `--resume` runs it again.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Kit } from "../../core/plugin.ts";
import { type ChildRun, emptyTally, runCoder, type Tally, tallyRun } from "./child.ts";
import { type Exercise, firstRequest, secondRequest, tail, testCommand } from "./exercises.ts";
import type { CommitTask } from "./history.ts";
import { type Outcome, RECORD_VERSION, type TaskRecord } from "./record.ts";
import { changedLines, equivalent, lineF1 } from "./score.ts";
import { git, gitOk, type Workspaces } from "./workspace.ts";

export interface TaskContext {
  kit: Kit;
  root: string;
  workspaces: Workspaces;
  flags: readonly string[];
  env: Record<string, string | undefined>;
  signal: AbortSignal;
  noFiles: boolean;
  testCmd: string | null;
  timeoutMs: number;
}

const TEST_TIMEOUT_MS = 180_000;

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function readBytes(path: string): Uint8Array | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

async function atCommit(ctx: TaskContext, commit: string, path: string): Promise<Uint8Array | null> {
  const r = await git(ctx.kit, ctx.root, ["show", `${commit}:${path}`], { bytes: true });
  return r.code === 0 ? (r.stdoutBytes ?? new TextEncoder().encode(r.stdout)) : null;
}

const sameBytes = (a: Uint8Array | null, b: Uint8Array | null) => (a === null || b === null ? a === b : Buffer.from(a).equals(Buffer.from(b)));
const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));

/** Paths the run changed in the workspace (tracked or new), coder's own `.coder/` aside. */
async function changedPaths(ctx: TaskContext, dir: string): Promise<string[]> {
  const out = await gitOk(ctx.kit, dir, ["status", "--porcelain", "-z", "--untracked-files=all"]);
  const paths: string[] = [];
  const entries = out.split("\0");
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.length < 4) continue;
    if (entry[0] === "R" || entry[0] === "C") i++; // a rename's source follows
    const path = entry.slice(3);
    if (!path.startsWith(".coder/")) paths.push(path);
  }
  return paths;
}

/** The shell-run test command's result in `dir`, as a transcript event. */
async function runTests(ctx: TaskContext, dir: string, argv: string[]): Promise<{ ok: boolean; output: string; event: Record<string, unknown> }> {
  // No Python bytecode cache: a fix written in the same second as the first try, at the same
  // size, would otherwise be tested as the stale .pyc of the first try (Python checks mtime and size).
  const env = { ...process.env, PYTHONDONTWRITEBYTECODE: "1" };
  const r = await ctx.kit.spawn(argv, { cwd: dir, env, input: "", timeoutMs: TEST_TIMEOUT_MS, signal: ctx.signal });
  const output = tail(`${r.stdout}${r.stderr ? `\n${r.stderr}` : ""}`.trim() + (r.timedOut ? `\n(the tests ran past ${TEST_TIMEOUT_MS / 1000} s and were stopped)` : "") + (r.startError ? `\n${r.startError}` : ""));
  const ok = r.code === 0;
  return { ok, output, event: { type: "eval-test", time: new Date().toISOString(), command: argv.join(" "), ok, code: r.code, output } };
}

function baseOutcome(t: Tally): Outcome | null {
  if (t.modelError) return "model-error";
  if (!t.clean) return "error";
  if (t.applied > 0) return null;
  if (t.failed > 0) return "failed-edit";
  if (t.malformed > 0 && t.malformed === t.replies) return "malformed";
  return "no-edit";
}

function record(task: string, model: string, format: string, t: Tally, fields: Pick<TaskRecord, "passed" | "passedFirst" | "outcome" | "silentWrong" | "similarity" | "files" | "transcript" | "title">, started: number): TaskRecord {
  return {
    v: RECORD_VERSION,
    task,
    model,
    format,
    ...fields,
    wellFormed: t.malformed === 0,
    edits: { applied: t.applied, failed: t.failed, refused: t.refused },
    reflections: t.reflections,
    tokens: { in: t.tokensIn, out: t.tokensOut },
    cost: t.cost,
    seconds: Math.round((performance.now() - started) / 10) / 100,
    error: fields.outcome === "error" || fields.outcome === "model-error" ? (t.error ?? "coder failed") : null,
    title: fields.title,
    finished: new Date().toISOString(),
  };
}

/** A commit redone by the model in a worktree of its parent, compared with the commit. */
export async function runHistoryTask(ctx: TaskContext, commit: CommitTask, model: string, format: string, slot: number): Promise<TaskRecord | null> {
  const started = performance.now();
  // The worker's worktree is kept for its next task (a warm repo map); the run removes it at the end.
  const dir = await ctx.workspaces.checkout(ctx.root, commit.parent, slot);
  const run = await runCoder(ctx.kit, { cwd: dir, message: commit.message, model, format, files: ctx.noFiles ? [] : commit.files, flags: ctx.flags, env: ctx.env, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (run.aborted || ctx.signal.aborted) return null;
  const t = tallyRun(emptyTally(), run);
  const transcript: unknown[] = [...run.events];

  const touched = await changedPaths(ctx, dir);
  const extra = touched.filter((p) => !commit.files.includes(p));
  let exact = extra.length === 0;
  let same = extra.length === 0;
  const ours: string[] = [];
  const real: string[] = [];
  for (const path of [...commit.files, ...extra]) {
    const before = text(await atCommit(ctx, commit.parent, path)) ?? "";
    const mine = readBytes(join(dir, path));
    ours.push(...changedLines(ctx.kit.diff.unified(path, before, text(mine) ?? "")));
    if (!commit.files.includes(path)) continue;
    const theirs = await atCommit(ctx, commit.sha, path);
    real.push(...changedLines(ctx.kit.diff.unified(path, before, text(theirs) ?? "")));
    if (!sameBytes(mine, theirs)) exact = false;
    if (same && !(await equivalent(path, text(mine), text(theirs)))) same = false;
  }
  const similarity = Math.round(lineF1(ours, real) * 1000) / 1000;

  let testsOk = true;
  if (ctx.testCmd && t.applied > 0 && (exact || same)) {
    // The commit's own tests and other files join the result, as the commit had them.
    for (const other of commit.others) {
      if (other.deleted) ctx.workspaces.removeIn(dir, other.path);
      else await git(ctx.kit, dir, ["checkout", commit.sha, "--", other.path]);
    }
    const tests = await runTests(ctx, dir, ["sh", "-c", ctx.testCmd]);
    if (ctx.signal.aborted) return null;
    transcript.push(tests.event);
    testsOk = tests.ok;
  }

  let outcome = baseOutcome(t);
  if (outcome === null || outcome === "failed-edit" || outcome === "malformed" || outcome === "no-edit") {
    if (t.clean && (exact || same) && touched.length > 0) outcome = testsOk ? (exact ? "exact" : "equivalent") : "tests-failed";
    else if (outcome === null) outcome = "different";
  }
  const passed = outcome === "exact" || outcome === "equivalent";
  return record(commit.id, model, format, t, { passed, passedFirst: passed, outcome, silentWrong: outcome === "different", similarity, files: commit.files, transcript, title: commit.message.split("\n")[0]!.slice(0, 200) }, started);
}

/** An exercise: instructions and stubs to the model, the tests run, their output back once. */
export async function runExercise(ctx: TaskContext, exercise: Exercise, model: string, format: string): Promise<TaskRecord | null> {
  const started = performance.now();
  const dir = await ctx.workspaces.copy(exercise.dir, [".meta", ".docs"]);
  try {
    const command = testCommand(exercise, dir);
    const t = emptyTally();
    const transcript: unknown[] = [];
    const attempt = async (message: string): Promise<ChildRun | null> => {
      const run = await runCoder(ctx.kit, { cwd: dir, message, model, format, files: exercise.solution, flags: ctx.flags, env: ctx.env, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
      if (run.aborted || ctx.signal.aborted) return null;
      tallyRun(t, run);
      transcript.push(...run.events);
      return run;
    };
    // The tests run as the exercise wrote them: a model's change to a test file is undone first.
    const test = async () => {
      for (const file of exercise.tests) ctx.workspaces.copyInto(dir, join(exercise.dir, file), file);
      const result = await runTests(ctx, dir, command!);
      transcript.push(result.event);
      return result;
    };
    if (!command) {
      t.clean = false;
      t.error = `no test command is known for ${exercise.solution[0]} (coder runs .py, .js, .go, .rs, .java and .cpp exercises)`;
      return record(exercise.id, model, format, t, { passed: false, passedFirst: false, outcome: "error", silentWrong: false, similarity: null, files: exercise.solution, transcript, title: exercise.name }, started);
    }
    if (!(await attempt(firstRequest(exercise)))) return null;
    let first = false;
    let second = false;
    if (t.clean && !t.modelError) {
      const one = await test();
      if (ctx.signal.aborted) return null;
      first = one.ok;
      if (!first) {
        if (!(await attempt(secondRequest(exercise, one.output)))) return null;
        if (t.clean && !t.modelError) {
          const two = await test();
          if (ctx.signal.aborted) return null;
          second = two.ok;
        }
      }
    }
    const passed = first || second;
    const outcome: Outcome = passed ? "tests-passed" : (baseOutcome(t) ?? "tests-failed");
    return record(exercise.id, model, format, t, { passed, passedFirst: first, outcome, silentWrong: false, similarity: null, files: exercise.solution, transcript, title: exercise.name }, started);
  } finally {
    await ctx.workspaces.remove(dir);
  }
}
