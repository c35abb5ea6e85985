// The run's progress on stderr: one bar redrawn in place on a terminal (tasks done, pass rate so
// far, cost so far, time left), one plain line per finished task otherwise (CI logs).
import type { TaskRecord } from "./record.ts";

export class Progress {
  #done = 0;
  #passed = 0;
  #cost = 0;
  #costUnknown = false;
  #drawn = false;
  readonly #started = performance.now();

  constructor(
    private readonly total: number,
    private readonly skipped: number,
    private readonly tty: boolean,
    private readonly write: (text: string) => void,
  ) {}

  get cost(): number {
    return this.#cost;
  }

  /** Count a record that was already in the run directory (`--resume`): its cost counts toward --max-cost. */
  carry(record: TaskRecord): void {
    this.#cost += record.cost ?? 0;
  }

  finished(record: TaskRecord): void {
    this.#done++;
    if (record.passed) this.#passed++;
    if (record.cost === null) this.#costUnknown = true;
    else this.#cost += record.cost;
    if (this.tty) this.draw();
    else this.write(`eval ${this.skipped + this.#done}/${this.skipped + this.total} ${record.task.replace(/^history:(\w{10})\w*$/, "history:$1")} ${record.model} ${record.format}: ${record.outcome} · ${this.#figures()}\n`);
  }

  /** The bar (terminal only). */
  draw(): void {
    if (!this.tty) return;
    const width = 24;
    const filled = this.total ? Math.round((this.#done / this.total) * width) : width;
    this.write(`\r\x1b[2K[${"#".repeat(filled)}${".".repeat(width - filled)}] ${this.skipped + this.#done}/${this.skipped + this.total} · ${this.#figures()}`);
    this.#drawn = true;
  }

  /** Leave the bar's line before other text. */
  end(): void {
    if (this.#drawn) this.write("\n");
    this.#drawn = false;
  }

  #figures(): string {
    const rate = this.#done ? `${Math.round((this.#passed / this.#done) * 100)}%` : "-";
    const cost = `$${this.#cost.toFixed(this.#cost < 1 ? 4 : 2)}${this.#costUnknown ? "+?" : ""}`;
    return `pass ${rate} · ${cost} · ${this.#left()}`;
  }

  #left(): string {
    if (!this.#done) return "time left unknown";
    const left = ((performance.now() - this.#started) / this.#done) * (this.total - this.#done) / 1000;
    if (left < 1) return "done soon";
    return left < 90 ? `~${Math.round(left)} s left` : `~${Math.round(left / 60)} min left`;
  }
}
