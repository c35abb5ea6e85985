// The run directory: `run.json` once at the start, `tasks.jsonl` one whole line per finished
// task, `summary.json` replaced at the end. It is `--out DIR` (the user's own choice of folder)
// or `.coder/eval/<time>/`; either way it is written through the kit's output folder: inside it
// only, never through a link (under `.coder/`, every folder on the way checked too).
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Kit, OutputFolder } from "../../core/plugin.ts";
import type { RunSpec, TaskRecord } from "./record.ts";
import { readRun, RunDirError, type RunRead } from "./summarize.ts";

const TASKS = "tasks.jsonl";

export class RunDir {
  readonly dir: string;
  readonly #folder: OutputFolder;

  private constructor(folder: OutputFolder) {
    this.#folder = folder;
    this.dir = folder.path;
  }

  /** A new run directory: `out`, or `.coder/eval/<time>/`. */
  static create(kit: Kit, out: string | undefined, spec: RunSpec): RunDir {
    const dir = out ?? join(kit.root, ".coder", "eval", spec.started.replace(/[:.]/g, "-"));
    if (out !== undefined && existsSync(join(out, "run.json"))) throw new Error(`${out} already holds a run (run.json): continue it with --resume ${out}, or choose another --out`);
    const run = new RunDir(kit.outputFolder(dir));
    run.#folder.write("run.json", `${JSON.stringify(spec, null, 2)}\n`);
    return run;
  }

  /**
   * An existing run directory, its spec and the records it has, read and checked as the report
   * reads them (`readRun`): a bad line is an error naming it; a torn last line (a kill mid-write)
   * is cut off, with a warning.
   */
  static resume(kit: Kit, dir: string): { run: RunDir; spec: RunSpec; records: TaskRecord[]; warnings: string[] } {
    const file = join(dir, TASKS);
    const stat = lstatSync(file, { throwIfNoEntry: false });
    // The records are appended to later, which is never done through a link: refused now, before anything is read or any task runs.
    if (stat && !stat.isFile()) throw new Error(`--resume ${dir}: ${file} is ${stat.isSymbolicLink() ? "a symlink" : "not a regular file"}; coder eval appends its records only to a plain file there`);
    let read: RunRead;
    try {
      read = readRun(dir);
    } catch (error) {
      if (error instanceof RunDirError) throw new Error(`--resume: ${error.message}`);
      throw error;
    }
    const run = new RunDir(kit.outputFolder(dir));
    if (stat) run.#cutTornLine(readFileSync(file, "utf8"));
    return { run, spec: read.spec, records: read.records, warnings: read.warnings };
  }

  /**
   * A last line without its newline: a torn one (a kill mid-write) goes, a whole record (read as
   * one) gets its newline; either way the file is replaced, so the next record starts a line of its own.
   */
  #cutTornLine(text: string): void {
    const end = text.lastIndexOf("\n") + 1;
    if (end === text.length) return;
    let whole = true;
    try {
      JSON.parse(text.slice(end));
    } catch {
      whole = false;
    }
    this.#folder.write(TASKS, whole ? `${text}\n` : text.slice(0, end));
  }

  /** Append one record as one line, with one write (a kill leaves the line whole, or a torn tail that resume cuts). */
  append(record: TaskRecord): void {
    this.#folder.append(TASKS, `${JSON.stringify(record)}\n`);
  }

  /** Replace `summary.json` (atomically: a new file renamed over the old). */
  writeSummary(summary: unknown): void {
    this.#folder.write("summary.json", `${JSON.stringify(summary, null, 2)}\n`);
  }
}
