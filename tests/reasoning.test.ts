// The model's reasoning, from an OpenAI-compatible server that streams it (DeepSeek's
// `reasoning_content`, OpenRouter's `reasoning`): `reasoning` events with --json, folded
// after the reply in plain output, and `agent_thought_chunk`s in `coder acp`. Never part
// of the reply, the history or an edit.
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import * as acp from "@agentclientprotocol/sdk";
import { BINARY, type AcpTestClient, startAcp } from "./support/acp-client.ts";
import { mainRequests, makeRepo, runCoder, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(90_000);
beforeAll(() => {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`);
});

const server = serverPerTest();
const clients: AcpTestClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

const THOUGHT = "First, look at x.\nIt is 1.\nThe user wants to know.\nSo the answer is one.";

describe("reasoning", () => {
  test("--json: reasoning events before the reply's deltas; the reply and the history hold no reasoning", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ reasoning: THOUGHT, text: "x is one." }, { text: "Still one." }]);
    const r = await runCoder(repo, s, ["--json", "--edit-format", "ask", "-m", "what is x?"]);
    expect(r.code).toBe(0);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const reasoning = events.filter((e) => e.type === "reasoning");
    expect(reasoning.map((e) => e.text).join("")).toBe(THOUGHT);
    expect(events.findIndex((e) => e.type === "reasoning")).toBeLessThan(events.findIndex((e) => e.type === "delta"));
    expect(events.find((e) => e.type === "reply").text).toBe("x is one.");
  });

  test("plain output: the reasoning shows folded after the reply, from OpenRouter's reasoning field too", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ reasoning: THOUGHT, reasoningField: "reasoning", text: "x is one." }]);
    const r = await runCoder(repo, s, ["--edit-format", "ask", "-m", "what is x?"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("x is one.\nReasoning (4 lines):\n  First, look at x.\n  It is 1.\n  The user wants to know.\n  … 1 line more\n");
    expect(r.stdout).not.toContain("So the answer is one.");
  });

  test("coder acp: the reasoning streams as agent_thought_chunks before the reply's message chunks", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ reasoning: THOUGHT, text: "x is one." }, { text: "Still one." }]);
    const c = startAcp(repo.root, s, { home: repo.home, args: ["--edit-format", "ask"] });
    clients.push(c);
    await c.initialize();
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: repo.root, mcpServers: [] });
    await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "what is x?" }] });
    const updates = c.updatesOf(sessionId);
    const thoughts = updates.filter((u) => u.sessionUpdate === "agent_thought_chunk");
    expect(thoughts.map((u) => (u.sessionUpdate === "agent_thought_chunk" && u.content.type === "text" ? u.content.text : "")).join("")).toBe(THOUGHT);
    expect(updates.findLastIndex((u) => u.sessionUpdate === "agent_thought_chunk")).toBeLessThan(updates.findIndex((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" && u.content.text.startsWith("x is")));
    // The next request's history holds the reply, not the reasoning.
    await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again?" }] });
    const history = JSON.stringify(mainRequests(s)[1].messages);
    expect(history).toContain("x is one.");
    expect(history).not.toContain("First, look at x.");
  });
});
