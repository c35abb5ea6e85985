// A session's model changed (`/model`, an editor's model option: both end in Coder.setModel) to
// one of another tokenizer: the next map is fitted in the new model's encoding, and the
// session's token counts are the new model's, as a fresh process for that model gives them.
// In one process, the real kernel and built-in plugins (as tests/two-sessions.test.ts runs them);
// and in `coder acp` (the built binary), where the sessions of a folder share one kit and one map service.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { acpClientsPerTest, type AcpTestClient } from "./support/acp-client.ts";
import { BUILTINS, builtinTable } from "../builtins.ts";
import { createCoder } from "../core/chat/create.ts";
import { CoderSession } from "../core/chat/session.ts";
import { countTokens } from "../core/chat/tokens.ts";
import type { Totals } from "../core/chat/events.ts";
import { loadSettings } from "../core/cli/settings.ts";
import { parseArgv } from "../core/config/argv.ts";
import { NonInteractivePrompter } from "../core/gate/prompter.ts";
import { assembleApp } from "../core/boot/assemble.ts";
import { mainRequests, makeRepo, removeRepos, serverPerTest, type Repo } from "./engine-harness.ts";

afterAll(removeRepos);

const MAP_TOKENS = 1024;
/** openai/gpt-4-turbo counts in cl100k_base, openai/gpt-4o in o200k_base; both have a 128k window. */
const CL100K_MODEL = "openai/gpt-4-turbo";
const O200K_MODEL = "openai/gpt-4o";

/**
 * Modules whose definitions have Greek names: cl100k_base takes nearly twice the tokens
 * o200k_base does for them, so a map fitted in one is far from the budget in the other.
 */
function greekRepo(): Record<string, string> {
  const files: Record<string, string> = { "a.py": "from m00 import Υπολογισμός_00_0\n\nΥπολογισμός_00_0(1)\n" };
  for (let m = 0; m < 30; m++) {
    const id = String(m).padStart(2, "0");
    const next = String((m + 1) % 30).padStart(2, "0");
    let text = `from m${next} import Υπολογισμός_${next}_0\n\n`;
    for (let f = 0; f < 6; f++) text += `def Υπολογισμός_${id}_${f}(σύνολο, συντελεστής):\n    return Υπολογισμός_${next}_0(σύνολο) * συντελεστής\n\n`;
    text += `class Λογαριασμός_${id}:\n    def Ενημέρωση(self, ποσό):\n        return ποσό\n`;
    files[`m${id}.py`] = text;
  }
  return files;
}

async function openSession(repo: Repo, model: string) {
  // One edit format for both models (each has its own default, which /model keeps): the same prompts.
  const argv = ["--model", model, "--edit-format", "diff", "--api-key", "sk-test", "--yes-always", "--map-tokens", String(MAP_TOKENS), "a.py"];
  const env = { PATH: process.env.PATH, HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), XDG_CACHE_HOME: join(repo.home, ".cache") };
  const table = builtinTable();
  const args = parseArgv(argv, table);
  const loaded = await loadSettings({ version: "0.0.0-test", args, table, rest: args.positionals, builtins: async () => BUILTINS, cwd: repo.root, env });
  const app = await assembleApp(loaded, async () => BUILTINS);
  const totals: Totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
  const out = { emit() {}, print() {}, warn() {}, flush() {} };
  const coder = await createCoder(app, { out, totals, prompter: () => new NonInteractivePrompter(() => {}) });
  return new CoderSession(coder);
}

/** The map's body (the block less its preamble line). */
function body(block: string): string {
  return block.slice(block.indexOf("\n") + 1);
}

/** What a fresh process for `model` shows: the map and the token report, in a copy of the repository with no cache. */
async function fresh(model: string): Promise<{ map: string; report: string }> {
  const session = await openSession(makeRepo(greekRepo()), model);
  return { map: await session.refreshContext("repomap"), report: await session.tokenReport() };
}

test("after the session's model changes to one of another encoding, the map and the token counts are the new model's, as a fresh process's", async () => {
  const session = await openSession(makeRepo(greekRepo()), CL100K_MODEL);
  const first = await session.refreshContext("repomap");
  expect(first).toBe((await fresh(CL100K_MODEL)).map);
  expect(countTokens(body(first), "cl100k_base")).toBeLessThanOrEqual(MAP_TOKENS * 1.15);

  session.setModel(O200K_MODEL);
  const switched = await session.refreshContext("repomap");
  const other = await fresh(O200K_MODEL);
  expect(switched).toBe(other.map);
  expect(countTokens(body(switched), "o200k_base")).toBeLessThanOrEqual(MAP_TOKENS * 1.15);
  // The two encodings give two maps (what makes the checks above mean something): the first, in
  // the new encoding, is far short of the budget.
  expect(switched).not.toBe(first);
  expect(countTokens(body(first), "o200k_base")).toBeLessThan(MAP_TOKENS * 0.85);
  // Every count of the report (the chat file, the map, the framing) is the new model's.
  expect(await session.tokenReport()).toBe(other.report);

  // And back: the first model's map again (kept under its encoding), and its counts.
  session.setModel(CL100K_MODEL);
  expect(await session.refreshContext("repomap")).toBe(first);
  expect(await session.tokenReport()).toBe((await fresh(CL100K_MODEL)).report);
}, 60_000);

const startAcp = acpClientsPerTest();
const server = serverPerTest();

/** The repo map block of a request to the model (the message that opens with the map's preamble). */
function mapOf(body: { messages: { content: unknown }[] }): string {
  const found = body.messages.find((m) => typeof m.content === "string" && m.content.startsWith("Map of this repository"));
  if (!found) throw new Error("the request carries no repo map");
  return found.content as string;
}

test("coder acp: a session whose model is changed to one of another encoding gets that model's map; another session of the folder keeps its own", async () => {
  const s = await server([{ text: "Noted.", repeat: true }]);
  const args = ["--model", CL100K_MODEL, "--map-tokens", String(MAP_TOKENS), "--map-multiplier-no-files", "1"];
  const ask = async (c: AcpTestClient, sessionId: string) => {
    await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "what is here?" }] });
    return mapOf(mainRequests(s).at(-1)!);
  };
  const repo = makeRepo(greekRepo());
  const c = startAcp(repo.root, s, { home: repo.home, args });
  await c.initialize();
  const one = (await c.agent.request(acp.methods.agent.session.new, { cwd: repo.root, mcpServers: [] })).sessionId;
  const two = (await c.agent.request(acp.methods.agent.session.new, { cwd: repo.root, mcpServers: [] })).sessionId;
  const first = await ask(c, one);
  expect(await ask(c, two)).toBe(first);
  await c.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: two, configId: "model", value: O200K_MODEL });
  const switched = await ask(c, two);
  expect(switched).not.toBe(first);
  expect(await ask(c, one)).toBe(first);

  // A fresh process started with the new model, in a copy of the repository with no cache: the same map.
  const copy = makeRepo(greekRepo());
  const fresh = startAcp(copy.root, s, { home: copy.home, args: [...args, "--model", O200K_MODEL] });
  await fresh.initialize();
  const own = (await fresh.agent.request(acp.methods.agent.session.new, { cwd: copy.root, mcpServers: [] })).sessionId;
  expect(await ask(fresh, own)).toBe(switched);
});
