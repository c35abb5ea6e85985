// The `udiff` edit format: unified diffs in ```diff fences, hunks located by
// their text (line numbers ignored) through kit.matcher; new files via /dev/null.
import type { Edit, EditFormat, EditOutcome, FormatPrompts, Kit, MatchResult, MatchRung, ModelReply, PlacementHints, Plugin, PromptContext, Workspace } from "../../core/plugin.ts";
import { hunkTexts, loosest, rewordForHunks } from "../hunk-texts.ts";
import { ESCAPED_TEXT, filesRule, formatPrompts } from "../prompting.ts";
import { shellRule } from "../shell.ts";
import { changeRuns, parseUnifiedDiffs, type RawHunk, runWithContext } from "./parse.ts";

export interface UdiffEdit extends Edit {
  /** Hunk lines with their prefixes. */
  lines: string[];
  created: boolean;
  deleted: boolean;
  /** Where the hunk says it is (its `@@` line), consulted only when its text matches several places. */
  hints: PlacementHints;
}

function prompts(ctx: PromptContext): FormatPrompts {
  return formatPrompts(ctx, {
    editor: "You are an expert software developer applying a change that has already been planned. Reply with unified diffs only: no explanations.",
    role: "You are an expert software developer. Follow the user's request in the style the code already uses; ask when the request is ambiguous.",
    lastStep: "Write the change as unified diffs, following the rules below.",
    rules: `# How to write edits: unified diffs

Write changes as unified diffs, in a \`\`\`diff fence:
- Start each file with its two header lines: \`--- path\` and \`+++ path\` (the path relative to the repository root, no a/ b/ prefixes, no timestamps).
- Start each hunk with a line \`@@ ... @@\`. Line numbers are not needed and are ignored.
- In a hunk, every line starts with one character: a space for a line kept as is, \`-\` for a line removed, \`+\` for a line added.
- The kept and removed lines must be copied exactly from the current file, so the hunk can be found: every character and indentation.
- Think in whole blocks of code: when you change part of a function or class, remove the whole old block with \`-\` lines and add the whole new version with \`+\` lines. This is more reliable than many tiny changes.
- Keep a few unchanged lines around each change so the place is unambiguous.
- To create a file, use \`--- /dev/null\` and \`+++ path\` with one hunk of \`+\` lines holding the whole content.
- To delete a file, use \`--- path\` and \`+++ /dev/null\`, removing every line.
- ${ESCAPED_TEXT}
- ${filesRule(ctx)}
- ${shellRule(ctx, "of its own, not in a diff fence")}`,
    examples: [
      {
        request: "Make greet() in greet.py take a name.",
        explanation: "greet() takes a `name` and uses it; the caller passes one.",
        edits:
          '```diff\n--- greet.py\n+++ greet.py\n@@ ... @@\n-def greet():\n-    return "Hello, world"\n+def greet(name):\n+    return f"Hello, {name}"\n@@ ... @@\n if __name__ == "__main__":\n-    print(greet())\n+    print(greet("Ada"))\n```',
      },
      {
        request: "Put slugify in a new app/text.py and import it in app/views.py.",
        explanation: "slugify() moves to a new module; views.py imports it.",
        edits:
          '```diff\n--- /dev/null\n+++ app/text.py\n@@ ... @@\n+import re\n+\n+\n+def slugify(title):\n+    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n--- app/views.py\n+++ app/views.py\n@@ ... @@\n-import re\n-\n from app.models import Post\n+from app.text import slugify\n@@ ... @@\n-def slugify(title):\n-    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n-\n-\n def show(post):\n```',
      },
    ],
    reminder:
      "Reminder: write changes as unified diffs in ```diff fences: `--- path` / `+++ path` headers, `@@ ... @@` hunks, kept and removed lines copied exactly, whole blocks replaced rather than tiny edits.",
    editorReminder: " Diffs only.",
  });
}

/**
 * Apply one hunk's text change: the whole hunk first (where its `@@` line points, when its
 * text matches several places); when it does not match, each run of changes on its own,
 * with less and less context around it (all runs or nothing).
 */
function applyHunk(kit: Kit, content: string, edit: UdiffEdit, previousEnd: number | null): MatchResult & { note?: string } {
  const { lines } = edit;
  const { before, after } = hunkTexts(lines);
  const whole = kit.matcher.replace(content, before, after);
  if (whole.status === "failed" && whole.reason === "ambiguous" && whole.candidates.length <= 12) {
    const place = kit.formats.choosePlace(whole.candidates, content, edit.hints, previousEnd);
    const placed = place ? kit.matcher.replace(content, before, after, { at: place.at }) : null;
    if (placed?.status === "applied") return { ...placed, note: `the hunk matches ${whole.candidates.length} places; used lines ${placed.startLine}-${placed.endLine}: ${place!.why}` };
  }
  if (whole.status === "applied" || whole.reason !== "not-found") return whole;
  const runs = changeRuns(lines);
  let current = content;
  let first: MatchResult | null = null;
  let rung: MatchRung = "exact";
  for (let n = 0; n < runs.length; n++) {
    let done: MatchResult | null = null;
    for (const context of [3, 2, 1, 0]) {
      const piece = runWithContext(lines, runs, n, context);
      const t = hunkTexts(piece);
      if (t.before.trim() === "") continue; // a pure insertion needs an anchor
      const r = kit.matcher.replace(current, t.before, t.after);
      if (r.status === "applied") {
        done = r;
        break;
      }
      if (r.reason !== "not-found") break;
    }
    if (!done || done.status !== "applied") return whole;
    first ??= done;
    rung = loosest(kit, rung, done.rung);
    current = done.content;
  }
  return first && first.status === "applied" ? { ...first, content: current, rung } : whole;
}

