import { describe, expect, test } from "bun:test";
import { highlighterFor } from "./highlight.ts";
import { MarkdownStream, openMarkup } from "./markdown.ts";
import { makeTheme } from "./style.ts";

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const theme = makeTheme();

function stream(width = 80, highlight = false) {
  const out: string[] = [];
  const md = new MarkdownStream((t) => out.push(t), { theme, width: () => width, highlighter: highlight ? highlighterFor : undefined });
  return { md, out, text: () => out.join(""), plain: () => strip(out.join("")) };
}

/** The distinct foreground colours (SGR 3x / 38;…) used in `text`. */
function colours(text: string): Set<string> {
  return new Set([...text.matchAll(/\x1b\[((?:3[0-7]|9[0-7]|38;[0-9;]+))m/g)].map((m) => m[1] as string));
}

describe("MarkdownStream", () => {
  test("a lone path line (an edit block's) is written as it is, streamed in pieces or whole", () => {
    for (const pieces of [["dotenv/__init__.py\n"], ["dot", "env/__in", "it__.py", "\n"]]) {
      const s = stream();
      for (const p of pieces) s.md.push(p);
      s.md.push("a __bold__ word\n");
      s.md.end();
      expect(s.text()).toStartWith("dotenv/__init__.py\n");
      expect(s.plain()).toBe("dotenv/__init__.py\na bold word\n");
    }
  });

  test("headings by level, emphasis, strikethrough, code spans and links", () => {
    const s = stream();
    s.md.push("# Title\n## Sub\nsome `code`, **bold**, *it*, ~~old~~ and [docs](https://x.dev/a)\n");
    s.md.end();
    expect(s.plain()).toBe("Title\nSub\nsome code, bold, it, old and docs (https://x.dev/a)\n");
    const [h1, h2] = s.text().split("\n");
    expect(h1).toContain("\x1b[1;4;96m");
    expect(h2).toContain("\x1b[1;96m");
    expect(h1).not.toBe(h2?.replace("Sub", "Title"));
    expect(s.text()).toContain("\x1b[9mold");
    expect(s.text()).toContain("\x1b[3mit");
  });

  test("a quote has a bar and is italic: it does not look like the prompt", () => {
    const s = stream();
    s.md.push("> quoted words\n");
    s.md.end();
    expect(s.plain()).toBe("│ quoted words\n");
    expect(s.plain()).not.toStartWith(">");
    expect(s.text()).toContain("\x1b[3mquoted");
  });

  test("a table renders as a table, columns aligned", () => {
    const s = stream();
    s.md.push("| Name | Price |\n|------|------:|\n| apple | 1.50 |\n| pear | 12.00 |\nafter\n");
    s.md.end();
    expect(s.plain()).toBe(
      ["┌───────┬───────┐", "│ Name  │ Price │", "├───────┼───────┤", "│ apple │  1.50 │", "│ pear  │ 12.00 │", "└───────┴───────┘", "after", ""].join("\n"),
    );
  });

  test("lists get bullets; long lines wrap at words with a hanging indent", () => {
    const s = stream(30);
    s.md.push("- first\n- a second item long enough to wrap twice at thirty columns\n1. one\n");
    s.md.end();
    expect(s.plain()).toBe("• first\n• a second item long enough to\n  wrap twice at thirty columns\n1. one\n");
    for (const line of s.plain().split("\n")) expect(Bun.stringWidth(line)).toBeLessThanOrEqual(30);
  });

  test("prose streams word by word; a line waits while its kind or its markup is open", () => {
    const s = stream();
    s.md.push("This paragraph is one long line and ");
    expect(s.plain()).toBe("This paragraph is one long line and ");
    s.md.push("it goes `on and");
    expect(s.plain()).toBe("This paragraph is one long line and ");
    s.md.push(" on` here.\n# Head");
    expect(s.plain()).toBe("This paragraph is one long line and it goes on and on here.\n");
    s.md.push("ing done\n| a |");
    expect(s.plain()).toEndWith("Heading done\n");
    s.md.push("\n|---|\n| 1 |\n");
    s.md.end();
    expect(s.plain()).toEndWith("│ a │\n├───┤\n│ 1 │\n└───┘\n");
  });

  test("edit markers stand out; fenced text is not markdown", () => {
    const s = stream();
    s.md.push("a.py\n```\n<<<<<<< SEARCH\n# not a heading\n=======\nx = 2\n>>>>>>> REPLACE\n```\n");
    s.md.end();
    expect(s.plain()).toBe("a.py\n```\n<<<<<<< SEARCH\n# not a heading\n=======\nx = 2\n>>>>>>> REPLACE\n```\n");
    expect(s.text()).toContain("\x1b[33m<<<<<<< SEARCH");
    expect(s.text()).not.toContain("\x1b[1;4;96m# not");
  });

  test("escape sequences in a reply are shown as caret notation, carriage returns dropped", () => {
    const s = stream();
    s.md.push("a\x1b[2Jb\x1b]0;title\x07c\r\n\x9b31m");
    s.md.end();
    expect(s.text()).not.toMatch(/\x1b\[2J|\x1b\]|[\x07\r\x9b]/);
    expect(s.plain()).toContain("a^[[2Jb^[]0;title^Gc\n");
  });

  test("a Python block is highlighted with the embedded grammar: several colours, text unchanged", async () => {
    const s = stream(80, true);
    const code = 'def discount(price: float) -> float:\n    # ten percent off\n    return round(price * 0.9, 2)\n';
    s.md.push(`\`\`\`python\n${code}\`\`\`\nafter the block\n`);
    s.md.end();
    await s.md.idle();
    expect(s.plain()).toBe(`\`\`\`python\n${code}\`\`\`\nafter the block\n`);
    const block = s.text().split("```")[1] ?? "";
    expect(colours(block).size).toBeGreaterThanOrEqual(3);
    expect(block).toContain("\x1b[35mdef");
    expect(block).toContain("\x1b[34mdiscount");
  });

  test("an unknown language is plain, and output after it keeps its order", async () => {
    const s = stream(80, true);
    s.md.push("```brainfuck\n+++.\n```\nend\n");
    s.md.end();
    await s.md.idle();
    expect(s.text()).toContain("+++.\n");
    expect(s.plain()).toBe("```brainfuck\n+++.\n```\nend\n");
  });
});

test("openMarkup: spans, emphasis and links still open", () => {
  expect(openMarkup("a `b ")).toBe(true);
  expect(openMarkup("a `b` ")).toBe(false);
  expect(openMarkup("**bold ")).toBe(true);
  expect(openMarkup("snake_case names ")).toBe(false);
  expect(openMarkup("_it ")).toBe(true);
  expect(openMarkup("[link](http://x ")).toBe(true);
});
