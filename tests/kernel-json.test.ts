// End-to-end tests of `--json` on the kernel's subcommands through dist/coder:
// `models`, `config show`, `plugins` and `doctor` each print one JSON document
// (on one line) on stdout and nothing else there; and `doctor` reports a broken
// config file as a failed check instead of stopping at it.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { coder, requireBinary, sandbox, sha256, writeFiles } from "./support/kernel.ts";

// The binary runs several times per test; slow CI machines need more than the 5 s default.
setDefaultTimeout(60_000);

const pkgVersion = (JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8")) as { version: string }).version;

beforeAll(requireBinary);

/** stdout must be exactly one line holding one JSON document. */
function oneDocument<T>(stdout: string): T {
  const lines = stdout.split("\n");
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe("");
  return JSON.parse(lines[0]!) as T;
}

interface ModelJson {
  name: string;
  contextWindow: number;
  maxOutput: number;
  editFormat: string;
  weakModel: string | null;
  editorModel: string | null;
  editorFormat: string | null;
  encoding: string | null;
  prices: { input: number; output: number; cacheRead: number | null; cacheWrite: number | null };
  capabilities: { tools: boolean; systemPrompt: boolean; temperature: boolean; reasoningEffort: boolean; prefill: boolean; cache: string; images: boolean; pdf: boolean };
  imageRules: { tokens: string; maxEdge: number; maxBytes: number } | null;
}

interface ConfigShowJson {
  configFiles: { file: string; kind: string }[];
  options: Record<string, { value: unknown; source: string }>;
  trust: { keys: string[]; trusted: boolean };
  remembered: { key: string; answer: string; question: string; time: string }[];
}

interface PluginsJson {
  items: { kind: string; name: string; plugin: string; origin: string; summary: string | null; stability: string | null }[];
  plugins: { name: string; origin: string; sha256: string | null; override: boolean }[];
  failures: { plugin: string | null; origin: string; message: string }[];
}

interface DoctorJson {
  version: string;
  bun: string;
  platform: string;
  arch: string;
  executable: string;
  repository: string | null;
  root: string;
  configFiles: { kind: string; file: string; ok: boolean; trust: string | null; detail: string }[];
  trust: { keys: string[]; trusted: boolean };
  plugins: { name: string | null; origin: string | null; ok: boolean; detail: string; sha256: string | null }[];
  counts: { formats: number; context: number; models: number; commands: number } | null;
  grammars: { language: string | null; ok: boolean; detail: string }[];
  problems: number;
  ok: boolean;
}

const plugin = (name: string, body = "") => `export default { apiVersion: 1, name: ${JSON.stringify(name)}${body ? `, ${body}` : ""} };\n`;

describe("coder models --json", () => {
  test("prints { models: [...] } with every field, honours FILTER and config `models`", async () => {
    const s = sandbox();
    writeFiles(s.configDir, { "config.json": '{ "models": { "local/mine": { "contextWindow": 4096, "editFormat": "whole", "prices": { "input": 1.5, "output": 3 } } } }' });
    const all = await coder(["models", "--json"], { cwd: s.repo, env: s.env });
    expect(all.code).toBe(0);
    const { models } = oneDocument<{ models: ModelJson[] }>(all.stdout);
    expect(models.length).toBeGreaterThan(5);
    for (const m of models) {
      expect(Object.keys(m).sort()).toEqual(["capabilities", "contextWindow", "editFormat", "editorFormat", "editorModel", "encoding", "imageRules", "maxOutput", "name", "prices", "prompting", "weakModel"]);
      expect(typeof m.capabilities.images).toBe("boolean");
      expect(typeof m.contextWindow).toBe("number");
      expect(typeof m.prices.input).toBe("number");
      expect(typeof m.capabilities.tools).toBe("boolean");
    }
    expect(models.map((m) => m.name)).toEqual([...models.map((m) => m.name)].sort((a, b) => a.localeCompare(b)));

    const mine = await coder(["--json", "models", "mine"], { cwd: s.repo, env: s.env });
    expect(mine.code).toBe(0);
    const only = oneDocument<{ models: ModelJson[] }>(mine.stdout).models;
    expect(only.map((m) => m.name)).toEqual(["local/mine"]);
    expect(only[0]).toMatchObject({ contextWindow: 4096, editFormat: "whole", prices: { input: 1.5, output: 3, cacheRead: null, cacheWrite: null } });

    const gpt = oneDocument<{ models: ModelJson[] }>((await coder(["models", "gpt-4.1", "--json"], { cwd: s.repo, env: s.env })).stdout).models;
    expect(gpt.length).toBeGreaterThan(0);
    expect(gpt.every((m) => m.name.includes("gpt-4.1"))).toBe(true);
    expect(gpt.find((m) => m.name === "openai/gpt-4.1")?.prices.input).toBeGreaterThan(0);
    expect(gpt.find((m) => m.name === "openai/gpt-4.1")?.capabilities).toMatchObject({ images: true, pdf: true });

    const none = await coder(["models", "zzz-no-such", "--json"], { cwd: s.repo, env: s.env });
    expect(none.code).toBe(0);
    expect(oneDocument(none.stdout)).toEqual({ models: [] });
  });
});

describe("coder config show --json", () => {
  test("every key's value and source, the API key masked, config files, trust and remembered answers", async () => {
    const s = sandbox();
    const secret = "sk-global-secret-0123456789";
    writeFiles(s.configDir, { "config.json": JSON.stringify({ apiKey: secret, model: "openai/gpt-4.1" }) });
    writeFiles(s.repo, {
      ".coder.json": '{\n  // project\n  "mapTokens": 2048,\n  "lintCmd": "true"\n}\n',
      ".coder/gate.json": JSON.stringify({
        version: 1,
        remembered: [{ key: "shell:rm -rf build", question: "Run rm -rf build?", answer: "no", time: "2026-01-02T03:04:05.000Z" }],
      }),
    });
    const r = await coder(["config", "show", "--json"], { cwd: s.repo, env: { ...s.env, CODER_MAX_REFLECTIONS: "5" } });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
    const doc = oneDocument<ConfigShowJson>(r.stdout);
    expect(Object.keys(doc).sort()).toEqual(["configFiles", "options", "remembered", "trust"]);
    expect(doc.configFiles).toEqual([
      { file: join(s.configDir, "config.json"), kind: "global" },
      { file: join(s.repo, ".coder.json"), kind: "project" },
    ]);
    expect(doc.options.apiKey).toEqual({ value: "********", source: `${join(s.configDir, "config.json")}:1` });
    expect(doc.options.model).toEqual({ value: "openai/gpt-4.1", source: `${join(s.configDir, "config.json")}:1` });
    expect(doc.options.mapTokens).toEqual({ value: 2048, source: ".coder.json:3" });
    expect(doc.options.maxReflections).toEqual({ value: 5, source: "env CODER_MAX_REFLECTIONS" });
    expect(doc.options.autoCommits).toEqual({ value: true, source: "default" });
    expect(doc.options.testCmd).toEqual({ value: null, source: "default" });
    // Untrusted: the project's lintCmd does not take effect (as in the text view).
    expect(doc.trust).toEqual({ keys: ["lintCmd"], trusted: false });
    expect(doc.options.lintCmd!.value).toBeNull();
    expect(doc.remembered).toEqual([{ key: "shell:rm -rf build", question: "Run rm -rf build?", answer: "no", time: "2026-01-02T03:04:05.000Z" }]);
    // The keys are those of the text view, which masks the same way.
    const text = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(text.stdout).not.toContain(secret);
    expect(text.stdout).toMatch(/^apiKey\s+"\*{8}"\s/m);
    for (const key of Object.keys(doc.options)) expect(text.stdout).toMatch(new RegExp(`^${key} `, "m"));
  });

  test("an API key from a flag is masked too; --trust makes the project's keys take effect", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "lintCmd": "true" }' });
    const r = await coder(["--api-key", "sk-flag-secret-987", "--trust", "--json", "config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("sk-flag-secret-987");
    const doc = oneDocument<ConfigShowJson>(r.stdout);
    expect(doc.options.apiKey).toEqual({ value: "********", source: "flag --api-key" });
    expect(doc.options.lintCmd).toEqual({ value: "true", source: ".coder.json:1" });
    expect(doc.trust).toEqual({ keys: ["lintCmd"], trusted: true });
    expect(doc.remembered).toEqual([]);
  });
});

describe("coder plugins --json", () => {
  test("items with kind, name, plugin and origin; plugins with their sha256; failures", async () => {
    const s = sandbox();
    const body = plugin("mine", 'commands: [{ name: "hello", summary: "say hello", run() {} }]');
    writeFiles(s.repo, { "mine.ts": body, "broken.ts": 'throw new Error("broken at load");\nexport default {};\n' });
    const r = await coder(["--plugin", "mine.ts", "--plugin", "broken.ts", "plugins", "--json"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    const doc = oneDocument<PluginsJson>(r.stdout);
    expect(Object.keys(doc).sort()).toEqual(["failures", "items", "plugins"]);
    expect(doc.items.find((i) => i.kind === "format" && i.name === "diff")).toMatchObject({ plugin: "editblock", origin: "built-in:formats/editblock" });
    expect(doc.items.find((i) => i.kind === "context" && i.name === "repomap")).toMatchObject({ plugin: "repomap", stability: "session" });
    expect(doc.items.find((i) => i.kind === "model" && i.name === "openai")).toMatchObject({ plugin: "openai", origin: "built-in:plugins/openai" });
    expect(doc.items.find((i) => i.kind === "command" && i.name === "hello")).toEqual({
      kind: "command",
      name: "hello",
      plugin: "mine",
      origin: join(s.repo, "mine.ts"),
      summary: "say hello",
      stability: null,
    });
    expect(new Set(doc.items.map((i) => i.kind))).toEqual(new Set(["format", "context", "model", "command", "tool", "subcommand"]));
    expect(doc.plugins.find((p) => p.name === "mine")).toEqual({ name: "mine", origin: join(s.repo, "mine.ts"), sha256: sha256(body), override: false });
    expect(doc.plugins.find((p) => p.name === "editblock")?.sha256).toBeNull();
    expect(doc.failures).toHaveLength(1);
    expect(doc.failures[0]!.origin).toBe(join(s.repo, "broken.ts"));
    expect(doc.failures[0]!.message).toContain("broken at load");
  });
});

describe("coder doctor --json", () => {
  test("version, config files with trust, plugins, grammars with ok/detail, ok overall; exit 0", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "lintCmd": "true" }' });
    const r = await coder(["doctor", "--json"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    const doc = oneDocument<DoctorJson>(r.stdout);
    expect(doc.version).toBe(pkgVersion);
    expect(doc.ok).toBe(true);
    expect(doc.problems).toBe(0);
    expect(doc.repository).toBe(s.repo);
    expect(doc.root).toBe(s.repo);
    expect(typeof doc.bun).toBe("string");
    expect(doc.configFiles).toEqual([
      { kind: "project", file: join(s.repo, ".coder.json"), ok: true, trust: "untrusted", detail: "NOT trusted: lintCmd ignored (use --trust)" },
    ]);
    expect(doc.trust).toEqual({ keys: ["lintCmd"], trusted: false });
    expect(doc.plugins.find((p) => p.name === "openai")).toEqual({ name: "openai", origin: "built-in:plugins/openai", ok: true, detail: "loaded", sha256: null });
    expect(doc.plugins.every((p) => p.ok)).toBe(true);
    expect(doc.counts!.formats).toBeGreaterThan(0);
    expect(doc.grammars.length).toBeGreaterThan(0);
    expect(doc.grammars.find((g) => g.language === "python")).toMatchObject({ ok: true });
    for (const g of doc.grammars) expect(typeof g.detail).toBe("string");
  });

  test("a plugin that fails to load is a failed check: ok false, exit 1", async () => {
    const s = sandbox();
    writeFiles(s.repo, { "broken.ts": 'throw new Error("broken at load");\nexport default {};\n' });
    const r = await coder(["--plugin", "broken.ts", "doctor", "--json"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(1);
    const doc = oneDocument<DoctorJson>(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.problems).toBe(1);
    const failed = doc.plugins.filter((p) => !p.ok);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.origin).toBe(join(s.repo, "broken.ts"));
    expect(failed[0]!.detail).toContain("broken at load");
  });
});

describe("coder doctor with a broken config", () => {
  test("reports the config error among its checks, runs the others, exits 2 (text and --json)", async () => {
    const s = sandbox();
    writeFiles(s.configDir, { "config.json": '{ "mapTokens": 512 }' });
    writeFiles(s.repo, { ".coder.json": '{\n  "mapTokens": "lots"\n}\n' });
    const text = await coder(["doctor"], { cwd: s.repo, env: s.env });
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(/FAIL\s+project\s+\.coder\.json:2: mapTokens:/);
    expect(text.stdout).toContain("Grammars:");
    expect(text.stdout).toContain("1 problem found");

    const r = await coder(["doctor", "--json"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    const doc = oneDocument<DoctorJson>(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.problems).toBe(1);
    expect(doc.configFiles.map((c) => [c.kind, c.ok])).toEqual([
      ["global", true],
      ["project", false],
    ]);
    expect(doc.configFiles[1]!.trust).toBeNull();
    expect(doc.configFiles[1]!.detail).toContain(".coder.json:2: mapTokens:");
    expect(doc.grammars.length).toBeGreaterThan(0);
    expect(doc.plugins.every((p) => p.ok)).toBe(true);

    // Other commands still stop at the broken config.
    const show = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(show.code).toBe(2);
    expect(show.stderr).toContain(".coder.json:2: mapTokens:");
  });

  test("a version pin this binary does not satisfy, and a missing --config file, are failed checks too", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "coder": "^99" }' });
    const pin = await coder(["doctor", "--json"], { cwd: s.repo, env: s.env });
    expect(pin.code).toBe(2);
    const doc = oneDocument<DoctorJson>(pin.stdout);
    expect(doc.configFiles).toHaveLength(1);
    expect(doc.configFiles[0]).toMatchObject({ kind: "project", ok: false });
    expect(doc.configFiles[0]!.detail).toContain(`needs coder ^99, but this is coder ${pkgVersion}`);

    const missing = await coder(["--config", "nope.json", "doctor", "--json"], { cwd: s.repo, env: s.env });
    expect(missing.code).toBe(2);
    const m = oneDocument<DoctorJson>(missing.stdout);
    expect(m.configFiles).toEqual([{ kind: "explicit", file: join(s.repo, "nope.json"), ok: false, trust: null, detail: "nope.json: cannot read config file (not found)" }]);
  });
});
