// Standard repair-grade reports (kit.reports): one combined reflection for a
// reply whose edits did not all apply, written for the model to act on.
import { fenced } from "./fence.ts";
import type { EditOutcome, ReportContext, Reports } from "../plugin.ts";

/** Lines that say nothing about what an edit was: paths, fences, markers. */
const isScaffold = (line: string, path: string) =>
  line === path || /^(`{3,}|<\/?[a-z]+>|<{5,9} SEARCH|={5,9}$|>{5,9} REPLACE|\*\*\* |--- |\+\+\+ |@@)/.test(line) || /^(edit_file|create_file) /.test(line);

/** How one edit is named in a list: its number, path and first meaningful line. */
function label(outcome: EditOutcome, index: number): string {
  const hint = outcome.edit.source
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "" && !isScaffold(l, outcome.edit.path) && !isScaffold(l, outcome.path));
  return `#${index + 1} ${outcome.path}${hint ? ` (${hint.replace(/^[-+ ]/, "").trim().slice(0, 70)})` : ""}`;
}

/** The edit as the model wrote it: as is when it carries its own fence, else fenced. */
function echo(source: string, fence: ReportContext["fence"]): string {
  const lines = source.split("\n").slice(0, 2);
  return lines.some((l) => l.trimStart().startsWith(fence[0])) ? source.replace(/\n$/, "") : fenced(source, fence);
}

/**
 * The reflection for a reply in which some edit did not apply: how many failed, each
 * echoed with the explanation (the matcher's "did you mean" for mismatches), then the
 * edits that did apply, which must not be sent again.
 */
export function failedEditsReport(outcomes: EditOutcome[], ctx: ReportContext): string {
  const failed = outcomes.filter((o) => o.status === "failed");
  const skipped = outcomes.filter((o) => o.status === "skipped");
  const applied = outcomes.filter((o) => o.status === "applied");
  if (failed.length === 0 && skipped.length === 0) return "";
  const out: string[] = [];
  if (failed.length > 0) {
    out.push(`${failed.length} of ${outcomes.length} edit${outcomes.length === 1 ? "" : "s"} failed to apply.`);
  }
  for (const o of failed) {
    const i = outcomes.indexOf(o);
    out.push("", `## Failed edit #${i + 1} in ${o.path} (${o.reason})`, echo(o.edit.source, ctx.fence), "", o.detail.trim());
  }
  if (skipped.length > 0) {
    out.push("", "These edits were not made (the user or the rules refused them):");
    for (const o of skipped) out.push(`- ${label(o, outcomes.indexOf(o))}: ${o.detail}`);
  }
  const appliedCount = Math.max(applied.length, ctx.appliedCount);
  if (appliedCount > 0) {
    const them = appliedCount === 1 ? "1 other edit was applied and is now in the files: do not send it again." : `${appliedCount} other edits were applied and are now in the files: do not send them again.`;
    out.push("", them);
    for (const o of applied) out.push(`- ${label(o, outcomes.indexOf(o))}`);
  }
  if (failed.length > 0) {
    out.push("", "Send corrected versions of only the failed edits, matching the files as they are now.");
  }
  return out.join("\n");
}

/** The standard reports, as handed to plugins in `kit.reports`. */
export const reports: Reports = {
  failedEdits: failedEditsReport,
};
