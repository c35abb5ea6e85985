// A format of its own spelling that lands its edits as the built-in `diff` does: the
// model writes FIND/WITH sections, and `kit.formats.applySearchReplace` applies them
// (the matcher's ladder, placement hints, the chat-file fallback, the guard of the
// user's uncommitted changes).
//   FILE app.py
//   FIND
//   (the exact lines to change; empty to create the file)
//   WITH
//   (the new lines)
//   END
import type { EditFormat, Kit, Plugin, SearchReplaceEdit } from "../../core/plugin.ts";

const SECTION = /^FILE (\S+)\nFIND\n([\s\S]*?)^WITH\n([\s\S]*?)^END$/gm;

function findReplace(kit: Kit): EditFormat<SearchReplaceEdit> {
  return {
    name: "find-replace",
    summary: "FILE/FIND/WITH/END sections, applied by the kit's SEARCH/REPLACE helper",
    prompts: () => ({
      system: "Change files with sections: `FILE <path>`, `FIND`, the exact current lines, `WITH`, the new lines, `END`, each on its own line.",
      examples: [],
      reminder: "Answer with FILE/FIND/WITH/END sections; FIND copies the file's lines exactly.",
    }),
    parse(reply, ctx) {
      const text = reply.text.replace(/\r\n/g, "\n");
      const edits: SearchReplaceEdit[] = [];
      let from = 0;
      for (const m of text.matchAll(SECTION)) {
        // The prose since the previous section may say where the edit goes ("in `Cart.total`").
        const hints = kit.formats.hintsFromProse(text.slice(from, m.index));
        edits.push({ path: ctx.resolvePath(m[1]!), search: m[2]!, replace: m[3]!, hints, source: m[0] });
        from = m.index! + m[0].length;
      }
      if (edits.length === 0 && /^FILE \S/m.test(text)) throw new kit.FormatError("A FILE section is incomplete: write FILE <path>, FIND, the lines, WITH, the new lines, END.");
      return { edits, shell: [] };
    },
    apply: (edits, ws) => kit.formats.applySearchReplace(edits, ws),
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
}

export default ((kit) => ({
  apiVersion: 2,
  name: "find-replace-format",
  formats: [findReplace(kit)],
})) satisfies Plugin;
