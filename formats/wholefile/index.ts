// The `whole` edit format: the model sends the complete new content of every
// file it changes. Simple and robust for small files; costly for big ones.
import type { Edit, EditFormat, EditOutcome, FormatPrompts, Kit, Plugin, PromptContext } from "../../core/plugin.ts";
import { parseOrFormatError } from "../format-error.ts";
import { formatPrompts } from "../prompting.ts";
import { ListingSyntaxError, parseListings } from "./parse.ts";

export interface WholeFileEdit extends Edit {
  content: string;
  /** Set when no path line named the file: it is the only chat file, and what stood before the fence. */
  unlabelled?: { label: string };
}

/** Share of a file's (distinct, non-blank) lines a new listing must keep to plausibly be that file. */
const KEPT_SHARE = 0.5;

/** How much of `before` survives in `after`, as a share of before's distinct non-blank lines. */
function keptShare(before: string, after: string): number {
  const lines = (t: string) => new Set(t.split("\n").map((l) => l.trim()).filter((l) => l !== ""));
  const old = lines(before);
  if (old.size === 0) return 1;
  const next = lines(after);
  return [...old].filter((l) => next.has(l)).length / old.size;
}

/** Why an unlabelled listing is not taken as the only chat file, or null when it plausibly is that file. */
function notThatFile(edit: WholeFileEdit, before: string | null): string | null {
  if (!edit.unlabelled || before === null || before.trim() === "") return null;
  const share = keptShare(before, edit.content);
  if (share >= KEPT_SHARE) return null;
  const label = edit.unlabelled.label;
  return [
    `This listing has no file path before its opening fence${label ? ` (the line before it is \`${label.slice(0, 80)}\`, which is not a path)` : ""}, so it could only be for ${edit.path}, the one file in the chat. But it does not look like ${edit.path}: it keeps ${Math.round(share * 100)}% of that file's lines. Nothing was written.`,
    "",
    `If it was an example, nothing needs doing. If it is the new content of a file, put that file's path alone on the line before the opening fence and send the listing again.`,
  ].join("\n");
}

/** The listing's content, without the final newline when the file had none and its last line stays. */
function keepFinalNewlineState(before: string | null, content: string): string {
  if (before === null || before === "" || before.endsWith("\n") || !content.endsWith("\n")) return content;
  const lastLine = (t: string) => t.slice(t.lastIndexOf("\n") + 1).replace(/\r$/, "");
  return lastLine(before) === lastLine(content.slice(0, -1)) ? content.slice(0, -1) : content;
}

function listing(ctx: PromptContext, path: string, lang: string, content: string): string {
  const open = ctx.fence[0].startsWith("<") ? ctx.fence[0] : ctx.fence[0] + lang;
  return `${path}\n${open}\n${content}${ctx.fence[1]}`;
}

function prompts(ctx: PromptContext): FormatPrompts {
  return formatPrompts(ctx, {
    editor: "You are an expert software developer applying a change that has already been planned. Reply with the complete new listing of each file you change, and nothing else.",
    role: "You are an expert software developer. Follow the user's request, in the style and with the libraries the code already uses. If the request is ambiguous, ask a question instead of guessing.",
    lastStep: "Send the complete new content of each file you change, as a file listing.",
    rules: `# How to write edits: file listings

A file listing is:
1. The file's path alone on a line, exactly as shown to you (relative to the repository root), with no decoration.
2. The opening fence with the code's language, e.g. ${ctx.fence[0]}python
3. The ENTIRE content of the file after your change: every line, from the first to the last.
4. The closing fence: ${ctx.fence[1]}

Rules:
- Never leave anything out. Do not write "..." or "rest of the file unchanged" or similar: whatever is not in the listing is deleted.
${ctx.fence[0].startsWith("`") ? `- If a line of the new content starts with ${ctx.fence[0]} (an example in a doc comment or in Markdown), wrap that listing in a longer fence (${ctx.fence[0]}\`), so the content cannot close it.\n` : ""}- Only send listings for files you change. To create a file, send a listing with its new path.
- Only change files that are in the chat; to change another file, ask the user to add it first.
${ctx.shellSuggestions ? "- Shell commands the user may want to run go in a ```bash block with no path line before it." : "- Do not suggest shell commands."}`,
    examples: [
      {
        request: "Make greet() in greet.py take a name.",
        explanation: "greet() takes a `name` and uses it; the caller passes one.",
        edits: listing(ctx, "greet.py", "python", 'def greet(name):\n    return f"Hello, {name}"\n\n\nif __name__ == "__main__":\n    print(greet("Ada"))\n'),
      },
      {
        request: "Add a README.md that says how to run greet.py.",
        explanation: "A new README.md with the one command.",
        edits: listing(ctx, "README.md", "markdown", "# greet\n\nRun it with:\n\n    python greet.py\n"),
      },
    ],
    reminder: "Reminder: send each changed file as a complete listing (path line, fence, every line of the file, closing fence); never elide lines.",
    editorReminder: " Listings only.",
  });
}

const plugin: Plugin = (kit: Kit) => {
  const whole: EditFormat<WholeFileEdit> = {
    name: "whole",
    summary: "the complete new content of each changed file",
    prompts,
    parse(reply, ctx) {
      const parsed = parseOrFormatError(kit, ListingSyntaxError, () => parseListings(reply.text, ctx.fence, ctx.chatFiles, ctx.repoFiles));
      const edits = parsed.listings.map((l): WholeFileEdit => {
        const path = ctx.resolvePath(l.filename) || l.filename;
        const lines = l.content === "" ? 0 : l.content.split("\n").length - 1;
        const source = `${l.origin === "block" ? path : (l.label ?? "")}\n${ctx.fence[0]}\n… (${lines} line${lines === 1 ? "" : "s"} of new content)\n${ctx.fence[1]}`;
        return { path, content: l.content, source, ...(l.origin === "chat" ? { unlabelled: { label: l.label ?? "" } } : {}) };
      });
      return { edits, shell: parsed.shell.map((command) => ({ command })) };
    },
    apply(edits, ws) {
      return edits.map((edit): EditOutcome<WholeFileEdit> => {
        const refused = ws.check?.(edit.path);
        if (refused) return { status: "failed", edit, path: edit.path, reason: "refused", detail: refused };
        const before = ws.read(edit.path);
        const mismatch = notThatFile(edit, before);
        if (mismatch) return { status: "failed", edit, path: edit.path, reason: "invalid", detail: mismatch };
        const content = keepFinalNewlineState(before, edit.content);
        try {
          ws.write(edit.path, content);
        } catch (err) {
          return { status: "failed", edit, path: edit.path, reason: "refused", detail: (err as Error).message };
        }
        const note = before === null ? "created" : before === content ? "unchanged" : undefined;
        return { status: "applied", edit, path: edit.path, ...(note ? { note } : {}) };
      });
    },
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "wholefile", formats: [whole] };
};

export default plugin;
