// End-to-end tests of the kernel through dist/coder: exit codes, config
// precedence and provenance, config errors, version pins, trust, plugin loading
// (pins, duplicates, validation, plugins that throw), subcommands.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPTIONS, type OptionSpec, flagName } from "../core/config/options.ts";
import { BIN, coder, requireBinary, sandbox, sha256, writeFiles } from "./support/kernel.ts";

// The binary runs many times per test; slow CI machines need more than the 5 s default.
setDefaultTimeout(60_000);

const pkgVersion = (JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8")) as { version: string }).version;

beforeAll(requireBinary);

/** The value and source columns of one key in `coder config show`. */
function shown(stdout: string, key: string): { value: string; source: string } {
  const line = stdout.split("\n").find((l) => l.startsWith(`${key} `));
  if (!line) throw new Error(`no ${key} in:\n${stdout}`);
  const [, value, source] = /^\S+\s+(.*?)\s{2,}(\S.*)$/.exec(line) ?? [];
  return { value: value ?? "", source: source ?? "" };
}

function expectOneCleanLine(stderr: string) {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr.trim().split("\n")).toHaveLength(1);
}

const plugin = (name: string, body = "") => `export default { apiVersion: 1, name: ${JSON.stringify(name)}${body ? `, ${body}` : ""} };\n`;
const command = (name: string) => `commands: [{ name: ${JSON.stringify(name)}, summary: "x", run() {} }]`;

