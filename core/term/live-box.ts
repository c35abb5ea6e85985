// The input box that stays live while the model answers, as in Claude Code and Codex:
// the reply streams above it, typed keys go into it (never into the reply), Enter queues
// the message for when the reply ends, and Esc or Ctrl-C stops the reply. Every write of
// the renderer passes through here: while the box is shown, the box (and the unfinished
// last line of output above it) is erased, the text written, and both drawn again.
import { StdinBuffer, matchesKey } from "@mariozechner/pi-tui";
import { type LineEditor, pasteKey, rowsAbove } from "./line-editor.ts";
import { textWidth, type Theme } from "./style.ts";

/** What the box needs from the REPL while a line is handled. */
export interface LiveTurn {
  /** Esc or Ctrl-C: stop the request in flight. */
  stop(): void;
}

const MAX_QUEUED_SHOWN = 3;

export class LiveBox {
  private editor: LineEditor | null = null;
  private turn: LiveTurn | null = null;
  /** Shown (keys read, region drawn) until the line's work ends or something else needs the terminal. */
  private shown = false;
  /** The unfinished last line of output, redrawn above the box. */
  private tail = "";
  private buffer: StdinBuffer | null = null;
  /** Messages sent with Enter while the model answered, oldest first. */
  readonly queued: string[] = [];
  /** Ctrl-D on an empty box: the REPL leaves once the reply (and any queued message) is done. */
  leaveRequested = false;
  private readonly onData = (data: string | Buffer) => this.buffer?.process(data);
  private readonly onResize = () => this.redraw();

  constructor(
    private readonly theme: Theme,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stdin: NodeJS.ReadStream = process.stdin,
  ) {}

  /** The REPL's line editor: what is typed in the box is its text, kept for the next prompt. */
  attach(editor: LineEditor): void {
    this.editor = editor;
  }

  /** The renderer's writer for stdout (and stderr, when that is the same terminal). */
  write(text: string): void {
    if (!this.shown) {
      this.stdout.write(text);
      return;
    }
    const all = this.tail + text;
    const nl = all.lastIndexOf("\n");
    let rest = nl >= 0 ? all.slice(nl + 1) : all;
    // A carriage return rewrites the line from its start (the spinner does): keep what follows it.
    const cr = rest.lastIndexOf("\r");
    if (cr >= 0) rest = rest.slice(cr + 1);
    this.tail = rest.replaceAll("\x1b[2K", "");
    this.stdout.write(`${this.eraseSequence()}${nl >= 0 ? all.slice(0, nl + 1) : ""}${this.regionText()}`);
  }

  /** A line of the REPL begins: a request it makes shows the box (`show`). */
  arm(turn: LiveTurn): void {
    this.turn = turn;
  }

  /** The model was asked: show the box, if a line is being handled and the terminal is free. */
  show(): void {
    if (!this.turn || !this.editor || this.shown) return;
    this.shown = true;
    this.buffer = new StdinBuffer({ timeout: 10 });
    this.buffer.on("data", (sequence) => this.key(sequence));
    this.buffer.on("paste", (content) => this.key(pasteKey(content)));
    this.stdin.setRawMode?.(true);
    this.stdin.setEncoding("utf8");
    this.stdin.on("data", this.onData);
    this.stdin.resume();
    this.stdout.on("resize", this.onResize);
    // Bracketed paste, and the terminal's own cursor hidden: the box draws its own.
    this.stdout.write(`\x1b[?2004h\x1b[?25l${this.regionText()}`);
  }

  /** Something else needs the terminal (a question, a command reading it): the box goes until `show`. */
  hide(): void {
    if (!this.shown) return;
    this.shown = false;
    this.stdin.off("data", this.onData);
    this.stdout.off("resize", this.onResize);
    this.buffer?.destroy();
    this.buffer = null;
    this.stdin.setRawMode?.(false);
    this.stdin.pause();
    // The unfinished line stays on the screen, where the renderer goes on writing it.
    const tail = this.tail;
    this.tail = "";
    this.stdout.write(`${this.eraseSequence()}${tail}\x1b[?2004l\x1b[?25h`);
  }

