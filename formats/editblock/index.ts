// The SEARCH/REPLACE edit formats: `diff` (path line before the fence) and
// `diff-fenced` (path inside the fence). One parser reads both spellings.
import type { EditFormat, Kit, ModelReply, ParseContext, ParsedReply, Plugin, PluginObject } from "../../core/plugin.ts";
import { parseOrFormatError } from "../format-error.ts";
import { applySearchReplaceEdits, type SearchReplaceEdit } from "../search-replace.ts";
import { BlockSyntaxError, parseEditBlocks } from "./parse.ts";
import { block, editBlockPrompts } from "./prompts.ts";

export type EditBlock = SearchReplaceEdit;

/** Blocks of a reply as edits (paths resolved) plus shell suggestions; a malformed reply throws kit.FormatError. */
export function parseReply(kit: Kit, variant: "diff" | "diff-fenced", reply: ModelReply, ctx: ParseContext): ParsedReply<EditBlock> {
  const raw = parseOrFormatError(kit, BlockSyntaxError, () => parseEditBlocks(reply.text, ctx.fence, ctx.chatFiles));
  const edits = raw.blocks.map((b) => {
    const path = ctx.resolvePath(b.filename) || b.filename;
    return { path, search: b.search, replace: b.replace, source: block(variant, ctx.fence, path, "", b.search, b.replace) };
  });
  return { edits, shell: raw.shell.map((command) => ({ command })) };
}

function editBlockFormat(kit: Kit, variant: "diff" | "diff-fenced"): EditFormat<EditBlock> {
  return {
    name: variant,
    summary:
      variant === "diff"
        ? "SEARCH/REPLACE blocks, the file path on the line before the fence"
        : "SEARCH/REPLACE blocks, the file path inside the fence",
    prompts: (ctx) => editBlockPrompts(variant, ctx),
    parse: (reply, ctx) => parseReply(kit, variant, reply, ctx),
    apply: (edits, ws) => applySearchReplaceEdits(kit, edits, ws),
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
}

const plugin: Plugin = (kit: Kit): PluginObject => ({
  apiVersion: 1,
  name: "editblock",
  formats: [editBlockFormat(kit, "diff"), editBlockFormat(kit, "diff-fenced")],
});

export default plugin;
