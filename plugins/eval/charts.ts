// The HTML report's charts as inline SVG (no script, no network): pass rate per model × format
// with its interval, cost against pass rate, and outcomes by kind. Every text from the records
// goes through escapeHtml; each chart carries a <title> and <desc> for screen readers.
import type { Outcome, PairSummary, Summary } from "./record.ts";
import { dollars, percent, rateWithInterval } from "./report-text.ts";

/** Text safe inside HTML and SVG elements and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const FORMAT_COLOURS = ["#3366cc", "#dc8a00", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#b82e2e"];

export const OUTCOME_COLOURS: Record<Outcome, string> = {
  exact: "#1b7837",
  equivalent: "#5aae61",
  "tests-passed": "#2ca25f",
  different: "#762a83",
  "tests-failed": "#e08214",
  "failed-edit": "#d73027",
  "no-edit": "#999999",
  malformed: "#f46d43",
  "model-error": "#8c510a",
  error: "#333333",
};

const OUTCOME_NAMES: Record<Outcome, string> = {
  exact: "exact",
  equivalent: "equivalent",
  "tests-passed": "tests passed",
  different: "silent wrong (different)",
  "tests-failed": "tests failed",
  "failed-edit": "failed edit",
  "no-edit": "no edit",
  malformed: "malformed reply",
  "model-error": "model error",
  error: "coder error",
};

/** Passing kinds first, then the failures from the closest miss to the farthest. */
export const STACK_ORDER: readonly Outcome[] = ["exact", "equivalent", "tests-passed", "different", "tests-failed", "failed-edit", "malformed", "no-edit", "model-error", "error"];

export function outcomeName(outcome: Outcome): string {
  return OUTCOME_NAMES[outcome];
}

const pairName = (p: PairSummary) => `${p.model} / ${p.format}`;

function formatColours(summary: Summary): Map<string, string> {
  const formats = [...new Set(summary.pairs.map((p) => p.format))];
  return new Map(formats.map((f, i) => [f, FORMAT_COLOURS[i % FORMAT_COLOURS.length]!]));
}

/** The opening of an accessible SVG: a title and a description it is labelled by. */
function svgOpen(id: string, width: number, height: number, title: string, desc: string): string {
  return `<svg id="${id}" class="chart" role="img" aria-labelledby="${id}-title ${id}-desc" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><title id="${id}-title">${escapeHtml(title)}</title><desc id="${id}-desc">${escapeHtml(desc)}</desc>`;
}

/** A name cut to fit under a bar (the full one is in the bar's title). */
function short(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const fixed = (n: number) => Number(n.toFixed(1));

/** Vertical bars of pass rate per pair, grouped by model and coloured by format, with 95% interval whiskers. */
export function passRateChart(summary: Summary): string {
  const pairs = summary.pairs;
  const left = 48;
  const top = 16;
  const plotH = 200;
  const slot = 76;
  const width = Math.max(360, left + pairs.length * slot + 24);
  const colours = formatColours(summary);
  const formats = [...colours.keys()];
  const height = top + plotH + 48 + 20 * Math.ceil(formats.length / 4);
  const y = (rate: number) => fixed(top + plotH * (1 - rate));
  const exercises = summary.source === "exercises";
  const about = exercises
    ? "Bars show each model and edit format's pass@2 (pale) and pass@1 (solid); whiskers show pass@2's 95% Wilson interval."
    : "Bars show each model and edit format's pass rate; whiskers show its 95% Wilson interval.";
  const out = [svgOpen("chart-pass", width, height, "Pass rate per model and format", `${about} ${pairs.map((p) => `${pairName(p)}: ${rateWithInterval(p)}${p.pass1 === null ? "" : `, pass@1 ${percent(p.pass1)}`}`).join("; ")}.`)];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<line class="grid" x1="${left}" x2="${width - 8}" y1="${y(tick)}" y2="${y(tick)}"/><text class="tick" x="${left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick * 100}%</text>`);
  }
  pairs.forEach((p, i) => {
    const x = left + i * slot + 10;
    const w = slot - 20;
    const mid = x + w / 2;
    const [low, high] = p.passInterval;
    out.push(
      `<g class="pair"><rect class="bar" x="${x}" y="${y(p.passRate)}" width="${w}" height="${fixed(plotH * p.passRate)}" fill="${colours.get(p.format)}"${p.pass1 === null ? "" : ' fill-opacity="0.45"'}><title>${escapeHtml(`${pairName(p)}: ${rateWithInterval(p)}, ${p.passed} of ${p.tasks} passed`)}</title></rect>`,
      // Exercises: the part passed at the first try drawn solid inside the pass@2 bar.
      p.pass1 === null ? "" : `<rect class="bar-first" x="${x}" y="${y(p.pass1)}" width="${w}" height="${fixed(plotH * p.pass1)}" fill="${colours.get(p.format)}"><title>${escapeHtml(`${pairName(p)}: pass@1 ${percent(p.pass1)}`)}</title></rect>`,
      `<path class="whisker" d="M${mid} ${y(low)}V${y(high)}M${mid - 6} ${y(low)}h12M${mid - 6} ${y(high)}h12"/>`,
      `<text class="label" x="${mid}" y="${top + plotH + 16}" text-anchor="middle">${escapeHtml(short(p.format, 12))}</text>`,
      `<text class="label model" x="${mid}" y="${top + plotH + 32}" text-anchor="middle">${escapeHtml(short(p.model, 12))}</text></g>`,
    );
  });
  formats.forEach((f, i) => {
    const lx = left + (i % 4) * 100;
    const ly = top + plotH + 44 + Math.floor(i / 4) * 20;
    out.push(`<rect class="swatch" x="${lx}" y="${ly}" width="12" height="12" fill="${colours.get(f)}"/><text class="tick" x="${lx + 17}" y="${ly + 10}">${escapeHtml(short(f, 12))}</text>`);
  });
  out.push("</svg>");
  return out.join("");
}

