// The SEARCH/REPLACE edit formats: `diff` (path line before the fence) and
// `diff-fenced` (path inside the fence). One parser reads both spellings.
import type { EditFormat, Kit, ModelReply, ParseContext, ParsedReply, Plugin, PluginObject, SearchReplaceEdit } from "../../core/plugin.ts";
import { block, editBlockPrompts } from "./prompts.ts";

export type EditBlock = SearchReplaceEdit;

/** Blocks of a reply as edits (paths resolved) plus shell suggestions; a malformed reply throws kit.FormatError. */
export function parseReply(kit: Kit, variant: "diff" | "diff-fenced", reply: ModelReply, ctx: ParseContext): ParsedReply<EditBlock> {
  const raw = kit.formats.parseBlocks(reply.text, ctx.fence, ctx.chatFiles, variant === "diff" ? "before-fence" : "in-fence");
  const lines = reply.text.replace(/\r\n/g, "\n").split("\n");
  const edits = raw.blocks.map((b, k): EditBlock => {
    const path = ctx.resolvePath(b.filename) || b.filename;
    // The prose since the previous block says where this one goes, should SEARCH match several places.
    const prose = lines.slice(k > 0 ? raw.blocks[k - 1]!.end + 1 : 0, b.line).join("\n");
    const edit: EditBlock = { path, search: b.search, replace: b.replace, hints: kit.formats.hintsFromProse(prose), source: block(variant, ctx.fence, path, "", b.search, b.replace) };
    if (b.search.trim() === "" && !ctx.chatFiles.includes(path)) edit.unseen = true;
    if (!b.splits) return edit;
    // Echo a block with several divider-shaped lines as written: how it splits is the question.
    const asWritten = lines.slice(b.line, b.end + 1).join("\n") + "\n";
    return { ...edit, splits: b.splits, source: variant === "diff" ? `${path}\n${ctx.fence[0]}\n${asWritten}${ctx.fence[1]}` : `${ctx.fence[0]}\n${path}\n${asWritten}${ctx.fence[1]}` };
  });
  return { edits, shell: raw.shell.map((command) => ({ command })) };
}

function editBlockFormat(kit: Kit, variant: "diff" | "diff-fenced"): EditFormat<EditBlock> {
  return {
    name: variant,
    // `diff` fails safest: an unknown model's format, and architect's editor's when none edits.
    ...(variant === "diff" ? { fallback: true } : {}),
    summary:
      variant === "diff"
        ? "SEARCH/REPLACE blocks, the file path on the line before the fence"
        : "SEARCH/REPLACE blocks, the file path inside the fence",
    prompts: (ctx) => editBlockPrompts(variant, ctx),
    parse: (reply, ctx) => parseReply(kit, variant, reply, ctx),
    apply: (edits, ws) => kit.formats.applySearchReplace(edits, ws),
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
}

const plugin: Plugin = (kit: Kit): PluginObject => ({
  apiVersion: 2,
  name: "editblock",
  formats: [editBlockFormat(kit, "diff"), editBlockFormat(kit, "diff-fenced")],
});

export default plugin;
