// Text laid out for the terminal the commands print to: words wrapped at its width, and
// two-column lists (name, description) whose descriptions wrap under themselves.

/** The width to lay text out at: the terminal's, or 80 when output is not a terminal. */
export function outputWidth(): number {
  return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80;
}

/** `text` in lines of at most `width` columns, broken between words (a word longer than a line is cut). */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let rest = word;
    while (rest.length > width) {
      if (line) lines.push(line);
      line = "";
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    if (!line) line = rest;
    else if (line.length + 1 + rest.length <= width) line += ` ${rest}`;
    else {
      lines.push(line);
      line = rest;
    }
  }
  if (line || !lines.length) lines.push(line);
  return lines;
}

/**
 * Rows of (name, description) in two columns fitted to `width`: the name column is as wide as
 * the names up to 28 columns (or a third of the width); a longer name takes its own line, with
 * its description under it. Below 50 columns, every description goes under its name.
 */
export function twoColumns(rows: readonly (readonly [string, string])[], width: number): string {
  const narrow = width < 50;
  // Names past this take a line of their own, so one long name does not squeeze every description.
  const cap = Math.max(12, Math.min(28, Math.floor(width / 3)));
  const nameWidth = narrow ? 0 : Math.min(cap, Math.max(0, ...rows.map(([name]) => name.length).filter((n) => n <= cap)));
  const indent = narrow ? 4 : nameWidth + 2;
  const room = Math.max(20, width - indent - 1);
  const out: string[] = [];
  for (const [name, description] of rows) {
    const wrapped = wrapWords(description, room);
    if (narrow || name.length > nameWidth) {
      out.push(name, ...wrapped.map((l) => `${" ".repeat(indent)}${l}`));
      continue;
    }
    out.push(`${name.padEnd(nameWidth)}  ${wrapped[0]}`, ...wrapped.slice(1).map((l) => `${" ".repeat(indent)}${l}`));
  }
  return out.join("\n");
}

/** How a command is typed: its usage when it names the command (`/add FILE ...`), else `/name` and the usage's arguments. */
export function usageLabel(c: { name: string; usage?: string }): string {
  if (c.usage?.startsWith("/")) return c.usage;
  return c.usage ? `/${c.name} ${c.usage}` : `/${c.name}`;
}