/** Each pair with a known cost as a point: cost per task across, pass rate up. */
export function costChart(summary: Summary): string {
  const known = summary.pairs.filter((p) => p.costPerTask !== null);
  const left = 56;
  const top = 16;
  const plotW = 420;
  const plotH = 220;
  const width = left + plotW + 150;
  const height = top + plotH + 44;
  const maxCost = Math.max(...known.map((p) => p.costPerTask!), 0) || 1;
  const x = (cost: number) => fixed(left + (plotW * cost) / (maxCost * 1.1));
  const y = (rate: number) => fixed(top + plotH * (1 - rate));
  const colours = formatColours(summary);
  const out = [
    svgOpen(
      "chart-cost",
      width,
      height,
      "Cost per task against pass rate",
      `Each point is a model and edit format: across, dollars per task; up, pass rate. ${known.map((p) => `${pairName(p)}: ${dollars(p.costPerTask)} per task, ${percent(p.passRate)}`).join("; ")}.`,
    ),
  ];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<line class="grid" x1="${left}" x2="${left + plotW}" y1="${y(tick)}" y2="${y(tick)}"/><text class="tick" x="${left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick * 100}%</text>`);
  }
  for (const tick of [0, 0.5, 1]) {
    const cost = maxCost * 1.1 * tick;
    out.push(`<text class="tick" x="${x(cost)}" y="${top + plotH + 18}" text-anchor="middle">${escapeHtml(dollars(cost))}</text>`);
  }
  out.push(`<line class="axis" x1="${left}" x2="${left + plotW}" y1="${y(0)}" y2="${y(0)}"/><text class="tick" x="${left + plotW / 2}" y="${top + plotH + 36}" text-anchor="middle">dollars per task</text>`);
  for (const p of known) {
    const cx = x(p.costPerTask!);
    const cy = y(p.passRate);
    out.push(
      `<g class="pair"><circle class="point" cx="${cx}" cy="${cy}" r="6" fill="${colours.get(p.format)}"><title>${escapeHtml(`${pairName(p)}: ${dollars(p.costPerTask)} per task, ${rateWithInterval(p)}`)}</title></circle>`,
      `<text class="label" x="${cx + 9}" y="${cy + 4}">${escapeHtml(short(pairName(p), 24))}</text></g>`,
    );
  }
  out.push("</svg>");
  return out.join("");
}

/** One horizontal bar per pair, split by how its tasks ended (passing kinds first, then failures by kind). */
export function outcomeChart(summary: Summary): string {
  const pairs = summary.pairs;
  const left = 150;
  const top = 8;
  const barH = 22;
  const gap = 10;
  const plotW = 420;
  const used = STACK_ORDER.filter((o) => pairs.some((p) => p.outcomes[o]));
  const legendRows = Math.ceil(used.length / 3);
  const width = left + plotW + 24;
  const height = top + pairs.length * (barH + gap) + 12 + legendRows * 20;
  const out = [
    svgOpen(
      "chart-outcomes",
      width,
      height,
      "How tasks ended, per model and format",
      `Each bar is a model and edit format's tasks, split by outcome. ${pairs.map((p) => `${pairName(p)}: ${used.filter((o) => p.outcomes[o]).map((o) => `${outcomeName(o)} ${p.outcomes[o]}`).join(", ")}`).join("; ")}.`,
    ),
  ];
  pairs.forEach((p, i) => {
    const y = top + i * (barH + gap);
    let x = left;
    out.push(`<g class="pair"><text class="label" x="${left - 8}" y="${y + barH / 2 + 4}" text-anchor="end">${escapeHtml(short(pairName(p), 22))}</text>`);
    for (const o of used) {
      const n = p.outcomes[o] ?? 0;
      if (!n) continue;
      const w = fixed((plotW * n) / p.tasks);
      out.push(`<rect class="seg" data-outcome="${o}" x="${fixed(x)}" y="${y}" width="${w}" height="${barH}" fill="${OUTCOME_COLOURS[o]}"><title>${escapeHtml(`${pairName(p)}: ${outcomeName(o)}, ${n} of ${p.tasks}`)}</title></rect>`);
      x += w;
    }
    out.push("</g>");
  });
  const legendTop = top + pairs.length * (barH + gap) + 8;
  used.forEach((o, i) => {
    const lx = left + (i % 3) * 150;
    const ly = legendTop + Math.floor(i / 3) * 20;
    out.push(`<rect class="swatch" x="${lx}" y="${ly}" width="12" height="12" fill="${OUTCOME_COLOURS[o]}"/><text class="tick" x="${lx + 17}" y="${ly + 10}">${escapeHtml(outcomeName(o))}</text>`);
  });
  out.push("</svg>");
  return out.join("");
}
