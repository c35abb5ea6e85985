// The line that moves while nothing else does: "⠋ Waiting for gpt-4.1 · 12 s" from the
// request until the first token (through reasoning, and the whole of a --no-stream
// reply). It lives on its own line and is erased before anything else is written there,
// so the reply itself is never redrawn.

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_MS = 100;

export class Spinner {
  private timer: ReturnType<typeof setInterval> | null = null;
  private started = 0;
  private frame = 0;
  private label = "";
  private hint = "";

  constructor(
    private readonly write: (text: string) => void,
    private readonly paint: (text: string) => string = (t) => t,
  ) {}

  get running(): boolean {
    return this.timer !== null;
  }

  /** Show `label` with the seconds since now (and `hint`, how to stop); replaces a spinner already running. */
  start(label: string, hint = ""): void {
    this.stop();
    this.label = label;
    this.hint = hint;
    this.started = performance.now();
    this.frame = 0;
    this.draw();
    this.timer = setInterval(() => this.draw(), FRAME_MS);
    this.timer.unref?.();
  }

  /** Erase the spinner's line (the cursor is left at its start). */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    this.write("\r\x1b[2K");
  }

  private draw(): void {
    const seconds = Math.floor((performance.now() - this.started) / 1000);
    const glyph = FRAMES[this.frame++ % FRAMES.length];
    this.write(`\r\x1b[2K${this.paint(`${glyph} ${this.label} · ${seconds} s${this.hint ? ` · ${this.hint}` : ""}`)}`);
  }
}