function applyEdit(kit: Kit, edit: UdiffEdit, ws: Workspace, previousEnd: number | null): { outcome: EditOutcome<UdiffEdit>; endLine?: number } {
  const { path } = edit;
  const fail = (reason: "missing-file" | "invalid" | "refused", detail: string) => ({ outcome: { status: "failed", edit, path, reason, detail } as EditOutcome<UdiffEdit> });
  const refused = ws.check?.(path);
  if (refused) return fail("refused", refused);
  const content = ws.read(path);
  try {
    if (edit.deleted) {
      if (content === null) return fail("missing-file", `${path} does not exist, so it cannot be deleted.`);
      ws.remove(path);
      return { outcome: { status: "applied", edit, path, note: "deleted" } };
    }
    const { before, after } = hunkTexts(edit.lines);
    if (before.trim() === "" && (content === null || content === "")) {
      ws.write(path, after);
      return { outcome: { status: "applied", edit, path, note: content === null ? "created" : "filled" } };
    }
    // `--- /dev/null` says the file is new: over an existing file it would only append.
    if (edit.created && content !== null && content.trim() !== "") {
      return fail("invalid", `${path} already exists, so \`--- /dev/null\` (a new file) does not fit it; nothing was written to it. To change ${path}, write hunks against its current lines; if you meant a new file, use a path that does not exist.`);
    }
    if (content === null) {
      return fail("missing-file", `${path} does not exist. To create it, start the diff with \`--- /dev/null\` and \`+++ ${path}\` and add every line with \`+\`.`);
    }
    const r = applyHunk(kit, content, edit, previousEnd);
    if (r.status === "failed") {
      const detail = rewordForHunks(kit.matcher.explain(r, before, after, path), "hunk's kept and removed lines", "hunk's result");
      return { outcome: { status: "failed", edit, path, reason: r.reason, detail, match: r } };
    }
    ws.write(path, r.content);
    return { outcome: { status: "applied", edit, path, rung: r.rung, ...(r.note ? { note: r.note } : {}) }, endLine: r.endLine };
  } catch (err) {
    return fail("refused", (err as Error).message);
  }
}

/** Hunks the reply may have cut short: a ```diff fence never closed, or a bare diff when the reply hit its length limit. */
function cutOff(reply: ModelReply, hunks: readonly RawHunk[]): string | null {
  const unclosed = hunks.some((h) => h.ending === "unclosed");
  const bareAndCut = reply.finishReason === "length" && hunks.some((h) => h.ending === "bare");
  if (!unclosed && !bareAndCut) return null;
  return (
    (unclosed ? "The ```diff block at the end of your reply is never closed" : "Your reply was cut off by the output limit in the middle of its diff") +
    ", so its last hunk may be incomplete. Nothing from this reply was applied. Send the diff again, complete, and end it with the closing ```."
  );
}

const plugin: Plugin = (kit: Kit) => {
  const udiff: EditFormat<UdiffEdit> = {
    name: "udiff",
    summary: "unified diffs in ```diff fences (line numbers ignored)",
    prompts,
    parse(reply, ctx) {
      const hunks = parseUnifiedDiffs(reply.text, ctx.fence[0]);
      const cut = cutOff(reply, hunks);
      if (cut) throw new kit.FormatError(cut);
      let last: string | null = null;
      const edits = hunks.map((h): UdiffEdit => {
        const raw = h.filename ?? last;
        if (!raw) {
          throw new kit.FormatError(
            "A ```diff block in your reply has a hunk without file headers. Start every file's changes with `--- path` and `+++ path` lines before its first `@@ ... @@` hunk, then send the diff again.",
          );
        }
        last = raw;
        const path = ctx.resolvePath(raw) || raw;
        const header = `--- ${h.created ? "/dev/null" : path}\n+++ ${h.deleted ? "/dev/null" : path}\n@@ ... @@\n`;
        return { path, lines: h.lines, created: h.created, deleted: h.deleted, hints: kit.formats.hintsFromHunkHeader(h.header), source: header + h.lines.join("\n") + "\n" };
      });
      return { edits, shell: kit.formats.shellBlocks(reply.text).map((command) => ({ command })) };
    },
    apply(edits, ws) {
      // Where the previous hunk of each file ended: a clue for the next hunk of the same file.
      const lastEnd = new Map<string, number>();
      return edits.map((e) => {
        const { outcome, endLine } = applyEdit(kit, e, ws, lastEnd.get(e.path) ?? null);
        if (endLine !== undefined) lastEnd.set(e.path, endLine);
        return outcome;
      });
    },
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "udiff", formats: [udiff] };
};

export default plugin;
