// Eval run directories for tests of `coder eval report`: task records and run.json files in
// the shapes of plugins/eval/record.ts, written as coder eval writes them.
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RECORD_VERSION, type RunSpec, type TaskRecord } from "../../plugins/eval/record.ts";
import { tempDir } from "./kernel.ts";

/** A task record with sensible defaults (a passing, exact history task). */
export function taskRecord(fields: Partial<TaskRecord> = {}): TaskRecord {
  return {
    v: RECORD_VERSION,
    task: "history:0000000000000000000000000000000000000001",
    model: "gpt-test",
    format: "diff",
    passed: true,
    passedFirst: true,
    outcome: "exact",
    wellFormed: true,
    edits: { applied: 1, failed: 0, refused: 0 },
    silentWrong: false,
    similarity: 1,
    reflections: 0,
    tokens: { in: 1000, out: 100 },
    cost: 0.001,
    seconds: 2,
    error: null,
    files: ["src/a.ts"],
    transcript: [
      { type: "start", version: "0.0.0", model: "gpt-test", editFormat: "diff", files: ["src/a.ts"] },
      { type: "delta", text: "Here is the change." },
      { type: "edit", path: "src/a.ts", status: "applied", detail: "" },
      { type: "end", exitCode: 0, totals: { promptTokens: 1000, completionTokens: 100, cachedTokens: 0, cost: 0.001, requests: 1 } },
    ],
    finished: "2026-12-01T12:00:00.000Z",
    ...fields,
  };
}

export function runSpec(fields: Partial<RunSpec> = {}): RunSpec {
  return {
    v: RECORD_VERSION,
    coder: "0.0.0",
    source: "history",
    commits: null,
    exercises: null,
    sample: 20,
    seed: 1,
    models: ["gpt-test"],
    formats: ["diff"],
    noFiles: false,
    testCmd: null,
    shard: null,
    tasks: [],
    started: "2026-12-01T11:00:00.000Z",
    ...fields,
  };
}

/** A run directory holding `spec` and `records` (tasks.jsonl as the runner appends it, or `tasksText` verbatim). */
export function writeRunDir(spec: RunSpec, records: readonly TaskRecord[], options: { parent?: string; name?: string; tasksText?: string } = {}): string {
  const parent = options.parent ?? tempDir("coder-eval-run-");
  const dir = join(parent, options.name ?? "run");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "run.json"), `${JSON.stringify(spec, null, 2)}\n`);
  writeFileSync(join(dir, "tasks.jsonl"), options.tasksText ?? records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  return dir;
}

/** A small varied history run over two models and two formats: every outcome kind, different pass rates, varied costs. */
export function sampleRecords(): TaskRecord[] {
  const plans: Record<string, TaskRecord["outcome"][]> = {
    "gpt-test/diff": ["exact", "exact", "equivalent", "exact", "different", "exact", "equivalent", "failed-edit"],
    "gpt-test/udiff": ["exact", "failed-edit", "equivalent", "malformed", "different", "exact", "no-edit", "exact"],
    "other-model/diff": ["no-edit", "exact", "different", "failed-edit", "model-error", "equivalent", "malformed", "exact"],
    "other-model/udiff": ["malformed", "failed-edit", "different", "no-edit", "exact", "error", "failed-edit", "malformed"],
  };
  const records: TaskRecord[] = [];
  for (const [pair, outcomes] of Object.entries(plans)) {
    const [model, format] = pair.split("/") as [string, string];
    outcomes.forEach((outcome, i) => {
      const passed = outcome === "exact" || outcome === "equivalent";
      records.push(
        taskRecord({
          task: `history:${createHash("sha1").update(`commit ${i + 1}`).digest("hex")}`,
          title: `Commit ${i + 1}: fix the parser`,
          model,
          format,
          passed,
          passedFirst: passed,
          outcome,
          wellFormed: outcome !== "malformed",
          edits: { applied: passed || outcome === "different" ? 1 : 0, failed: outcome === "failed-edit" ? 2 : 0, refused: i === 3 ? 1 : 0 },
          silentWrong: outcome === "different",
          similarity: passed ? 1 : 0.1 * i,
          reflections: outcome === "failed-edit" ? 3 : i % 2,
          tokens: { in: 1000 + 37 * i, out: 100 + 11 * i },
          cost: model === "other-model" ? 0.1 + 0.2 * i : 0.0123 * (i + 1),
          seconds: 1.1 * (i + 1),
          error: outcome === "model-error" ? "HTTP 500 from the endpoint" : outcome === "error" ? "coder exited with code 1" : null,
        }),
      );
    });
  }
  return records;
}