  /** The line's work ended: the box goes; what was typed stays in the editor for the prompt. */
  disarm(): void {
    this.hide();
    this.turn = null;
  }

  private key(data: string): void {
    const editor = this.editor;
    if (!editor || !this.shown) return;
    if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
      if (editor.searching()) editor.handleKey(data, () => {});
      else {
        this.turn?.stop();
        this.leaveRequested = false;
        // Messages queued for after the reply come back to the box: the user decides whether they still stand.
        if (this.queued.length) editor.draft = [...this.queued.splice(0), editor.draft].filter((t) => t.trim()).join("\n");
      }
      return this.redraw();
    }
    if (matchesKey(data, "ctrl+d")) {
      // As at the prompt, Ctrl-D on an empty line leaves: once the reply is done, not in the middle of it.
      if (editor.draft === "" && !this.leaveRequested) {
        this.leaveRequested = true;
        this.redraw();
      }
      return;
    }
    if (matchesKey(data, "ctrl+l")) {
      this.stdout.write(`\x1b[H\x1b[2J${this.regionText()}`);
      return;
    }
    const sent = editor.handleKey(data, () => {});
    if (typeof sent === "string" && sent.trim() && !sent.startsWith("\u0000")) this.queued.push(sent);
    this.redraw();
  }

  private redraw(): void {
    if (this.shown) this.stdout.write(`${this.eraseSequence()}${this.regionText()}`);
  }

  /** Visible widths of the region's lines as drawn (the unfinished output line first). */
  private drawn: number[] = [];

  /**
   * The region erased to the end of the screen. Between draws the (hidden) cursor waits at the
   * start of the region's last line; the rows above it are counted at today's width, so a resize
   * that re-wrapped the region strands no copy of it.
   */
  private eraseSequence(): string {
    const up = rowsAbove(this.drawn, this.stdout.columns || 80);
    this.drawn = [];
    return `${up > 0 ? `\x1b[${up}A` : ""}\r\x1b[J`;
  }

  /** The unfinished output line, then the box; the cursor waits at the start of the last line. */
  private regionText(): string {
    const width = this.stdout.columns || 80;
    const t = this.theme;
    const lines: string[] = this.tail ? [this.tail] : [];
    const box: string[] = [t.dim("─".repeat(Math.max(10, width - 1)))];
    box.push(...(this.editor?.compose("> ", width, false) ?? []));
    for (const message of this.queued.slice(0, MAX_QUEUED_SHOWN)) box.push(t.dim(`  queued: ${message.split("\n")[0]}`));
    if (this.queued.length > MAX_QUEUED_SHOWN) box.push(t.dim(`  … and ${this.queued.length - MAX_QUEUED_SHOWN} more queued`));
    if (this.leaveRequested) box.push(t.dim(`  coder leaves when the reply ends${this.queued.length ? " and the queued messages are answered" : ""} · esc stops the reply and stays`));
    else box.push(t.dim(this.queued.length ? "  esc to stop · queued messages are sent when the reply ends" : "  esc to stop · enter queues a message for when the reply ends"));
    lines.push(...box.map((line) => fit(line, width - 1)));
    this.drawn = lines.map((l) => textWidth(l));
    return `${lines.join("\r\n")}\r`;
  }
}

/** A line cut to `width` columns (escape sequences kept, so colours close). */
function fit(line: string, width: number): string {
  if (textWidth(line) <= width) return line;
  let out = "";
  let used = 0;
  for (const part of line.split(/(\x1b\[[0-9;?]*[A-Za-z])/)) {
    if (part.startsWith("\x1b[")) {
      out += part;
      continue;
    }
    for (const ch of part) {
      const w = textWidth(ch);
      if (used + w > width) break;
      out += ch;
      used += w;
    }
  }
  return `${out}\x1b[0m`;
}
