import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mergeRuns, readRun, summarize, wilsonInterval } from "./summarize.ts";
import { runSpec, sampleRecords, taskRecord, writeRunDir } from "../../tests/support/eval-runs.ts";
import { tempDir } from "../../tests/support/kernel.ts";

const NOW = new Date("2026-12-01T13:00:00.000Z");

describe("wilsonInterval", () => {
  // Published 95% Wilson score intervals (e.g. Newcombe 1998, Table I; Wikipedia's worked figures).
  test.each([
    [8, 10, 0.4902, 0.9433],
    [5, 10, 0.2366, 0.7634],
    [0, 10, 0, 0.2775],
    [10, 10, 0.7225, 1],
    [1, 1, 0.2065, 1],
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
  ])("%d of %d: [%d, %d]", (k, n, low, high) => {
    const [a, b] = wilsonInterval(k, n);
    expect(a).toBeCloseTo(low, 4);
    expect(b).toBeCloseTo(high, 4);
  });

  test("no trials: the whole range", () => {
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
  });
});

describe("summarize", () => {
  test("one pair's columns, from records whose figures are known by hand", () => {
    const records = [
      taskRecord({ task: "history:a", passed: true, outcome: "exact", tokens: { in: 10, out: 1 }, cost: 0.5, seconds: 3 }),
      taskRecord({ task: "history:b", passed: true, outcome: "equivalent", reflections: 1, tokens: { in: 20, out: 2 }, cost: 0.25, seconds: 5 }),
      taskRecord({ task: "history:c", passed: false, outcome: "different", silentWrong: true, tokens: { in: 30, out: 3 }, cost: 0.25, seconds: 4 }),
      taskRecord({
        task: "history:d",
        passed: false,
        outcome: "failed-edit",
        wellFormed: true,
        edits: { applied: 0, failed: 2, refused: 1 },
        reflections: 3,
        tokens: { in: 40, out: 4 },
        cost: 1,
        seconds: 8,
      }),
      taskRecord({ task: "history:e", passed: false, outcome: "malformed", wellFormed: false, edits: { applied: 0, failed: 0, refused: 0 }, reflections: 2, tokens: { in: 0, out: 0 }, cost: 0, seconds: 0 }),
    ];
    const s = summarize(records, ["r"], "history", { now: NOW });
    expect(s).toEqual({
      v: 1,
      source: "history",
      runs: ["r"],
      duplicates: 0,
      generated: "2026-12-01T13:00:00.000Z",
      pairs: [
        {
          model: "gpt-test",
          format: "diff",
          tasks: 5,
          passed: 2,
          passRate: 0.4,
          passInterval: wilsonInterval(2, 5),
          pass1: null,
          pass2: null,
          wellFormedRate: 0.8,
          failedEdits: 2,
          refusedEdits: 1,
          silentWrong: 1,
          reflections: 6,
          tokensIn: 100,
          tokensOut: 10,
          cost: 2,
          costPerTask: 0.4,
          secondsPerTask: 4,
          outcomes: { exact: 1, equivalent: 1, different: 1, "failed-edit": 1, malformed: 1 },
        },
      ],
    });
  });

  test("exercises: pass@1 counts first tries, pass@2 every pass", () => {
    const records = [
      taskRecord({ task: "exercise:js/a", passed: true, passedFirst: true, outcome: "tests-passed", similarity: null }),
      taskRecord({ task: "exercise:js/b", passed: true, passedFirst: false, outcome: "tests-passed", reflections: 1, similarity: null }),
      taskRecord({ task: "exercise:py/c", passed: false, passedFirst: false, outcome: "tests-failed", reflections: 1, similarity: null }),
      taskRecord({ task: "exercise:py/d", passed: false, passedFirst: false, outcome: "tests-failed", reflections: 1, similarity: null }),
    ];
    const [pair] = summarize(records, ["r"], "exercises", { now: NOW }).pairs;
    expect(pair).toMatchObject({ pass1: 0.25, pass2: 0.5, passRate: 0.5, passed: 2, outcomes: { "tests-passed": 2, "tests-failed": 2 } });
  });

  test("a task whose cost is unknown makes the pair's cost unknown, not too low", () => {
    const records = [taskRecord({ task: "history:a", cost: 0.5 }), taskRecord({ task: "history:b", cost: null }), taskRecord({ task: "history:a", format: "udiff", cost: 0.5 })];
    const s = summarize(records, ["r"], "history", { now: NOW });
    expect(s.pairs.map((p) => [p.format, p.cost, p.costPerTask])).toEqual([
      ["diff", null, null],
      ["udiff", 0.5, 0.5],
    ]);
  });

  test("the same task, model and format twice is kept once (the first) and counted", () => {
    const records = [
      taskRecord({ task: "history:a", passed: true }),
      taskRecord({ task: "history:a", passed: false, outcome: "no-edit" }),
      taskRecord({ task: "history:a", model: "other", passed: false, outcome: "no-edit" }),
      taskRecord({ task: "history:b", passed: false, outcome: "no-edit" }),
      taskRecord({ task: "history:b", passed: true }),
    ];
    const s = summarize(records, ["r"], "history", { now: NOW });
    expect(s.duplicates).toBe(2);
    expect(s.pairs.map((p) => [p.model, p.tasks, p.passed])).toEqual([
      ["gpt-test", 2, 1],
      ["other", 1, 0],
    ]);
  });

  test("pairs follow the order the run asked for models and formats; unknown ones follow, sorted", () => {
    const records = ["tool", "diff", "zeta", "udiff", "alpha"].map((format) => taskRecord({ format }));
    const s = summarize(records, ["r"], "history", { formats: ["diff", "udiff", "patch", "tool"], now: NOW });
    expect(s.pairs.map((p) => p.format)).toEqual(["diff", "udiff", "tool", "alpha", "zeta"]);
  });
});

