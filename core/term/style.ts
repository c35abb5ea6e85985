// Colours for the terminal: whether to use them at all (NO_COLOR, --no-pretty, not a
// terminal), and the dark and light themes for prose, diffs and highlighted code
// (--dark-mode, --light-mode, --code-theme).

import type { Options } from "../config/options.ts";

export type Paint = (text: string) => string;

const sgr =
  (open: string, close: string): Paint =>
  (text) =>
    text ? `\x1b[${open}m${text}\x1b[${close}m` : text;

const fg = (code: string): Paint => sgr(code, "39");
const rgb = (hex: string): Paint => fg(`38;2;${parseInt(hex.slice(0, 2), 16)};${parseInt(hex.slice(2, 4), 16)};${parseInt(hex.slice(4, 6), 16)}`);

export const plain: Paint = (text) => text;

/** Everything the renderers paint, by role. */
export interface Theme {
  name: string;
  bold: Paint;
  dim: Paint;
  italic: Paint;
  underline: Paint;
  strike: Paint;
  heading: readonly [Paint, Paint, Paint, Paint];
  link: Paint;
  inlineCode: Paint;
  quoteBar: Paint;
  quote: Paint;
  bullet: Paint;
  rule: Paint;
  marker: Paint;
  ok: Paint;
  bad: Paint;
  warn: Paint;
  diffAdd: Paint;
  diffDel: Paint;
  diffHunk: Paint;
  diffHeader: Paint;
  /** Code token colours by highlight capture name ("keyword", "string", "function.call", ...). */
  code: Readonly<Record<string, Paint>>;
  /** Code without a colour of its own (no grammar, or an uncaptured token). */
  codePlain: Paint;
}

const bold = sgr("1", "22");
const dim = sgr("2", "22");
const italic = sgr("3", "23");
const underline = sgr("4", "24");
const strike = sgr("9", "29");

const base = {
  bold,
  dim,
  italic,
  underline,
  strike,
  bullet: fg("36"),
  rule: dim,
  marker: fg("33"),
  ok: fg("32"),
  bad: fg("31"),
  warn: fg("33"),
  diffAdd: fg("32"),
  diffDel: fg("31"),
  diffHunk: fg("36"),
  diffHeader: bold,
};

/** Code palettes (the --code-theme values): capture name (or its first part) → colour. */
const PALETTES: Record<Options["codeTheme"], Record<string, Paint>> = {
  // The 16 ANSI colours follow the terminal's own palette, so they suit dark and light backgrounds.
  default: {
    keyword: fg("35"),
    conditional: fg("35"),
    repeat: fg("35"),
    include: fg("35"),
    exception: fg("35"),
    string: fg("32"),
    "string.special": fg("36"),
    escape: fg("36"),
    character: fg("32"),
    comment: sgr("2;3", "22;23"),
    number: fg("33"),
    float: fg("33"),
    boolean: fg("33"),
    constant: fg("33"),
    "constant.builtin": fg("33"),
    function: fg("34"),
    method: fg("34"),
    constructor: fg("33"),
    type: fg("36"),
    "type.builtin": fg("36"),
    attribute: fg("36"),
    decorator: fg("36"),
    tag: fg("34"),
    label: fg("36"),
    module: fg("36"),
    namespace: fg("36"),
    property: fg("34"),
    "variable.builtin": fg("31"),
    "function.builtin": fg("36"),
    operator: plain,
    punctuation: plain,
    variable: plain,
  },
  monokai: {
    keyword: rgb("f92672"),
    conditional: rgb("f92672"),
    repeat: rgb("f92672"),
    include: rgb("f92672"),
    exception: rgb("f92672"),
    operator: rgb("f92672"),
    string: rgb("e6db74"),
    character: rgb("e6db74"),
    escape: rgb("ae81ff"),
    comment: rgb("75715e"),
    number: rgb("ae81ff"),
    float: rgb("ae81ff"),
    boolean: rgb("ae81ff"),
    constant: rgb("ae81ff"),
    function: rgb("a6e22e"),
    method: rgb("a6e22e"),
    constructor: rgb("66d9ef"),
    type: rgb("66d9ef"),
    attribute: rgb("a6e22e"),
    decorator: rgb("a6e22e"),
    tag: rgb("f92672"),
    module: rgb("f8f8f2"),
    property: rgb("f8f8f2"),
    "variable.builtin": rgb("fd971f"),
    "variable.parameter": rgb("fd971f"),
    "function.builtin": rgb("66d9ef"),
    punctuation: plain,
    variable: plain,
  },
  "solarized-dark": solarized(),
  "solarized-light": solarized(),
  github: {
    keyword: rgb("cf222e"),
    conditional: rgb("cf222e"),
    repeat: rgb("cf222e"),
    include: rgb("cf222e"),
    exception: rgb("cf222e"),
    operator: rgb("cf222e"),
    string: rgb("0a3069"),
    character: rgb("0a3069"),
    escape: rgb("0550ae"),
    comment: rgb("6e7781"),
    number: rgb("0550ae"),
    float: rgb("0550ae"),
    boolean: rgb("0550ae"),
    constant: rgb("0550ae"),
    function: rgb("8250df"),
    method: rgb("8250df"),
    constructor: rgb("953800"),
    type: rgb("953800"),
    attribute: rgb("0550ae"),
    decorator: rgb("8250df"),
    tag: rgb("116329"),
    property: rgb("0550ae"),
    "variable.builtin": rgb("953800"),
    "function.builtin": rgb("0550ae"),
    punctuation: plain,
    variable: plain,
  },
};

