// Streaming markdown for a terminal, lexed with `marked`: headings by level, lists,
// tables, quotes, links, emphasis, and fenced code highlighted by language
// (core/term/highlight.ts), word-wrapped at the terminal's width. Text is written as it
// arrives and never redrawn: a line waits only until its kind is known (a heading, a
// fence, a table row, an edit marker), prose streams word by word.
import { Lexer, type Token, type Tokens } from "marked";
import type { CodeHighlighter } from "./highlight.ts";
import { type Paint, plain, textWidth, type Theme } from "./style.ts";
import { terminalSafe } from "./safe.ts";

type Write = (text: string) => void;

export interface MarkdownOptions {
  theme: Theme;
  /** Columns to wrap prose at (read per line: the window may be resized). */
  width: () => number;
  /** The highlighter a fence's language names; null for plain code. Omitted: all code plain. */
  highlighter?: (info: string) => Promise<CodeHighlighter | null> | null;
}

/** A run of inline text with its paint. */
interface Run {
  text: string;
  paint: Paint;
}

interface Fence {
  marker: string;
  info: string;
  /** Code lines since the fence (or the last edit marker), for highlighting in context. */
  code: string[];
  highlighter: CodeHighlighter | null;
}

/** The kind of the line being written, known from its first characters. */
interface LineStart {
  /** Written before the line's text (a bullet, a quote bar). */
  prefix: string;
  /** Written before each wrapped continuation. */
  hang: string;
  /** Paint of the line's text (quotes are italic). */
  paint: Paint;
  /** The line's text after its marker. */
  offset: number;
}

const EDIT_MARKER = /^\s*(<{5,9} SEARCH|={5,9}|>{5,9} REPLACE)\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(?=\S)/;
/**
 * A line that is a lone file path (`dotenv/__init__.py`, `src/app.ts`): the path line of an
 * edit block. Shown as typed: `__init__` is a name, not bold.
 */
const PATH_LINE = /^\s*(?=[^\s]*(\/|\.\w{1,12}$))[\w.\-/\\@+~]+\s*$/;

