// The terminal table of an eval summary: one row per model × format, then the cost line.
// Plain text unless told to colour (a terminal); numbers are formatted here and in html.ts alike.
import type { PairSummary, Summary } from "./record.ts";

/** 0.625 → "62.5%". */
export function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** A pass rate with its 95% interval: "62.5% (30.6–86.3)". */
export function rateWithInterval(pair: Pick<PairSummary, "passRate" | "passInterval">): string {
  const [low, high] = pair.passInterval;
  return `${percent(pair.passRate)} (${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)})`;
}

/** 1234 → "1.2k", 2_500_000 → "2.5M". */
export function tokenCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** Dollars with enough digits to tell cheap runs apart; "?" when unknown. */
export function dollars(value: number | null): string {
  if (value === null) return "?";
  if (value === 0) return "$0";
  return value >= 1 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`;
}

export function totalTasks(summary: Summary): number {
  return summary.pairs.reduce((n, p) => n + p.tasks, 0);
}

/** "Cost: $1.20 for 32 tasks" — or which pairs' prices are unknown, so a partial total is never read as the whole. */
export function costLine(summary: Summary): string {
  const known = summary.pairs.filter((p) => p.cost !== null);
  const unknown = summary.pairs.filter((p) => p.cost === null);
  const total = known.reduce((sum, p) => sum + p.cost!, 0);
  const tasks = known.reduce((n, p) => n + p.tasks, 0);
  if (!summary.pairs.length) return "Cost: nothing ran.";
  if (!known.length) return "Cost: unknown (no price is known for these models; set the models' prices in config to see it).";
  const line = `Cost: ${dollars(total)} for ${tasks} task${tasks === 1 ? "" : "s"}`;
  if (!unknown.length) return `${line}.`;
  return `${line}; unknown for ${unknown.map((p) => `${p.model} (${p.format})`).join(", ")}: some of their tasks had no price.`;
}

interface Column {
  header: string;
  cell(pair: PairSummary): string;
  left?: boolean;
}

function columns(summary: Summary): Column[] {
  const exercises = summary.source === "exercises";
  return [
    { header: "model", cell: (p) => p.model, left: true },
    { header: "format", cell: (p) => p.format, left: true },
    { header: "tasks", cell: (p) => String(p.tasks) },
    { header: exercises ? "pass@2 (95% interval)" : "pass rate (95% interval)", cell: rateWithInterval },
    ...(exercises ? [{ header: "pass@1", cell: (p: PairSummary) => percent(p.pass1 ?? 0) }] : []),
    { header: "well-formed", cell: (p) => percent(p.wellFormedRate) },
    { header: "failed", cell: (p) => String(p.failedEdits) },
    { header: "refused", cell: (p) => String(p.refusedEdits) },
    { header: "silent wrong", cell: (p) => String(p.silentWrong) },
    { header: "reflections", cell: (p) => String(p.reflections) },
    { header: "tokens in/out", cell: (p) => `${tokenCount(p.tokensIn)}/${tokenCount(p.tokensOut)}` },
    { header: "$/task", cell: (p) => dollars(p.costPerTask) },
    { header: "s/task", cell: (p) => p.secondsPerTask.toFixed(1) },
  ];
}

/** Control characters in a model or format name would move the cursor: shown escaped. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** The summary as a table for the terminal. `color`: bold headers (a terminal that is not NO_COLOR). */
export function textReport(summary: Summary, options: { color?: boolean } = {}): string {
  const cols = columns(summary);
  const rows = summary.pairs.map((p) => cols.map((c) => printable(c.cell(p))));
  const widths = cols.map((c, i) => Math.max(c.header.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (cols[i]!.left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  const header = line(cols.map((c) => c.header));
  const tasks = totalTasks(summary);
  const runs = summary.runs.length;
  const title = `coder eval: ${summary.source}, ${tasks} task${tasks === 1 ? "" : "s"} from ${runs} run director${runs === 1 ? "y" : "ies"}${summary.duplicates ? ` (${summary.duplicates} repeated task${summary.duplicates === 1 ? "" : "s"} counted once)` : ""}`;
  const bold = (text: string) => (options.color ? `\x1b[1m${text}\x1b[22m` : text);
  const out = [title, "", bold(header), ...rows.map(line), "", costLine(summary)];
  if (!summary.pairs.length) out.splice(2, 1, "(no task has finished in these runs)");
  return `${out.join("\n")}\n`;
}
