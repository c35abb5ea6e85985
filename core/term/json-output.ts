// `--json`: the engine's events as one JSON object per line on stdout (CLI.md), and
// nothing else there; human text goes to stderr.
import type { CoderEvent, Output } from "../chat/events.ts";
import { pipeWriter } from "./safe.ts";

/** One JSON object per line on stdout and nothing else; human text goes to stderr. */
export class JsonOutput implements Output {
  constructor(
    private readonly write: (line: string) => void = pipeWriter(process.stdout),
    private readonly writeErr: (text: string) => void = (t) => process.stderr.write(t),
  ) {}

  emit(event: CoderEvent): void {
    // Costs are sums of float products: print them to the hundred-millionth of a dollar, not 0.012712000000000001.
    const roundCost = (key: string, value: unknown) => (key === "cost" && typeof value === "number" ? Number(value.toFixed(8)) : value);
    this.write(`${JSON.stringify({ ...event, time: new Date().toISOString() }, roundCost)}\n`);
  }

  print(text: string): void {
    this.writeErr(text.endsWith("\n") ? text : `${text}\n`);
  }

  warn(text: string): void {
    this.emit({ type: "warning", message: text });
  }

  flush(): void {}
}