export class MarkdownStream {
  private pending = "";
  private fence: Fence | null = null;
  private table: string[] = [];
  /** The current line's kind once known (part of it is on the screen). */
  private line: LineStart | null = null;
  /** Visible column of the cursor in the current output line. */
  private col = 0;
  /** Waiting for a grammar to load: input and output queue up meanwhile. */
  private loading = false;
  private endRequested = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly write: Write,
    private readonly opts: MarkdownOptions,
  ) {}

  private get theme(): Theme {
    return this.opts.theme;
  }

  /** Is output held back until a grammar loads? */
  get busy(): boolean {
    return this.loading;
  }

  /** Resolves once nothing is held back. */
  idle(): Promise<void> {
    if (!this.loading) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  push(text: string): void {
    this.pending += terminalSafe(text);
    if (!this.loading) this.drain();
  }

  /** Render what is left (a reply ended without a newline, an open table or fence); true when something was. */
  end(): boolean {
    const had = this.pending.length > 0 || this.line !== null || this.table.length > 0;
    if (this.loading) {
      this.endRequested = true;
      return had;
    }
    if (this.pending) this.finishLine(this.pending);
    else if (this.line) this.newline();
    this.pending = "";
    this.flushTable();
    this.fence = null;
    return had;
  }

  private drain(): void {
    let nl = this.pending.indexOf("\n");
    while (nl >= 0 && !this.loading) {
      const text = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + 1);
      this.finishLine(text);
      nl = this.pending.indexOf("\n");
    }
    if (this.loading) return;
    this.streamWords();
    if (this.endRequested) {
      this.endRequested = false;
      this.end();
    }
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  // ─── Whole lines ──────────────────────────────────────────────────────────

  private finishLine(text: string): void {
    if (this.line) {
      this.writeInline(text, this.line);
      this.newline();
      return;
    }
    if (this.table.length && !/^\s*\|/.test(text)) this.flushTable();
    if (this.fence) return this.codeLine(text);
    const fence = FENCE.exec(text);
    if (fence) return this.openFence(text, fence[1] ?? "```", fence[2] ?? "");
    if (EDIT_MARKER.test(text)) return this.writeLine(this.theme.marker(text));
    if (/^\s*\|/.test(text)) {
      this.table.push(text);
      return;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) return this.writeHeading((heading[1] ?? "#").length, heading[2] ?? "");
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(text)) return this.writeLine(this.theme.rule("─".repeat(Math.max(3, Math.min(this.opts.width(), 80)))));
    if (!text.trim()) return this.writeLine("");
    if (PATH_LINE.test(text)) return this.writeLine(text);
    const start = this.lineStart(text);
    this.writeInline(text.slice(start.offset), start, true);
    this.newline();
  }

  private openFence(text: string, marker: string, info: string): void {
    this.writeLine(this.theme.dim(text));
    this.fence = { marker, info: info.trim(), code: [], highlighter: null };
    const pending = info.trim() ? this.opts.highlighter?.(info) : null;
    if (!pending) return;
    const fence = this.fence;
    this.loading = true;
    void pending.then((highlighter) => {
      fence.highlighter = highlighter;
      this.loading = false;
      this.drain();
    });
  }

  private codeLine(text: string): void {
    const fence = this.fence as Fence;
    const close = FENCE.exec(text);
    if (close && (close[1] ?? "").startsWith(fence.marker) && !(close[2] ?? "").trim()) {
      this.fence = null;
      return this.writeLine(this.theme.dim(text));
    }
    // Edit blocks live in fences: their markers stand out, and each side is highlighted on its own.
    if (EDIT_MARKER.test(text)) {
      fence.code = [];
      return this.writeLine(this.theme.marker(text));
    }
    fence.code.push(text);
    if (!fence.highlighter) return this.writeLine(this.theme.codePlain(text));
    const painted = fence.highlighter.paint(fence.code.join("\n"), this.theme);
    this.writeLine(painted[painted.length - 1] ?? text);
  }

  private writeHeading(level: number, text: string): void {
    const paint = this.theme.heading[Math.min(level, 4) - 1] ?? this.theme.bold;
    this.writeRuns(inlineRuns(Lexer.lexInline(text), paint, this.theme), "");
    this.newline();
  }

  private flushTable(): void {
    if (!this.table.length) return;
    const rows = this.table;
    this.table = [];
    const token = Lexer.lex(rows.join("\n"))[0];
    if (token?.type !== "table") {
      for (const row of rows) {
        this.writeInline(row, { prefix: "", hang: "", paint: plain, offset: 0 }, true);
        this.newline();
      }
      return;
    }
    for (const line of renderTable(token as Tokens.Table, this.theme, this.opts.width())) this.writeLine(line);
  }

  // ─── Lines written as they arrive ─────────────────────────────────────────

  /** Write the unfinished line's finished words, once its kind is known and no inline markup is open. */
  private streamWords(): void {
    if (!this.pending || this.fence || this.table.length) return;
    // A line's first word waits for the next space: a lone word to the line's end may be a path line.
    if (!this.line && !/\S\s/.test(this.pending)) return;
    if (!this.line) {
      const kind = this.knownStart(this.pending);
      if (!kind) return;
      this.write(kind.prefix);
      this.col = textWidth(kind.prefix);
      this.line = kind;
      this.pending = this.pending.slice(kind.offset);
    }
    const cut = this.pending.lastIndexOf(" ") + 1;
    if (cut <= 0) return;
    const words = this.pending.slice(0, cut);
    if (openMarkup(words)) return;
    this.writeRuns(inlineRuns(Lexer.lexInline(words), this.line.paint, this.theme), this.line.hang);
    this.pending = this.pending.slice(cut);
  }

  /** The kind of a line from its first characters, or null while they could still be a fence, heading, marker, rule or table. */
  private knownStart(text: string): LineStart | null {
    const first = text.trimStart()[0];
    if (first === undefined || "`~#<=|_".includes(first)) return null;
    if (first === ">") return /^\s*>(?!>)\s*\S/.test(text) ? this.lineStart(text) : null;
    if ("-*+".includes(first) && !LIST_ITEM.test(text)) return /^\s*[-*+](\S|\s\S)/.test(text) && !/^\s*([-*])\s*\1/.test(text) ? this.lineStart(text) : null;
    if (/\d/.test(first) && !LIST_ITEM.test(text)) return /^\s*\d+[^\d.)]/.test(text) ? this.lineStart(text) : null;
    return this.lineStart(text);
  }

  /** Prefix, hanging indent and paint of a line: a list item's bullet, a quote's bar, or the line's own indent. */
  private lineStart(text: string): LineStart {
    const quote = /^(\s*)>\s?/.exec(text);
    if (quote) {
      const bar = `${quote[1]}${this.theme.quoteBar("│")} `;
      return { prefix: bar, hang: bar, paint: this.theme.quote, offset: quote[0].length };
    }
    const item = LIST_ITEM.exec(text);
    if (item) {
      const indent = item[1] ?? "";
      const marker = item[2] ?? "-";
      const bullet = /\d/.test(marker) ? marker : indent.length >= 2 ? "◦" : "•";
      const prefix = `${indent}${this.theme.bullet(bullet)} `;
      return { prefix, hang: " ".repeat(indent.length + textWidth(bullet) + 1), paint: plain, offset: item[0].length };
    }
    const indent = /^\s*/.exec(text)?.[0] ?? "";
    return { prefix: indent, hang: indent, paint: plain, offset: indent.length };
  }

  /** The rest of a line's text; `fresh`: its prefix is not written yet. */
  private writeInline(text: string, start: LineStart, fresh = false): void {
    if (fresh) {
      this.write(start.prefix);
      this.col = textWidth(start.prefix);
    }
    this.writeRuns(inlineRuns(Lexer.lexInline(text), start.paint, this.theme), start.hang);
  }

  /** Runs wrapped at word boundaries; a continuation starts with `hang`. */
  private writeRuns(runs: Run[], hang: string): void {
    const width = Math.max(20, this.opts.width());
    const hangWidth = textWidth(hang);
    for (const run of runs) {
      for (const piece of run.text.split(/( +)/)) {
        if (!piece) continue;
        const w = textWidth(piece);
        if (piece.startsWith(" ")) {
          // Spaces at a wrap point are dropped: the next word starts the continuation.
          if (this.col + w >= width) {
            this.write(`\n${hang}`);
            this.col = hangWidth;
          } else {
            this.write(piece);
            this.col += w;
          }
          continue;
        }
        if (this.col + w > width && this.col > hangWidth) {
          this.write(`\n${hang}`);
          this.col = hangWidth;
        }
        this.write(run.paint(piece));
        this.col += w;
      }
    }
  }

  private writeLine(text: string): void {
    this.write(`${text}\n`);
    this.col = 0;
  }

  private newline(): void {
    this.write("\n");
    this.col = 0;
    this.line = null;
  }
}

