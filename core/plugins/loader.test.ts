import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, PluginError, UsageError } from "../errors.ts";
import { createKit, plainFiles } from "../boot/kit.ts";
import { ITEM_RULES, PLUGIN_KEYS, fileSource, loadPlugins, sha256Hex, validatePluginObject } from "./loader.ts";
import type { Kit, Logger } from "../plugin.ts";
import { Registry } from "./registry.ts";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "coder-loader-")));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

function testKit(registry: Registry): Kit {
  const log: Logger = { debug() {}, info() {}, warn() {}, error() {} };
  const unavailable = () => {
    throw new Error("not in this test");
  };
  return createKit({
    version: "0.0.0",
    root: dir,
    matcher: { rungs: [], replace: unavailable, explain: unavailable },
    reports: { failedEdits: unavailable },
    countTokens: (t) => t.length,
    files: plainFiles(dir, async () => []),
    registry,
    log,
    readOption: unavailable,
    env: {},
  });
}

describe("validatePluginObject", () => {
  const ok = { apiVersion: 1, name: "p" };
  test("accepts a minimal plugin", () => {
    expect(validatePluginObject(ok, "/o.ts").name).toBe("p");
  });
  test("accepts the optional onMessage of a context provider and transcribe of a model adapter", () => {
    const full = {
      ...ok,
      context: [{ name: "c", stability: "turn", provide() {}, onMessage() {} }],
      models: [{ name: "m", matches() {}, info() {}, stream() {}, transcribe() {} }],
    };
    expect(validatePluginObject(full, "/o.ts").name).toBe("p");
  });
  const bad: [unknown, string][] = [
    [{ ...ok, hooks: {} }, 'unknown key "hooks"'],
    [{ name: "p" }, '"apiVersion" is missing'],
    [{ ...ok, apiVersion: 3 }, "plugin API version 3"],
    [{ ...ok, apiVersion: "1" }, '"apiVersion": expected a positive integer'],
    [{ ...ok, name: "" }, '"name"'],
    [{ ...ok, formats: {} }, '"formats": expected a list'],
    [{ ...ok, context: [{ name: "c", stability: "forever", provide() {} }] }, 'context[0] ("c").stability: expected one of "static", "session", "turn"'],
    [{ ...ok, models: [{ name: "m", matches() {}, info() {} }] }, 'models[0] ("m").stream: is missing'],
    [{ ...ok, context: [{ name: "c", stability: "turn", provide() {}, onMessage: "yes" }] }, 'context[0] ("c").onMessage: expected a function, got the string "yes"'],
    [{ ...ok, models: [{ name: "m", matches() {}, info() {}, stream() {}, transcribe: true }] }, 'models[0] ("m").transcribe: expected a function'],
    [{ ...ok, commands: [{ name: "c", summary: "s", run() {}, hidden: true }] }, 'unknown key "commands[0] ("c").hidden"'],
    [[], "got a list"],
    [{ ...ok, apiVersion: 2, context: [{ name: "c", stability: "turn", provide() {}, budget: { option: { key: "cTokens" } } }] }, 'context[0] ("c"): budget.option: expected one of this plugin\'s own options, got the string "cTokens"'],
    [
      { ...ok, apiVersion: 2, options: [{ key: "cTokens", type: "string", help: "h" }], context: [{ name: "c", stability: "turn", provide() {}, budget: { option: { key: "cTokens" } } }] },
      'budget.option: option "cTokens" must be of type "number"',
    ],
    [{ ...ok, apiVersion: 2, context: [{ name: "c", stability: "turn", provide() {}, budget: { share: { fraction: 2 } } }] }, "budget.share.fraction: expected a number above 0 and at most 1, got number 2"],
    [{ ...ok, apiVersion: 2, context: [{ name: "c", stability: "turn", provide() {}, budget: { weight: 1 } }] }, 'budget: unknown key "weight"'],
  ];
  for (const [value, text] of bad) {
    test(`rejects: ${text}`, () => {
      expect(() => validatePluginObject(value, "/o.ts")).toThrow(PluginError);
      expect(() => validatePluginObject(value, "/o.ts")).toThrow(text);
      expect(() => validatePluginObject(value, "/o.ts")).toThrow("(/o.ts)");
    });
  }
});

