// The `udiff` edit format: unified diffs in ```diff fences, hunks located by
// their text (line numbers ignored) through kit.matcher; new files via /dev/null.
import type { Edit, EditFormat, EditOutcome, FormatPrompts, Kit, MatchResult, Plugin, PromptContext, Workspace } from "../../core/plugin.ts";
import { hunkTexts, rewordForHunks } from "../hunk-texts.ts";
import { formatPrompts } from "../prompting.ts";
import { shellBlocks } from "../shell.ts";
import { changeRuns, parseUnifiedDiffs, runWithContext } from "./parse.ts";

export interface UdiffEdit extends Edit {
  /** Hunk lines with their prefixes. */
  lines: string[];
  created: boolean;
  deleted: boolean;
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
- Only edit files in the chat; ask the user to add any other file first.
${ctx.shellSuggestions ? "- Shell commands the user may want to run go in a separate ```bash block." : "- Do not suggest shell commands."}`,
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
 * Apply one hunk's text change: the whole hunk first; when it does not match, each run
 * of changes on its own, with less and less context around it (all runs or nothing).
 */
function applyHunk(kit: Kit, content: string, lines: string[]): MatchResult {
  const { before, after } = hunkTexts(lines);
  const whole = kit.matcher.replace(content, before, after);
  if (whole.status === "applied" || whole.reason !== "not-found") return whole;
  const runs = changeRuns(lines);
  let current = content;
  let first: MatchResult | null = null;
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
    current = done.content;
  }
  return first && first.status === "applied" ? { ...first, content: current } : whole;
}

function applyEdit(kit: Kit, edit: UdiffEdit, ws: Workspace): EditOutcome<UdiffEdit> {
  const { path } = edit;
  const refused = ws.check?.(path);
  if (refused) return { status: "failed", edit, path, reason: "refused", detail: refused };
  const content = ws.read(path);
  const fail = (reason: "missing-file" | "invalid", detail: string): EditOutcome<UdiffEdit> => ({ status: "failed", edit, path, reason, detail });
  try {
    if (edit.deleted) {
      if (content === null) return fail("missing-file", `${path} does not exist, so it cannot be deleted.`);
      ws.remove(path);
      return { status: "applied", edit, path, note: "deleted" };
    }
    const { before, after } = hunkTexts(edit.lines);
    if (before.trim() === "" && (content === null || content === "")) {
      ws.write(path, after);
      return { status: "applied", edit, path, note: content === null ? "created" : "filled" };
    }
    if (content === null) {
      return fail("missing-file", `${path} does not exist. To create it, start the diff with \`--- /dev/null\` and \`+++ ${path}\` and add every line with \`+\`.`);
    }
    const r = applyHunk(kit, content, edit.lines);
    if (r.status === "failed") {
      return { status: "failed", edit, path, reason: r.reason, detail: rewordForHunks(kit.matcher.explain(r, before, after, path), "hunk's kept and removed lines", "hunk's result"), match: r };
    }
    ws.write(path, r.content);
    return { status: "applied", edit, path, rung: r.rung };
  } catch (err) {
    return { status: "failed", edit, path, reason: "refused", detail: (err as Error).message };
  }
}

const plugin: Plugin = (kit: Kit) => {
  const udiff: EditFormat<UdiffEdit> = {
    name: "udiff",
    summary: "unified diffs in ```diff fences (line numbers ignored)",
    prompts,
    parse(reply, ctx) {
      const hunks = parseUnifiedDiffs(reply.text, ctx.fence[0]);
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
        return { path, lines: h.lines, created: h.created, deleted: h.deleted, source: header + h.lines.join("\n") + "\n" };
      });
      return { edits, shell: shellBlocks(reply.text).map((command) => ({ command })) };
    },
    apply: (edits, ws) => edits.map((e) => applyEdit(kit, e, ws)),
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "udiff", formats: [udiff] };
};

export default plugin;
