import { expect, test } from "bun:test";
import { summarize } from "./summarize.ts";
import { costLine, textReport } from "./report-text.ts";
import { sampleRecords, taskRecord } from "../../tests/support/eval-runs.ts";

const NOW = new Date("2026-12-01T13:00:00.000Z");

test("the terminal table of a small history run, every column", () => {
  const summary = summarize(sampleRecords(), ["runs/a", "runs/b"], "history", { models: ["gpt-test", "other-model"], formats: ["diff", "udiff"], now: NOW });
  expect(textReport(summary)).toBe(
    [
      "coder eval: history, 32 tasks from 2 run directories",
      "",
      "model        format  tasks  pass rate (95% interval)  well-formed  failed  refused  silent wrong  reflections  tokens in/out  $/task  s/task",
      "gpt-test     diff        8         75.0% (40.9–92.9)       100.0%       2        1             1            6      9.0k/1.1k  $0.055     5.0",
      "gpt-test     udiff       8         50.0% (21.5–78.5)        87.5%       2        1             1            6      9.0k/1.1k  $0.055     5.0",
      "other-model  diff        8         37.5% (13.7–69.4)        87.5%       2        1             1            6      9.0k/1.1k   $0.80     5.0",
      "other-model  udiff       8          12.5% (2.2–47.1)        75.0%       4        1             1            9      9.0k/1.1k   $0.80     5.0",
      "",
      "Cost: $13.69 for 32 tasks.",
      "",
    ].join("\n"),
  );
});

test("exercises show pass@2 with its interval and pass@1; duplicates are said", () => {
  const records = [
    taskRecord({ task: "exercise:js/a", outcome: "tests-passed", similarity: null }),
    taskRecord({ task: "exercise:js/b", passedFirst: false, outcome: "tests-passed", similarity: null }),
    taskRecord({ task: "exercise:js/b", passedFirst: false, outcome: "tests-passed", similarity: null }),
    taskRecord({ task: "exercise:py/c", passed: false, passedFirst: false, outcome: "tests-failed", similarity: null }),
  ];
  const text = textReport(summarize(records, ["r"], "exercises", { now: NOW }));
  expect(text).toContain("coder eval: exercises, 3 tasks from 1 run directory (1 repeated task counted once)\n");
  expect(text).toContain("pass@2 (95% interval)  pass@1");
  expect(text).toContain("66.7% (20.8–93.9)   33.3%");
});

test("the cost line never passes a partial total off as the whole", () => {
  const records = [taskRecord({ task: "history:a", cost: 0.5 }), taskRecord({ task: "history:b", cost: null }), taskRecord({ task: "history:a", format: "udiff", cost: 0.25 })];
  expect(costLine(summarize(records, ["r"], "history", { now: NOW }))).toBe("Cost: $0.25 for 1 task; unknown for gpt-test (diff): some of their tasks had no price.");
  expect(costLine(summarize([taskRecord({ cost: null })], ["r"], "history", { now: NOW }))).toStartWith("Cost: unknown");
  expect(textReport(summarize([taskRecord({ cost: null })], ["r"], "history", { now: NOW }))).toContain("  ?  ");
});

test("colour only when asked (a terminal); a model name's control characters are shown, not obeyed", () => {
  const summary = summarize([taskRecord({ model: "evil\x1b[2Jmodel" })], ["r"], "history", { now: NOW });
  const plain = textReport(summary);
  expect(plain).not.toContain("\x1b");
  expect(plain).toContain("evil\\x1b[2Jmodel");
  expect(textReport(summary, { color: true })).toContain("\x1b[1mmodel");
});

test("runs that finished nothing say so", () => {
  expect(textReport(summarize([], ["r"], "history", { now: NOW }))).toBe("coder eval: history, 0 tasks from 1 run directory\n\n(no task has finished in these runs)\n\nCost: nothing ran.\n");
});
