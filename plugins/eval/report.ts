// `coder eval report [--html FILE] [--json] DIR...`: merge run directories (the shards of one
// run, or runs to compare) and report them: the table on stdout (or the summary as JSON with
// --json), and with --html one self-contained page. It writes nothing else: not summary.json.
import type { Kit, SubcommandContext } from "../../core/plugin.ts";
import { htmlReport } from "./html.ts";
import { EVAL_REPORT_USAGE } from "./options.ts";
import { textReport } from "./report-text.ts";
import { mergeRuns, RunDirError } from "./summarize.ts";

/** What the report needs of the kit: where typed paths are relative to, and the writer of a file the user named. */
export type ReportKit = Pick<Kit, "cwd" | "writeOutput">;

/** The report's exit code: 0 reported, 1 the HTML file could not be written, 2 a usage error (no directory, a bad one). */
export function runReport(dirs: readonly string[], cli: SubcommandContext, kit: ReportKit): number {
  const html = cli.options.html;
  if (html !== undefined && (typeof html !== "string" || !html)) cli.usage(`--html needs a file name: ${EVAL_REPORT_USAGE}`);
  if (!dirs.length) cli.usage(`coder eval report needs one or more run directories (written by coder eval, or its shards): ${EVAL_REPORT_USAGE}`);
  let merged: ReturnType<typeof mergeRuns>;
  try {
    merged = mergeRuns(dirs, { cwd: kit.cwd });
  } catch (error) {
    if (error instanceof RunDirError) cli.usage(`coder eval report: ${error.message}`);
    throw error;
  }
  for (const warning of merged.warnings) cli.warn(warning);
  const { summary, records } = merged;
  let code = 0;
  let written: string | null = null;
  if (typeof html === "string") {
    try {
      written = kit.writeOutput(html, htmlReport(summary, records, dirs));
    } catch (error) {
      cli.warn(`coder eval report: the HTML report was not written to ${html}: ${(error as Error).message}`);
      code = 1;
    }
  }
  if (cli.json) {
    cli.printJson(summary);
    return code;
  }
  cli.print(textReport(summary, { color: process.stdout.isTTY === true && !process.env.NO_COLOR }));
  if (written) cli.print(`HTML report: ${written}`);
  return code;
}
