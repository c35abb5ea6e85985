// The run directory: `run.json` once at the start, `tasks.jsonl` one whole line per finished
// task. Under `.coder/eval/` it is made through the kit's state writer (checked folders, never
// through a link); `--out DIR` is the user's own choice of folder.
import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join, relative } from "node:path";
import type { Kit } from "../../core/plugin.ts";
import { RECORD_VERSION, type RunSpec, type TaskRecord } from "./record.ts";

export class RunDir {
  readonly dir: string;
  /** The path under `.coder/` when the run lives there (written through kit.state), else null. */
  readonly #statePath: string | null;
  readonly #kit: Kit;
  #fd: number | null = null;

  private constructor(kit: Kit, dir: string, statePath: string | null) {
    this.#kit = kit;
    this.dir = dir;
    this.#statePath = statePath;
  }

  /** A new run directory: `out`, or `.coder/eval/<time>/`. */
  static create(kit: Kit, out: string | undefined, spec: RunSpec): RunDir {
    const json = `${JSON.stringify(spec, null, 2)}\n`;
    if (out === undefined) {
      const stamp = spec.started.replace(/[:.]/g, "-");
      const statePath = `eval/${stamp}`;
      const file = kit.state.write(`${statePath}/run.json`, json);
      const run = new RunDir(kit, join(file, ".."), statePath);
      run.#open(kit.state.file(`${statePath}/tasks.jsonl`));
      return run;
    }
    if (existsSync(join(out, "run.json"))) throw new Error(`${out} already holds a run (run.json): continue it with --resume ${out}, or choose another --out`);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "run.json"), json);
    const run = new RunDir(kit, out, null);
    run.#open(join(out, "tasks.jsonl"));
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
    const inState = relative(join(kit.root, ".coder"), dir);
    const statePath = !inState.startsWith("..") && !inState.startsWith("/") ? inState : null;
    const run = new RunDir(kit, dir, statePath);
    const path = statePath ? kit.state.file(`${statePath}/tasks.jsonl`) : join(dir, "tasks.jsonl");
    run.#open(path);
    return { run, spec, records: run.#readRecords() };
  }

  #open(path: string): void {
    this.#fd = openSync(path, "a+");
  }

  #readRecords(): TaskRecord[] {
    const fd = this.#fd!;
    const size = fstatSync(fd).size;
    const bytes = Buffer.alloc(size);
    let read = 0;
    while (read < size) read += readSync(fd, bytes, read, size - read, read);
    let text = bytes.toString("utf8");
    const end = text.lastIndexOf("\n") + 1;
    if (end < text.length) {
      ftruncateSync(fd, Buffer.byteLength(text.slice(0, end)));
      text = text.slice(0, end);
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
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`);
    let written = 0;
    while (written < bytes.length) written += writeSync(this.#fd!, bytes, written, bytes.length - written);
  }

  /** Replace `summary.json` (atomically: a new file renamed over the old). */
  writeSummary(summary: unknown): void {
    const json = `${JSON.stringify(summary, null, 2)}\n`;
    if (this.#statePath !== null) {
      this.#kit.state.write(`${this.#statePath}/summary.json`, json);
      return;
    }
    const temp = join(this.dir, `.summary.json.${process.pid}`);
    writeFileSync(temp, json, { flag: "wx" });
    renameSync(temp, join(this.dir, "summary.json"));
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
