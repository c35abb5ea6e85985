import { describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgv } from "./argv.ts";
import { checkVersionPins, isSemverRange, keysNeedingTrust, mergeSettings, readDotenv, type ConfigLayer } from "./config.ts";
import { jsonSchema, MODEL_OVERRIDE_SHAPE, parseConfigText, plainData, plainlyValidValue } from "./config-file.ts";
import { configSchema, modelOverrideSchema, valueSchema } from "./config-schema.ts";
import { ConfigError } from "../errors.ts";
import { optionTable } from "./options.ts";

/** The kernel's table plus one plugin option, as a loaded plugin would declare it. */
const TABLE = optionTable([
  {
    plugin: "test",
    options: [
      { key: "mapTokens", type: "number", arg: "N", help: "repo-map token budget (a plugin's)" },
      // A plugin's flag that stands for another option's value, as the architect format declares `--architect`.
      { key: "architect", type: "boolean", cliOnly: true, implies: { editFormat: "architect" }, help: "shorthand for --edit-format architect" },
    ],
  },
]);


const layer = (text: string, kind: ConfigLayer["kind"] = "project", file = "/r/.coder.json") => parseConfigText(text, file, kind, undefined, TABLE);
const noEnv = { values: {}, origin: {} };

describe("parseConfigText", () => {
  test("JSONC: comments and trailing commas; lines of each key; plugins normalised", () => {
    const l = layer('{\n  // hi\n  "model": "a/b", /* x */\n  "plugins": ["./p.ts", { "path": "./q.ts" },],\n}\n');
    expect(l.values.model).toBe("a/b");
    expect(l.lines).toEqual({ model: 3, plugins: 4 });
    expect(l.values.plugins).toEqual([{ path: "./p.ts", source: "/r/.coder.json" }, { path: "./q.ts", sha256: undefined, source: "/r/.coder.json" }]);
  });

  test("every problem is reported with file and line, in one error", () => {
    let message = "";
    try {
      layer('{\n  "mapTokens": true,\n  "editFormats": "diff",\n  "attribution": "never"\n}');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toContain("/r/.coder.json:2: mapTokens: expected a number, got boolean true");
    expect(message).toContain('/r/.coder.json:3: unknown key "editFormats" (did you mean "editFormat"?)');
    expect(message).toContain('/r/.coder.json:4: attribution: expected one of "trailer", "author", "committer", "none"');
  });

  test("nested keys and bad pins name the path", () => {
    expect(() => layer('{ "models": { "m": { "prices": { "inptu": 1 } } } }')).toThrow('unknown key "models.m.prices.inptu"');
    expect(() => layer('{ "plugins": [{ "path": "x", "sha256": "abc" }] }')).toThrow("plugins[0]");
  });

  test("flag-only keys and project secrets are refused", () => {
    expect(() => layer('{ "message": "hi" }')).toThrow('unknown key "message"');
    expect(() => layer('{ "apiKey": "k" }')).toThrow("apiKey may not be set in a project config");
    expect(layer('{ "apiKey": "k" }', "global").values.apiKey).toBe("k");
  });

  test("not an object, bad JSON", () => {
    expect(() => layer("[1]")).toThrow("must hold a JSON object");
    expect(() => layer('{\n"a" 1}')).toThrow(":2: invalid JSON");
    expect(layer("").values).toEqual({});
  });
});

describe("mergeSettings", () => {
  test("precedence, provenance, defaults, architect, plugins add up", () => {
    const g = layer('{ "mapTokens": 1, "plugins": ["./g.ts"] }', "global", "/h/config.json");
    const p = layer('{\n "mapTokens": 2, "plugins": ["./p.ts"] }');
    const s = mergeSettings({ table: TABLE, layers: [g, p], env: { values: { stream: false }, origin: { stream: "env CODER_STREAM" } }, argv: parseArgv(["--architect"], TABLE), positionals: [], cwd: "/elsewhere" });
    expect((s.options as Record<string, unknown>).mapTokens).toBe(2);
    expect(s.provenance.mapTokens).toBe("/r/.coder.json:2");
    expect(s.options.stream).toBe(false);
    expect(s.options.editFormat).toBe("architect");
    expect(s.provenance.editFormat).toBe("flag --architect");
    expect(s.options.maxReflections).toBe(3);
    expect(s.options.read).toEqual([]);
    expect(s.options.plugins.map((x) => x.path)).toEqual(["./g.ts", "./p.ts"]);
    expect(s.configFiles).toEqual(["/h/config.json", "/r/.coder.json"]);
  });

  test("dropped keys of an untrusted project are ignored, the global's stay", () => {
    const g = layer('{ "lintCmd": "ok" }', "global", "/h/config.json");
    const p = layer('{ "lintCmd": "evil", "testCmd": "evil", "plugins": ["./p.ts"] }');
    expect(keysNeedingTrust([g, p], TABLE).sort()).toEqual(["lintCmd", "plugins", "testCmd"]);
    const s = mergeSettings({ table: TABLE, layers: [g, p], env: noEnv, argv: parseArgv([], TABLE), positionals: [], drop: new Set(keysNeedingTrust([g, p], TABLE)) });
    expect(s.options.lintCmd).toBe("ok");
    expect(s.options.testCmd).toBeUndefined();
    expect(s.options.plugins).toEqual([]);
  });
});

test("version pins", () => {
  expect(() => checkVersionPins([layer('{ "coder": "^0.1" }')], "0.1.0")).not.toThrow();
  expect(() => checkVersionPins([layer('{ "coder": "^0.1" }')], "0.1.0-dev")).not.toThrow();
  expect(() => checkVersionPins([layer('{\n"coder": ">=2" }')], "0.1.0")).toThrow("/r/.coder.json:2: this project needs coder >=2, but this is coder 0.1.0");
  expect(() => checkVersionPins([layer('{ "coder": "not a range" }')], "0.1.0")).toThrow(ConfigError);
});

test(".env gives API keys and base URLs only", () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "coder-env-")));
  writeFileSync(join(dir, ".env"), 'OPENAI_API_KEY="sk-1"\nexport ANTHROPIC_API_KEY=sk-2 # comment\nPATH=/evil\nCODER_TRUST=1\nOPENAI_API_BASE=http://x/v1\nOLLAMA_BASE_URL=http://y\n');
  expect(readDotenv(dir)).toEqual({ keys: { OPENAI_API_KEY: "sk-1", ANTHROPIC_API_KEY: "sk-2" }, bases: { OPENAI_API_BASE: "http://x/v1", OLLAMA_BASE_URL: "http://y" } });
  expect(readDotenv(join(dir, "missing"))).toEqual({ keys: {}, bases: {} });
});