describe("version and help", () => {
  test("--version prints the version and exits 0", async () => {
    const s = sandbox();
    const r = await coder(["--version"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`coder ${pkgVersion}`);
  });

  test("--help lists every flag of the option table and exits 0", async () => {
    const s = sandbox();
    for (const args of [["--help"], ["-h"], ["--verbose", "--help"]]) {
      const r = await coder(args, { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      for (const spec of OPTIONS as readonly OptionSpec[]) {
        if (spec.configOnly) continue;
        expect(r.stdout).toContain(spec.negatable ? `--[no-]${flagName(spec.key)}` : `--${flagName(spec.key)}`);
      }
    }
  });
});

describe("exit codes", () => {
  test("an unknown flag is a usage error: exit 2, one line, no stack", async () => {
    const s = sandbox();
    const r = await coder(["--frobnicate"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--frobnicate");
    expectOneCleanLine(r.stderr);
    expect(r.stdout).toBe("");
  });

  test("with --json a kernel error is also an error and an end event on stdout", async () => {
    const s = sandbox();
    const r = await coder(["--json", "--frobnicate"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; code?: number; exitCode?: number; message?: string });
    expect(events.map((e) => e.type)).toEqual(["error", "end"]);
    expect(events[0]!.message).toContain("--frobnicate");
    expect(events[1]!.exitCode).toBe(2);
  });

  test("a bad flag value is a usage error (exit 2)", async () => {
    const s = sandbox();
    const r = await coder(["--map-tokens", "lots", "config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--map-tokens expects a number, got "lots"');
    expectOneCleanLine(r.stderr);
    const e = await coder(["--map-refresh", "sometimes", "config", "show"], { cwd: s.repo, env: s.env });
    expect(e.code).toBe(2);
    expect(e.stderr).toContain("auto, always, files, manual");
  });

  test("a bad CODER_* value is a config error (exit 2) naming the variable", async () => {
    const s = sandbox();
    const r = await coder(["config", "show"], { cwd: s.repo, env: { ...s.env, CODER_AUTO_COMMITS: "maybe" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("CODER_AUTO_COMMITS");
  });

  test("an unknown edit format is a usage error (exit 2) naming the known ones", async () => {
    const s = sandbox();
    const r = await coder(["--edit-format", "nope", "--model", "echo", "--plugin", join(import.meta.dir, "..", "examples/plugins/echo-model.ts"), "-m", "hi"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown edit format "nope"');
    expect(r.stderr).toContain("diff");
  });

  test("an unknown provider is a usage error (exit 2)", async () => {
    const s = sandbox();
    const r = await coder(["--model", "nosuchprovider/some-model", "-m", "hi"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("nosuchprovider/some-model");
  });

  test("a path outside the repository is refused (exit 2)", async () => {
    const s = sandbox();
    const echo = join(import.meta.dir, "..", "examples/plugins/echo-model.ts");
    const r = await coder(["--plugin", echo, "--model", "echo", "-m", "hi", "../outside.txt"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("outside the repository");
  });

  test("unknown subcommand forms are usage errors (exit 2)", async () => {
    const s = sandbox();
    for (const args of [["config", "bogus"], ["plugin", "bogus"], ["plugin", "new"], ["plugin", "new", "x"], ["plugins", "bogus"]]) {
      const r = await coder(args, { cwd: s.repo, env: s.env });
      expect(r.code).toBe(2);
      expectOneCleanLine(r.stderr);
    }
  });
});

describe("config precedence and provenance", () => {
  test("flag > env > .coder.local.json > .coder.json > global > default", async () => {
    const s = sandbox();
    writeFiles(s.configDir, { "config.json": '{ "mapTokens": 1 }\n' });
    writeFiles(s.repo, { ".coder.json": '{\n  // project\n  "mapTokens": 2\n}\n', ".coder.local.json": '{\n\n  "mapTokens": 3,\n}\n' });
    const env = { ...s.env, CODER_MAP_TOKENS: "4" };
    const all = await coder(["--map-tokens", "5", "config", "show"], { cwd: s.repo, env });
    expect(all.code).toBe(0);
    expect(shown(all.stdout, "mapTokens")).toEqual({ value: "5", source: "flag --map-tokens" });
    const noFlag = await coder(["config", "show"], { cwd: s.repo, env });
    expect(shown(noFlag.stdout, "mapTokens")).toEqual({ value: "4", source: "env CODER_MAP_TOKENS" });
    const noEnv = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(shown(noEnv.stdout, "mapTokens")).toEqual({ value: "3", source: ".coder.local.json:3" });
    writeFileSync(join(s.repo, ".coder.local.json"), "{}\n");
    const project = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(shown(project.stdout, "mapTokens")).toEqual({ value: "2", source: ".coder.json:3" });
    writeFileSync(join(s.repo, ".coder.json"), "{}\n");
    const global = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(shown(global.stdout, "mapTokens")).toEqual({ value: "1", source: `${join(s.configDir, "config.json")}:1` });
    writeFileSync(join(s.configDir, "config.json"), "{}\n");
    const none = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(shown(none.stdout, "mapTokens")).toEqual({ value: "(unset)", source: "default" });
    expect(shown(none.stdout, "maxReflections")).toEqual({ value: "3", source: "default" });
  });

  test("provenance names flags by their spelling, env vars, files with lines; secrets are masked", async () => {
    const s = sandbox();
    writeFiles(s.configDir, { "config.json": '{\n  "apiKey": "sk-secret-123",\n  "model": "openai/gpt-4.1"\n}\n' });
    writeFiles(s.repo, { ".coder.json": '{ "$schema": "https://example.com/s.json",\n  "editFormat": "whole" }\n' });
    const r = await coder(["--no-auto-commits", "--openai-api-base", "http://localhost:1/v1", "--architect", "config", "show"], { cwd: s.repo, env: { ...s.env, CODER_STREAM: "false" } });
    expect(r.code).toBe(0);
    expect(shown(r.stdout, "autoCommits")).toEqual({ value: "false", source: "flag --no-auto-commits" });
    expect(shown(r.stdout, "apiBase")).toEqual({ value: '"http://localhost:1/v1"', source: "flag --openai-api-base" });
    expect(shown(r.stdout, "editFormat")).toEqual({ value: '"architect"', source: "flag --architect" });
    expect(shown(r.stdout, "stream")).toEqual({ value: "false", source: "env CODER_STREAM" });
    expect(shown(r.stdout, "model").source).toBe(`${join(s.configDir, "config.json")}:3`);
    expect(shown(r.stdout, "apiKey").value).toBe('"********"');
    expect(r.stdout).not.toContain("sk-secret-123");
    expect(r.stdout).toContain(join(s.configDir, "config.json"));
  });

  test("the binary auto-loads neither .env nor bunfig.toml from the directory it runs in", async () => {
    const s = sandbox();
    const marker = join(s.repo, "preloaded");
    writeFiles(s.repo, {
      ".env": "CODER_MAP_TOKENS=999\n",
      "bunfig.toml": 'preload = ["./evil.ts"]\n',
      "evil.ts": `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "1");\n`,
    });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(shown(r.stdout, "mapTokens").source).toBe("default");
    expect(existsSync(marker)).toBe(false);
  });

  test("--config FILE replaces the lookup", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "mapTokens": 2 }', "other.json": '{ "mapTokens": 7 }' });
    const r = await coder(["--config", "other.json", "config", "show"], { cwd: s.repo, env: s.env });
    expect(shown(r.stdout, "mapTokens")).toEqual({ value: "7", source: "other.json:1" });
    const missing = await coder(["-c", "nope.json", "config", "show"], { cwd: s.repo, env: s.env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.json");
  });
});

describe("config errors", () => {
  test("an unknown key names the file, line, key and a suggestion", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{\n  "model": "openai/gpt-4.1",\n  "mapTokenz": 1024\n}\n' });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.coder.json:3: unknown key "mapTokenz" (did you mean "mapTokens"?)');
    expectOneCleanLine(r.stderr);
  });

  test("a wrong type names the key path and what was expected", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{\n  "mapTokens": "lots",\n  "models": { "x/y": { "contextWindow": "big" } }\n}\n' });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.coder.json:2: mapTokens: expected a number, got the string "lots"');
    expect(r.stderr).toContain(".coder.json:3: models.x/y.contextWindow:");
  });

  test("invalid JSON names the file and line", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{\n  "model": "a"\n  "editFormat": "b"\n}\n' });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.coder\.json:3: invalid JSON/);
  });

  test("a project config may not set API keys or the API base", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{\n  "apiBase": "http://evil.example/v1"\n}\n' });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".coder.json:2: apiBase may not be set in a project config");
  });

  test("the coder version pin: a mismatch exits 2 naming both versions, a match runs", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "coder": ">=99.0.0" }\n' });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(">=99.0.0");
    expect(r.stderr).toContain(pkgVersion);
    writeFiles(s.repo, { ".coder.json": `{ "coder": "^${pkgVersion}" }\n` });
    expect((await coder(["config", "show"], { cwd: s.repo, env: s.env })).code).toBe(0);
  });

  test("config schema is JSON Schema with every config key and rejects unknown keys", async () => {
    const s = sandbox();
    const r = await coder(["config", "schema"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout) as { properties: Record<string, unknown>; additionalProperties: boolean };
    for (const spec of OPTIONS as readonly OptionSpec[]) {
      if (spec.cliOnly) expect(schema.properties[spec.key]).toBeUndefined();
      else expect(schema.properties[spec.key]).toBeDefined();
    }
    expect(schema.additionalProperties).toBe(false);
  });
});

describe("trust", () => {
  test("a project plugin is refused without --trust (exit 2 naming the key), loaded with --trust or CODER_TRUST=1", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "plugins": ["./p.ts"], "lintCmd": "true" }\n', "p.ts": plugin("proj", command("proj-cmd")) });
    const refused = await coder(["plugins"], { cwd: s.repo, env: s.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("lintCmd, plugins");
    expect(refused.stderr).toContain("--trust");
    expectOneCleanLine(refused.stderr);
    const chat = await coder(["-m", "hi"], { cwd: s.repo, env: s.env });
    expect(chat.code).toBe(2);
    const flag = await coder(["--trust", "plugins"], { cwd: s.repo, env: s.env });
    expect(flag.code).toBe(0);
    expect(flag.stdout).toContain("/proj-cmd");
    const env = await coder(["plugins"], { cwd: s.repo, env: { ...s.env, CODER_TRUST: "1" } });
    expect(env.code).toBe(0);
    expect(env.stdout).toContain("/proj-cmd");
  });

  test("a trusted answer in the store is keyed by repository and config hash", async () => {
    const s = sandbox();
    const text = '{ "testCmd": "true" }\n';
    writeFiles(s.repo, { ".coder.json": text });
    const hash = new Bun.CryptoHasher("sha256").update(`project\0${text}\0`).digest("hex");
    writeFiles(s.configDir, { "trust.json": JSON.stringify({ version: 1, repos: { [s.repo]: { hash, trusted: true, at: "x" } } }) });
    expect((await coder(["plugins"], { cwd: s.repo, env: s.env })).code).toBe(0);
    writeFiles(s.repo, { ".coder.json": '{ "testCmd": "rm -rf /" }\n' });
    expect((await coder(["plugins"], { cwd: s.repo, env: s.env })).code).toBe(2);
  });

  test("config show needs no trust and says what is untrusted", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "allowShell": true }\n' });
    const r = await coder(["config", "show"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("needs trust: allowShell (not trusted)");
    expect(shown(r.stdout, "allowShell")).toEqual({ value: "false", source: "default" });
  });

  test("keys from the global config need no trust", async () => {
    const s = sandbox();
    writeFiles(s.configDir, { "config.json": '{ "lintCmd": "true" }' });
    expect((await coder(["plugins"], { cwd: s.repo, env: s.env })).code).toBe(0);
  });
});

describe("plugins", () => {
  test("a pinned plugin loads; a changed file exits 2 naming the file and both hashes; plugins pin rewrites pins keeping comments", async () => {
    const s = sandbox();
    const body = plugin("pinned", command("pinned-cmd"));
    const good = sha256(body);
    writeFiles(s.repo, { "p.ts": body, ".coder.json": `{\n  // our plugins\n  "plugins": [\n    { "path": "./p.ts", "sha256": "${good}" }\n  ]\n}\n` });
    const ok = await coder(["--trust", "plugins"], { cwd: s.repo, env: s.env });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("/pinned-cmd");
    const changed = plugin("pinned", command("pinned-cmd2"));
    writeFileSync(join(s.repo, "p.ts"), changed);
    const bad = await coder(["--trust", "plugins"], { cwd: s.repo, env: s.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(join(s.repo, "p.ts"));
    expect(bad.stderr).toContain(good);
    expect(bad.stderr).toContain(sha256(changed));
    expectOneCleanLine(bad.stderr);
    const pin = await coder(["plugins", "pin"], { cwd: s.repo, env: s.env });
    expect(pin.code).toBe(0);
    const config = readFileSync(join(s.repo, ".coder.json"), "utf8");
    expect(config).toContain("// our plugins");
    expect(config).toContain(sha256(changed));
    expect(config).not.toContain(good);
    const again = await coder(["--trust", "plugins"], { cwd: s.repo, env: s.env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("/pinned-cmd2");
  });

  test("plugins pin turns plain entries into pinned ones", async () => {
    const s = sandbox();
    writeFiles(s.repo, { "a.ts": plugin("a"), ".coder.json": '{\n  "plugins": ["./a.ts"]\n}\n' });
    const r = await coder(["plugins", "pin"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    const parsed = JSON.parse(readFileSync(join(s.repo, ".coder.json"), "utf8")) as { plugins: { path: string; sha256: string }[] };
    expect(parsed.plugins).toEqual([{ path: "./a.ts", sha256: sha256(plugin("a")) }]);
  });

  test("plugins pin and plugin new never write through a link the repository planted: refused in one line, the target untouched", async () => {
    const s = sandbox();
    const outside = sandbox().repo;
    const target = join(outside, "real.json");
    writeFileSync(target, '{ "plugins": ["./a.ts"] }\n');
    writeFiles(s.repo, { "a.ts": plugin("a") });
    symlinkSync(target, join(s.repo, ".coder.json"));
    const pin = await coder(["plugins", "pin"], { cwd: s.repo, env: s.env });
    expect(pin.code).toBe(1);
    expect(pin.stderr).toContain(".coder.json is a symlink");
    expect(pin.stderr).not.toContain("internal error");
    expectOneCleanLine(pin.stderr);
    expect(readFileSync(target, "utf8")).toBe('{ "plugins": ["./a.ts"] }\n');
    // A dangling link where the template's declarations go: not followed to create a file outside.
    symlinkSync(join(outside, "decl.d.ts"), join(s.repo, "coder-plugin.d.ts"));
    const made = await coder(["plugin", "new", "zz", "--kind", "command"], { cwd: s.repo, env: s.env });
    expect(made.code).toBe(1);
    expect(made.stderr).toContain("coder-plugin.d.ts is a symlink");
    expect(existsSync(join(outside, "decl.d.ts"))).toBe(false);
  });

  test("--verbose prints each plugin's sha256", async () => {
    const s = sandbox();
    writeFiles(s.repo, { "v.ts": plugin("v") });
    const r = await coder(["--verbose", "--plugin", "v.ts", "plugins"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`sha256:${sha256(plugin("v"))}`);
  });

  test("duplicate names are an error naming both origins, unless the later one overrides", async () => {
    const s = sandbox();
    writeFiles(s.repo, {
      "one.ts": plugin("one", command("same")),
      "two.ts": plugin("two", command("same")),
      "three.ts": plugin("three", `override: true, ${command("same")}`),
      "diff.ts": plugin("mydiff", 'formats: [{ name: "diff", summary: "x", prompts() {}, parse() {}, apply() {}, report() {} }]'),
    });
    const dup = await coder(["--plugin", "one.ts", "--plugin", "two.ts", "plugins"], { cwd: s.repo, env: s.env });
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain(join(s.repo, "one.ts"));
    expect(dup.stderr).toContain(join(s.repo, "two.ts"));
    expect(dup.stderr).toContain('slash command "same"');
    expectOneCleanLine(dup.stderr);
    const builtin = await coder(["--plugin", "diff.ts", "plugins"], { cwd: s.repo, env: s.env });
    expect(builtin.code).toBe(2);
    expect(builtin.stderr).toContain("built-in:formats/editblock");
    const over = await coder(["--plugin", "one.ts", "--plugin", "three.ts", "plugins"], { cwd: s.repo, env: s.env });
    expect(over.code).toBe(0);
    expect(over.stdout).toMatch(/\/same\s+three/);
  });

  test("an export with an unknown key, a missing or newer apiVersion, or a bad shape exits 2 naming file and key", async () => {
    const s = sandbox();
    writeFiles(s.repo, {
      "unknown.ts": plugin("u", "formatz: []"),
      "noapi.ts": 'export default { name: "n" };\n',
      "newer.ts": 'export default { apiVersion: 3, name: "n" };\n',
      "v1options.ts": plugin("o", 'options: [{ key: "x", type: "boolean", help: "x" }]'),
      "badoption.ts": 'export default { apiVersion: 2, name: "b", options: [{ key: "x", type: "enum", help: "x" }] };\n',
      "shape.ts": plugin("s", 'commands: [{ name: "c", summary: "x", run: "not a function" }]'),
      "itemkey.ts": plugin("k", 'commands: [{ name: "c", summary: "x", run() {}, rnu() {} }]'),
      "nodefault.ts": "export const plugin = {};\n",
    });
    const cases: [string, string][] = [
      ["unknown.ts", 'unknown key "formatz"'],
      ["noapi.ts", '"apiVersion" is missing'],
      ["newer.ts", "plugin API version 3"],
      ["v1options.ts", 'key "options" is plugin API version 2; declare `apiVersion: 2`'],
      ["badoption.ts", 'options[0] ("x"): values: an enum needs a list of its values'],
      ["shape.ts", 'commands[0] ("c").run'],
      ["itemkey.ts", 'unknown key "commands[0] ("c").rnu"'],
      ["nodefault.ts", "no default export"],
    ];
    for (const [file, text] of cases) {
      const r = await coder(["--plugin", file, "plugins"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(join(s.repo, file));
      expect(r.stderr).toContain(text);
      expectOneCleanLine(r.stderr);
    }
    const missing = await coder(["--plugin", "nope.ts", "plugins"], { cwd: s.repo, env: s.env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.ts");
  });

  test("a plugin that throws at load is reported by name and skipped; the rest still load", async () => {
    const s = sandbox();
    writeFiles(s.repo, {
      "factory.ts": 'export default { name: "boom" } && (() => { throw new Error("factory exploded"); });\n',
      "toplevel.ts": 'throw new Error("top-level exploded");\nexport default {};\n',
      "fine.ts": plugin("fine", command("fine-cmd")),
    });
    const r = await coder(["--plugin", "factory.ts", "--plugin", "toplevel.ts", "--plugin", "fine.ts", "plugins"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("factory exploded");
    expect(r.stderr).toContain("top-level exploded");
    expect(r.stderr).toContain(join(s.repo, "factory.ts"));
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toContain("/fine-cmd");
    expect(r.stdout).toContain("Failed to load (2)");
    const doctor = await coder(["--plugin", "factory.ts", "doctor"], { cwd: s.repo, env: s.env });
    expect(doctor.code).not.toBe(0);
  });

  test("a plugin that throws later is reported with its name and does not crash", async () => {
    const s = sandbox();
    writeFiles(s.repo, {
      "later.ts": plugin(
        "later",
        'models: [{ name: "later", matches: (m) => m.startsWith("later/"), info() { throw new Error("info exploded"); }, list() { throw new Error("list exploded"); }, async *stream() { throw new Error("stream exploded"); } }]',
      ),
    });
    const models = await coder(["--plugin", "later.ts", "models"], { cwd: s.repo, env: s.env });
    expect(models.code).toBe(0);
    expect(models.stderr).toContain("plugin later");
    expect(models.stderr).toContain("list exploded");
    const chat = await coder(["--plugin", "later.ts", "--model", "later/x", "--edit-format", "whole", "-m", "hi"], { cwd: s.repo, env: s.env });
    expect(chat.code).toBe(1);
    expect(chat.stderr + chat.stdout).toContain("stream exploded");
    expect(chat.stderr).not.toMatch(/^\s+at /m);
  });

  test("plugin new writes a working template of each kind", async () => {
    const s = sandbox();
    for (const kind of ["format", "context", "model", "command"]) {
      const r = await coder(["plugin", "new", `my-${kind}`, "--kind", kind], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      expect(existsSync(join(s.repo, `my-${kind}.ts`))).toBe(true);
    }
    expect(readFileSync(join(s.repo, "coder-plugin.d.ts"), "utf8")).toContain("export interface Kit");
    const args = ["format", "context", "model", "command"].flatMap((k) => ["--plugin", `my-${k}.ts`]);
    const r = await coder([...args, "plugins"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    for (const name of ["my-format", "my-context", "my-model", "/my-command"]) expect(r.stdout).toContain(name);
    const again = await coder(["plugin", "new", "my-format", "--kind", "format"], { cwd: s.repo, env: s.env });
    expect(again.code).toBe(2);
    const badKind = await coder(["plugin", "new", "x", "--kind", "theme"], { cwd: s.repo, env: s.env });
    expect(badKind.code).toBe(2);
  });
});

describe("subcommands", () => {
  test("plugins lists every kind with origins, built-ins included", async () => {
    const s = sandbox();
    const r = await coder(["plugins"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    for (const heading of ["Edit formats", "Context providers", "Model adapters", "Slash commands", "Plugins"]) expect(r.stdout).toContain(heading);
    expect(r.stdout).toMatch(/diff\s+editblock\s+built-in:formats\/editblock/);
  });

  test("models lists the model table and filters it", async () => {
    const s = sandbox();
    writeFiles(s.configDir, { "config.json": '{ "models": { "local/mine": { "contextWindow": 4096, "editFormat": "whole" } } }' });
    const r = await coder(["models", "mine"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/local\/mine\s+4096/);
    const none = await coder(["models", "zzz-no-such"], { cwd: s.repo, env: s.env });
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("no model matches");
  });

  test("doctor reports version, config files with trust, plugins and grammars, and passes", async () => {
    const s = sandbox();
    writeFiles(s.repo, { ".coder.json": '{ "lintCmd": "true" }' });
    const r = await coder(["doctor"], { cwd: s.repo, env: s.env });
    expect(r.stdout).toContain(`coder ${pkgVersion}`);
    expect(r.stdout).toContain(".coder.json");
    expect(r.stdout).toContain("NOT trusted");
    expect(r.stdout).toContain("python");
    expect(r.code).toBe(0);
  });

  test("map prints the repo map without a model or API key", async () => {
    const s = sandbox();
    writeFiles(s.repo, { "app.py": "def greet(name):\n    return name\n", "main.py": "from app import greet\n\nprint(greet('x'))\n" });
    Bun.spawnSync(["git", "add", "."], { cwd: s.repo, env: s.env });
    const r = await coder(["map"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("greet");
    const flag = await coder(["--show-repo-map", "main.py"], { cwd: s.repo, env: s.env });
    expect(flag.code).toBe(0);
  });

  test("the binary works alone in an empty folder", async () => {
    const s = sandbox({ git: false });
    const lone = join(s.repo, "coder");
    writeFileSync(lone, readFileSync(BIN));
    Bun.spawnSync(["chmod", "+x", lone]);
    const r = await coder(["doctor"], { cwd: s.repo, env: s.env, bin: lone });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("everything works");
  });
});
