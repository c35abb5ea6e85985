// The run directory: `run.json` once at the start, `tasks.jsonl` one whole line per finished
// task, `summary.json` replaced at the end. It is `--out DIR` (the user's own choice of folder)
// or `.coder/eval/<time>/`; either way it is written through the kit's output folder: inside it
// only, never through a link (under `.coder/`, every folder on the way checked too).
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Kit, OutputFolder } from "../../core/plugin.ts";
import { RECORD_VERSION, type RunSpec, type TaskRecord } from "./record.ts";

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

  /** An existing run directory, its spec and the records it has (a torn last line, from a kill mid-write, is cut off). */
  static resume(kit: Kit, dir: string): { run: RunDir; spec: RunSpec; records: TaskRecord[] } {
    const specPath = join(dir, "run.json");
    let spec: RunSpec;
    try {
      spec = JSON.parse(readFileSync(specPath, "utf8")) as RunSpec;
    } catch (error) {
      throw new Error(`--resume ${dir}: ${existsSync(specPath) ? `${specPath} is not a run's JSON (${(error as Error).message})` : "no run.json there (is it a coder eval run directory?)"}`);
    }
    if (spec.v !== RECORD_VERSION) throw new Error(`--resume ${dir}: run.json has record version ${String(spec.v)}; this coder reads version ${RECORD_VERSION}`);
    const run = new RunDir(kit.outputFolder(dir));
    return { run, spec, records: run.#readRecords() };
  }

  #readRecords(): TaskRecord[] {
    const file = join(this.dir, TASKS);
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat) return [];
    // The records are appended to later, which is never done through a link: refused now, before any task runs.
    if (!stat.isFile()) throw new Error(`--resume ${this.dir}: ${file} is ${stat.isSymbolicLink() ? "a symlink" : "not a regular file"}; coder eval appends its records only to a plain file there`);
    let text = readFileSync(file, "utf8");
    const end = text.lastIndexOf("\n") + 1;
    if (end < text.length) {
      // A torn last line (a kill mid-write): the file is replaced by its whole lines.
      text = text.slice(0, end);
      this.#folder.write(TASKS, text);
    }
    const records: TaskRecord[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        records.push(JSON.parse(line) as TaskRecord);
      } catch {
        // A line that is not JSON was not written by coder eval: left as it is, not counted.
      }
    }
    return records;
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
