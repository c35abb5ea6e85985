// The `whole` edit format: the model sends the complete new content of every
// file it changes. Simple and robust for small files; costly for big ones.
import type { Edit, EditFormat, EditOutcome, FormatPrompts, Kit, Plugin, PromptContext, Workspace } from "../../core/plugin.ts";
import { parseOrFormatError } from "../format-error.ts";
import { filesRule, formatPrompts, openFence } from "../prompting.ts";
import { shellRule } from "../shell.ts";
import { ListingSyntaxError, parseListings, pathlikeLabel } from "./parse.ts";

export interface WholeFileEdit extends Edit {
  content: string;
  /** Set when no path line named the file: what stood before the fence, and the chat files it may be. */
  unlabelled?: { label: string; candidates: readonly string[]; pathlike: boolean; named: boolean };
  /** The fence as written when it is not the one taught (``` under a ```` fence), and the one taught. */
  offFence?: { written: string; taught: string };
}

const nonBlank = (t: string) => t.split("\n").map((l) => l.trim()).filter((l) => l !== "");

/**
 * Is `next` plausibly the whole of `before`, not a snippet of it: at least half as many
 * non-blank lines, the same first or last line, and at least half of its distinct lines
 * kept. An empty or new file takes anything, and so does a file of two lines the reply named.
 */
export function plausiblyWhole(before: string | null, next: string, named = false): boolean {
  const old = before === null ? [] : nonBlank(before);
  if (old.length === 0) return true;
  // A two-line file (a placeholder) the reply named has nothing a listing could silently lose.
  if (named && old.length <= 2) return true;
  const now = nonBlank(next);
  if (now.length === 0 || now.length * 2 < old.length) return false;
  if (now[0] !== old[0] && now.at(-1) !== old.at(-1)) return false;
  const kept = new Set(now);
  const distinct = new Set(old);
  return [...distinct].filter((l) => kept.has(l)).length * 2 >= distinct.size;
}

/** Which chat file an unlabelled listing is, or why none: `skip` for prose (an example), `fail` when the model meant a file. */
function placeUnlabelled(edit: WholeFileEdit, ws: Workspace): { path: string } | { skip: string } | { fail: string } {
  const u = edit.unlabelled!;
  const fits = u.candidates.filter((c) => plausiblyWhole(ws.read(c), edit.content, u.named));
  if (fits.length === 1) return { path: fits[0]! };
  const lines = nonBlank(edit.content).length;
  const which = u.candidates.length === 1 ? u.candidates[0]! : `any of the chat files (${u.candidates.join(", ")})`;
  const label = u.label ? ` (the line before it is \`${u.label.slice(0, 80)}\`, which is not a path)` : "";
  if (fits.length > 1) {
    return { fail: `This listing has no file path before its opening fence${label}, and it could be any of ${fits.join(", ")}. Nothing was written. Put the file's path alone on the line before the opening fence and send the listing again.` };
  }
  if (u.pathlike) {
    return {
      fail: [
        `This listing has no file path before its opening fence${label}, so it could only be for ${which}. But it does not look like ${u.candidates.length === 1 ? u.candidates[0] : "any of them"} (its ${lines} line${lines === 1 ? "" : "s"} are not the whole file). Nothing was written.`,
        "",
        "If it is the new content of a file, put that file's path alone on the line before the opening fence and send the listing again.",
      ].join("\n"),
    };
  }
  return { skip: `a code block without a path line (${lines} line${lines === 1 ? "" : "s"}) is not the whole of ${which}: read as an example, nothing written` };
}

/** An off-fence listing (``` under ````) of a file whose own lines start with that fence may have been cut by one of them. */
function offFenceClash(edit: WholeFileEdit, before: string | null): string | null {
  if (!edit.offFence) return null;
  const { written: marker, taught: fence } = edit.offFence;
  if (before === null || !before.split("\n").some((l) => l.trimStart().startsWith(marker))) return null;
  return `The listing of ${edit.path} is wrapped in ${marker}, but ${edit.path} has lines that start with ${marker}, so one of them may have closed the listing early. Nothing was written. Send the whole file again wrapped in ${fence}, the fence this conversation uses.`;
}

/** Lines that open or close a SEARCH/REPLACE block or a git conflict. */
const MARKER = /^(?:<{7}|>{7})(?:\s|$)/;
const hasMarkers = (t: string) => t.split("\n").some((l) => MARKER.test(l.trimEnd()));

/**
 * A listing that carries SEARCH/REPLACE or conflict markers the file did not have is an edit
 * in another format (or a merge gone wrong), never the file's new content: writing it would
 * leave the markers in the file.
 */
function markerClash(edit: WholeFileEdit, before: string | null): string | null {
  if (!hasMarkers(edit.content) || (before !== null && hasMarkers(before))) return null;
  return `The listing of ${edit.path} has lines that start with <<<<<<< or >>>>>>>, which ${before === null ? "a new file" : `${edit.path}`} should not contain: it looks like a SEARCH/REPLACE block or a merge conflict, not the file's content. Nothing was written. Send the complete new content of ${edit.path}, with no markers.`;
}

