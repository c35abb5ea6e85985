// The `patch` edit format: the `*** Begin Patch` envelope (as OpenAI's models are
// trained to write it). Chunks land through kit.matcher, after their `@@` scope
// line when one is given. Adding a file works whether or not an empty file exists.
import type { Edit, EditFormat, EditOutcome, FormatPrompts, Kit, MatchCandidate, MatchResult, MatchRung, Plugin, PromptContext, Workspace } from "../../core/plugin.ts";
import { parseOrFormatError } from "../format-error.ts";
import { hunkTexts, loosest, rewordForHunks } from "../hunk-texts.ts";
import { ESCAPED_TEXT, filesRule, formatPrompts } from "../prompting.ts";
import { shellRule } from "../shell.ts";
import { type PatchChunk, type PatchOp, PatchSyntaxError, parsePatches } from "./parse.ts";

export type PatchEdit = Edit & PatchOp;

/** Split `content` after line index `at` (0-based count of lines kept in the head). */
function splitAt(content: string, at: number): [string, string] {
  let idx = 0;
  for (let k = 0; k < at; k++) {
    const nl = content.indexOf("\n", idx);
    if (nl < 0) return [content, ""];
    idx = nl + 1;
  }
  return [content.slice(0, idx), content.slice(idx)];
}

const lineCount = (s: string) => (s === "" ? 0 : s.split("\n").length - (s.endsWith("\n") ? 1 : 0));

/**
 * Apply one chunk. Rung by rung, strictest first: a match after its scope line (or the previous
 * chunk), else a match anywhere in the file (chunks may overlap or come out of order), so an
 * exact copy earlier in the file beats a near-copy further down. An exact match after the
 * cursor wins over copies before it (order says where); at a loose rung, two places that fit
 * alike are refused as ambiguous.
 */
function applyChunk(kit: Kit, content: string, chunk: PatchChunk, cursor: number): { result: MatchResult; cursor: number } {
  const { before, after } = hunkTexts(chunk.lines);
  let from = cursor;
  if (chunk.scopes.length) {
    const lines = content.split("\n");
    let after = cursor;
    for (const scope of chunk.scopes) {
      let at = lines.findIndex((l, k) => k >= after && l.trim() === scope);
      if (at < 0) at = lines.findIndex((l, k) => k >= after && l.includes(scope));
      if (at < 0 && after === cursor) at = lines.findIndex((l) => l.includes(scope));
      if (at < 0) break;
      from = at;
      after = at + 1;
    }
  }
  if (chunk.atEnd) from = Math.max(from, lineCount(content) - lineCount(before));
  const [head, tail] = splitAt(content, from);
  const landed = (r: MatchResult): { result: MatchResult; cursor: number } => ({ result: r, cursor: r.status === "applied" ? r.endLine : cursor });
  for (const rung of kit.matcher.rungs) {
    const inTail = from > 0 ? kit.matcher.replace(tail, before, after, { loosest: rung }) : null;
    const inFile = kit.matcher.replace(content, before, after, { loosest: rung });
    if (inTail?.status === "applied") {
      const here = { ...inTail, content: head + inTail.content, startLine: inTail.startLine + from, endLine: inTail.endLine + from };
      const sameInFile = inFile.status === "applied" && inFile.startLine === here.startLine;
      if (rung === "exact" || sameInFile) return landed(here);
      if (inFile.status === "failed" && inFile.reason === "ambiguous") return landed(inFile);
      if (inFile.status === "applied") return landed({ status: "failed", reason: "ambiguous", candidates: [placeOf(here), placeOf(inFile)] });
      return landed(here);
    }
    if (inFile.status === "applied") return landed(inFile);
    if (inFile.status === "failed" && (inFile.reason === "ambiguous" || inFile.reason === "no-op")) return landed(inFile);
    if (inTail?.status === "failed" && inTail.reason === "no-op") return landed(inTail);
  }
  // Nothing fits: the full ladder's answer over the whole file explains it (closest regions).
  return landed(kit.matcher.replace(content, before, after));
}

/** A matched place as a candidate (for an ambiguity between two places that fit alike). */
function placeOf(r: Extract<MatchResult, { status: "applied" }>): MatchCandidate {
  return { startLine: r.startLine, endLine: r.endLine, similarity: 1, text: "" };
}

