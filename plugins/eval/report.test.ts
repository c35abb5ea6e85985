import { describe, expect, test } from "bun:test";
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SubcommandContext } from "../../core/plugin.ts";
import { replaceNamedFile } from "../../core/edit/state.ts";
import { runReport } from "./report.ts";
import { mergeRuns } from "./summarize.ts";
import { runSpec, sampleRecords, writeRunDir } from "../../tests/support/eval-runs.ts";
import { tempDir } from "../../tests/support/kernel.ts";

class UsageStop extends Error {}

/** A subcommand context like the kernel's, keeping what is printed. */
function context(options: Record<string, unknown> = {}, json = false) {
  const out = { stdout: [] as string[], json: [] as unknown[], warnings: [] as string[] };
  const cli: SubcommandContext = {
    options,
    json,
    print: (text) => out.stdout.push(text),
    printJson: (value) => out.json.push(value),
    warn: (text) => out.warnings.push(text),
    usage: (message) => {
      throw new UsageStop(message);
    },
    context: () => {
      throw new Error("not used");
    },
  };
  return { cli, out };
}

/** Two shards of a sample run under one folder, which is also the cwd typed paths are relative to. */
function shards() {
  const cwd = tempDir("coder-eval-report-");
  const records = sampleRecords();
  const spec = runSpec({ models: ["gpt-test", "other-model"], formats: ["diff", "udiff"] });
  writeRunDir({ ...spec, shard: [1, 2] }, records.filter((_, i) => i % 2 === 0), { parent: cwd, name: "shard-1" });
  writeRunDir({ ...spec, shard: [2, 2] }, records.filter((_, i) => i % 2 === 1), { parent: cwd, name: "shard-2" });
  const kit = { cwd, writeOutput: (path: string, data: string | Uint8Array) => replaceNamedFile(resolve(cwd, path), data) };
  return { cwd, kit, records };
}

describe("coder eval report", () => {
  test("merges shards, prints the table, and writes the HTML page where --html says (paths relative to where coder runs)", () => {
    const { cwd, kit } = shards();
    const { cli, out } = context({ html: "out/report.html" });
    expect(runReport(["shard-1", "shard-2"], cli, kit)).toBe(0);
    const table = out.stdout[0]!;
    expect(table).toStartWith("coder eval: history, 32 tasks from 2 run directories\n");
    expect(table).toContain("other-model  udiff       8          12.5% (2.2–47.1)");
    expect(out.stdout[1]).toBe(`HTML report: ${join(cwd, "out", "report.html")}`);
    const html = readFileSync(join(cwd, "out", "report.html"), "utf8");
    expect(html.match(/<rect class="bar"/g)).toHaveLength(4);
    expect(html).toContain("<code>shard-1</code>, <code>shard-2</code>");
    expect(readdirSync(join(cwd, "out"))).toEqual(["report.html"]);
    expect(out.warnings).toEqual([]);
  });

  test("--json prints the merged summary alone", () => {
    const { cwd, kit } = shards();
    const { cli, out } = context({}, true);
    expect(runReport(["shard-2", "shard-1"], cli, kit)).toBe(0);
    expect(out.stdout).toEqual([]);
    const summary = out.json[0] as ReturnType<typeof mergeRuns>["summary"];
    expect(summary.runs).toEqual(["shard-2", "shard-1"]);
    expect(summary.pairs).toEqual(mergeRuns(["shard-1", "shard-2"], { cwd }).summary.pairs);
  });

  test("no directory, or a bad one, is a usage error naming it as typed", () => {
    const { kit } = shards();
    expect(() => runReport([], context().cli, kit)).toThrow("coder eval report needs one or more run directories");
    expect(() => runReport(["shard-1", "nope"], context().cli, kit)).toThrow("coder eval report: nope: no such directory");
    writeFileSync(join(kit.cwd, "shard-2", "run.json"), "[]");
    expect(() => runReport(["shard-2"], context().cli, kit)).toThrow("coder eval report: shard-2/run.json: not a JSON object");
    expect(() => runReport(["shard-1"], context({ html: "" }).cli, kit)).toThrow("--html needs a file name");
  });

  test("a shard whose last line a kill cut short is reported, with a warning naming the line", () => {
    const { cwd, kit } = shards();
    writeFileSync(join(cwd, "shard-1", "tasks.jsonl"), `${readFileSync(join(cwd, "shard-1", "tasks.jsonl"), "utf8")}{"v":1,"task":"hist`);
    const { cli, out } = context();
    expect(runReport(["shard-1", "shard-2"], cli, kit)).toBe(0);
    expect(out.warnings).toEqual(["shard-1/tasks.jsonl:17: skipped an unfinished last line (19 characters; the run was stopped while writing it)"]);
    expect(out.stdout[0]).toContain("32 tasks");
  });

  test("--html naming a symlink is refused: the link's target is untouched, the exit code 1, the table still printed", () => {
    const { cwd, kit } = shards();
    writeFileSync(join(cwd, "victim"), "keep");
    symlinkSync(join(cwd, "victim"), join(cwd, "report.html"));
    const { cli, out } = context({ html: "report.html" });
    expect(runReport(["shard-1"], cli, kit)).toBe(1);
    expect(out.warnings).toEqual([`coder eval report: the HTML report was not written to report.html: ${join(cwd, "report.html")} is a symlink; coder does not write through a link (name another file, or delete the link)`]);
    expect(readFileSync(join(cwd, "victim"), "utf8")).toBe("keep");
    expect(lstatSync(join(cwd, "report.html")).isSymbolicLink()).toBe(true);
    expect(out.stdout[0]).toContain("coder eval: history");
  });
});
