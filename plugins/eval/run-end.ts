// The end of a run: the figures per model × format (summary.json) and their table on stdout.
// `coder eval report` (plugins/eval/summarize.ts, report-text.ts, built on another branch) has
// functions of the same names and signatures: once both are merged, the runner imports those and
// this file goes.
import { RECORD_VERSION, type PairSummary, type Summary, type TaskRecord } from "./record.ts";

/** The 95% Wilson interval of `k` successes in `n` trials. */
function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 0];
  const z = 1.96;
  const p = k / n;
  const centre = p + (z * z) / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  const d = 1 + (z * z) / n;
  return [Math.max(0, (centre - spread) / d), Math.min(1, (centre + spread) / d)];
}

export function summarize(records: readonly TaskRecord[], runs: readonly string[], source: Summary["source"]): Summary {
  const pairs = new Map<string, TaskRecord[]>();
  const seen = new Set<string>();
  let duplicates = 0;
  for (const r of records) {
    const key = `${r.task}\u0000${r.model}\u0000${r.format}`;
    if (seen.has(key)) {
      duplicates++;
      continue;
    }
    seen.add(key);
    const pair = `${r.model}\u0000${r.format}`;
    pairs.set(pair, [...(pairs.get(pair) ?? []), r]);
  }
  const out: PairSummary[] = [...pairs.values()].map((rs) => {
    const n = rs.length;
    const passed = rs.filter((r) => r.passed).length;
    const unknown = rs.some((r) => r.cost === null);
    const cost = unknown ? null : rs.reduce((s, r) => s + (r.cost ?? 0), 0);
    const outcomes: PairSummary["outcomes"] = {};
    for (const r of rs) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    const exercises = source === "exercises";
    return {
      model: rs[0]!.model,
      format: rs[0]!.format,
      tasks: n,
      passed,
      passRate: n ? passed / n : 0,
      passInterval: wilson(passed, n),
      pass1: exercises ? rs.filter((r) => r.passedFirst).length / n : null,
      pass2: exercises ? passed / n : null,
      wellFormedRate: rs.filter((r) => r.wellFormed).length / n,
      failedEdits: rs.reduce((s, r) => s + r.edits.failed, 0),
      refusedEdits: rs.reduce((s, r) => s + r.edits.refused, 0),
      silentWrong: rs.filter((r) => r.silentWrong).length,
      reflections: rs.reduce((s, r) => s + r.reflections, 0),
      tokensIn: rs.reduce((s, r) => s + r.tokens.in, 0),
      tokensOut: rs.reduce((s, r) => s + r.tokens.out, 0),
      cost,
      costPerTask: cost === null ? null : cost / n,
      secondsPerTask: rs.reduce((s, r) => s + r.seconds, 0) / n,
      outcomes,
    };
  });
  return { v: RECORD_VERSION, source, runs: [...runs], pairs: out, duplicates, generated: new Date().toISOString() };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The table per model × format, then the cost line. */
export function textReport(summary: Summary): string {
  const head = ["model", "format", "tasks", "pass", "95% interval", ...(summary.source === "exercises" ? ["pass@1", "pass@2"] : []), "well-formed", "failed", "refused", "silent wrong", "reflections", "tokens in/out", "cost", "s/task"];
  const rows = summary.pairs.map((p) => [
    p.model,
    p.format,
    String(p.tasks),
    pct(p.passRate),
    `${pct(p.passInterval[0])}–${pct(p.passInterval[1])}`,
    ...(summary.source === "exercises" ? [pct(p.pass1 ?? 0), pct(p.pass2 ?? 0)] : []),
    pct(p.wellFormedRate),
    String(p.failedEdits),
    String(p.refusedEdits),
    String(p.silentWrong),
    String(p.reflections),
    `${p.tokensIn}/${p.tokensOut}`,
    p.cost === null ? "unknown" : `$${p.cost.toFixed(4)}`,
    p.secondsPerTask.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  const tasks = summary.pairs.reduce((n, p) => n + p.tasks, 0);
  const unknown = summary.pairs.some((p) => p.cost === null);
  const cost = summary.pairs.reduce((sum, p) => sum + (p.cost ?? 0), 0);
  const costLine = unknown ? `Cost: $${cost.toFixed(4)} for ${tasks} tasks, and more: some models have no price (set their prices in config).` : `Cost: $${cost.toFixed(4)} for ${tasks} tasks.`;
  return [line(head), ...rows.map(line), "", costLine].join("\n");
}
