// A toy edit format, "lines": the model writes one line per change,
//   WRITE path: new content of the file (one line)
//   APPEND path: a line added at the end of the file
// Small enough to read in a minute; shows parse (with a FormatError for the
// model), apply on the staged workspace, and the shared failure report.
import type { Edit, EditFormat, EditOutcome, Kit, Plugin } from "../../core/plugin.ts";

interface LineEdit extends Edit {
  op: "WRITE" | "APPEND";
  text: string;
}

const LINE = /^(WRITE|APPEND) (\S+): ?(.*)$/;

/** Typed on its own so `parse` and `apply` see LineEdit (the plugin object holds plain EditFormats). */
function linesFormat(kit: Kit): EditFormat<LineEdit> {
  return {
    name: "lines",
    summary: "one WRITE/APPEND line per change (a toy)",
    prompts: () => ({
      system: [
        "Change files with one line per change and nothing else on that line:",
        "WRITE <path>: <text> replaces the whole file with that one line.",
        "APPEND <path>: <text> adds that line at the end of the file.",
      ].join("\n"),
      examples: [],
      reminder: "Answer with change lines as described above.",
    }),
    parse(reply, ctx) {
      const edits: LineEdit[] = [];
      for (const line of reply.text.split("\n")) {
        const m = LINE.exec(line.trimEnd());
        if (!m) {
          if (/^(WRITE|APPEND)\b/.test(line)) throw new kit.FormatError(`This line is malformed: ${line}\nWrite it as: WRITE path: text`);
          continue;
        }
        edits.push({ op: m[1] as LineEdit["op"], path: ctx.resolvePath(m[2]!), text: m[3] ?? "", source: line });
      }
      return { edits, shell: [] };
    },
    apply(edits, ws) {
      return edits.map((edit): EditOutcome<LineEdit> => {
        const before = ws.read(edit.path);
        if (edit.op === "APPEND" && before === null) {
          return { status: "failed", edit, path: edit.path, reason: "missing-file", detail: `${edit.path} does not exist; use WRITE to create it` };
        }
        const after = edit.op === "WRITE" ? `${edit.text}\n` : `${before}${before!.endsWith("\n") || before === "" ? "" : "\n"}${edit.text}\n`;
        if (after === before) return { status: "failed", edit, path: edit.path, reason: "no-op", detail: "the file already has this content" };
        ws.write(edit.path, after);
        return { status: "applied", edit, path: edit.path };
      });
    },
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
}

export default ((kit) => ({
  apiVersion: 1,
  name: "toy-format",
  formats: [linesFormat(kit)],
})) satisfies Plugin;
