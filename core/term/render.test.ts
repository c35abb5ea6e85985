import { describe, expect, test } from "bun:test";
import { JsonOutput, replyCost, usageLine } from "./events.ts";
import { MarkdownStream, PlainOutput, terminalSafe } from "./render.ts";

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

describe("MarkdownStream", () => {
  test("renders complete lines only, and the rest at the end", () => {
    const out: string[] = [];
    const md = new MarkdownStream((t) => out.push(t));
    md.push("# Tit");
    expect(out).toEqual([]);
    md.push("le\nsome `code` and **bold**\nunfinished");
    expect(out.length).toBe(2);
    expect(out[0]).toContain("\x1b[1mTitle");
    expect(strip(out[1] ?? "")).toBe("some code and bold\n");
    md.end();
    expect(strip(out.at(-1) ?? "")).toBe("unfinished\n");
  });

  test("fenced blocks are not treated as markdown", () => {
    const out: string[] = [];
    const md = new MarkdownStream((t) => out.push(t));
    md.push("```python\n# not a heading\n```\n# heading\n");
    expect(strip(out.join(""))).toBe("```python\n# not a heading\n```\nheading\n");
    expect(out[1]).not.toContain("\x1b[1m");
    expect(out[3]).toContain("\x1b[1m");
  });
});

describe("outputs", () => {
  test("JsonOutput writes one object per line with type and time; print goes elsewhere", () => {
    const lines: string[] = [];
    const errs: string[] = [];
    const o = new JsonOutput((l) => lines.push(l), (t) => errs.push(t));
    o.emit({ type: "delta", text: "a\nb" });
    o.print("human text");
    expect(lines.length).toBe(1);
    const e = JSON.parse(lines[0] ?? "");
    expect(e).toMatchObject({ type: "delta", text: "a\nb" });
    expect(typeof e.time).toBe("string");
    expect(errs.join("")).toContain("human text");
  });

  test("JsonOutput prints costs rounded to 1e-8 dollars, in replies and totals", () => {
    const lines: string[] = [];
    const o = new JsonOutput((l) => lines.push(l), () => {});
    const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0 };
    o.emit({ type: "reply", text: "", usage, cost: 0.012712000000000001, model: "m", finishReason: "stop" });
    o.emit({ type: "end", exitCode: 0, totals: { ...usage, cost: 0.1 + 0.2, requests: 1 } });
    expect(lines[0]).toContain('"cost":0.012712,');
    expect(JSON.parse(lines[1] ?? "").totals.cost).toBe(0.3);
  });

  test("PlainOutput: reply verbatim on stdout, warnings on stderr", () => {
    const out: string[] = [];
    const err: string[] = [];
    const o = new PlainOutput((t) => out.push(t), (t) => err.push(t));
    o.emit({ type: "delta", text: "Hello" });
    o.emit({ type: "edit", path: "a.py", status: "applied", detail: "applied" });
    o.warn("careful");
    expect(out.join("")).toBe("Hello\nApplied edit to a.py\n");
    expect(err.join("")).toBe("warning: careful\n");
  });
});

test("cost and usage line", () => {
  const usage = { promptTokens: 2_000_000, completionTokens: 1_000_000, cachedTokens: 1_000_000 };
  expect(replyCost(usage, { input: 2, output: 8, cacheRead: 0.5 })).toBeCloseTo(2 + 0.5 + 8);
  const line = usageLine({ promptTokens: 3100, completionTokens: 210, cachedTokens: 1200 }, 0.004, { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0.012, requests: 3 });
  expect(line).toBe("Tokens: 3.1k sent, 1.2k cached, 210 received. Cost: $0.0040 message, $0.01 session.");
});

describe("terminal safety and streaming", () => {
  test("escape sequences in a reply are shown as caret notation, carriage returns dropped", () => {
    const out: string[] = [];
    const md = new MarkdownStream((t) => out.push(t));
    md.push("a\x1b[2Jb\x1b]0;title\x07c\r\n\x9b31m");
    md.end();
    const text = out.join("");
    expect(text).not.toMatch(/[\x1b\x07\r\x9b]/);
    expect(text).toContain("a^[[2Jb^[]0;title^Gc\n");
    expect(terminalSafe("tab\tand\nnewline é 日本")).toBe("tab\tand\nnewline é 日本");
  });

  test("a long line of prose streams word by word; fences, headings and markers wait for their line", () => {
    const out: string[] = [];
    const md = new MarkdownStream((t) => out.push(t));
    md.push("This paragraph is one long line and ");
    expect(strip(out.join(""))).toBe("This paragraph is one long line and ");
    md.push("it goes `on and");
    expect(strip(out.join(""))).toBe("This paragraph is one long line and "); // the code span is still open
    md.push(" on` here.\n# Head");
    expect(strip(out.join(""))).toBe("This paragraph is one long line and it goes on and on here.\n");
    md.push("ing done\n<<<<<<< SEARCH\n");
    expect(out.join("")).toContain("\x1b[1mHeading done");
    expect(out.join("")).toContain("\x1b[33m<<<<<<< SEARCH");
    md.push("```\nsome code with ");
    expect(strip(out.join(""))).toEndWith("```\nsome code with ");
    md.push("words\n```\n");
    md.end();
    expect(strip(out.join(""))).toEndWith("```\nsome code with words\n```\n");
  });
});
