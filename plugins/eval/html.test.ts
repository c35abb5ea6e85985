import { describe, expect, test } from "bun:test";
import { htmlReport, transcriptBody } from "./html.ts";
import { summarize } from "./summarize.ts";
import { sampleRecords, taskRecord } from "../../tests/support/eval-runs.ts";

const NOW = new Date("2026-12-01T13:00:00.000Z");
const ATTACK = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`;

function page(records = sampleRecords()) {
  return htmlReport(summarize(records, ["runs/a"], "history", { now: NOW }), records, ["runs/a"]);
}

describe("htmlReport", () => {
  test("a commit message, a model name, a file name and transcript text carrying markup stay text", () => {
    const hostile = taskRecord({
      title: ATTACK,
      model: `m"><script>alert(2)</script>`,
      format: "diff' onmouseover='alert(3)",
      files: [`a${ATTACK}.ts`],
      error: ATTACK,
      outcome: "error",
      passed: false,
      transcript: [
        { type: "delta", text: `</pre>${ATTACK}` },
        { type: "commit", hash: "abc", message: ATTACK },
        { type: "edit", path: ATTACK, status: "failed", detail: ATTACK, diff: ATTACK },
        { type: `x${ATTACK}`, payload: ATTACK },
      ],
    });
    const html = page([hostile]);
    // Only the page's own script element; every attack is there as escaped text.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toContain("<img");
    expect(html).not.toContain("' onmouseover='");
    expect(html).toContain("&#60;script&#62;alert(&#34;pwned&#34;)&#60;/script&#62;");
    expect(html).toContain("diff&#39; onmouseover=&#39;alert(3)");
  });

  test("self-contained: nothing is fetched, and a policy forbids fetching anything or running other scripts", () => {
    const html = page();
    expect(html).not.toMatch(/\b(src|href)="(?!#)/);
    expect(html).not.toMatch(/@import|url\(/);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; script-src &#39;sha256-[A-Za-z0-9+/=]+&#39;/);
  });

  test("the charts: a bar and whisker per pair, a point per priced pair, a segment per outcome kind; titles on every chart", () => {
    const records = sampleRecords();
    const summary = summarize(records, ["runs/a"], "history", { now: NOW });
    const html = htmlReport(summary, records, ["runs/a"]);
    expect(html.match(/<rect class="bar"/g)).toHaveLength(4);
    expect(html.match(/<path class="whisker"/g)).toHaveLength(4);
    expect(html.match(/<circle class="point"/g)).toHaveLength(4);
    const kinds = summary.pairs.reduce((n, p) => n + Object.keys(p.outcomes).length, 0);
    expect(html.match(/<rect class="seg"/g)).toHaveLength(kinds);
    for (const id of ["chart-pass", "chart-cost", "chart-outcomes"]) expect(html).toContain(`<svg id="${id}" class="chart" role="img" aria-labelledby="${id}-title ${id}-desc"`);
    expect(html.match(/<th scope="col"/g)!.length).toBeGreaterThan(20);
  });

  test("every task row links to its transcript, embedded in the page", () => {
    const records = sampleRecords();
    const html = page(records);
    for (let i = 1; i <= records.length; i++) {
      expect(html).toContain(`<a href="#t-${i}" title="`);
      expect(html).toContain(`<details id="t-${i}">`);
    }
  });

  test("a pair without a price is left out of the cost chart and named under it", () => {
    const records = [taskRecord({ task: "history:a", cost: null }), taskRecord({ task: "history:a", format: "udiff" })];
    const html = page(records);
    expect(html.match(/<circle class="point"/g)).toHaveLength(1);
    expect(html).toContain("Not shown (a task's price is unknown): gpt-test / diff.");
  });
});

test("exercises: pass@1 drawn solid inside the pale pass@2 bar", () => {
  const records = [
    taskRecord({ task: "exercise:js/a", outcome: "tests-passed", similarity: null }),
    taskRecord({ task: "exercise:js/b", passedFirst: false, outcome: "tests-passed", similarity: null }),
    taskRecord({ task: "exercise:py/c", passed: false, passedFirst: false, outcome: "tests-failed", similarity: null }),
    taskRecord({ task: "exercise:py/d", passed: false, passedFirst: false, outcome: "tests-failed", similarity: null }),
  ];
  const html = htmlReport(summarize(records, ["r"], "exercises", { now: NOW }), records, ["r"]);
  // 200 px of plot: pass@2 50% is 100 px tall, pass@1 25% is 50 px.
  expect(html).toContain('<rect class="bar" x="58" y="116" width="56" height="100" fill="#3366cc" fill-opacity="0.45">');
  expect(html).toContain('<rect class="bar-first" x="58" y="166" width="56" height="50" fill="#3366cc">');
  expect(html).toContain("Solid: passed at the first try (pass@1)");
  expect(html).toContain("<th scope=\"col\">pass@1</th>");
});

describe("transcriptBody", () => {
  test("streamed text is joined into one block; the reply's copy of it is not shown twice", () => {
    const body = transcriptBody([
      { type: "request", model: "m", promptTokens: 10, estimated: false },
      { type: "delta", text: "Hel" },
      { type: "delta", text: "lo" },
      { type: "reply", text: "Hello", usage: {}, cost: 0, model: "m", finishReason: "stop" },
      { type: "output", text: "ok 1\n" },
      { type: "output", text: "ok 2\n" },
    ]);
    expect(body.match(/Hello/g)).toHaveLength(1);
    expect(body).toContain("<pre>ok 1\nok 2\n</pre>");
  });

  test("a reply that did not stream shows its text; odd events are shown as JSON, not dropped", () => {
    const body = transcriptBody([
      { type: "reply", text: "Whole", finishReason: "stop", cost: 0.0028 },
      42,
      { type: "retry", attempt: 1 },
      { type: "edit", path: "a.ts", status: "applied", detail: "applied" },
      { type: "edit", path: "b.ts", status: "failed", detail: "", summary: "Could not find the SEARCH text in b.ts" },
    ]);
    expect(body).toContain("stop; $0.0028<pre>Whole</pre>");
    expect(body).toContain("a.ts: applied</div>");
    expect(body).toContain("b.ts: failed — Could not find the SEARCH text in b.ts</div>");
    expect(body).toContain("42");
    expect(body).toContain("{&#34;attempt&#34;:1}");
  });
});
