// A failed edit said for a person: what could not be done and where to look, instead of
// the internal reason code ("not-found: ..."). The model gets its own, longer report.
import type { EditOutcome } from "../plugin.ts";

/** At most this many lines of the closest region are quoted. */
const QUOTED_LINES = 8;

/** "Could not find the SEARCH text in shop/cart.py; closest lines 40–46:" and those lines; null for an applied edit. */
export function failureSummary(outcome: EditOutcome): string | null {
  if (outcome.status === "applied") return null;
  const path = outcome.path;
  if (outcome.status === "skipped") return `Skipped the edit to ${path}: ${firstLine(outcome.detail)}`;
  const best = outcome.match?.candidates[0];
  const changed = outcome.match?.userChange;
  if (changed) {
    const where = changed.startLine === changed.endLine ? `line ${changed.startLine}` : `lines ${changed.startLine}–${changed.endLine}`;
    if (changed.was === "shown") return `Did not edit ${path}: the model wrote this edit from ${changed.path} as it was before ${where} changed while it answered, and that change would have been undone; it was shown the current lines.`;
    return `Did not edit ${path}: the edit quotes ${changed.path} as last ${changed.was ?? "committed"}, and your ${changed.was === "saved" ? "unsaved" : "uncommitted"} change to ${where} would have been undone; the model was shown the current lines.`;
  }
  switch (outcome.reason) {
    case "not-found": {
      if (!best) return `Could not find the SEARCH text in ${path}.`;
      const lines = best.text.replace(/\n$/, "").split("\n");
      const quoted = lines.slice(0, QUOTED_LINES).map((line, i) => `${String(best.startLine + i).padStart(5)} │ ${line}`);
      if (lines.length > QUOTED_LINES) quoted.push(`      … ${lines.length - QUOTED_LINES} more lines`);
      const where = best.startLine === best.endLine ? `closest line ${best.startLine}` : `closest lines ${best.startLine}–${best.endLine}`;
      return [`Could not find the SEARCH text in ${path}; ${where}:`, ...quoted].join("\n");
    }
    case "ambiguous": {
      const at = outcome.match?.candidates.map((c) => c.startLine) ?? [];
      return `The SEARCH text matches ${at.length > 1 ? `${at.length} places` : "several places"} in ${path}${at.length ? ` (lines ${at.join(", ")})` : ""}; the model was asked for a longer, unique one.`;
    }
    case "already-applied":
      return `The edit to ${path} is already there (the REPLACE text is in the file).`;
    case "no-op":
      return `The edit to ${path} changes nothing (SEARCH and REPLACE are the same).`;
    case "missing-file":
      return `Could not edit ${path}: the file does not exist.`;
    case "refused":
      return `Did not edit ${path}: ${firstLine(outcome.detail).split(/(?<=\.) /)[0]}`;
    case "invalid":
      return `Could not apply the edit to ${path}: ${firstLine(outcome.detail)}`;
  }
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
