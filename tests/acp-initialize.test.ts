// `coder acp` answers `initialize` before the SDK and the kernel load (core/acp/initialize.ts):
// the answer must be the very one the kernel gives. In process, the quick decision is compared
// with the assembled kernel's for the same settings and environment; through dist/coder, the
// answer to the first line is compared with the answer the SDK and the kernel give to the same
// request sent again on the same connection, and the SDK must then serve the session as before.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { BUILTINS, builtinTable } from "../builtins.ts";
import { parseArgv } from "../core/config/argv.ts";
import { loadSettings } from "../core/cli/settings.ts";
import { assembleApp } from "../core/boot/assemble.ts";
import { missingApiKey } from "../core/chat/model-choice.ts";
import { PROTOCOL_VERSION, initializeResult, quickMissingKey } from "../core/acp/initialize.ts";
import { BINARY, acpLines } from "./support/acp-client.ts";
import { SCRIPT, inTerminal } from "./support/pty.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A git repository with `files`, and an empty home. */
function folder(files: Record<string, string> = {}): { root: string; home: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "coder-acp-init-")));
  made.push(base);
  const root = join(base, "repo");
  const home = join(base, "home");
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true });
  Bun.spawnSync(["git", "init", "-q", "-b", "main"], { cwd: root });
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  return { root, home };
}

/** A plugin of the user's own whose model adapter serves `local/...` and wants LOCAL_KEY. */
const LOCAL_ADAPTER = `export default { apiVersion: 1, name: "local", models: [{
  name: "local",
  matches: (m) => m.startsWith("local/"),
  info: () => undefined,
  defaultModel: (env) => (env.LOCAL_KEY ? "local/small" : null),
  defaultModelKeys: ["LOCAL_KEY"],
  missingKey: (model, env) => (env.LOCAL_KEY ? null : "no API key for " + model + ": set LOCAL_KEY"),
  async *stream() {},
}] };
`;

interface Case {
  name: string;
  files?: Record<string, string>;
  args?: string[];
  env?: Record<string, string>;
}

const CASES: Case[] = [
  { name: "a key in the environment", env: { OPENAI_API_KEY: "sk-test" } },
  { name: "no key at all" },
  { name: "a model chosen by .coder.json, no key for it", files: { ".coder.json": JSON.stringify({ model: "anthropic/claude-sonnet-4" }) } },
  { name: "a model chosen by .coder.json, its key in the repository's .env", files: { ".coder.json": JSON.stringify({ model: "anthropic/claude-sonnet-4" }), ".env": "ANTHROPIC_API_KEY=sk-ant\n" } },
  { name: "a model chosen by --model, another provider's key present", args: ["--model", "deepseek/deepseek-chat"], env: { OPENAI_API_KEY: "sk-test" } },
  { name: "--api-key", args: ["--api-key", "sk-flag"] },
  { name: "a model of no adapter", args: ["--model", "nowhere/model"] },
  { name: "a plugin's model adapter, its key missing", files: { "local.ts": LOCAL_ADAPTER }, args: ["--plugin", "local.ts", "--model", "local/small"] },
  { name: "a plugin's model adapter, its key present", files: { "local.ts": LOCAL_ADAPTER }, args: ["--plugin", "local.ts"], env: { LOCAL_KEY: "k" } },
];

