// --vim: vi keys for the REPL's line editor. Insert mode types as usual; Esc enters
// normal mode, whose commands are translated into the keys the editor already knows
// (h → Left, dd → Home + Ctrl-K, u → undo), so editing itself stays the editor's.

const LEFT = "\x1b[D";
const RIGHT = "\x1b[C";
const UP = "\x1b[A";
const DOWN = "\x1b[B";
const HOME = "\x01";
const END = "\x05";
const KILL_LINE_END = "\x0b";
const DELETE = "\x1b[3~";
const BACKSPACE = "\x7f";
const WORD_LEFT = "\x1bb";
const WORD_RIGHT = "\x1bf";
const DELETE_WORD = "\x1bd";
const UNDO = "\x1f";
const YANK = "\x19";
const NEWLINE = "\x1b\r";
const ENTER = "\r";

/** Normal-mode keys that are one editor key (or a few), with the mode they leave the editor in. */
const MOTIONS: Record<string, { keys: string[]; insert?: boolean }> = {
  h: { keys: [LEFT] },
  l: { keys: [RIGHT] },
  k: { keys: [UP] },
  j: { keys: [DOWN] },
  w: { keys: [WORD_RIGHT] },
  e: { keys: [WORD_RIGHT] },
  b: { keys: [WORD_LEFT] },
  "0": { keys: [HOME] },
  "^": { keys: [HOME] },
  $: { keys: [END] },
  x: { keys: [DELETE] },
  X: { keys: [BACKSPACE] },
  D: { keys: [KILL_LINE_END] },
  C: { keys: [KILL_LINE_END], insert: true },
  S: { keys: [HOME, KILL_LINE_END], insert: true },
  s: { keys: [DELETE], insert: true },
  u: { keys: [UNDO] },
  p: { keys: [YANK] },
  P: { keys: [YANK] },
  i: { keys: [], insert: true },
  a: { keys: [RIGHT], insert: true },
  I: { keys: [HOME], insert: true },
  A: { keys: [END], insert: true },
  o: { keys: [END, NEWLINE], insert: true },
  O: { keys: [HOME, NEWLINE, UP], insert: true },
  "/": { keys: ["\x12"] },
  "?": { keys: ["\x12"] },
};

/** Two-key commands: the first key waits for the second. */
const PAIRS: Record<string, string[]> = {
  dd: [HOME, KILL_LINE_END],
  cc: [HOME, KILL_LINE_END],
  dw: [DELETE_WORD],
  cw: [DELETE_WORD],
  d$: [KILL_LINE_END],
  gg: [HOME],
};

export class ViKeys {
  normal = false;
  private pendingOperator = "";

  /** The editor keys for one key typed (none: consumed by vi). */
  translate(data: string): string[] {
    if (!this.normal) {
      if (data === "\x1b") {
        this.normal = true;
        return [LEFT];
      }
      return [data];
    }
    // Enter sends from either mode; Ctrl keys keep their meaning.
    if (data === ENTER || data === "\n") {
      this.normal = false;
      return [ENTER];
    }
    if (data.length !== 1 || data < " ") return [data];
    if (this.pendingOperator) {
      const pair = PAIRS[this.pendingOperator + data];
      const insert = this.pendingOperator === "c";
      this.pendingOperator = "";
      if (!pair) return [];
      if (insert) this.normal = false;
      return pair;
    }
    if ("dcg".includes(data)) {
      this.pendingOperator = data;
      return [];
    }
    const motion = MOTIONS[data];
    if (!motion) return [];
    if (motion.insert) this.normal = false;
    return motion.keys;
  }
}