/** Inline tokens as painted runs (emphasis nests: bold inside a quote stays italic too). */
export function inlineRuns(tokens: readonly Token[], paint: Paint, theme: Theme): Run[] {
  const runs: Run[] = [];
  const nested = (token: Token, outer: Paint) => {
    const children = "tokens" in token && Array.isArray(token.tokens) ? token.tokens : null;
    if (children) runs.push(...inlineRuns(children, outer, theme));
    else runs.push({ text: "text" in token ? String(token.text) : token.raw, paint: outer });
  };
  const and = (inner: Paint): Paint => (s) => paint(inner(s));
  for (const token of tokens) {
    switch (token.type) {
      case "strong":
        nested(token, and(theme.bold));
        break;
      case "em":
        nested(token, and(theme.italic));
        break;
      case "del":
        nested(token, and(theme.strike));
        break;
      case "codespan":
        runs.push({ text: token.text, paint: and(theme.inlineCode) });
        break;
      case "link": {
        nested(token, and(theme.link));
        const href = String((token as Tokens.Link).href);
        if (href && href !== token.text && `mailto:${token.text}` !== href) runs.push({ text: ` (${href})`, paint: and(theme.dim) });
        break;
      }
      case "image":
        runs.push({ text: `[image: ${token.text || (token as Tokens.Image).href}]`, paint: and(theme.dim) });
        break;
      case "br":
        runs.push({ text: " ", paint });
        break;
      case "escape":
      case "html":
      case "text":
        nested(token, paint);
        break;
      default:
        runs.push({ text: token.raw, paint });
    }
  }
  return runs;
}

