// `coder eval report --html FILE`: one self-contained page a person can open anywhere, offline.
// No external script, style, font or image; a Content-Security-Policy lets nothing load and
// runs only the page's own few lines, so a string from the records that escaped escaping still
// could not run. Every task's transcript is in the page, each under an id its table row links to.
import { createHash } from "node:crypto";
import type { Outcome, Summary, TaskRecord } from "./record.ts";
import { costChart, escapeHtml, OUTCOME_COLOURS, outcomeChart, outcomeName, passRateChart } from "./charts.ts";
import { costLine, dollars, percent, rateWithInterval, tokenCount, totalTasks } from "./report-text.ts";

/** Opens a transcript's <details> when a link (or the address) targets it. */
const SCRIPT = `function openTarget(){var id=decodeURIComponent(location.hash.slice(1));var t=id&&document.getElementById(id);if(t&&t.tagName==="DETAILS")t.open=true;}addEventListener("hashchange",openTarget);openTarget();`;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;background:#fff;margin:0 auto;padding:16px 24px 48px;max-width:1200px}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}th,td{padding:4px 6px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}
th{background:#f5f5f7;font-weight:600}td,th[scope=row]{white-space:nowrap}.tasks th[scope=row]{white-space:normal;min-width:14em}.scroll{overflow-x:auto}th[scope=row],td.text,th.text{text-align:left}
.meta{color:#555}.chart{max-width:100%;height:auto;display:block;margin:8px 0}
.chart .grid{stroke:#e5e5e5}.chart .axis{stroke:#999}.chart .whisker{stroke:#222;stroke-width:1.5;fill:none}
.chart text{font-size:11px;fill:#333}.chart .label{font-size:11px}.chart .model{fill:#666}
.outcome{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
.pass{color:#1b7837}.fail{color:#b2182b}
details{border:1px solid #ddd;border-radius:6px;margin:6px 0;padding:4px 10px}details[open]{background:#fafafa}
summary{cursor:pointer;font-weight:600}pre{white-space:pre-wrap;word-break:break-word;background:#f3f3f3;padding:6px 8px;border-radius:4px;margin:4px 0;max-height:480px;overflow:auto}
.ev{margin:6px 0}.kind{display:inline-block;min-width:80px;font:12px ui-monospace,monospace;color:#555}
.note{color:#555;font-style:italic}
`;

/** The whole page for `summary`, its task records (in the order to list them) and the run directories they came from. */
export function htmlReport(summary: Summary, records: readonly TaskRecord[], runDirs: readonly string[]): string {
  const hash = createHash("sha256").update(SCRIPT).digest("base64");
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; img-src data:; base-uri 'none'; form-action 'none'`;
  const tasks = totalTasks(summary);
  const title = `coder eval: ${summary.source}, ${tasks} task${tasks === 1 ? "" : "s"}`;
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>`,
    "<body>",
    `<header><h1>${escapeHtml(title)}</h1>`,
    `<p class="meta">Generated ${escapeHtml(summary.generated)} from ${runDirs.length === 1 ? "the run directory" : `${runDirs.length} run directories`} ${runDirs.map((d) => `<code>${escapeHtml(d)}</code>`).join(", ")}.${summary.duplicates ? ` ${summary.duplicates} task${summary.duplicates === 1 ? "" : "s"} seen in more than one run counted once.` : ""}</p></header>`,
    "<main>",
    '<section id="summary"><h2>Summary</h2>',
    summaryTable(summary),
    `<p>${escapeHtml(costLine(summary))}</p></section>`,
    ...(summary.pairs.length
      ? [
          '<section id="pass-rate"><h2>Pass rate per model and format</h2>',
          passRateChart(summary),
          `<p class="note">${summary.source === "exercises" ? "Solid: passed at the first try (pass@1); pale: on the second, after the test output went back (pass@2). " : ""}Whiskers: the 95% Wilson interval. Few tasks make it wide: read overlapping intervals as "not told apart".</p></section>`,
          '<section id="cost"><h2>Cost against pass rate</h2>',
          costChart(summary),
          unknownCostNote(summary),
          "</section>",
          '<section id="outcomes"><h2>Failures by kind</h2>',
          outcomeChart(summary),
          "</section>",
        ]
      : []),
    '<section id="tasks"><h2>Tasks</h2>',
    taskTable(records),
    "</section>",
    '<section id="transcripts"><h2>Transcripts</h2>',
    records.map((r, i) => transcript(r, i)).join("\n"),
    "</section>",
    "</main>",
    `<script>${SCRIPT}</script>`,
    "</body></html>",
    "",
  ].join("\n");
}

function unknownCostNote(summary: Summary): string {
  const unknown = summary.pairs.filter((p) => p.costPerTask === null);
  if (!unknown.length) return "";
  return `<p class="note">Not shown (a task's price is unknown): ${unknown.map((p) => escapeHtml(`${p.model} / ${p.format}`)).join(", ")}.</p>`;
}

function summaryTable(summary: Summary): string {
  const exercises = summary.source === "exercises";
  const headers = [
    "Model",
    "Format",
    "Tasks",
    exercises ? "pass@2 (95% interval)" : "Pass rate (95% interval)",
    ...(exercises ? ["pass@1"] : []),
    "Well-formed",
    "Failed edits",
    "Refused edits",
    "Silent wrong",
    "Reflections",
    "Tokens in / out",
    "$ / task",
    "s / task",
  ];
  const rows = summary.pairs.map((p) => {
    const cells = [
      p.tasks,
      rateWithInterval(p),
      ...(exercises ? [percent(p.pass1 ?? 0)] : []),
      percent(p.wellFormedRate),
      p.failedEdits,
      p.refusedEdits,
      p.silentWrong,
      p.reflections,
      `${tokenCount(p.tokensIn)} / ${tokenCount(p.tokensOut)}`,
      dollars(p.costPerTask),
      p.secondsPerTask.toFixed(1),
    ];
    return `<tr><th scope="row">${escapeHtml(p.model)}</th><td class="text">${escapeHtml(p.format)}</td>${cells.map((c) => `<td>${escapeHtml(String(c))}</td>`).join("")}</tr>`;
  });
  return `<div class="scroll"><table><caption class="meta">Per model and edit format</caption><thead><tr>${headers.map((h, i) => `<th scope="col"${i < 2 ? ' class="text"' : ""}>${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
}

function outcomeBadge(outcome: Outcome): string {
  return `<span class="outcome" style="background:${OUTCOME_COLOURS[outcome]}"></span>${escapeHtml(outcomeName(outcome))}`;
}

/** "history:<sha>" → the short sha; an exercise keeps its name. */
function taskLabel(r: TaskRecord): string {
  const m = /^history:([0-9a-f]{7,64})$/.exec(r.task);
  return m ? m[1]!.slice(0, 10) : r.task;
}

function taskTable(records: readonly TaskRecord[]): string {
  if (!records.length) return '<p class="note">No task has finished in these runs.</p>';
  const headers = ["Task", "Model", "Format", "Outcome", "Passed", "Similarity", "Reflections", "Tokens in / out", "Cost", "Seconds"];
  const rows = records.map((r, i) => {
    const name = r.title ? `${taskLabel(r)} ${r.title}` : taskLabel(r);
    return [
      `<tr><th scope="row" class="text"><a href="#t-${i + 1}" title="${escapeHtml(`${r.task}: its transcript`)}">${escapeHtml(name)}</a></th>`,
      `<td class="text">${escapeHtml(r.model)}</td><td class="text">${escapeHtml(r.format)}</td><td class="text">${outcomeBadge(r.outcome)}</td>`,
      `<td class="${r.passed ? "pass" : "fail"}">${r.passed ? (r.passedFirst ? "yes" : "yes, 2nd try") : "no"}</td>`,
      `<td>${r.similarity === null ? "–" : r.similarity.toFixed(2)}</td><td>${r.reflections}</td>`,
      `<td>${escapeHtml(`${tokenCount(r.tokens.in)} / ${tokenCount(r.tokens.out)}`)}</td><td>${escapeHtml(dollars(r.cost))}</td><td>${r.seconds.toFixed(1)}</td></tr>`,
    ].join("");
  });
  return `<div class="scroll"><table class="tasks"><thead><tr>${headers.map((h) => `<th scope="col" class="text">${h}</th>`).join("")}</tr></thead><tbody>${rows.join("\n")}</tbody></table></div>`;
}

function field(event: Record<string, unknown>, key: string): string {
  const value = event[key];
  return typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
}

/** One task's `--json` events, readable: streamed text joined, edits with their diffs, commands with their output. */
export function transcriptBody(events: readonly unknown[]): string {
  const out: string[] = [];
  let stream = null as { kind: string; text: string } | null;
  let streamedSinceRequest = false;
  const flush = () => {
    if (stream?.text) out.push(`<div class="ev"><span class="kind">${escapeHtml(stream.kind)}</span><pre>${escapeHtml(stream.text)}</pre></div>`);
    stream = null;
  };
  const line = (kind: string, text: string, pre?: string) =>
    out.push(`<div class="ev"><span class="kind">${escapeHtml(kind)}</span>${escapeHtml(text)}${pre ? `<pre>${escapeHtml(pre)}</pre>` : ""}</div>`);
  for (const raw of events) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      flush();
      line("?", JSON.stringify(raw) ?? String(raw));
      continue;
    }
    const event = raw as Record<string, unknown>;
    const type = field(event, "type");
    const streamed = type === "delta" ? "reply" : type === "reasoning" ? "reasoning" : type === "output" ? "output" : null;
    if (streamed) {
      if (stream?.kind !== streamed) flush();
      stream ??= { kind: streamed, text: "" };
      stream.text += field(event, "text");
      if (type === "delta") streamedSinceRequest = true;
      continue;
    }
    flush();
    switch (type) {
      case "start":
        line("start", `${field(event, "model")}, ${field(event, "editFormat")}; files: ${(Array.isArray(event.files) ? event.files : []).join(", ") || "none"}`);
        break;
      case "request":
        streamedSinceRequest = false;
        line("request", `${field(event, "model")}, ${field(event, "promptTokens")} prompt tokens`);
        break;
      case "reply":
        line("reply done", `${field(event, "finishReason")}${typeof event.cost === "number" ? `; ${dollars(event.cost)}` : ""}`, streamedSinceRequest ? undefined : field(event, "text"));
        break;
      case "edit": {
        const status = field(event, "status");
        const said = field(event, "summary") || field(event, "detail");
        line("edit", `${field(event, "path")}: ${status}${said && said !== status ? ` — ${said}` : ""}`, event.diff ? field(event, "diff") : undefined);
        break;
      }
      case "command":
        line("command", `${field(event, "purpose")}: ${field(event, "command")}`);
        break;
      case "lint":
      case "test":
        line(type, `${event.ok ? "passed" : "failed"}: ${field(event, "command")}`, field(event, "output") || undefined);
        break;
      case "reflection":
        line("reflection", `#${field(event, "n")}`, field(event, "reason"));
        break;
      case "commit":
        line("commit", field(event, "hash").slice(0, 12), field(event, "message"));
        break;
      case "warning":
      case "error":
        line(type, field(event, "message"));
        break;
      case "end":
        line("end", `exit code ${field(event, "exitCode")}`);
        break;
      default: {
        const { type: _, ...rest } = event;
        line(type || "event", JSON.stringify(rest));
      }
    }
  }
  flush();
  return out.join("\n") || '<p class="note">No events were recorded for this task.</p>';
}

function transcript(r: TaskRecord, i: number): string {
  const head = `${r.title ? `${taskLabel(r)} ${r.title}` : taskLabel(r)} — ${r.model} / ${r.format} — ${outcomeName(r.outcome)}`;
  return [
    `<details id="t-${i + 1}"><summary>${escapeHtml(head)}</summary>`,
    `<p class="meta">Task <code>${escapeHtml(r.task)}</code>; files: ${r.files.map((f) => `<code>${escapeHtml(f)}</code>`).join(", ") || "none"}; finished ${escapeHtml(r.finished)}.</p>`,
    r.error ? `<p class="fail">${escapeHtml(r.error)}</p>` : "",
    transcriptBody(r.transcript),
    "</details>",
  ].join("\n");
}