const baseEnv = (home: string, extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1", ...extra });

describe("initialize decided before the kernel loads: the kernel's own answer", () => {
  const table = builtinTable();
  const settingsOf = (c: Case, dir: { root: string; home: string }) =>
    loadSettings({ version: "1.2.3", args: parseArgv(["acp", ...(c.args ?? [])], table, { lenient: true }), table, subcommand: "acp", rest: [], builtins: async () => BUILTINS, cwd: dir.root, env: baseEnv(dir.home, c.env) });

  for (const c of CASES) {
    test(c.name, async () => {
      const dir = folder(c.files);
      const app = await assembleApp(await settingsOf(c, dir), async () => BUILTINS);
      const kernel = missingApiKey(app);
      const quick = await quickMissingKey(await settingsOf(c, dir), BUILTINS);
      if (c.args?.includes("--plugin")) {
        // A plugin of the user's own may register or replace an adapter: only the kernel decides.
        expect(quick).toBeUndefined();
        expect(kernel === null ? null : kernel).toEqual(c.env?.LOCAL_KEY ? null : "no API key for local/small: set LOCAL_KEY");
      } else {
        expect(quick).toBe(kernel);
      }
    });
  }

  test("the protocol version is the SDK's, and the answer names the method the SDK's authenticate is asked with", () => {
    expect(PROTOCOL_VERSION).toBe(acp.PROTOCOL_VERSION);
    expect(initializeResult("1.2.3", "set X").authMethods).toEqual([{ id: "api-key", name: "API key", description: "set X" }]);
    expect(initializeResult("1.2.3", null).authMethods).toEqual([]);
  });
});

/** dist/coder acp in `root`, with CODER_TRACE=1 so stderr says in which order the steps came. */
function spawnAcp(root: string, home: string, args: string[] = [], env: Record<string, string> = {}) {
  const proc = Bun.spawn([BINARY, "acp", ...args], { timeout: 60_000, killSignal: "SIGKILL", cwd: root, env: baseEnv(home, { CODER_TRACE: "1", ...env }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const stdin = proc.stdin as import("bun").FileSink;
  const send = (...messages: unknown[]) => {
    // All in one write: a client that does not wait for the answers.
    stdin.write(messages.map((m) => (typeof m === "string" ? m : JSON.stringify(m)) + "\n").join(""));
    stdin.flush();
  };
  const lines = acpLines(proc.stdout as ReadableStream<Uint8Array>, (m) => m.method === "session/update");
  const finish = async () => {
    stdin.end();
    await proc.exited;
    return new Response(proc.stderr).text();
  };
  return { send, lines, finish };
}

const initialize = (id: number, params: unknown = { protocolVersion: 1, clientCapabilities: {} }) => ({ jsonrpc: "2.0", id, method: "initialize", params });
const trace = (stderr: string) => [...stderr.matchAll(/\[trace [\d.]+ ms\] acp: (initialize answered|serving)/g)].map((m) => m[1]);

/** `initialize` (answered before the SDK loads), then a second one and `session/new` in one write (the SDK and the kernel): the three answers and stderr. */
async function initializeTwice(agent: ReturnType<typeof spawnAcp>, cwd: string) {
  agent.send(initialize(1));
  const first = await agent.lines.next();
  agent.send(initialize(2), { jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd, mcpServers: [] } });
  const second = await agent.lines.next();
  const created = await agent.lines.next();
  const stderr = await agent.finish();
  return { first, second, created, stderr };
}

describe.skipIf(!existsSync(BINARY))("coder acp: the first initialize (answered before the SDK loads) and a second one (the SDK and the kernel)", () => {
  for (const c of CASES) {
    test(`${c.name}: the same answer, then the SDK serves session/new`, async () => {
      const dir = folder(c.files);
      const agent = spawnAcp(dir.root, dir.home, c.args, c.env);
      const { first, second, created, stderr } = await initializeTwice(agent, dir.root);
      expect(first.id).toBe(1);
      expect(second.id).toBe(2);
      expect(first.result).toEqual(second.result);
      expect(created.id).toBe(3);
      // A model no adapter serves is the session's error (as it always was), not initialize's.
      if (c.name === "a model of no adapter") expect(created.error.message).toContain('no model adapter serves "nowhere/model"');
      else expect(typeof created.result?.sessionId).toBe("string");
      // Without plugins of the user's own the answer comes before the SDK serves; with one, the kernel (behind the SDK) decides.
      expect(trace(stderr).slice(0, 2)).toEqual(c.args?.includes("--plugin") ? ["serving", "initialize answered"] : ["initialize answered", "serving"]);
      if (c.name === "a plugin's model adapter, its key missing") expect(first.result.authMethods[0].description).toBe("no API key for local/small: set LOCAL_KEY");
    });
  }

  // The SDK refuses a request that comes before initialize is answered: a client that does not
  // wait got "must be initialized" for its session/new while the kernel decided the answer.
  test("initialize and session/new in one write: both answered, in order", async () => {
    const dir = folder();
    const agent = spawnAcp(dir.root, dir.home, [], { OPENAI_API_KEY: "sk-test" });
    agent.send(initialize(1), { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: dir.root, mcpServers: [] } });
    const first = await agent.lines.next();
    const created = await agent.lines.next();
    await agent.finish();
    expect(first).toMatchObject({ id: 1, result: { protocolVersion: 1, authMethods: [] } });
    expect(created.id).toBe(2);
    expect(typeof created.result?.sessionId).toBe("string");
  });

  // Each as the first line and again as the second: the quick path takes what the SDK accepts as it
  // is (and answers it before the SDK serves); anything else is the SDK's to answer, as before.
  const VARIANTS: [string, unknown, "quick" | "sdk"][] = [
    ["client capabilities of the wrong types (the SDK's defaults)", initialize(1, { protocolVersion: 1, clientCapabilities: { fs: "yes", terminal: 1, elicitation: [] }, clientInfo: 7 }), "quick"],
    ["no client capabilities", initialize(1, { protocolVersion: 1 }), "quick"],
    ["a string id", { ...initialize(1), id: "init" }, "quick"],
    ["blank lines before it", `\n  \n${JSON.stringify(initialize(1))}`, "quick"],
    ["no protocol version", initialize(1, { clientCapabilities: {} }), "sdk"],
    ["a protocol version out of range", initialize(1, { protocolVersion: 70000 }), "sdk"],
    ["a fractional protocol version", initialize(1, { protocolVersion: 1.5 }), "sdk"],
    ["no params", { jsonrpc: "2.0", id: 1, method: "initialize" }, "sdk"],
    ["params a list", initialize(1, [1]), "sdk"],
  ];
  test("odd initialize requests: the first line gets the answer the SDK gives the same request second", async () => {
    const dir = folder();
    for (const [name, message, path] of VARIANTS) {
      const asFirst = spawnAcp(dir.root, dir.home, [], { OPENAI_API_KEY: "sk-test" });
      asFirst.send(message);
      const first = await asFirst.lines.next();
      const stderr = await asFirst.finish();
      const asSecond = spawnAcp(dir.root, dir.home, [], { OPENAI_API_KEY: "sk-test" });
      asSecond.send(initialize(99));
      await asSecond.lines.next();
      asSecond.send(message);
      const second = await asSecond.lines.next();
      await asSecond.finish();
      expect(first, name).toEqual(second);
      expect(path === "quick" ? "result" in first : "error" in first, name).toBe(true);
      expect(trace(stderr).slice(0, 2), name).toEqual(path === "quick" ? ["initialize answered", "serving"] : ["serving"]);
    }
  });

  test("a config coder cannot read: initialize says nothing of keys and warns; session/new names the file, without a stack trace", async () => {
    const dir = folder({ ".coder.json": "{ \"model\": " });
    const agent = spawnAcp(dir.root, dir.home);
    const { first, second, created, stderr } = await initializeTwice(agent, dir.root);
    expect(first.result).toEqual(second.result);
    expect(first.result.authMethods).toEqual([]);
    expect(stderr).toContain("could not read the settings of");
    expect(trace(stderr).slice(0, 2)).toEqual(["initialize answered", "serving"]);
    expect(created.error.code).toBe(-32603);
    expect(created.error.message).toContain(".coder.json");
    expect(created.error.message).not.toMatch(/\n\s+at /);
  });

  test("a plugin that is not a plugin: session/new names it, without a stack trace", async () => {
    const dir = folder({ "bad.ts": "export default { apiVersion: 1, name: 'bad', models: 'no' };\n" });
    const agent = spawnAcp(dir.root, dir.home, ["--plugin", "bad.ts"], { OPENAI_API_KEY: "sk-test" });
    agent.send(initialize(1));
    const first = await agent.lines.next();
    agent.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: dir.root, mcpServers: [] } });
    const created = await agent.lines.next();
    const stderr = await agent.finish();
    // The kernel decides initialize here (a plugin of the user's own), fails, and says so; the answer names no auth method.
    expect(first.result.authMethods).toEqual([]);
    expect(stderr).toContain("plugin bad");
    expect(created.error.code).toBe(-32603);
    expect(created.error.message).toContain("bad");
    expect(created.error.message).not.toMatch(/\n\s+at /);
  });
});

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("coder acp in a terminal", () => {
  test("never asks the trust question on its stdin (the protocol's): an untrusted project key is refused as through an editor's pipes, and initialize is answered", async () => {
    const dir = folder({ ".coder.json": JSON.stringify({ lintCmd: "true" }) });
    const term = inTerminal([BINARY, "acp"], { cwd: dir.root, env: baseEnv(dir.home, { OPENAI_API_KEY: "sk-test" }) });
    try {
      term.send(`${JSON.stringify(initialize(1))}\r`);
      await term.waitFor('"authMethods":[]');
      expect(term.output).toContain("sets lintCmd (it runs code on this machine), and the repository is not trusted; run with --trust");
      expect(term.output).not.toContain("Trust");
    } finally {
      term.proc.kill();
      await term.proc.exited;
    }
  });
});