function solarized(): Record<string, Paint> {
  return {
    keyword: rgb("859900"),
    conditional: rgb("859900"),
    repeat: rgb("859900"),
    include: rgb("cb4b16"),
    exception: rgb("859900"),
    operator: rgb("859900"),
    string: rgb("2aa198"),
    character: rgb("2aa198"),
    escape: rgb("dc322f"),
    comment: rgb("93a1a1"),
    number: rgb("d33682"),
    float: rgb("d33682"),
    boolean: rgb("b58900"),
    constant: rgb("b58900"),
    function: rgb("268bd2"),
    method: rgb("268bd2"),
    constructor: rgb("b58900"),
    type: rgb("b58900"),
    attribute: rgb("6c71c4"),
    decorator: rgb("6c71c4"),
    tag: rgb("268bd2"),
    property: rgb("268bd2"),
    "variable.builtin": rgb("cb4b16"),
    "function.builtin": rgb("cb4b16"),
    punctuation: plain,
    variable: plain,
  };
}

export interface ThemeChoice {
  /** --light-mode (else dark, the default, as Aider's). */
  light?: boolean;
  /** --code-theme; "default" follows the terminal's palette. */
  codeTheme?: string;
}

export function makeTheme(choice: ThemeChoice = {}): Theme {
  const light = choice.light === true;
  const code = PALETTES[(choice.codeTheme ?? "default") as Options["codeTheme"]] ?? PALETTES.default;
  return {
    ...base,
    name: light ? "light" : "dark",
    heading: light ? [sgr("1;4;34", "22;24;39"), sgr("1;34", "22;39"), bold, sgr("1;3", "22;23")] : [sgr("1;4;96", "22;24;39"), sgr("1;96", "22;39"), bold, sgr("1;3", "22;23")],
    link: light ? sgr("4;34", "24;39") : sgr("4;94", "24;39"),
    inlineCode: light ? fg("35") : fg("96"),
    quoteBar: light ? fg("90") : fg("90"),
    quote: italic,
    code,
    codePlain: plain,
  };
}

/** No colour at all (NO_COLOR, --no-pretty): the line editor keeps its menu and search, in plain text. */
export function colourlessTheme(): Theme {
  const none = plain;
  return {
    name: "none",
    bold: none,
    dim: none,
    italic: none,
    underline: none,
    strike: none,
    heading: [none, none, none, none],
    link: none,
    inlineCode: none,
    quoteBar: none,
    quote: none,
    bullet: none,
    rule: none,
    marker: none,
    ok: none,
    bad: none,
    warn: none,
    diffAdd: none,
    diffDel: none,
    diffHunk: none,
    diffHeader: none,
    code: {},
    codePlain: none,
  };
}

/** The colour of one highlight capture: its own, else that of its shorter name ("function.call" → "function"). */
export function codePaint(theme: Theme, capture: string): Paint {
  let name = capture;
  for (;;) {
    const paint = theme.code[name];
    if (paint) return paint;
    const dot = name.lastIndexOf(".");
    if (dot < 0) return theme.codePlain;
    name = name.slice(0, dot);
  }
}

/**
 * Colours on? Never when NO_COLOR is set (https://no-color.org: any non-empty value) or
 * the output is not a terminal; `--pretty` / `--no-pretty` decide otherwise.
 */
export function wantsColour(env: Record<string, string | undefined>, pretty: boolean | undefined, isTTY: boolean): boolean {
  if (env.NO_COLOR) return false;
  return pretty ?? isTTY;
}

/**
 * A status line for the terminal: broken between words at `width` columns, each continuation
 * indented by `hang` columns (under the text after a "warning: " prefix). Lines already in the
 * text are kept.
 */
export function wrapStatus(text: string, width: number, hang: number): string {
  const room = Math.max(20, width - 1);
  const out: string[] = [];
  for (const source of text.split("\n")) {
    let line = "";
    for (const word of source.split(" ")) {
      const indent = out.length && !line ? hang : 0;
      if (line && textWidth(line) + 1 + textWidth(word) > room) {
        out.push(line);
        line = `${" ".repeat(hang)}${word}`;
      } else line = line ? `${line} ${word}` : `${" ".repeat(indent)}${word}`;
    }
    out.push(line);
  }
  return out.join("\n");
}

/** Visible width of text on a terminal (escape sequences take none, wide characters two). */
export function textWidth(text: string): number {
  return Bun.stringWidth(text);
}
