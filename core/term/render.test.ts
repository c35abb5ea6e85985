import { describe, expect, test } from "bun:test";
import { replyCost, usageLine } from "../chat/events.ts";
import { JsonOutput } from "./json-output.ts";
import { PlainOutput, terminalSafe } from "./render.ts";


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

test("terminalSafe keeps text, tabs, newlines and wide characters", () => {
  expect(terminalSafe("tab\tand\nnewline é 日本")).toBe("tab\tand\nnewline é 日本");
});

test("cost unknown: a model without prices says so instead of $0.00", () => {
  const totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 1 };
  expect(usageLine({ promptTokens: 1200, completionTokens: 80, cachedTokens: 0 }, 0, totals, false)).toBe("Tokens: 1.2k sent, 80 received. Cost unknown (no prices for this model).");
});

test("PlainOutput: a retry after streamed text marks the text void; live command output is not repeated", () => {
  const out: string[] = [];
  const o = new PlainOutput((t) => out.push(t), () => {}, false);
  o.emit({ type: "request", model: "m", promptTokens: 1, estimated: true });
  o.emit({ type: "delta", text: "Half a repl" });
  o.emit({ type: "retry", attempt: 2, delayMs: 500, reason: "the connection dropped" });
  o.emit({ type: "command", command: "npm test", purpose: "test" });
  o.emit({ type: "output", text: "1 failed\n" });
  o.emit({ type: "test", ok: false, command: "npm test", output: "1 failed\n" });
  expect(out.join("")).toBe("Half a repl\n— the connection dropped, retrying (attempt 2); the text above is void —\nRunning tests… (npm test)\n1 failed\nTests failed (npm test).\n");
});

test("a long warning wraps between words, each continuation under the message", async () => {
  const { wrapStatus } = await import("./style.ts");
  const text = wrapStatus("warning: no API key found: set ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (in the environment)", 40, 9);
  const lines = text.split("\n");
  expect(lines[0]).toBe("warning: no API key found: set");
  expect(lines.slice(1).every((l) => l.startsWith("         ") && !l.startsWith("          "))).toBe(true);
  expect(lines.every((l) => l.length < 40)).toBe(true);
  expect(text.replace(/\s+/g, " ")).toBe("warning: no API key found: set ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (in the environment)");
});