describe("mergeRuns: shards", () => {
  test("three shards, in any order, merge to exactly the unsharded summary (float sums included)", () => {
    const records = sampleRecords();
    const spec = runSpec({ models: ["gpt-test", "other-model"], formats: ["diff", "udiff"], tasks: [...new Set(records.map((r) => r.task))] });
    const whole = writeRunDir(spec, records);
    const parent = tempDir("coder-eval-shards-");
    const shards = [1, 2, 3].map((i) =>
      writeRunDir(
        { ...spec, shard: [i, 3] },
        // Each shard holds every third task, written in its own (reversed) order.
        records.filter((r) => spec.tasks.indexOf(r.task) % 3 === i - 1).reverse(),
        { parent, name: `shard-${i}` },
      ),
    );
    const unsharded = mergeRuns([whole], { now: NOW }).summary;
    expect(shards.map((dir) => readRun(dir).records.length)).toEqual([12, 12, 8]);
    for (const order of [shards, [shards[2]!, shards[0]!, shards[1]!]]) {
      const merged = mergeRuns(order, { now: NOW }).summary;
      expect({ ...merged, runs: [] }).toEqual({ ...unsharded, runs: [] });
      expect(merged.runs).toEqual(order);
    }
    expect(unsharded.pairs.map((p) => `${p.model}/${p.format}`)).toEqual(["gpt-test/diff", "gpt-test/udiff", "other-model/diff", "other-model/udiff"]);
    expect(unsharded.pairs.every((p) => p.tasks === 8)).toBe(true);
  });

  test("a shard given twice counts its records as duplicates and changes nothing else", () => {
    const records = sampleRecords();
    const spec = runSpec({ models: ["gpt-test", "other-model"], formats: ["diff", "udiff"] });
    const dir = writeRunDir(spec, records);
    const once = mergeRuns([dir], { now: NOW }).summary;
    const twice = mergeRuns([dir, dir], { now: NOW }).summary;
    expect(twice.duplicates).toBe(records.length);
    expect(twice.pairs).toEqual(once.pairs);
  });

  test("a history run and an exercises run are not merged: the error names both", () => {
    const a = writeRunDir(runSpec(), [taskRecord()]);
    const b = writeRunDir(runSpec({ source: "exercises" }), []);
    expect(() => mergeRuns([a, b])).toThrow(`${b}: a exercises run cannot be merged with ${a}, a history run`);
  });
});

describe("readRun: what a bad run directory says", () => {
  test("a truncated last line (a killed run) is skipped with a warning naming file and line", () => {
    const records = [taskRecord({ task: "history:a" }), taskRecord({ task: "history:b" })];
    const text = `${JSON.stringify(records[0])}\n${JSON.stringify(records[1])}\n${JSON.stringify(taskRecord({ task: "history:c" })).slice(0, 50)}`;
    const dir = writeRunDir(runSpec(), [], { tasksText: text });
    const run = readRun(dir);
    expect(run.records.map((r) => r.task)).toEqual(["history:a", "history:b"]);
    expect(run.warnings).toEqual([`${join(dir, "tasks.jsonl")}:3: skipped an unfinished last line (50 characters; the run was stopped while writing it)`]);
  });

  test("a bad line before the last one is an error naming file and line", () => {
    const dir = writeRunDir(runSpec(), [], { tasksText: `{"v":1,\n${JSON.stringify(taskRecord())}\n` });
    expect(() => readRun(dir)).toThrow(`${join(dir, "tasks.jsonl")}:1: not valid JSON`);
  });

  test("an unknown record version, in a line or in run.json, names where and which version this coder reads", () => {
    const dir = writeRunDir(runSpec(), [taskRecord(), { ...taskRecord(), v: 2 as 1 }]);
    expect(() => readRun(dir)).toThrow(`${join(dir, "tasks.jsonl")}:2: record version 2; this coder reads version 1`);
    const dir2 = writeRunDir({ ...runSpec(), v: 7 as 1 }, []);
    expect(() => readRun(dir2)).toThrow(`${join(dir2, "run.json")}: record version 7; this coder reads version 1`);
  });

  test("a record missing a field or with a wrong one names the field", () => {
    const { cost: _, ...noCost } = taskRecord();
    const dir = writeRunDir(runSpec(), [noCost as never]);
    expect(() => readRun(dir)).toThrow(`${join(dir, "tasks.jsonl")}:1: field "cost" is missing`);
    const dir2 = writeRunDir(runSpec(), [taskRecord({ outcome: "great" as never })]);
    expect(() => readRun(dir2)).toThrow(`${join(dir2, "tasks.jsonl")}:1: field "outcome" is not what coder eval writes ("great")`);
  });

  test("no directory, a file, no run.json, bad run.json", () => {
    const parent = tempDir("coder-eval-bad-");
    expect(() => readRun(join(parent, "nope"))).toThrow(`${join(parent, "nope")}: no such directory`);
    writeFileSync(join(parent, "file"), "x");
    expect(() => readRun(join(parent, "file"))).toThrow(`${join(parent, "file")}: not a directory`);
    expect(() => readRun(parent)).toThrow(`${join(parent, "run.json")}: missing; ${parent} is not a coder eval run directory`);
    writeFileSync(join(parent, "run.json"), "{");
    expect(() => readRun(parent)).toThrow(`${join(parent, "run.json")}: not valid JSON`);
  });

  test("a run that finished no task yet (no tasks.jsonl) reads as no records", () => {
    const dir = writeRunDir(runSpec(), []);
    rmSync(join(dir, "tasks.jsonl"));
    expect(readRun(dir).records).toEqual([]);
  });
});
