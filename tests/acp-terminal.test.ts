// `coder acp` with a client that offers terminals (issue 24): lint, tests and shell commands
// run through `terminal/create` (the SDK's own client runs them and records every call), the
// command's card embeds the terminal, a cancel kills and releases it, and the model gets the
// same output as from a local run. A client without terminals still gets execute cards.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { type AcpTestClient, acpClientsPerTest } from "./support/acp-client.ts";
import { block, lastUser, mainRequests, makeRepo, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(120_000);

const start = acpClientsPerTest();
const server = serverPerTest();

const session = (c: AcpTestClient, cwd: string) => c.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
const prompt = (c: AcpTestClient, sessionId: string, text: string, extra: acp.ContentBlock[] = []) =>
  c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }, ...extra] });
const link = (root: string, rel: string): acp.ContentBlock => ({ type: "resource_link", uri: pathToFileURL(join(root, rel)).href, name: rel });

/** A card's content as a short word: `terminal term-1`, `text`, or nothing. */
function contentOf(content: acp.ToolCallContent[] | null | undefined): string {
  if (!content?.length) return "";
  return ` ${content.map((c) => (c.type === "terminal" ? `terminal ${c.terminalId}` : c.type === "content" ? "text" : c.type)).join(", ")}`;
}

/**
 * The session's tool-call updates and the client's terminal calls, in the order the client got
 * them: `tool_call coder-test-1 execute in_progress`, `create term-1`, `coder-test-1 terminal term-1`, ...
 */
function steps(c: AcpTestClient, sessionId: string): string[] {
  const out: string[] = [];
  const calls = [...c.terminals.calls];
  c.updates.forEach((n, i) => {
    while (calls.length && calls[0]!.at <= i) out.push(callStep(calls.shift()!));
    if (n.sessionId !== sessionId) return;
    const u = n.update;
    if (u.sessionUpdate === "tool_call") out.push(`tool_call ${u.toolCallId} ${u.kind} ${u.status}${contentOf(u.content)}`);
    else if (u.sessionUpdate === "tool_call_update") out.push(`${u.toolCallId}${u.status ? ` ${u.status}` : ""}${contentOf(u.content)}`);
  });
  out.push(...calls.map(callStep));
  return out;
}
const callStep = (call: AcpTestClient["terminals"]["calls"][number]) => `${call.method.slice("terminal/".length)} ${call.terminalId}`;

