import { describe, expect, test } from "bun:test";
import { FormatError, PluginError, UsageError } from "../errors.ts";
import type { EditFormat, Logger, ModelAdapter, ModelInfo, PluginObject } from "../plugin.ts";
import { Registry, defaultModelInfo, guard } from "./registry.ts";

const format = (name: string): EditFormat => ({ name, summary: "s", prompts: () => ({ system: "", examples: [], reminder: "" }), parse: () => ({ edits: [], shell: [] }), apply: () => [], report: () => "" });
const info = (name: string): ModelInfo => ({ ...defaultModelInfo(name, "diff"), unknown: false, contextWindow: 1000 });
const adapter = (name: string, prefix: string): ModelAdapter => ({
  name,
  matches: (m) => m.startsWith(prefix),
  info: (m) => (m === `${prefix}known` ? info(m) : undefined),
  list: () => [info(`${prefix}known`)],
  async *stream() {},
});
const plugin = (name: string, extra: Partial<PluginObject> = {}): PluginObject => ({ apiVersion: 1, name, ...extra });

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, debug: () => {}, info: () => {}, warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) };
}

describe("register", () => {
  test("items are looked up with their plugin and origin", () => {
    const r = new Registry();
    r.register(plugin("a", { formats: [format("diff")] }), "built-in:formats/a");
    expect(r.formatEntry("diff")).toMatchObject({ plugin: "a", origin: "built-in:formats/a" });
    expect(r.plugins.get("a")?.origin).toBe("built-in:formats/a");
  });

  test("a duplicate item names both origins; nothing of the newcomer is registered", () => {
    const r = new Registry();
    r.register(plugin("a", { formats: [format("diff")] }), "/x/a.ts");
    const clash = () => r.register(plugin("b", { formats: [format("new"), format("diff")] }), "/x/b.ts");
    expect(clash).toThrow(PluginError);
    expect(clash).toThrow('edit format "diff" is already registered by plugin a (/x/a.ts)');
    expect(clash).toThrow("plugin b (/x/b.ts)");
    expect(r.formats.has("new")).toBe(false);
    expect(r.plugins.has("b")).toBe(false);
  });

  test("override replaces; duplicate plugin names clash too", () => {
    const r = new Registry();
    r.register(plugin("a", { formats: [format("diff")] }), "/x/a.ts");
    r.register(plugin("b", { override: true, formats: [format("diff")] }), "/x/b.ts");
    expect(r.formatEntry("diff").plugin).toBe("b");
    expect(() => r.register(plugin("a"), "/x/a2.ts")).toThrow('plugin name "a" is already registered');
    expect(() => r.register(plugin("c", { commands: [{ name: "x", summary: "", run() {} }, { name: "x", summary: "", run() {} }] }), "/c")).toThrow("listed twice");
  });
});

describe("lookups", () => {
  test("an unknown format is a UsageError naming the known ones", () => {
    const r = new Registry();
    r.register(plugin("a", { formats: [format("whole"), format("diff")] }), "o");
    expect(() => r.format("udif")).toThrow(UsageError);
    expect(() => r.format("udif")).toThrow("known: diff, whole");
  });

  test("adapterFor: the first adapter that matches; none is a UsageError", () => {
    const r = new Registry();
    r.register(plugin("a", { models: [adapter("one", "one/"), adapter("two", "two/")] }), "o");
    expect(r.adapterFor("two/x").name).toBe("two");
    expect(() => r.adapterFor("three/x")).toThrow(UsageError);
  });

  test("modelInfo merges config overrides; an unknown model gets defaults and one warning", () => {
    const log = recorder();
    const r = new Registry({ log, modelOverrides: { "one/known": { contextWindow: 5, prices: { input: 2 } }, "one/custom": { maxOutput: 7 } } });
    r.register(plugin("a", { models: [adapter("one", "one/")] }), "o");
    expect(r.modelInfo("one/known")).toMatchObject({ contextWindow: 5, prices: { input: 2, output: 0 }, unknown: false });
    expect(r.modelInfo("one/custom")).toMatchObject({ maxOutput: 7, unknown: false });
    expect(r.modelInfo("one/other").unknown).toBe(true);
    r.modelInfo("one/other");
    expect(log.lines.filter((l) => l.includes("one/other"))).toHaveLength(1);
    expect(r.listModels().map((m) => m.name)).toEqual(["one/custom", "one/known"]);
  });

  test("a throwing adapter is reported by name, not thrown", () => {
    const log = recorder();
    const r = new Registry({ log });
    r.register(plugin("bad", { models: [{ ...adapter("bad", "bad/"), info: () => { throw new Error("boom"); }, list: () => { throw new Error("list boom"); } }] }), "/p/bad.ts");
    expect(r.modelInfo("bad/x").unknown).toBe(true);
    expect(r.listModels()).toEqual([]);
    expect(log.lines.some((l) => l.includes("plugin bad (/p/bad.ts)") && l.includes("boom"))).toBe(true);
  });
});

describe("guard", () => {
  const owner = { plugin: "p", origin: "/p.ts" };
  test("a throw becomes a PluginError naming plugin, origin and hook", async () => {
    await expect(guard(owner, "provide", async () => { throw new TypeError("x is undefined"); })).rejects.toThrow("plugin p (/p.ts): provide failed: x is undefined");
    // One guard for synchronous calls too: the throw comes at once, as the same PluginError.
    expect(() => guard(owner, "parse", () => { throw new Error("bad"); })).toThrow("plugin p (/p.ts): parse failed: bad");
    expect(guard(owner, "parse", () => 7)).toBe(7);
    expect(await guard(owner, "ok", async () => 42)).toBe(42);
  });

  test("FormatError and aborts pass through unchanged", async () => {
    expect(() => guard(owner, "parse", () => { throw new FormatError("for the model"); })).toThrow(FormatError);
    const abort = new DOMException("aborted", "AbortError");
    await expect(guard(owner, "stream", async () => { throw abort; })).rejects.toBe(abort);
  });
});

describe("fallbackFormat", () => {
  test("the first format declaring `fallback`, else the first that edits, else the first; an unknown model gets it", () => {
    const r = new Registry();
    expect(r.fallbackFormat()).toBe("");
    r.register(plugin("answers", { formats: [{ ...format("talk"), mode: "none" }] }), "/x/talk.ts");
    expect(r.fallbackFormat()).toBe("talk");
    r.register(plugin("edits", { formats: [format("rewrite")] }), "/x/rewrite.ts");
    expect(r.fallbackFormat()).toBe("rewrite");
    r.register(plugin("safe", { apiVersion: 2, formats: [format("blocks"), { ...format("safest"), fallback: true }] }), "/x/safe.ts");
    expect(r.fallbackFormat()).toBe("safest");
    expect(r.modelInfo("nobody/knows").editFormat).toBe("safest");
  });
});