test("the JSON Schema is strict and documents each key", () => {
  const schema = jsonSchema(TABLE) as { properties: Record<string, { description?: string }>; additionalProperties: boolean };
  expect(schema.additionalProperties).toBe(false);
  expect(schema.properties.mapTokens?.description).toContain("repo-map token budget (a plugin's)");
  expect(schema.properties.$schema).toBeDefined();
});

test("semver ranges", () => {
  for (const ok of ["^0.1", ">=0.1.0 <2", "1.x || >=3.0.0-beta.1", "*", "~1.2.3", "1.0.0 - 2.0.0", "0.1.0"]) expect(isSemverRange(ok)).toBe(true);
  for (const bad of ["not a range", "", "^", ">= ", "1.0.0 -"]) expect(isSemverRange(bad)).toBe(false);
});

describe("plainly valid without zod", () => {
  // Values of every type, valid and not: what the check passes, zod must accept and give back unchanged.
  const SAMPLES: unknown[] = [
    true, false, 0, -0, 1, 2.5, -1, 1e400, "", "a/b", "diff", "nope", null, [], ["a"], ["a", 1], [""], {}, { a: "b" }, { a: 1 }, [1],
    ["./p.ts"], [{ path: "./p.ts" }], [{ path: "./p.ts", sha256: "a".repeat(64) }], [{ path: "./p.ts", sha256: "A".repeat(64) }], [{ path: "" }], [{ path: "./p.ts", extra: 1 }],
    { "gpt-x": { contextWindow: 1000 } },
    // Model overrides: every key, keys out of the schema's order, and what zod refuses.
    {
      "a/b": {
        capabilities: { pdf: true, tools: false, reasoningLevels: ["low", "high"], cache: "breakpoints" },
        prompting: { addendum: "lazy", reminder: "system" },
        prices: { output: 2, input: -0.5, cacheRead: 0, cacheWrite: 1e-7 },
        maxOutput: 8192,
        contextWindow: 128000,
        editFormat: "whole",
        weakModel: "w",
        editorModel: "e",
        editorFormat: "editor-diff",
        encoding: "o200k_base",
      },
      "c/d": {},
    },
    { "a/b": { contextWindow: 1.5 } }, { "a/b": { contextWindow: 0 } }, { "a/b": { maxOutput: -1 } }, { "a/b": { prices: { input: "1" } } },
    { "a/b": { prices: { inptu: 1 } } }, { "a/b": { prompting: { reminder: "assistant" } } }, { "a/b": { capabilities: { cache: "always" } } },
    { "a/b": { capabilities: { reasoningLevels: [1] } } }, { "a/b": { contextWindow: 1, extra: true } }, { "a/b": null }, { "a/b": [] },
    { "a/b": { constructor: 1 } }, { "a/b": { prices: null } }, { "a/b": { editFormat: 1 } },
  ];
  test("each value: passed plainly only if zod accepts it as it is", () => {
    let plain = 0;
    for (const spec of TABLE.specs.filter((s) => !s.cliOnly)) {
      for (const value of SAMPLES) {
        if (!plainlyValidValue(spec, value)) continue;
        plain++;
        const checked = valueSchema(spec).safeParse(value);
        expect(checked.success, `${spec.key} = ${JSON.stringify(value)}`).toBe(true);
        // The same data, and for model overrides the same key order (zod's schema's).
        const data = plainData({ [spec.key]: value }, TABLE)?.[spec.key];
        expect(JSON.stringify(data), `${spec.key} = ${JSON.stringify(value)}`).toBe(JSON.stringify(checked.data));
      }
    }
    expect(plain).toBeGreaterThan(50);
  });

  test("model overrides: what zod refuses is never passed plainly, and the plain shape has the schema's keys", () => {
    const models = TABLE.specs.find((s) => s.type === "models")!;
    for (const value of SAMPLES) {
      if (!valueSchema(models).safeParse(value).success) expect(plainlyValidValue(models, value), JSON.stringify(value)).toBe(false);
    }
    expect(plainlyValidValue(models, SAMPLES.find((v) => typeof v === "object" && v !== null && "c/d" in v))).toBe(true);
    const keysOf = (shape: object): unknown => Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, typeof v === "function" ? null : keysOf(v)]));
    const zodKeys = (schema: { shape?: Record<string, unknown> }): unknown =>
      Object.fromEntries(
        Object.entries(schema.shape ?? {}).map(([k, v]) => {
          const inner = (v as { unwrap?: () => { shape?: Record<string, unknown> } }).unwrap?.();
          return [k, inner?.shape ? zodKeys(inner) : null];
        }),
      );
    expect(keysOf(MODEL_OVERRIDE_SHAPE)).toEqual(zodKeys(modelOverrideSchema as never));
  });

  test("a whole file: unknown keys and $schema; what passes is zod's data, keys in zod's order", () => {
    const files: Record<string, unknown>[] = [
      { model: "a/b", editFormat: "diff", autoCommits: false, read: ["AGENTS.md"], lintCmd: { python: "ruff check" } },
      { $schema: "https://x", model: "a/b" },
      { $schema: 1 },
      { modle: "a/b" },
      { architect: true },
      { mapTokens: 1024 },
      { models: { "a/b": { contextWindow: 1 } } },
      { plugins: ["./p.ts"], lintCmd: "true", model: "a/b", $schema: "x" },
      { models: { "a/b": { contextWindow: 0 } } },
    ];
    expect(files.map((f) => plainData(f, TABLE) !== null)).toEqual([true, true, false, false, false, true, true, true, false]);
    for (const f of files) {
      const plain = plainData(f, TABLE);
      if (!plain) continue;
      const checked = configSchema(TABLE).safeParse(f);
      expect(checked.success).toBe(true);
      const data = Object.entries(checked.data as Record<string, unknown>).filter(([, v]) => v !== undefined);
      expect(Object.entries(plain)).toEqual(data);
    }
  });
});