/** Does `text` end inside a code span, emphasis or link (so its rendering could still change)? */
export function openMarkup(text: string): boolean {
  const count = (re: RegExp) => (text.match(re) ?? []).length;
  if (count(/`/g) % 2) return true;
  if (count(/\*\*/g) % 2) return true;
  if (count(/~~/g) % 2) return true;
  if (count(/(?<!\*)\*(?!\*)/g) % 2) return true;
  if (count(/(?<![\w_])_(?=\S)/g) !== count(/(?<=\S)_(?![\w_])/g)) return true;
  return count(/\[/g) > count(/\]/g) || /\]\([^)]*$/.test(text);
}

/** A table with box-drawing rules, columns sized to their cells and shrunk to fit `width`. */
export function renderTable(table: Tokens.Table, theme: Theme, width: number): string[] {
  const cell = (c: Tokens.TableCell, paint: Paint) => inlineRuns(c.tokens, paint, theme);
  const header = table.header.map((c) => cell(c, theme.bold));
  const rows = table.rows.map((r) => r.map((c) => cell(c, plain)));
  const text = (runs: Run[]) => runs.map((r) => r.text).join("");
  const widths = header.map((h, i) => Math.max(textWidth(text(h)), ...rows.map((r) => textWidth(text(r[i] ?? [])))));
  // Shrink the widest columns until the table fits (cells are then cut with an ellipsis).
  const room = Math.max(widths.length * 4, width - (3 * widths.length + 1));
  while (widths.reduce((a, b) => a + b, 0) > room) {
    const widest = widths.indexOf(Math.max(...widths));
    widths[widest] = (widths[widest] ?? 1) - 1;
  }
  const pad = (runs: Run[], w: number, align: string | null) => {
    let shown = text(runs);
    let painted = runs.map((r) => r.paint(r.text)).join("");
    if (textWidth(shown) > w) {
      shown = `${[...shown].slice(0, Math.max(0, w - 1)).join("")}…`;
      painted = shown;
    }
    const gap = Math.max(0, w - textWidth(shown));
    if (align === "right") return `${" ".repeat(gap)}${painted}`;
    if (align === "center") return `${" ".repeat(gap >> 1)}${painted}${" ".repeat(gap - (gap >> 1))}`;
    return `${painted}${" ".repeat(gap)}`;
  };
  const rule = (l: string, m: string, r: string) => theme.dim(`${l}${widths.map((w) => "─".repeat(w + 2)).join(m)}${r}`);
  const bar = theme.dim("│");
  const line = (cells: Run[][]) => `${bar} ${widths.map((w, i) => pad(cells[i] ?? [], w, table.align[i] ?? null)).join(` ${bar} `)} ${bar}`;
  return [rule("┌", "┬", "┐"), line(header), rule("├", "┼", "┤"), ...rows.map(line), rule("└", "┴", "┘")];
}