describe("fileSource", () => {
  test("pins: a match loads, a mismatch names the file and both hashes", () => {
    const text = 'export default { apiVersion: 1, name: "pinned" };\n';
    const path = write("pinned.ts", text);
    expect(fileSource(path, ".coder.json", sha256Hex(text)).sha256).toBe(sha256Hex(text));
    const wrong = "0".repeat(64);
    expect(() => fileSource(path, ".coder.json", wrong)).toThrow(ConfigError);
    expect(() => fileSource(path, ".coder.json", wrong)).toThrow(`${path} does not match its pin in .coder.json: pinned sha256 ${wrong}, file has ${sha256Hex(text)}`);
    expect(() => fileSource(join(dir, "missing.ts"), "--plugin")).toThrow(UsageError);
  });
});

describe("loadPlugins", () => {
  test("factories get the kit; a throwing plugin is recorded and skipped, the rest register", async () => {
    const registry = new Registry();
    const errors: string[] = [];
    const log: Logger = { debug() {}, info() {}, warn() {}, error: (m) => errors.push(m) };
    const sources = [
      fileSource(write("f.ts", 'export default (kit) => ({ apiVersion: 1, name: "f-" + kit.version });\n'), "--plugin"),
      fileSource(write("boom.ts", 'export default () => { throw new Error("kaboom"); };\n'), "--plugin"),
      fileSource(write("top.ts", 'throw new Error("at import");\n'), "--plugin"),
      { origin: "built-in:test", load: async () => ({ default: { apiVersion: 1, name: "builtin" } }) },
    ];
    await loadPlugins(registry, sources, testKit(registry), log);
    expect([...registry.plugins.keys()]).toEqual(["f-0.0.0", "builtin"]);
    expect(registry.failures.map((f) => f.message)).toEqual(["kaboom", "at import"]);
    expect(errors.some((e) => e.includes(join(dir, "boom.ts")) && e.includes("kaboom"))).toBe(true);
  });

  test("a validation error stops loading (exit 2)", async () => {
    const registry = new Registry();
    const source = fileSource(write("v.ts", 'export default { apiVersion: 1, name: "v", extra: 1 };\n'), "--plugin");
    await expect(loadPlugins(registry, [source], testKit(registry), { debug() {}, info() {}, warn() {}, error() {} })).rejects.toThrow(PluginError);
  });
});

test("the README's table of the plugin object lists exactly the loader's keys, each with its API version", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("**The plugin object.**"), readme.indexOf("The export is validated when it loads"));
  const rows = [...section.matchAll(/^\| `([A-Za-z]+)` \| (\d+) \|/gm)].map((m) => [m[1], Number(m[2])]);
  expect(Object.fromEntries(rows)).toEqual(PLUGIN_KEYS);
  expect(rows).toHaveLength(Object.keys(PLUGIN_KEYS).length);
});

test("the README's row of each kind of item names every member the loader checks", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("**The plugin object.**"), readme.indexOf("The export is validated when it loads"));
  // Options are many and listed under Plugin options; the row points there.
  for (const kind of ["formats", "context", "models", "commands", "tools", "subcommands"] as const) {
    const row = new RegExp(`^\\| \`${kind}\` \\|.*$`, "m").exec(section)?.[0] ?? "";
    const named = new Set([...row.matchAll(/`([A-Za-z]+)[`(]/g)].map((m) => m[1]));
    const missing = Object.keys(ITEM_RULES[kind]).filter((member) => !named.has(member));
    expect({ kind, missing }).toEqual({ kind, missing: [] });
  }
});
