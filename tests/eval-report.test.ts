// `dist/coder eval report` end to end: run directories merged, the table, --json, --html through
// the kernel's flag parsing, and the exit codes of a bad directory and a planted link. It needs
// the eval plugin (plugins/eval/index.ts, which wires `coder eval report` to runReport); on a
// branch without it the file says so and skips.
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, coder, REPO, requireBinary, sandbox } from "./support/kernel.ts";
import { runSpec, sampleRecords, writeRunDir } from "./support/eval-runs.ts";

const wired = existsSync(join(REPO, "plugins", "eval", "index.ts"));
if (!wired) console.warn("eval-report: skipped, plugins/eval/index.ts (the coder eval plugin) is not on this branch");

/** A sandbox whose repository holds two shards of a sample run. */
function shards() {
  requireBinary();
  const box = sandbox();
  const records = sampleRecords();
  const spec = runSpec({ models: ["gpt-test", "other-model"], formats: ["diff", "udiff"] });
  writeRunDir({ ...spec, shard: [1, 2] }, records.filter((_, i) => i % 2 === 0), { parent: box.repo, name: "shard-1" });
  writeRunDir({ ...spec, shard: [2, 2] }, records.filter((_, i) => i % 2 === 1), { parent: box.repo, name: "shard-2" });
  return box;
}

describe.skipIf(!wired)(`${BIN} eval report`, () => {
  test("merges shards: the table on stdout, the HTML page where --html says", async () => {
    const box = shards();
    const r = await coder(["eval", "report", "--html", "out/eval.html", "shard-1", "shard-2"], { cwd: box.repo, env: box.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("coder eval: history, 32 tasks from 2 run directories\n");
    expect(r.stdout).toContain("gpt-test     diff        8         75.0% (40.9–92.9)       100.0%");
    expect(r.stdout).toContain("Cost: $13.69 for 32 tasks.");
    expect(r.stdout).toContain(`HTML report: ${join(box.repo, "out", "eval.html")}`);
    const html = readFileSync(join(box.repo, "out", "eval.html"), "utf8");
    expect(html.match(/<rect class="bar"/g)).toHaveLength(4);
    expect(html.match(/<details id="t-\d+"/g)).toHaveLength(32);
  });

  test("--json prints the merged summary and nothing else", async () => {
    const box = shards();
    const r = await coder(["eval", "report", "--json", "shard-2", "shard-1"], { cwd: box.repo, env: box.env });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ v: 1, source: "history", runs: ["shard-2", "shard-1"], duplicates: 0 });
    expect(summary.pairs.map((p: { passed: number; tasks: number }) => `${p.passed}/${p.tasks}`)).toEqual(["6/8", "4/8", "3/8", "1/8"]);
  });

  test("no directory, or one that is not a run, exits 2 naming it", async () => {
    const box = shards();
    const none = await coder(["eval", "report"], { cwd: box.repo, env: box.env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("coder eval report needs one or more run directories");
    writeFileSync(join(box.repo, "shard-2", "tasks.jsonl"), '{"v":1}\n{"v":1}\n');
    const bad = await coder(["eval", "report", "shard-1", "shard-2"], { cwd: box.repo, env: box.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('shard-2/tasks.jsonl:1: field "task" is missing');
    expect(bad.stdout).toBe("");
  });

  test("--html naming a planted link: refused, exit 1, its target untouched", async () => {
    const box = shards();
    writeFileSync(join(box.home, "precious"), "keep");
    symlinkSync(join(box.home, "precious"), join(box.repo, "eval.html"));
    const r = await coder(["eval", "report", "--html", "eval.html", "shard-1"], { cwd: box.repo, env: box.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the HTML report was not written to eval.html");
    expect(readFileSync(join(box.home, "precious"), "utf8")).toBe("keep");
    expect(lstatSync(join(box.repo, "eval.html")).isSymbolicLink()).toBe(true);
  });
});
