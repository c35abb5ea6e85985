// The HTML report as a person sees it: opened in headless Chromium (Debian's `chromium`
// package; .ci/run installs it), its DOM after scripts ran, and a screenshot whose pixels show
// the charts. Skips, saying so, on a machine without Chromium.
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createJimp } from "@jimp/core";
import pngFormat from "@jimp/js-png";
import { htmlReport } from "../plugins/eval/html.ts";
import { mergeRuns } from "../plugins/eval/summarize.ts";
import { runSpec, sampleRecords, taskRecord, writeRunDir } from "./support/eval-runs.ts";
import { tempDir } from "./support/kernel.ts";

const chromium = Bun.which("chromium") ?? Bun.which("chromium-browser");
if (!chromium) console.warn("eval-report-chromium: skipped, no chromium on PATH (apt-get install chromium)");

function runChromium(args: string[]): { code: number; stdout: string; stderr: string } {
  const profile = tempDir("coder-chromium-");
  const r = Bun.spawnSync([chromium!, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", `--user-data-dir=${profile}`, ...args], { timeout: 90_000 });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** The sample report (with a commit message that tries to run a script), as a file. */
function samplePage(): { file: string; pairs: number; segments: number; records: number } {
  const records = [...sampleRecords(), taskRecord({ task: "history:ffff", title: `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">`, model: "gpt-test", format: "diff" })];
  const dir = writeRunDir(runSpec({ models: ["gpt-test", "other-model"], formats: ["diff", "udiff"] }), records, { parent: tempDir("coder-eval-run-") });
  const { summary, records: kept } = mergeRuns([dir], { now: new Date("2026-12-01T13:00:00.000Z") });
  const file = join(tempDir("coder-eval-html-"), "report.html");
  writeFileSync(file, htmlReport(summary, kept, ["runs/sample"]));
  return { file, pairs: summary.pairs.length, segments: summary.pairs.reduce((n, p) => n + Object.keys(p.outcomes).length, 0), records: kept.length };
}

describe.skipIf(!chromium)("the HTML report in headless Chromium", () => {
  test("the DOM after load: every chart's bars, points and segments; the linked transcript opened; the hostile message inert text", () => {
    const page = samplePage();
    const r = runChromium(["--dump-dom", `file://${page.file}#t-3`]);
    expect(r.code).toBe(0);
    const dom = r.stdout;
    expect(dom.match(/<rect class="bar"/g)).toHaveLength(page.pairs);
    expect(dom.match(/<circle class="point"/g)).toHaveLength(page.pairs);
    expect(dom.match(/<rect class="seg"/g)).toHaveLength(page.segments);
    expect(dom.match(/<details id="t-\d+"/g)).toHaveLength(page.records);
    // The page's own script ran (the policy allowed it by hash) and opened the transcript the address names.
    expect(dom).toContain('<details id="t-3" open="">');
    expect(dom).not.toMatch(/<details id="t-4" open/);
    // Only the page's script element; the commit message's script and image stayed text.
    expect(dom.match(/<script/g)).toHaveLength(1);
    expect(dom).not.toContain("<img");
    expect(dom).toContain("<title>coder eval: history, 33 tasks</title>");
    expect(dom).toContain("&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;");
  }, 120_000);

  test("a screenshot shows the charts: the formats' bar colours and the outcome segments' colours are on screen", async () => {
    const page = samplePage();
    const shot = join(tempDir("coder-eval-shot-"), "report.png");
    const r = runChromium([`--screenshot=${shot}`, "--window-size=1000,2000", "--hide-scrollbars", `file://${page.file}`]);
    expect(r.code).toBe(0);
    const Jimp = createJimp({ formats: [pngFormat] });
    const image = await Jimp.fromBuffer(readFileSync(shot));
    const { data, width, height } = image.bitmap;
    expect([width, height]).toEqual([1000, 2000]);
    const near = (i: number, rgb: number) => Math.abs(data[i]! - (rgb >> 16)) <= 4 && Math.abs(data[i + 1]! - ((rgb >> 8) & 0xff)) <= 4 && Math.abs(data[i + 2]! - (rgb & 0xff)) <= 4;
    const count = (rgb: number) => {
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (near(i, rgb)) n++;
      return n;
    };
    const white = count(0xffffff);
    expect(white).toBeLessThan(width * height * 0.97);
    // Bars of the first two formats (pass-rate chart) and the exact, failed-edit and silent-wrong segments.
    for (const colour of [0x3366cc, 0xdc8a00, 0x1b7837, 0xd73027, 0x762a83]) expect(count(colour)).toBeGreaterThan(300);
  }, 120_000);
});