describe("coder acp: commands in the client's terminals", () => {
  test("/test through the client's terminal: create, wait, output, release; the card embeds the terminal; session/load shows its output", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    repo.write("check.sh", 'echo "ran in $(pwd)"; echo tests-pass\n');
    const s = await server([]);
    const c = start(repo.root, s, { home: repo.home, terminal: true });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    expect((await prompt(c, sessionId, "/test sh check.sh")).stopReason).toBe("end_turn");
    expect(steps(c, sessionId)).toEqual([
      "tool_call coder-test-1 execute in_progress",
      "create term-1",
      "coder-test-1 terminal term-1",
      "wait_for_exit term-1",
      "output term-1",
      "release term-1",
      "coder-test-1 completed terminal term-1",
    ]);
    // The approved command line, through the shell, in the repository.
    expect(c.terminals.calls[0]!.params).toMatchObject({ sessionId, command: "sh", args: ["-c", "sh check.sh"], cwd: repo.root });
    expect(c.text(sessionId)).not.toContain("tests-pass"); // the terminal shows the output, not the thread
    await c.close();

    // A terminal ends with the editor's process: the saved card keeps the output instead.
    const again = start(repo.root, s, { home: repo.home, terminal: true });
    await again.initialize();
    await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: repo.root, mcpServers: [] });
    const card = again.updatesOf(sessionId).find((u) => u.sessionUpdate === "tool_call");
    expect(card).toMatchObject({ title: "Test: sh check.sh", kind: "execute", status: "completed" });
    expect(card && "content" in card ? card.content : []).toEqual([{ type: "content", content: { type: "text", text: `\`\`\`\nran in ${repo.root}\ntests-pass\n\`\`\`` } }]);
    expect(again.terminals.calls).toEqual([]);
  });

  test("lint and tests after an edit run in the client's terminals; the model gets the same failure report as from a local run", async () => {
    const run = async (terminal: boolean) => {
      const repo = makeRepo({ "a.py": "x = 1\n" });
      repo.write("check.sh", 'grep -q "x = 3" a.py && echo tests-pass || { echo tests-fail-x-is-not-3; exit 1; }\n');
      repo.git("add", "check.sh");
      repo.git("commit", "-qm", "check");
      const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: block("a.py", "x = 2\n", "x = 3\n") }]);
      const c = start(repo.root, s, { home: repo.home, terminal, args: ["--lint-cmd", "echo lint-clean", "--test-cmd", "sh check.sh", "--auto-test"] });
      await c.initialize();
      const { sessionId } = await session(c, repo.root);
      expect((await prompt(c, sessionId, "make x 3", [link(repo.root, "a.py")])).stopReason).toBe("end_turn");
      expect(repo.read("a.py")).toBe("x = 3\n");
      return { c, sessionId, reflection: lastUser(mainRequests(s)[1]) };
    };
    const local = await run(false);
    const { c, sessionId, reflection } = await run(true);
    expect(reflection).toContain("tests-fail-x-is-not-3");
    expect(reflection).toBe(local.reflection);
    // Without terminals: execute cards with the output, and no terminal call.
    expect(local.c.terminals.calls).toEqual([]);
    expect(steps(local.c, local.sessionId).filter((step) => /lint|test/.test(step))).toEqual([
      "tool_call coder-lint-2 execute in_progress",
      "coder-lint-2 text",
      "coder-lint-2 completed text",
      "tool_call coder-test-3 execute in_progress",
      "coder-test-3 text",
      "coder-test-3 failed text",
      "tool_call coder-lint-5 execute in_progress",
      "coder-lint-5 text",
      "coder-lint-5 completed text",
      "tool_call coder-test-6 execute in_progress",
      "coder-test-6 text",
      "coder-test-6 completed text",
    ]);
    expect(steps(c, sessionId).filter((step) => /lint|test|term-/.test(step))).toEqual([
      "tool_call coder-lint-2 execute in_progress",
      "create term-1",
      "coder-lint-2 terminal term-1",
      "wait_for_exit term-1",
      "output term-1",
      "release term-1",
      "coder-lint-2 completed terminal term-1",
      "tool_call coder-test-3 execute in_progress",
      "create term-2",
      "coder-test-3 terminal term-2",
      "wait_for_exit term-2",
      "output term-2",
      "release term-2",
      "coder-test-3 failed terminal term-2",
      "tool_call coder-lint-5 execute in_progress",
      "create term-3",
      "coder-lint-5 terminal term-3",
      "wait_for_exit term-3",
      "output term-3",
      "release term-3",
      "coder-lint-5 completed terminal term-3",
      "tool_call coder-test-6 execute in_progress",
      "create term-4",
      "coder-test-6 terminal term-4",
      "wait_for_exit term-4",
      "output term-4",
      "release term-4",
      "coder-test-6 completed terminal term-4",
    ]);
    expect(c.terminals.calls[0]!.params).toMatchObject({ command: "sh", args: ["-c", "echo lint-clean a.py"] });
  });

  test("a cancel while a command runs in the client's terminal kills it and releases it; the prompt ends cancelled", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "Still here." }]);
    const c = start(repo.root, s, { home: repo.home, terminal: true });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    let settled = false;
    const turn = prompt(c, sessionId, "/test echo started; exec sleep 60").finally(() => (settled = true));
    while (!c.terminals.calls.some((call) => call.method === "terminal/wait_for_exit")) {
      if (settled) throw new Error(`the prompt ended before the command ran in the terminal: ${JSON.stringify(c.updatesOf(sessionId))}`);
      await Bun.sleep(20);
    }
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await turn).stopReason).toBe("cancelled");
    expect(c.terminals.sequence()).toEqual(["create term-1", "wait_for_exit term-1", "kill term-1", "output term-1", "release term-1"]);
    const card = steps(c, sessionId).filter((step) => step.startsWith("coder-test-1"));
    expect(card).toEqual(["coder-test-1 terminal term-1", "coder-test-1 failed terminal term-1"]);
    // Nothing was offered to the model, and the agent keeps serving.
    expect(c.permissions).toEqual([]);
    expect((await prompt(c, sessionId, "are you there?")).stopReason).toBe("end_turn");
    expect(mainRequests(s)).toHaveLength(1);
  });

  test("/run and a suggested shell command run in the client's terminal too, after the same gate", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "Run this:\n\n```bash\necho hi-from-shell\n```\n" }]);
    const c = start(repo.root, s, { home: repo.home, terminal: true, answers: ["reject", "allow", "reject"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "/run echo typed-by-me");
    await prompt(c, sessionId, "how do I say hi?");
    // The suggested command was asked about first, on its own card, which then embeds the terminal
    // (the other questions offer the output for the chat).
    expect(c.permissions.map((p) => p.toolCall.title)).toEqual(["Add the output to the chat", "echo hi-from-shell", "Add the output to the chat"]);
    const asked = c.permissions[1]!.toolCall.toolCallId;
    expect(c.terminals.calls.map((call) => [call.method, call.params.args])).toEqual([
      ["terminal/create", ["-c", "echo typed-by-me"]],
      ["terminal/wait_for_exit", undefined],
      ["terminal/output", undefined],
      ["terminal/release", undefined],
      ["terminal/create", ["-c", "echo hi-from-shell"]],
      ["terminal/wait_for_exit", undefined],
      ["terminal/output", undefined],
      ["terminal/release", undefined],
    ]);
    expect(steps(c, sessionId).filter((step) => step.startsWith(asked) || step.includes(asked))).toEqual([
      `tool_call ${asked} execute pending`,
      `${asked} in_progress`,
      `${asked} terminal term-2`,
      `${asked} completed terminal term-2`,
    ]);
  });
});
