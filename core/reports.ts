// Standard repair-grade reports (kit.reports): one combined reflection for a
// reply whose edits did not all apply, written for the model to act on.
import { fenced } from "./fence.ts";
import type { EditOutcome, ReportContext, Reports } from "./plugin.ts";

const firstLine = (text: string) => (text.split("\n").find((l) => l.trim() !== "") ?? "").trim().slice(0, 80);

/** How one edit is named in a list: its path and the first line of what it was. */
function label(outcome: EditOutcome, index: number): string {
  const hint = firstLine(outcome.edit.source.replace(/^.*\n/, ""));
  return `#${index + 1} ${outcome.path}${hint ? ` (${hint})` : ""}`;
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
    out.push("", `## Failed edit #${i + 1} in ${o.path} (${o.reason})`, fenced(o.edit.source, ctx.fence), "", o.detail.trim());
  }
  if (skipped.length > 0) {
    out.push("", "These edits were not made (the user or the rules refused them):");
    for (const o of skipped) out.push(`- ${label(o, outcomes.indexOf(o))}: ${o.detail}`);
  }
  const appliedCount = Math.max(applied.length, ctx.appliedCount);
  if (appliedCount > 0) {
    out.push("", `The other ${appliedCount} edit${appliedCount === 1 ? " was" : "s were"} applied and ${appliedCount === 1 ? "is" : "are"} now in the files: do not send ${appliedCount === 1 ? "it" : "them"} again.`);
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
