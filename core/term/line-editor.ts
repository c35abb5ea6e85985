// The REPL's line editor: pi-tui's Editor (bracketed paste with long pastes folded, a
// completion menu as you type, kill ring, undo, history) drawn inline below the output,
// never over it. Around it: Ctrl-R history search, vi keys (--vim), the swap of Enter and
// Alt-Enter (--multiline), `{` … `}` blocks, and keys typed ahead of the prompt.
import { Editor, type AutocompleteProvider, CURSOR_MARKER, matchesKey, StdinBuffer } from "@mariozechner/pi-tui";
import { HistorySearch } from "./history-search.ts";
import { appendInputHistory, loadInputHistory } from "./input.ts";
import { type Theme, textWidth } from "./style.ts";
import { ViKeys } from "./vi-keys.ts";

export interface LineEditorOptions {
  historyPath: string | null;
  completions?: AutocompleteProvider;
  theme: Theme;
  /** --vim: vi keys (insert mode first, Esc for normal mode). */
  vim?: boolean;
  /** --multiline: Enter inserts a newline and Alt-Enter sends. */
  multiline?: boolean;
}

const BORDER = "\u0000border\u0000";
const BLOCK_OPEN = /^\{(\w*)$/;

/** The Editor's view of its host: the terminal's height and a way to ask for a redraw. */
interface Host {
  terminal: { rows: number; columns: number };
  requestRender(): void;
}

export class LineEditor {
  private readonly history: string[];
  private readonly editor: Editor;
  private readonly host: Host;
  private readonly search: HistorySearch;
  private readonly vi: ViKeys | null;
  multiline: boolean;
  /** Keys that arrived after a line was taken (fast typing, several lines pasted unbracketed). */
  private readonly typeahead: string[] = [];
  /** A message composed elsewhere (/editor), offered at the next prompt. */
  private prefill: string | null = null;
  /** The previous prompt ended with Ctrl-C on an empty line: a second one leaves. */
  private armedExit = false;
  private session: PromptSession | null = null;
  /** The user moved through the completion menu: Enter takes its entry. */
  private menuChosen = false;
  /** What the prompt showed when it was sent (paste markers folded), drawn as the record of it. */
  private sentText = "";

  constructor(private readonly opts: LineEditorOptions) {
    this.history = opts.historyPath ? loadInputHistory(opts.historyPath) : [];
    this.multiline = opts.multiline ?? false;
    this.host = {
      terminal: {
        get rows() {
          return process.stdout.rows || 24;
        },
        get columns() {
          return process.stdout.columns || 80;
        },
      },
      requestRender: () => this.session?.render(),
    };
    const theme = opts.theme;
    this.editor = new Editor(this.host as never, {
      borderColor: (s: string) => `${BORDER}${s}`,
      selectList: {
        selectedPrefix: theme.bullet,
        selectedText: theme.bold,
        description: theme.dim,
        scrollInfo: theme.dim,
        noMatch: theme.dim,
      },
    }, { autocompleteMaxVisible: 8 });
    if (opts.completions) this.editor.setAutocompleteProvider(opts.completions);
    for (const entry of [...this.history].reverse()) this.editor.addToHistory(entry);
    this.search = new HistorySearch(() => this.history);
    this.vi = opts.vim ? new ViKeys() : null;
  }

  /** Ctrl-R's search is open. */
  searching(): boolean {
    return this.search.active;
  }

  /** The text being typed (in the prompt, or in the box while the model answers). */
  get draft(): string {
    return this.editor.getText();
  }

  set draft(text: string) {
    this.editor.setText(text);
  }

  /** Offer `text` at the next prompt (a message composed in $EDITOR). */
  prefillNext(text: string): void {
    this.prefill = text;
  }

  /**
   * One message: a line, several (Alt-Enter, a paste, a `{` … `}` block). Null at the end
   * of input: Ctrl-D on an empty prompt, or Ctrl-C twice.
   */
  async read(prompt: string, opts: { initial?: string; signal?: AbortSignal } = {}): Promise<string | null> {
    if (opts.initial) this.prefill = opts.initial;
    const first = await this.readOne(prompt, opts.signal);
    if (first === null) return null;
    const open = BLOCK_OPEN.exec(first.trim());
    const inline = /^\{(\w*)\n([\s\S]*)\n\1\}$/.exec(first.trim());
    if (inline) return this.remember(inline[2] ?? "");
    if (!open) return this.remember(first);
    const close = `${open[1] ?? ""}}`;
    const lines: string[] = [];
    for (;;) {
      const line = await this.readOne("... ");
      if (line === null) return null;
      if (line === CANCELLED) return "";
      if (line.trim() === close) break;
      lines.push(line);
    }
    return this.remember(lines.join("\n"));
  }

  /** Keep a sent message in the history (Up recalls it, the file keeps it). */
  remember(text: string): string {
    if (!text.trim()) return text;
    if (this.history[0] !== text) {
      this.history.unshift(text);
      this.editor.addToHistory(text);
      if (this.opts.historyPath) appendInputHistory(this.opts.historyPath, text);
    }
    return text;
  }

  private readOne(prompt: string, signal?: AbortSignal): Promise<string | null> {
    return new Promise((resolve) => {
      const session = new PromptSession(this, prompt, (value) => {
        signal?.removeEventListener("abort", end);
        this.session = null;
        resolve(value);
      });
      // Something else asked for the turn (watched files): the prompt ends with an empty line.
      const end = () => session.abort();
      this.session = session;
      if (this.prefill !== null) {
        this.editor.setText(this.prefill);
        this.prefill = null;
      }
      session.start(this.typeahead.splice(0));
      if (signal?.aborted) end();
      else signal?.addEventListener("abort", end, { once: true });
    });
  }

  // ─── What PromptSession asks of the editor ───────────────────────────────

  /** Route one key (or a paste); returns the submitted text, null for "leave", or undefined to go on. */
  handleKey(data: string, echo: (note: string) => void): string | null | undefined | typeof CANCELLED {
    if (this.search.active) {
      const result = this.search.handle(data);
      if (result.accept !== undefined) this.editor.setText(result.accept);
      if (!result.passThrough) return undefined;
    }
    for (const key of this.vi ? this.vi.translate(data) : [data]) {
      if (matchesKey(key, "ctrl+r") && !this.editor.isShowingAutocomplete()) {
        this.search.begin(this.editor.getText());
        continue;
      }
      const outcome = this.handleEditorKey(key, echo);
      if (outcome !== undefined) return outcome;
    }
    return undefined;
  }

  private handleEditorKey(data: string, echo: (note: string) => void): string | null | undefined | typeof CANCELLED {
    this.sentText = this.editor.getText();
    const empty = this.sentText === "";
    if (matchesKey(data, "ctrl+c")) {
      if (this.session?.prompt === "... ") {
        echo("(multi-line input dropped)");
        return CANCELLED;
      }
      if (!empty) {
        this.sentText = "";
        this.editor.setText("");
        this.armedExit = false;
        return undefined;
      }
      if (this.armedExit) return null;
      this.armedExit = true;
      echo("(Ctrl-C again or Ctrl-D to leave)");
      return undefined;
    }
    if (matchesKey(data, "ctrl+d") && empty) return null;
    // As in Claude Code: `?` on an empty prompt lists the keys (a message may still start with `?` once text is there).
    if (data === "?" && empty && this.session) {
      echo(SHORTCUTS);
      return undefined;
    }
    // A lone line feed is Enter too: Ctrl-J, or a line typed ahead before the prompt (the terminal was not raw then).
    if (data === "\n") data = "\r";
    const enter = matchesKey(data, "enter") || data === "\r";
    const altEnter = data === "\x1b\r" || data === "\x1b\n" || matchesKey(data, "alt+enter");
    const menu = this.editor.isShowingAutocomplete();
    if (menu && (matchesKey(data, "up") || matchesKey(data, "down"))) this.menuChosen = true;
    if (!menu) this.menuChosen = false;
    // Enter takes a menu entry only once the user picked one with the arrows (Tab always takes it);
    // otherwise the menu closes and Enter sends what was typed.
    if (enter && menu && !this.menuChosen) this.editor.handleInput("\x1b");
    if (enter && menu && this.menuChosen) {
      this.editor.handleInput(data);
      this.menuChosen = false;
      return undefined;
    }
    if (this.multiline && enter) data = "\x1b\r";
    else if (this.multiline && altEnter) return this.submit();
    if ((enter && !this.multiline) || altEnter) {
      // The Editor submits through onSubmit; take its text (paste markers expanded) here instead.
      let submitted: string | undefined;
      this.editor.onSubmit = (text) => {
        submitted = text;
      };
      this.editor.handleInput(data);
      this.editor.onSubmit = undefined;
      if (submitted === undefined) return undefined;
      this.armedExit = false;
      return submitted;
    }
    this.editor.handleInput(data);
    this.armedExit = false;
    this.completeWords(data);
    return undefined;
  }

  /** Alt-Enter under --multiline: send what is there. */
  private submit(): string {
    const text = this.editor.getExpandedText().trim();
    this.editor.setText("");
    this.armedExit = false;
    return text;
  }

  /** In plain text, a word of three or more letters opens the completion menu as it is typed. */
  private completeWords(data: string): void {
    if (data.length !== 1 || !/[\w.\-/]/.test(data) || this.editor.isShowingAutocomplete()) return;
    const text = this.editor.getText();
    if (text.startsWith("/") || !/(^|[^\w.\-/])[\w.\-/]{3,}$/.test(text)) return;
    (this.editor as unknown as { tryTriggerAutocomplete(): void }).tryTriggerAutocomplete();
  }

  /** The lines to draw: prompt before the editor's text, its borders dropped, the search line under it. */
  compose(prompt: string, width: number, final: boolean): string[] {
    const promptWidth = textWidth(prompt);
    const indent = " ".repeat(promptWidth);
    // Once sent, the prompt stays on the screen as the record of what was sent.
    if (final) return this.sentText.split("\n").map((line, i) => `${i === 0 ? prompt : indent}${line}`);
    const lines: string[] = [];
    let textLines = 0;
    for (const line of this.editor.render(Math.max(10, width - promptWidth - 1))) {
      if (line.includes(BORDER)) {
        // A scroll indicator ("─── ↑ 3 more") is kept; plain rules are not.
        const rule = line.replaceAll(BORDER, "");
        if (/more/.test(rule)) lines.push(`${indent}${this.opts.theme.dim(rule.trim())}`);
        continue;
      }
      const mark = this.vi?.normal ? this.opts.theme.dim(prompt.replace(/> $/, ": ")) : prompt;
      lines.push(`${textLines === 0 ? mark : indent}${line.trimEnd()}`);
      textLines++;
    }
    if (this.search.active) lines.push(this.opts.theme.dim(this.search.status()));
    return lines;
  }

  /** Keys left over once a line was taken. */
  keepTypeahead(keys: string[]): void {
    this.typeahead.push(...keys);
  }

  isEmpty(): boolean {
    return this.editor.getText() === "";
  }
}

/** What `?` on an empty prompt shows. */
export const SHORTCUTS = [
  "Keys:",
  "  Enter sends · Alt-Enter inserts a newline · { … } on lines of their own: one message",
  "  Tab completes commands and files · Up/Down recall messages · Ctrl-R searches them",
  "  Esc or Ctrl-C stops a reply · typing while it streams goes to the box below it; Enter there queues",
  "  Ctrl-C clears the line (twice on an empty line leaves) · Ctrl-D leaves (during a reply: once it ends)",
  "  Ctrl-L clears the screen · Ctrl-Z suspends (fg resumes) · !cmd runs cmd · /help lists the commands",
].join("\n");

/** readOne's answer when Ctrl-C dropped a `{` … `}` block. */
const CANCELLED = "\u0000cancelled";

/**
 * One prompt on the terminal: raw mode and bracketed paste while it is open, the editor
 * drawn in the lines below the output. Between draws the terminal's cursor (hidden: the
 * editor draws its own) waits at the start of the region's last line, where terminals expect
 * a cursor when they re-wrap lines on a resize; the rows above it are counted at the new width.
 */
class PromptSession {
  private readonly buffer = new StdinBuffer({ timeout: 10 });
  private done = false;
  private left: string[] = [];
  private readonly onData = (data: string | Buffer) => this.buffer.process(data);
  private readonly onResize = () => this.render();

  constructor(
    private readonly owner: LineEditor,
    readonly prompt: string,
    private readonly finish: (value: string | null) => void,
  ) {
    this.buffer.on("data", (sequence) => this.key(sequence));
    this.buffer.on("paste", (content) => this.key(pasteKey(content)));
  }

  start(typeahead: string[]): void {
    const stdin = process.stdin;
    stdin.setRawMode?.(true);
    stdin.setEncoding("utf8");
    stdin.on("data", this.onData);
    stdin.resume();
    process.stdout.on("resize", this.onResize);
    // Bracketed paste: a pasted block arrives as one piece, not as lines that each send.
    process.stdout.write("\x1b[?2004h\x1b[?25l");
    this.render();
    for (const key of typeahead) if (!this.done) this.key(key);
  }

  /** Keys not handled yet: one at a time, with a turn of the event loop between them (see pump). */
  private readonly keys: string[] = [];
  private pumping = false;

  private key(data: string): void {
    if (this.done) {
      this.left.push(data);
      return;
    }
    if (matchesKey(data, "ctrl+l")) return this.clearScreen();
    if (matchesKey(data, "ctrl+z")) return this.suspend();
    this.keys.push(data);
    if (!this.pumping) this.pump();
  }

  /**
   * Handle queued keys one by one. The completion menu updates asynchronously after each key:
   * keys that arrive together (typed ahead, pasted without brackets) must not act on a menu
   * made for the text before them.
   */
  private pump(): void {
    const data = this.keys.shift();
    if (data === undefined) {
      this.pumping = false;
      return this.render();
    }
    this.pumping = true;
    const outcome = this.owner.handleKey(data, (note) => this.note(note));
    if (outcome !== undefined) {
      this.left.push(...this.keys.splice(0));
      this.pumping = false;
      return this.close(outcome);
    }
    setImmediate(() => this.pump());
  }

  /** Ctrl-L: the screen is cleared and the prompt drawn at its top. */
  private clearScreen(): void {
    process.stdout.write("\x1b[H\x1b[2J");
    this.drawn = [];
    this.render();
  }

  /**
   * Ctrl-Z: the process stops, as a shell's job (the shell keeps and restores the terminal's
   * modes across the stop); after `fg` the prompt is drawn again where the shell left the cursor.
   */
  private suspend(): void {
    this.clear();
    process.stdout.write("\x1b[?2004l\x1b[?25h");
    let resumed = false;
    const resume = () => {
      if (resumed || this.done) return;
      resumed = true;
      process.off("SIGCONT", resume);
      // The shell may hand the terminal back in its own (cooked) mode: raw again, for real.
      process.stdin.setRawMode?.(false);
      process.stdin.setRawMode?.(true);
      process.stdout.write("\x1b[?2004h\x1b[?25l");
      this.render();
    };
    process.on("SIGCONT", resume);
    process.kill(process.pid, "SIGTSTP");
    // Where stopping is refused (no job control: an orphaned process group), the prompt comes back at once.
    setTimeout(resume, 100);
  }

  /** A note under the prompt (Ctrl-C's hint): the prompt moves below it. */
  private note(text: string): void {
    this.clear();
    process.stdout.write(`${text}\r\n`);
    this.render();
  }

  render(): void {
    if (this.done) return;
    this.draw(false);
  }

  private clear(): void {
    process.stdout.write(`${this.backToTop()}\r\x1b[J`);
    this.drawn = [];
  }

  /** Visible widths of the lines drawn last. */
  private drawn: number[] = [];

  /** Up to the region's first row from the start of its last line, at today's width. */
  private backToTop(): string {
    const up = rowsAbove(this.drawn, process.stdout.columns || 80);
    return up > 0 ? `\x1b[${up}A` : "";
  }

  private draw(final: boolean): void {
    const width = process.stdout.columns || 80;
    const lines = this.owner.compose(this.prompt, width, final).map((l) => l.replace(CURSOR_MARKER, ""));
    const out = `${this.backToTop()}\r\x1b[J${lines.join("\r\n")}${final ? "\r\n\x1b[?25h" : "\r"}`;
    this.drawn = final ? [] : lines.map((l) => textWidth(l));
    process.stdout.write(out);
  }

  /** End the prompt now, as if an empty line was sent. */
  abort(): void {
    if (!this.done) this.close("");
  }

  private close(value: string | null | typeof CANCELLED): void {
    this.done = true;
    this.draw(true);
    const stdin = process.stdin;
    stdin.off("data", this.onData);
    process.stdout.off("resize", this.onResize);
    process.stdout.write("\x1b[?2004l\x1b[?25h");
    stdin.setRawMode?.(false);
    stdin.pause();
    // Keys of the same chunk after the line (typed ahead, unbracketed lines) wait for the next prompt.
    queueMicrotask(() => {
      this.owner.keepTypeahead(this.left.concat(this.buffer.flush()));
      this.buffer.destroy();
      this.finish(value);
    });
  }
}

/**
 * Rows from a region's first row down to the start of its last line, once the terminal shows
 * the lines (of these visible widths) at `cols` columns: a line wider than the window wraps.
 */
export function rowsAbove(widths: readonly number[], cols: number): number {
  let rows = 0;
  for (const w of widths.slice(0, -1)) rows += Math.max(1, Math.ceil(w / cols));
  return rows;
}

/**
 * A bracketed paste as the editor takes it. The line break that ends a copied block is
 * dropped: it would count as one more line ("+31 lines" for 30) and mean nothing in a message.
 */
export function pasteKey(content: string): string {
  return `\x1b[200~${content.replace(/\r?\n$/, "")}\x1b[201~`;
}
