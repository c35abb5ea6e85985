// `coder acp` driven by two ACP clients nobody on the project wrote (issue 24): `acpx`, the
// headless CLI client, in non-interactive mode, and `acp-factory`, a library on the official
// SDK 0.18. Each drives dist/coder against the fake model, and each test asserts the exact
// sequence of updates (and permission requests) the client saw.
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFactory, type AgentHandle, type ExtendedSessionUpdate } from "acp-factory";
import { BINARY, TestTerminals } from "./support/acp-client.ts";
import type { FakeServer } from "./support/fake-server.ts";
import { block, mainRequests, makeRepo, type Repo, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(120_000);

const ROOT = join(import.meta.dir, "..");
const ACPX = join(ROOT, "node_modules", ".bin", "acpx");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const NODE = Bun.which("node") ?? process.execPath;

beforeAll(() => {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`);
});

const server = serverPerTest();

/** The agent command line: coder acp in the repository, on the fake model. */
function agentArgs(repo: Repo, s: FakeServer, extra: string[] = []): string[] {
  return [BINARY, "acp", "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", s.url, "--api-key", "sk-test", "--edit-format", "diff", ...extra];
}

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** acpx (--format json) with ARGS, driving `coder acp` in the repo against the fake model. */
function acpxProcess(repo: Repo, s: FakeServer, args: string[], extra: string[] = []) {
  const agent = `sh -c ${quote(`cd ${quote(repo.root)} && exec ${agentArgs(repo, s, extra).map(quote).join(" ")}`)}`;
  return Bun.spawn([ACPX, "--agent", agent, "--cwd", repo.root, "--format", "json", ...args], {
    timeout: 90_000,
    killSignal: "SIGKILL",
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Every JSON-RPC message acpx printed (--format json), and its exit code. */
async function acpx(repo: Repo, s: FakeServer, prompt: string, flags: string[], extra: string[] = []): Promise<{ code: number; messages: any[]; stderr: string }> {
  const proc = acpxProcess(repo, s, [...flags, "exec", prompt], extra);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const messages = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  return { code, messages, stderr };
}

/** acpx's `sessions list`: the agent's own session/list, as acpx prints it. */
async function acpxSessions(repo: Repo, s: FakeServer): Promise<any> {
  const proc = acpxProcess(repo, s, ["sessions", "list"]);
  const stdout = await new Response(proc.stdout).text();
  await proc.exited;
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .find((m) => m.source === "agent");
}

/**
 * The updates and questions as a list of short steps, consecutive chunks of one kind folded
 * (and the timing-dependent "Waiting for the tools" note left out):
 * `message`, `thought`, `tool_call edit pending`, `permission coder-edit-1`, `coder-edit-1 in_progress`, ...
 */
function steps(items: { update?: any; permission?: any; call?: string }[]): string[] {
  const out: string[] = [];
  for (const { update, permission, call } of items) {
    let step: string;
    if (call) step = call;
    else if (permission) step = `permission ${permission.toolCall.toolCallId}`;
    // The note that an MCP server is slow to start comes only when it is (the machine's load decides): left out.
    else if (update.sessionUpdate === "agent_message_chunk" && update.content?.text?.startsWith("Waiting for the tools of ")) continue;
    else if (update.sessionUpdate === "agent_message_chunk") step = "message";
    else if (update.sessionUpdate === "agent_thought_chunk") step = "thought";
    else if (update.sessionUpdate === "tool_call") step = `${update.toolCallId} ${update.kind} ${update.status}`;
    else if (update.sessionUpdate === "tool_call_update") step = `${update.toolCallId} ${update.status ?? "content"}`;
    else step = update.sessionUpdate;
    if (step === "available_commands_update" || step === "usage_update") continue;
    if (out.at(-1) === step && (step === "message" || step === "thought")) continue;
    out.push(step);
  }
  return out;
}

/** acpx's messages as steps: session/update notifications, session/request_permission and terminal/* requests. */
function acpxSteps(messages: any[]): string[] {
  return steps(
    messages.flatMap((m): { update?: any; permission?: any; call?: string }[] => {
      if (m.method === "session/update") return [{ update: m.params.update }];
      if (m.method === "session/request_permission") return [{ permission: m.params }];
      return typeof m.method === "string" && m.method.startsWith("terminal/") ? [{ call: m.method }] : [];
    }),
  );
}

/** The terminal ids of a card's content in acpx's messages (the last update of `toolCallId` that has content). */
function acpxTerminalOf(messages: any[], toolCallId: string): string[] {
  const updates = messages.filter((m) => m.method === "session/update" && m.params.update.toolCallId === toolCallId && m.params.update.content);
  return updates.at(-1).params.update.content.filter((c: any) => c.type === "terminal").map((c: any) => c.terminalId);
}

/** One command's life in a client terminal, as the client sees it. */
const TERMINAL_RUN = (id: string, end: "completed" | "failed") => [`${id} execute in_progress`, "terminal/create", `${id} content`, "terminal/wait_for_exit", "terminal/output", "terminal/release", `${id} ${end}`];

const EDIT = (path: string, from: string, to: string) => ({ text: `Changing it.\n\n${block(path, from, to)}` });
const COMMIT_MESSAGE = { text: "feat: set x", model: "weak-model", repeat: true };

describe("acpx (headless CLI client)", () => {
  test("an edit with permission: pending with the diff, the permission on the same card, in_progress, completed with the commit line", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), COMMIT_MESSAGE]);
    const r = await acpx(repo, s, "set x to 2 in a.py", ["--approve-all"]);
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(acpxSteps(r.messages)).toEqual(["message", "coder-edit-1 edit pending", "permission coder-edit-1", "coder-edit-1 in_progress", "coder-edit-1 completed", "message"]);
    const done = r.messages.find((m) => m.params?.update?.toolCallId === "coder-edit-1" && m.params.update.status === "completed").params.update;
    expect(done.content[1].content.text).toBe(`Committed ${repo.git("log", "-1", "--format=%h: %s").trim()}`);
    const asked = r.messages.find((m) => m.method === "session/request_permission").params.toolCall;
    expect(asked.content[0]).toEqual({ type: "diff", path: join(repo.root, "a.py"), oldText: "x = 1\n", newText: "x = 2\n" });
    expect(asked.locations).toEqual([{ path: join(repo.root, "a.py"), line: 1 }]);
  });

  test("an edit the user denies: its card fails, nothing is written, and the model is not asked again", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), { text: "should not be asked" }]);
    const r = await acpx(repo, s, "set x to 2 in a.py", ["--deny-all"]);
    expect(repo.read("a.py")).toBe("x = 1\n");
    expect(acpxSteps(r.messages)).toEqual(["message", "coder-edit-1 edit pending", "permission coder-edit-1", "coder-edit-1 failed"]);
    expect(mainRequests(s)).toHaveLength(1);
  });

  test("an MCP tool call under ask, then under auto", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } }));
    const echo = { toolCalls: [{ name: "everything__echo", arguments: { message: "hello from mcp" } }] };
    const s = await server([echo, { text: "It echoed." }, echo, { text: "Echoed again." }]);
    const ask = await acpx(repo, s, "echo something", ["--approve-all"], ["--mcp-config", config]);
    expect(ask.code).toBe(0);
    expect(acpxSteps(ask.messages)).toEqual(["coder-tool-1 other pending", "permission coder-tool-1", "coder-tool-1 in_progress", "coder-tool-1 completed", "message"]);
    const auto = await acpx(repo, s, "echo again", ["--approve-all"], ["--mcp-config", config, "--mcp-tools", "auto"]);
    expect(acpxSteps(auto.messages)).toEqual(["coder-tool-1 other in_progress", "coder-tool-1 completed", "message"]);
    expect(JSON.stringify(auto.messages)).toContain("hello from mcp");
  });

  test("a stdio MCP server the client passes in session/new (server-everything) serves the model's tool call", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "client-mcp.json");
    // acpx's own format: the ACP McpServer list it passes in session/new.
    writeFileSync(config, JSON.stringify({ mcpServers: [{ name: "everything", command: NODE, args: [EVERYTHING, "stdio"], env: [] }] }));
    const echo = { toolCalls: [{ name: "everything__echo", arguments: { message: "hello from the editor's server" } }] };
    const s = await server([echo, { text: "It echoed." }]);
    const r = await acpx(repo, s, "echo something", ["--approve-all", "--mcp-config", config]);
    expect(r.code).toBe(0);
    const created = r.messages.find((m) => m.method === "session/new");
    expect(created.params.mcpServers).toHaveLength(1);
    const init = r.messages.find((m) => m.id === 0 && m.result?.agentCapabilities);
    expect(init.result.agentCapabilities.mcpCapabilities).toEqual({ http: true, sse: true });
    expect(acpxSteps(r.messages)).toEqual(["coder-tool-1 other pending", "permission coder-tool-1", "coder-tool-1 in_progress", "coder-tool-1 completed", "message"]);
    expect(JSON.stringify(mainRequests(s)[1].messages)).toContain("hello from the editor's server");
  });

  test("sessions list: the session an exec left, titled by its request", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), COMMIT_MESSAGE]);
    const r = await acpx(repo, s, "set x to 2 in a.py", ["--approve-all"]);
    const sessionId = r.messages.find((m) => m.result?.sessionId)?.result.sessionId;
    const listed = await acpxSessions(repo, s);
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]).toMatchObject({ sessionId, cwd: repo.root, title: "set x to 2 in a.py" });
  });

  test("a 401 ends the prompt with auth_required and a 500 with the provider's message; acpx exits non-zero", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ status: 401, errorMessage: "invalid api key", match: "first" }, { status: 500, errorMessage: "the backend fell over", match: "second", repeat: true }]);
    const unauthorized = await acpx(repo, s, "first", ["--approve-all"]);
    expect(unauthorized.code).not.toBe(0);
    const denied = unauthorized.messages.find((m) => m.id !== undefined && m.error);
    expect(denied.error.code).toBe(-32000);
    expect(denied.error.message).toContain("401 unauthorized: invalid api key");
    const broken = await acpx(repo, s, "second", ["--approve-all"], ["--timeout", "3"]);
    expect(broken.code).not.toBe(0);
    const failed = broken.messages.find((m) => m.id !== undefined && m.error);
    expect(failed.error.code).toBe(-32603);
    expect(failed.error.message).toContain("the backend fell over");
  });

  test("a reasoning stream: thought chunks, then the reply", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ reasoning: "x is 1, so the answer is one.", text: "x is one." }]);
    const r = await acpx(repo, s, "what is x?", ["--approve-all"], ["--edit-format", "ask"]);
    expect(r.code).toBe(0);
    expect(acpxSteps(r.messages)).toEqual(["thought", "message"]);
  });
});

describe("acpx: commands in its terminals", () => {
  test("/test runs in acpx's terminal: the card embeds it, then create, wait, output, release, completed", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    repo.write("check.sh", 'echo "ran in $(pwd)"; echo tests-pass\n');
    const s = await server([]);
    const r = await acpx(repo, s, "/test sh check.sh", ["--approve-all"]);
    expect(r.code).toBe(0);
    expect(r.messages.find((m) => m.method === "initialize").params.clientCapabilities.terminal).toBe(true);
    expect(acpxSteps(r.messages)).toEqual(TERMINAL_RUN("coder-test-1", "completed"));
    const create = r.messages.find((m) => m.method === "terminal/create");
    expect(create.params).toMatchObject({ command: "sh", args: ["-c", "sh check.sh"], cwd: repo.root });
    const terminalId = r.messages.find((m) => m.id === create.id && m.result?.terminalId).result.terminalId;
    expect(acpxTerminalOf(r.messages, "coder-test-1")).toEqual([terminalId]);
    const output = r.messages.find((m) => m.result?.output !== undefined && m.result?.exitStatus);
    expect(output.result.output).toBe(`ran in ${repo.root}\ntests-pass\n`);
  });

  test("a lint after an edit runs in acpx's terminal", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), COMMIT_MESSAGE]);
    const r = await acpx(repo, s, "set x to 2 in a.py", ["--approve-all"], ["--lint-cmd", "echo lint-clean"]);
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\n");
    // The lint runs while the weak model writes the commit message; the commit line follows both.
    expect(acpxSteps(r.messages)).toEqual(["message", "coder-edit-1 edit pending", "permission coder-edit-1", "coder-edit-1 in_progress", "coder-edit-1 completed", ...TERMINAL_RUN("coder-lint-2", "completed"), "message"]);
    expect(r.messages.find((m) => m.method === "terminal/create").params.args).toEqual(["-c", "echo lint-clean a.py"]);
  });

  test("--deny-all: acpx refuses the terminal; the card fails with its reason, and nothing is asked or sent", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([]);
    const r = await acpx(repo, s, "/test echo tests-pass", ["--deny-all"]);
    expect(acpxSteps(r.messages)).toEqual(["coder-test-1 execute in_progress", "terminal/create", "coder-test-1 failed"]);
    const done = r.messages.filter((m) => m.params?.update?.toolCallId === "coder-test-1").at(-1).params.update;
    expect(done.content[0].content.text).toContain("the editor did not run `echo tests-pass`: ");
    expect(done.content[0].content.text).toContain("Permission denied for terminal/create");
    expect(mainRequests(s)).toHaveLength(0);
  });

  test("acpx cancel (a persistent session) during a run in acpx's terminal: kill, output, release, and the prompt ends cancelled", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([]);
    const spawn = (args: string[]) => acpxProcess(repo, s, ["--approve-all", "--ttl", "1", ...args]);
    expect(await spawn(["sessions", "new"]).exited).toBe(0);
    const prompting = spawn(["prompt", "/test echo started; exec sleep 60"]);
    // acpx prints each message as it goes: cancel once coder waits for the command's exit.
    let printed = "";
    const decoder = new TextDecoder();
    const reader = (prompting.stdout as ReadableStream<Uint8Array>).getReader();
    while (!printed.includes('"method":"terminal/wait_for_exit"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`acpx ended before the command ran:\n${printed}`);
      printed += decoder.decode(value, { stream: true });
    }
    const cancel = spawn(["cancel"]);
    expect(JSON.parse((await new Response(cancel.stdout).text()).trim())).toMatchObject({ action: "cancel_result", cancelled: true });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      printed += decoder.decode(value, { stream: true });
    }
    expect(await prompting.exited).toBe(0);
    const messages = printed.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const sequence = messages.flatMap((m) => (m.method === "session/cancel" ? ["session/cancel"] : typeof m.method === "string" && m.method.startsWith("terminal/") ? [m.method] : m.result?.stopReason ? [`stopReason ${m.result.stopReason}`] : []));
    expect(sequence).toEqual(["terminal/create", "terminal/wait_for_exit", "session/cancel", "terminal/kill", "terminal/output", "terminal/release", "stopReason cancelled"]);
    expect(acpxSteps(messages).filter((step) => step.startsWith("coder-test-1"))).toEqual(["coder-test-1 execute in_progress", "coder-test-1 content", "coder-test-1 failed"]);
  });

  test("--no-terminal: /test is an execute card with its output, and no terminal call", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([]);
    const r = await acpx(repo, s, "/test echo tests-pass", ["--approve-all", "--no-terminal"]);
    expect(r.code).toBe(0);
    expect(r.messages.find((m) => m.method === "initialize").params.clientCapabilities.terminal).toBe(false);
    expect(acpxSteps(r.messages)).toEqual(["coder-test-1 execute in_progress", "coder-test-1 content", "coder-test-1 completed"]);
    const done = r.messages.filter((m) => m.params?.update?.toolCallId === "coder-test-1").at(-1).params.update;
    expect(done.content).toEqual([{ type: "content", content: { type: "text", text: "```\ntests-pass\n```" } }]);
  });
});

describe("acp-factory (a library on the official SDK 0.18)", () => {
  const agents: AgentHandle[] = [];
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.close();
  });

  async function spawnCoder(repo: Repo, s: FakeServer, options: Parameters<typeof AgentFactory.spawn>[1] = {}, extra: string[] = []): Promise<AgentHandle> {
    const name = `coder-${Math.random().toString(36).slice(2)}`;
    AgentFactory.register(name, { command: "sh", args: ["-c", `cd ${quote(repo.root)} && exec ${agentArgs(repo, s, extra).map(quote).join(" ")}`], env: { HOME: repo.home, GIT_CONFIG_NOSYSTEM: "1" } });
    const agent = await AgentFactory.spawn(name, options);
    agents.push(agent);
    return agent;
  }

  /** Every update of one prompt, permission requests included (interactive mode answers them with `answer`). */
  async function run(session: Awaited<ReturnType<AgentHandle["createSession"]>>, text: string, answer = "allow"): Promise<ExtendedSessionUpdate[]> {
    const seen: ExtendedSessionUpdate[] = [];
    for await (const update of session.prompt(text)) {
      seen.push(update);
      if (update.sessionUpdate === "permission_request") session.respondToPermission(update.requestId, answer);
    }
    return seen;
  }

  const factorySteps = (updates: ExtendedSessionUpdate[]) => steps(updates.map((u) => (u.sessionUpdate === "permission_request" ? { permission: u } : { update: u })));

  test("an edit with permission: pending with the diff, the permission on the same card, in_progress, completed", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), COMMIT_MESSAGE]);
    const agent = await spawnCoder(repo, s, { permissionMode: "interactive" });
    const session = await agent.createSession(repo.root);
    const updates = await run(session, "set x to 2 in a.py");
    expect(repo.read("a.py")).toBe("x = 2\n");
    // acp-factory ends the prompt's iterator when the answer arrives, and may drop the updates it had not handed out yet
    // (the "Committed" message chunk, sent just before the answer): the card's life is what is compared.
    expect(factorySteps(updates).slice(0, 5)).toEqual(["message", "coder-edit-1 edit pending", "permission coder-edit-1", "coder-edit-1 in_progress", "coder-edit-1 completed"]);
    const done = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    expect(JSON.stringify(done)).toContain(`Committed ${repo.git("log", "-1", "--format=%h: %s").trim()}`);
  });

  test("a write the editor refuses: the card fails with the editor's reason, and the model is not asked to fix it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), { text: "should not be asked" }]);
    const agent = await spawnCoder(repo, s, {
      permissionMode: "auto-approve",
      onFileWrite: async () => {
        throw new Error("the user closed the diff without accepting it");
      },
    });
    const session = await agent.createSession(repo.root);
    const updates = await run(session, "set x to 2 in a.py");
    expect(repo.read("a.py")).toBe("x = 1\n");
    expect(factorySteps(updates)).toEqual(["message", "coder-edit-1 edit pending", "coder-edit-1 in_progress", "coder-edit-1 failed"]);
    expect(JSON.stringify(updates.at(-1))).toContain("the editor refused to write a.py");
    expect(mainRequests(s)).toHaveLength(1);
  });

  test("an MCP tool call under ask (the permission on its card), then under auto", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } }));
    const echo = { toolCalls: [{ name: "everything__echo", arguments: { message: "hello from mcp" } }] };
    const s = await server([echo, { text: "It echoed." }, echo, { text: "Echoed again." }]);
    const ask = await spawnCoder(repo, s, { permissionMode: "interactive" }, ["--mcp-config", config]);
    const first = await run(await ask.createSession(repo.root), "echo something");
    expect(factorySteps(first).slice(0, 4)).toEqual(["coder-tool-1 other pending", "permission coder-tool-1", "coder-tool-1 in_progress", "coder-tool-1 completed"]);
    const auto = await spawnCoder(repo, s, {}, ["--mcp-config", config, "--mcp-tools", "auto"]);
    const second = await run(await auto.createSession(repo.root), "echo again");
    expect(factorySteps(second).slice(0, 2)).toEqual(["coder-tool-1 other in_progress", "coder-tool-1 completed"]);
    expect(JSON.stringify(second)).toContain("hello from mcp");
  });

  test("a stdio MCP server passed in session/new (server-everything) serves the model's tool call", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const echo = { toolCalls: [{ name: "everything__echo", arguments: { message: "hello from the editor's server" } }] };
    const s = await server([echo, { text: "It echoed." }]);
    const agent = await spawnCoder(repo, s, { permissionMode: "interactive" });
    const session = await agent.createSession(repo.root, { mcpServers: [{ name: "everything", command: NODE, args: [EVERYTHING, "stdio"], env: [] }] });
    const updates = await run(session, "echo something");
    expect(factorySteps(updates).slice(0, 4)).toEqual(["coder-tool-1 other pending", "permission coder-tool-1", "coder-tool-1 in_progress", "coder-tool-1 completed"]);
    expect(JSON.stringify(mainRequests(s)[1].messages)).toContain("hello from the editor's server");
  });

  test("a cancel while an MCP server is still starting ends the prompt, and no request is sent", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { slow: { command: "sleep", args: ["1000"], timeout: 600 } } }));
    const s = await server([{ text: "never asked" }]);
    const agent = await spawnCoder(repo, s, {}, ["--mcp-config", config]);
    const session = await agent.createSession(repo.root);
    const turn = run(session, "hello");
    await Bun.sleep(1000);
    await session.cancel();
    const updates = await turn;
    expect(factorySteps(updates)).toEqual([]);
    expect(mainRequests(s)).toHaveLength(0);
  }, 60_000);

  test("a 401 and a 500 end the prompt with an error, not a finished turn", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ status: 401, errorMessage: "invalid api key", match: "first" }, { status: 500, errorMessage: "the backend fell over", match: "second", repeat: true }]);
    const agent = await spawnCoder(repo, s, {}, ["--timeout", "3"]);
    const session = await agent.createSession(repo.root);
    const unauthorized = await run(session, "first").catch((e: unknown) => e);
    expect(JSON.stringify(unauthorized, Object.getOwnPropertyNames(unauthorized as object))).toContain("Authentication required");
    const broken = await run(session, "second").catch((e: unknown) => e);
    expect(JSON.stringify(broken, Object.getOwnPropertyNames(broken as object))).toContain("the backend fell over");
  });

  test("a reasoning stream: thought chunks, then the reply", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ reasoning: "x is 1, so the answer is one.", text: "x is one." }]);
    const agent = await spawnCoder(repo, s, {}, ["--edit-format", "ask"]);
    const session = await agent.createSession(repo.root);
    expect(factorySteps(await run(session, "what is x?"))).toEqual(["thought", "message"]);
  });
  /** acp-factory's terminal handlers over the test client's terminals (acp-factory passes only the terminal id). */
  const factoryTerminals = (terminals: TestTerminals) => ({
    onTerminalCreate: async (params: Parameters<TestTerminals["create"]>[0]) => terminals.create(params),
    onTerminalOutput: async (terminalId: string) => terminals.output({ sessionId: "", terminalId }).output,
    onTerminalWaitForExit: async (terminalId: string) => (await terminals.waitForExit({ sessionId: "", terminalId })).exitCode ?? 1,
    onTerminalKill: async (terminalId: string) => void terminals.kill({ sessionId: "", terminalId }),
    onTerminalRelease: async (terminalId: string) => void terminals.release({ sessionId: "", terminalId }),
  });

  test("/test runs in the client's terminal: the card embeds it; create, wait, output, release", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([]);
    const terminals = new TestTerminals();
    const agent = await spawnCoder(repo, s, factoryTerminals(terminals));
    const session = await agent.createSession(repo.root);
    const updates = await run(session, "/test echo tests-pass");
    expect(terminals.sequence()).toEqual(["create term-1", "wait_for_exit term-1", "output term-1", "release term-1"]);
    expect(terminals.calls[0]!.params).toMatchObject({ command: "sh", args: ["-c", "echo tests-pass"], cwd: repo.root });
    expect(factorySteps(updates)).toEqual(["coder-test-1 execute in_progress", "coder-test-1 content", "coder-test-1 completed"]);
    const embedded = updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => (u as { content?: unknown }).content);
    expect(embedded).toEqual([[{ type: "terminal", terminalId: "term-1" }], [{ type: "terminal", terminalId: "term-1" }]]);
  });

  test("a cancel during a run in the client's terminal: kill, then release, and the prompt ends cancelled", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), COMMIT_MESSAGE]);
    const terminals = new TestTerminals();
    const agent = await spawnCoder(repo, s, { permissionMode: "auto-approve", ...factoryTerminals(terminals) }, ["--test-cmd", "echo started; exec sleep 60", "--auto-test"]);
    const session = await agent.createSession(repo.root);
    // acp-factory's prompt() hides the answer: its SDK 0.18 connection gives the stop reason.
    const connection = (session as unknown as { connection: { prompt(p: { sessionId: string; prompt: { type: "text"; text: string }[] }): Promise<{ stopReason: string }> } }).connection;
    let settled = false;
    const answer = connection.prompt({ sessionId: session.id, prompt: [{ type: "text", text: "set x to 2 in a.py" }] }).finally(() => (settled = true));
    while (!terminals.calls.some((call) => call.method === "terminal/wait_for_exit")) {
      if (settled) throw new Error("the prompt ended before the tests ran in the client's terminal");
      await Bun.sleep(20);
    }
    await session.cancel();
    expect((await answer).stopReason).toBe("cancelled");
    expect(terminals.sequence()).toEqual(["create term-1", "wait_for_exit term-1", "kill term-1", "output term-1", "release term-1"]);
    // The edit was written and committed before the tests ran; the stopped tests go nowhere.
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(mainRequests(s)).toHaveLength(1);
  });
  test("session/load after a restart replays the conversation and the edit's card (its diff and commit line) before the next prompt's updates", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([EDIT("a.py", "x = 1\n", "x = 2\n"), COMMIT_MESSAGE, { text: "Second answer." }]);
    const first = await spawnCoder(repo, s, { permissionMode: "auto-approve" });
    const created = await first.createSession(repo.root);
    await run(created, "set x to 2 in a.py");
    const commit = `Committed ${repo.git("log", "-1", "--format=%h: %s").trim()}`;
    await first.close();

    const second = await spawnCoder(repo, s, { permissionMode: "auto-approve" });
    const loaded = await second.loadSession(created.id, repo.root);
    // acp-factory keeps what session/load sent and hands it out with the next prompt's updates, first.
    const updates = await run(loaded, "and now?");
    expect(factorySteps(updates).slice(0, 4)).toEqual(["user_message_chunk", "message", "coder-replay-1 edit completed", "message"]);
    expect(updates[0]).toEqual({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "set x to 2 in a.py" } });
    expect(updates[1]).toMatchObject({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: EDIT("a.py", "x = 1\n", "x = 2\n").text } });
    expect(updates[2]).toMatchObject({ sessionUpdate: "tool_call", toolCallId: "coder-replay-1", title: "Edit a.py", kind: "edit", status: "completed", locations: [{ path: join(repo.root, "a.py"), line: 1 }] });
    expect((updates[2] as { content?: unknown }).content).toEqual([
      { type: "diff", path: join(repo.root, "a.py"), oldText: "x = 1\n", newText: "x = 2\n" },
      { type: "content", content: { type: "text", text: commit } },
    ]);
    // The next request carries the restored conversation.
    expect(JSON.stringify(mainRequests(s)[1].messages)).toContain("set x to 2 in a.py");
  });
});