function applyOp(kit: Kit, edit: PatchEdit, ws: Workspace): EditOutcome<PatchEdit> {
  const { path } = edit;
  const fail = (reason: "missing-file" | "invalid" | "refused", detail: string): EditOutcome<PatchEdit> => ({ status: "failed", edit, path, reason, detail });
  const refused = ws.check?.(path) ?? (edit.op === "update" && edit.moveTo ? ws.check?.(edit.moveTo) : null);
  if (refused) return fail("refused", refused);
  const content = ws.read(path);
  try {
    switch (edit.op) {
      case "add": {
        // An existing empty file (e.g. created by the user or a confirmation step) is fine to fill.
        if (content !== null && content !== "" && content !== edit.content) {
          return fail("invalid", `${path} already exists. To change it, use \`*** Update File: ${path}\` with chunks of its current lines.`);
        }
        ws.write(path, edit.content);
        return { status: "applied", edit, path, note: content === null ? "created" : "filled" };
      }
      case "delete":
        if (content === null) return fail("missing-file", `${path} does not exist, so it cannot be deleted.`);
        ws.remove(path);
        return { status: "applied", edit, path, note: "deleted" };
      case "update": {
        if (content === null) return fail("missing-file", `${path} does not exist. To create it, use \`*** Add File: ${path}\` with every line starting with +.`);
        let current = content;
        let cursor = 0;
        let rung: MatchRung = "exact";
        for (const [n, chunk] of edit.chunks.entries()) {
          const { result, cursor: next } = applyChunk(kit, current, chunk, cursor);
          if (result.status === "failed") {
            const { before, after } = hunkTexts(chunk.lines);
            const which = edit.chunks.length > 1 ? `Chunk ${n + 1} of ${edit.chunks.length}${chunk.scopes.length ? ` (@@ ${chunk.scopes.join(" / ")})` : ""}: ` : "";
            const explained = rewordForHunks(kit.matcher.explain(result, before, after, path), "chunk's context and removed lines", "chunk's result");
            return { status: "failed", edit, path, reason: result.reason, detail: `${which}${explained}\n\nNone of this file's chunks were applied; send the whole \`*** Update File: ${path}\` section again.`, match: result };
          }
          current = result.content;
          cursor = next;
          rung = loosest(kit, rung, result.rung);
        }
        if (edit.moveTo && edit.moveTo !== path) {
          if (ws.exists(edit.moveTo)) return fail("invalid", `Cannot move ${path} to ${edit.moveTo}: that file already exists.`);
          ws.write(edit.moveTo, current);
          ws.remove(path);
          return { status: "applied", edit, path: edit.moveTo, rung, note: `moved from ${path}` };
        }
        ws.write(path, current);
        return { status: "applied", edit, path, rung };
      }
    }
  } catch (err) {
    return fail("refused", (err as Error).message);
  }
}

function prompts(ctx: PromptContext): FormatPrompts {
  return formatPrompts(ctx, {
    editor: "You are an expert software developer applying a change that has already been planned. Reply with one patch and nothing else.",
    role: "You are an expert software developer. Follow the user's request in the style the code already uses; ask when the request is ambiguous.",
    lastStep: "Write all the changes as one patch, in the format below.",
    rules: `# How to write edits: the patch format

A patch starts with \`*** Begin Patch\` and ends with \`*** End Patch\`. In between, one section per file:
- \`*** Add File: path\` then the whole new file, every line starting with \`+\`.
- \`*** Delete File: path\` alone.
- \`*** Update File: path\`, optionally followed by \`*** Move to: new/path\` to rename it, then one or more chunks.

A chunk starts with \`@@\`, optionally followed by a line of the file that comes before the change (such as \`@@ class Cart:\` or \`@@ def total(self):\`) to say where it is. Then come the chunk's lines, each starting with one character: a space for a line kept, \`-\` for a line removed, \`+\` for a line added. Put about three kept lines before and after each change, copied exactly from the current file. When a change is at the very end of the file, put \`*** End of File\` after its chunk.

Paths are relative to the repository root. Kept and removed lines must match the file exactly, and each chunk must match one place (use the \`@@\` line to pick the right one). ${ESCAPED_TEXT}

${filesRule(ctx)}
${shellRule(ctx, "outside the patch")}`,
    examples: [
      {
        request: "Make greet() in greet.py take a name.",
        explanation: "greet() takes a `name`; the caller passes one.",
        edits:
          '*** Begin Patch\n*** Update File: greet.py\n@@\n-def greet():\n-    return "Hello, world"\n+def greet(name):\n+    return f"Hello, {name}"\n \n \n if __name__ == "__main__":\n-    print(greet())\n+    print(greet("Ada"))\n*** End of File\n*** End Patch',
      },
      {
        request: "Put slugify in a new app/text.py and use it from app/views.py.",
        explanation: "A new module holds slugify(); views.py imports it instead of defining it.",
        edits:
          '*** Begin Patch\n*** Add File: app/text.py\n+import re\n+\n+\n+def slugify(title):\n+    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n*** Update File: app/views.py\n@@\n-import re\n-\n from app.models import Post\n+from app.text import slugify\n \n \n-def slugify(title):\n-    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n-\n-\n def show(post):\n     return f"{post.title} ({slugify(post.title)})"\n*** End of File\n*** End Patch',
      },
    ],
    reminder: "Reminder: put all changes in one `*** Begin Patch` … `*** End Patch` envelope; `@@` chunks with kept lines copied exactly; `*** Add File:` lines all start with +.",
    editorReminder: " The patch only.",
  });
}

const plugin: Plugin = (kit: Kit) => {
  const patch: EditFormat<PatchEdit> = {
    name: "patch",
    summary: "one *** Begin Patch envelope: Add / Update (+ Move to) / Delete File sections",
    prompts,
    parse(reply, ctx) {
      const ops = parseOrFormatError(kit, PatchSyntaxError, () => parsePatches(reply.text));
      // Add File and Move to name new paths on purpose: they are not mapped onto chat files.
      // A move writes its target too: `paths` has the kernel gate it like the source.
      const edits = ops.map((op): PatchEdit => {
        if (op.op === "add") return op;
        const path = ctx.resolvePath(op.path) || op.path;
        return op.op === "update" && op.moveTo && op.moveTo !== path ? { ...op, path, paths: [path, op.moveTo] } : { ...op, path };
      });
      const shell = kit.formats.shellBlocks(reply.text.replace(/\*\*\* Begin Patch[\s\S]*?\*\*\* End Patch/g, ""));
      return { edits, shell: shell.map((command) => ({ command })) };
    },
    apply: (edits, ws) => edits.map((e) => applyOp(kit, e, ws)),
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "patch", formats: [patch] };
};

export default plugin;