/** The listing's content, without the final newline when the file had none and its last line stays. */
function keepFinalNewlineState(before: string | null, content: string): string {
  if (before === null || before === "" || before.endsWith("\n") || !content.endsWith("\n")) return content;
  const lastLine = (t: string) => t.slice(t.lastIndexOf("\n") + 1).replace(/\r$/, "");
  return lastLine(before) === lastLine(content.slice(0, -1)) ? content.slice(0, -1) : content;
}

function listing(ctx: PromptContext, path: string, lang: string, content: string): string {
  return `${path}\n${openFence(ctx.fence, lang)}\n${content}${ctx.fence[1]}`;
}

function prompts(ctx: PromptContext): FormatPrompts {
  const [open, close] = ctx.fence;
  const backticks = open.startsWith("`");
  return formatPrompts(ctx, {
    editor: "You are an expert software developer applying a change that has already been planned. Reply with the complete new listing of each file you change, and nothing else.",
    role: "You are an expert software developer. Follow the user's request, in the style and with the libraries the code already uses. If the request is ambiguous, ask a question instead of guessing.",
    lastStep: "Send the complete new content of each file you change, as a file listing.",
    rules: `# How to write edits: file listings

A file listing is:
1. The file's path alone on a line, exactly as shown to you (relative to the repository root), with no decoration.
2. The opening fence${backticks ? ` with the code's language, e.g. ${open}python` : `: ${open}`}
3. The ENTIRE content of the file after your change: every line, from the first to the last.
4. The closing fence: ${close}

Rules:
- Always put the path line before the fence. A fenced block without one (an example, a snippet in a question) is not written to a file, unless it is the reply's only such block and plainly the whole of a file in the chat.
- Never leave anything out. Do not write "..." or "rest of the file unchanged" or similar: whatever is not in the listing is deleted.
${backticks ? `- If a line of the new content starts with ${open} (an example in a doc comment or in Markdown), wrap that listing in a longer fence (${open}\`), so the content cannot close it.\n` : ""}- Only send listings for files you change. To create a file, send a listing with its new path.
- ${filesRule(ctx)}
- ${shellRule(ctx, "with no path line before it")}`,
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
      const parsed = parseOrFormatError(kit, ListingSyntaxError, () => parseListings(reply.text, ctx.fence, ctx.chatFiles, kit.formats, ctx.repoFiles));
      if (parsed.prose.pathlike) {
        throw new kit.FormatError(
          `Your reply has several code blocks without a file path before their opening fence; one follows \`${parsed.prose.pathlike.slice(0, 80)}\`, which looks like a file name but is not a path coder can take. Nothing was written. Put each file's path alone on the line before its opening fence and send the listings again.`,
        );
      }
      const edits = parsed.listings.map((l): WholeFileEdit => {
        const path = l.origin === "block" ? ctx.resolvePath(l.filename) || l.filename : l.filename;
        const lines = l.content === "" ? 0 : l.content.split("\n").length - 1;
        const source = `${l.origin === "block" ? path : (l.label ?? "")}\n${ctx.fence[0]}\n… (${lines} line${lines === 1 ? "" : "s"} of new content)\n${ctx.fence[1]}`;
        const edit: WholeFileEdit = { path, content: l.content, source };
        if (l.offFence) edit.offFence = { written: l.offFence, taught: ctx.fence[0] };
        if (l.origin !== "block") {
          // Named only by a backticked mention, or by nothing: kept only where it is plausibly the whole file;
          // where the model named the file (or wrote a path-like label), a mismatch is a repair message.
          const candidates = l.candidates ?? [l.filename];
          edit.unlabelled = { label: l.label ?? "", candidates, pathlike: l.origin === "saw" || pathlikeLabel(l.label ?? ""), named: l.origin === "saw" };
          // The kernel gates every file the listing may land on.
          if (candidates.length > 1) edit.paths = candidates;
        }
        return edit;
      });
      return { edits, shell: parsed.shell.map((command) => ({ command })) };
    },
    apply(edits, ws) {
      return edits.map((listed): EditOutcome<WholeFileEdit> => {
        let edit = listed;
        if (edit.unlabelled) {
          const placed = placeUnlabelled(edit, ws);
          if ("skip" in placed) return { status: "skipped", edit, path: edit.path, detail: placed.skip };
          if ("fail" in placed) return { status: "failed", edit, path: edit.path, reason: "invalid", detail: placed.fail };
          edit = { ...edit, path: placed.path };
        }
        const refused = ws.check?.(edit.path);
        if (refused) return { status: "failed", edit, path: edit.path, reason: "refused", detail: refused };
        const before = ws.read(edit.path);
        const clash = offFenceClash(edit, before) ?? markerClash(edit, before);
        if (clash) return { status: "failed", edit, path: edit.path, reason: "invalid", detail: clash };
        const content = keepFinalNewlineState(before, edit.content);
        // Through kit.formats.stage: a file changed while the model answered gets the listing's change merged onto it, never reverted.
        const note = before === null ? "created" : before === content ? "unchanged" : undefined;
        return kit.formats.stage(edit, ws, edit.path, content, note);
      });
    },
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "wholefile", formats: [whole] };
};

export default plugin;
