// End-to-end tests of `coder acp` (issue 14): dist/coder driven by the ACP SDK's own
// client side against the fake OpenAI-compatible server. Each test checks what an
// editor would see (responses, session/updates, permission requests, fs calls) and
// what coder did to the repository (files, commits).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { png } from "../plugins/media/testdata/make.ts";
import { type AcpTestClient, acpClientsPerTest, acpLines, spawnRawAcp } from "./support/acp-client.ts";
import { block, mainRequests, makeRepo, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(120_000);

const EVERYTHING = join(import.meta.dir, "..", "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const NODE = Bun.which("node") ?? process.execPath;

const start = acpClientsPerTest();
const server = serverPerTest();

const session = (c: AcpTestClient, cwd: string) => c.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
const prompt = (c: AcpTestClient, sessionId: string, text: string, extra: acp.ContentBlock[] = []) =>
  c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }, ...extra] });
const kinds = (updates: acp.SessionUpdate[]) => updates.map((u) => u.sessionUpdate);
const toolCalls = (updates: acp.SessionUpdate[]) => updates.filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: "tool_call" }> => u.sessionUpdate === "tool_call");
const toolUpdates = (updates: acp.SessionUpdate[], id: string) => updates.filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: "tool_call_update" }> => u.sessionUpdate === "tool_call_update" && u.toolCallId === id);
const fileUri = (root: string, rel: string) => pathToFileURL(join(root, rel)).href;

describe("coder acp", () => {
  test("initialize: protocol version, loadSession, prompt capabilities, the coder version, no auth needed with a key", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const c = start(repo.root, await server([]), { home: repo.home });
    const init = await c.initialize();
    const pkg = JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8")) as { version: string };
    expect(init.protocolVersion).toBe(acp.PROTOCOL_VERSION);
    expect(init.agentInfo).toEqual({ name: "coder", title: "coder", version: pkg.version });
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(init.agentCapabilities?.promptCapabilities).toEqual({ image: true, audio: false, embeddedContext: true });
    expect(init.authMethods).toEqual([]);
  });

  test("initialize without any API key: an auth method whose description names the variables", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const proc = spawnRawAcp(repo.root, repo.home);
    const connection = acp.client({ name: "t" }).connect(acp.ndJsonStream(sinkStream(proc.stdin as import("bun").FileSink), proc.stdout as ReadableStream<Uint8Array>));
    const init = await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    expect(init.authMethods).toHaveLength(1);
    expect(init.authMethods?.[0]?.description).toContain("OPENAI_API_KEY");
    const auth = await connection.agent.request(acp.methods.agent.authenticate, { methodId: "api-key" }).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(acp.RequestError);
    expect((auth as acp.RequestError).message).toContain("OPENAI_API_KEY");
    connection.close();
    (proc.stdin as import("bun").FileSink).end();
    await proc.exited;
  });

  test("a prompt that edits a file: streamed reply, an edit tool call with its diff, the file written and committed", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: `Changing it.\n\n${block("a.py", "x = 1\n", "x = 2\n")}` }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const { sessionId, modes } = await session(c, repo.root);
    expect(modes?.currentModeId).toBe("code");
    const result = await prompt(c, sessionId, "set x to 2", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(result.stopReason).toBe("end_turn");
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(repo.git("log", "-1", "--format=%s").trim()).toBe("feat: apply the requested change");
    expect(repo.git("status", "--porcelain", "--", "a.py")).toBe("");
    const updates = c.updatesOf(sessionId);
    expect(c.text(sessionId)).toContain("Changing it.");
    const [edit] = toolCalls(updates).filter((t) => t.kind === "edit");
    expect(edit).toMatchObject({ title: "Edit a.py", status: "pending", locations: [{ path: join(repo.root, "a.py") }] });
    expect(edit!.content).toEqual([{ type: "diff", path: join(repo.root, "a.py"), oldText: "x = 1\n", newText: "x = 2\n" }]);
    expect(toolUpdates(updates, edit!.toolCallId).at(-1)?.status).toBe("completed");
    // The model saw the linked file as a chat file.
    expect(JSON.stringify(mainRequests(s)[0].messages)).toContain("x = 1");
    expect(c.text(sessionId)).toContain("Committed");
    // Context use after the reply: tokens in the request and the reply, out of the model's window.
    const usage = updates.find((u) => u.sessionUpdate === "usage_update");
    expect(usage).toMatchObject({ sessionUpdate: "usage_update", size: 1047576 });
    expect(usage && usage.sessionUpdate === "usage_update" ? usage.used : 0).toBeGreaterThan(100);
  });

  test("one edit is one tool call through its life: pending with the diff, the permission on it, in_progress, completed with the commit line", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "notes.txt": "one\ntwo\nthree\n" });
    const s = await server([{ text: block("notes.txt", "three\n", "THREE\n") }]);
    const c = start(repo.root, s, { home: repo.home, answers: ["allow"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "shout the last line");
    expect(repo.read("notes.txt")).toBe("one\ntwo\nTHREE\n");
    const updates = c.updatesOf(sessionId);
    const [card] = toolCalls(updates).filter((t) => t.kind === "edit");
    const id = card!.toolCallId;
    const path = join(repo.root, "notes.txt");
    const diff = { type: "diff" as const, path, oldText: "one\ntwo\nthree\n", newText: "one\ntwo\nTHREE\n" };
    expect(card).toMatchObject({ status: "pending", title: "Edit notes.txt", locations: [{ path, line: 3 }], content: [diff] });
    // Asked before anything was written, about the same card.
    const cardAt = updates.indexOf(card!);
    expect(c.askedAt[0]).toBeGreaterThan(c.updates.findIndex((n) => n.update === card));
    expect(c.permissions[0]!.toolCall.toolCallId).toBe(id);
    const later = toolUpdates(updates.slice(cardAt), id);
    expect(later.map((u) => u.status ?? null)).toEqual(["in_progress", "completed"]);
    const commit = repo.git("log", "-1", "--format=%h: %s").trim();
    expect(later[1]!.content).toEqual([diff, { type: "content", content: { type: "text", text: `Committed ${commit}` } }]);
  });

  test("a write the editor refuses fails its card with the editor's reason, and the model is not asked to fix it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: "should not be asked" }]);
    const c = start(repo.root, s, { home: repo.home, fs: true, refuseWrites: { message: "User refused the write", data: "the file is locked by the user" } });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const result = await prompt(c, sessionId, "set x to 2", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(result.stopReason).toBe("end_turn");
    expect(repo.read("a.py")).toBe("x = 1\n");
    expect(mainRequests(s)).toHaveLength(1);
    const [card] = toolCalls(c.updatesOf(sessionId)).filter((t) => t.kind === "edit");
    const last = toolUpdates(c.updatesOf(sessionId), card!.toolCallId).at(-1)!;
    expect(last.status).toBe("failed");
    expect(JSON.stringify(last.content)).toContain("the editor refused to write a.py: User refused the write (the file is locked by the user)");
    expect(c.text(sessionId)).not.toContain("Internal error");
  });

  test("a failed model answers session/prompt with a JSON-RPC error: auth_required for a 401, the provider's message for a 500", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ status: 401, errorMessage: "invalid api key", match: "first" }, { status: 500, errorMessage: "the backend fell over", match: "second", repeat: true }, { text: "Fine now." }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--timeout", "3"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const unauthorized = (await prompt(c, sessionId, "first").catch((e: unknown) => e)) as acp.RequestError;
    expect(unauthorized).toBeInstanceOf(acp.RequestError);
    expect(unauthorized.code).toBe(-32000);
    expect(unauthorized.message).toContain("401 unauthorized: invalid api key");
    const broken = (await prompt(c, sessionId, "second").catch((e: unknown) => e)) as acp.RequestError;
    expect(broken.code).toBe(-32603);
    expect(broken.message).toContain("500");
    expect(broken.message).toContain("the backend fell over");
    expect(broken.message).not.toContain("sk-test");
    // The agent keeps serving.
    expect((await prompt(c, sessionId, "third")).stopReason).toBe("end_turn");
  });

  test("initialize with a model chosen but no key for it: the API-key auth method names the variable", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const proc = spawnRawAcp(repo.root, repo.home, ["--model", "anthropic/claude-sonnet-4"]);
    const connection = acp.client({ name: "t" }).connect(acp.ndJsonStream(sinkStream(proc.stdin as import("bun").FileSink), proc.stdout as ReadableStream<Uint8Array>));
    const init = await connection.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    expect(init.authMethods).toHaveLength(1);
    expect(init.authMethods?.[0]).toMatchObject({ id: "api-key", name: "API key" });
    expect(init.authMethods?.[0]?.description).toContain("ANTHROPIC_API_KEY");
    connection.close();
    (proc.stdin as import("bun").FileSink).end();
    await proc.exited;
  });

  test("MCP tool calls are cards: under ask pending with the arguments, the permission on it, in_progress, completed with the result; under auto no question", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } }));
    const echo = { toolCalls: [{ name: "everything__echo", arguments: { message: "hello from mcp" } }] };
    const s = await server([echo, { text: "It echoed." }, echo, { text: "Echoed again." }]);
    const c = start(repo.root, s, { home: repo.home, answers: ["allow"], args: ["--mcp-config", config] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "echo something");
    const updates = c.updatesOf(sessionId);
    const [card] = toolCalls(updates).filter((t) => t.title?.startsWith("everything__echo"));
    expect(card).toMatchObject({ title: "everything__echo (MCP server everything)", kind: "other", status: "pending", rawInput: { message: "hello from mcp" } });
    expect(c.permissions[0]!.toolCall.toolCallId).toBe(card!.toolCallId);
    const later = toolUpdates(updates, card!.toolCallId);
    expect(later.map((u) => u.status)).toEqual(["in_progress", "completed"]);
    expect(JSON.stringify(later[1]!.content)).toContain("hello from mcp");

    const auto = start(repo.root, s, { home: repo.home, args: ["--mcp-config", config, "--mcp-tools", "auto"] });
    await auto.initialize();
    const second = await session(auto, repo.root);
    await prompt(auto, second.sessionId, "echo again");
    expect(auto.permissions).toHaveLength(0);
    const autoUpdates = auto.updatesOf(second.sessionId);
    const [ran] = toolCalls(autoUpdates).filter((t) => t.title?.startsWith("everything__echo"));
    expect(ran).toMatchObject({ status: "in_progress", rawInput: { message: "hello from mcp" } });
    expect(toolUpdates(autoUpdates, ran!.toolCallId).map((u) => u.status)).toEqual(["completed"]);
  });

  test("the model list keeps the configured model after a switch, though the model table does not know it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const c = start(repo.root, await server([]), { home: repo.home, args: ["--model", "openai/my-local-model"] });
    await c.initialize();
    const { sessionId, configOptions } = await session(c, repo.root);
    const values = (options: acp.SessionConfigOption[] | null | undefined) => {
      const model = options?.find((o) => o.id === "model");
      return model && model.type === "select" ? (model.options as acp.SessionConfigSelectOption[]).map((o) => o.value) : [];
    };
    expect(values(configOptions)).toContain("openai/my-local-model");
    const changed = await c.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "openai/gpt-4o" });
    expect(changed.configOptions.find((o) => o.id === "model")?.currentValue).toBe("openai/gpt-4o");
    expect(values(changed.configOptions)).toContain("openai/my-local-model");
    const back = await c.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "openai/my-local-model" });
    expect(back.configOptions.find((o) => o.id === "model")?.currentValue).toBe("openai/my-local-model");
  });

  test("a permission request the client answers cancelled counts as No", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "notes.txt": "old\n" });
    const s = await server([{ text: block("notes.txt", "old\n", "new\n") }]);
    const c = start(repo.root, s, { home: repo.home, answers: ["cancelled"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "change the notes");
    expect(c.permissions).toHaveLength(1);
    expect(repo.read("notes.txt")).toBe("old\n");
    const [edit] = toolCalls(c.updatesOf(sessionId)).filter((t) => t.kind === "edit");
    expect(toolUpdates(c.updatesOf(sessionId), edit!.toolCallId).at(-1)?.status).toBe("failed");
  });

  test("permissions: reject, then allow always (remembered for the session); reject always is the gate's Don't ask again", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "notes.txt": "old\n", "todo.txt": "keep\n" });
    const edit = { text: block("notes.txt", "old\n", "new\n") };
    const todo = { text: block("todo.txt", "keep\n", "gone\n") };
    // The first reply streams in many small chunks: the question must still come after all of them.
    const s = await server([{ text: `${"Here is the change. ".repeat(60)}\n\n${edit.text}`, chunkChars: 3 }, edit, edit, todo, todo]);
    const c = start(repo.root, s, { home: repo.home, answers: ["reject", "allow-always", "reject-always"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);

    expect((await prompt(c, sessionId, "change the notes")).stopReason).toBe("end_turn");
    expect(c.permissions).toHaveLength(1);
    const asked = c.permissions[0]!;
    expect(asked.sessionId).toBe(sessionId);
    // The question is about the edit's card: the same tool call, with its diff and the line it starts at.
    const card = toolCalls(c.updatesOf(sessionId)).find((t) => t.kind === "edit")!;
    expect(asked.toolCall.toolCallId).toBe(card.toolCallId);
    expect(asked.toolCall.title).toBe("Edit notes.txt");
    expect(asked.toolCall.content).toEqual([
      { type: "diff", path: join(repo.root, "notes.txt"), oldText: "old\n", newText: "new\n" },
      { type: "content", content: { type: "text", text: "Allow edits to notes.txt, which is not in the chat?" } },
    ]);
    expect(asked.toolCall.locations).toEqual([{ path: join(repo.root, "notes.txt"), line: 1 }]);
    expect(asked.toolCall.kind).toBe("edit");
    expect(asked.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    // The question comes after the reply that raised it has streamed in full.
    const before = c.updates.slice(0, c.askedAt[0]).map((n) => n.update);
    expect(before.map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "")).join("")).toContain(">>>>>>> REPLACE");
    expect(repo.read("notes.txt")).toBe("old\n");

    await prompt(c, sessionId, "change the notes");
    expect(c.permissions).toHaveLength(2);
    expect(repo.read("notes.txt")).toBe("new\n");

    // Out of the chat again, and back to the old text: the same question is answered by the remembered allow.
    await prompt(c, sessionId, "/drop notes.txt");
    repo.write("notes.txt", "old\n");
    repo.git("commit", "-qam", "back");
    await prompt(c, sessionId, "change the notes");
    expect(c.permissions).toHaveLength(2);
    expect(repo.read("notes.txt")).toBe("new\n");

    // Reject always: remembered by the gate for the repository (.coder/gate.json), not asked again.
    await prompt(c, sessionId, "change the todo");
    expect(c.permissions).toHaveLength(3);
    await prompt(c, sessionId, "change the todo");
    expect(c.permissions).toHaveLength(3);
    expect(repo.read("todo.txt")).toBe("keep\n");
    expect(readFileSync(join(repo.root, ".coder", "gate.json"), "utf8")).toContain("edit:todo.txt");
  });

  test("a shell command the model suggests is never offered allow-always", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "Run this:\n\n```bash\necho hi-from-shell\n```\n" }]);
    const c = start(repo.root, s, { home: repo.home, answers: ["allow"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "how do I say hi?");
    expect(c.permissions).toHaveLength(2);
    expect(c.permissions[0]!.toolCall.title).toBe("echo hi-from-shell");
    expect(c.permissions[0]!.toolCall.content).toEqual([{ type: "content", content: { type: "text", text: "Run shell command: echo hi-from-shell" } }]);
    expect(c.permissions[0]!.toolCall.kind).toBe("execute");
    expect(c.permissions[0]!.options.map((o) => o.kind)).not.toContain("allow_always");
    // The question is about the run's own card, which goes on to run with its output.
    const run = toolCalls(c.updatesOf(sessionId)).find((t) => t.kind === "execute");
    expect(run).toMatchObject({ title: "echo hi-from-shell", status: "pending" });
    expect(c.permissions[0]!.toolCall.toolCallId).toBe(run!.toolCallId);
    const later = toolUpdates(c.updatesOf(sessionId), run!.toolCallId);
    expect(later[0]!.status).toBe("in_progress");
    expect(later.at(-1)!.status).toBe("completed");
    expect(JSON.stringify(later)).toContain("hi-from-shell");
  });

  test("lint and test runs are execute tool calls with their output; a failing test goes back to the model", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    repo.write("check.sh", 'grep -q "x = 3" a.py && echo tests-pass || { echo tests-fail-x-is-not-3; exit 1; }\n');
    repo.git("add", "check.sh");
    repo.git("commit", "-qm", "check");
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n") }, { text: block("a.py", "x = 2\n", "x = 3\n") }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--lint-cmd", "echo lint-clean", "--test-cmd", "sh check.sh", "--auto-test"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "make x 3", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(repo.read("a.py")).toBe("x = 3\n");
    const updates = c.updatesOf(sessionId);
    const runs = toolCalls(updates).filter((t) => t.kind === "execute");
    expect(runs.map((t) => t.title)).toEqual(["Lint: echo lint-clean a.py", "Test: sh check.sh", "Lint: echo lint-clean a.py", "Test: sh check.sh"]);
    const last = (id: string) => toolUpdates(updates, id).at(-1);
    expect(last(runs[1]!.toolCallId)?.status).toBe("failed");
    expect(JSON.stringify(last(runs[1]!.toolCallId)?.content)).toContain("tests-fail-x-is-not-3");
    expect(last(runs[3]!.toolCallId)?.status).toBe("completed");
    expect(JSON.stringify(mainRequests(s)[1].messages)).toContain("tests-fail-x-is-not-3");
  });

  test("session/cancel mid-stream: the prompt ends with cancelled, and the agent keeps serving", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "word ".repeat(400), chunkChars: 5, chunkDelayMs: 20 }, { text: "Still here." }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const turn = prompt(c, sessionId, "talk a lot");
    await s.waitForChat(1);
    while (!c.text(sessionId).includes("word")) await Bun.sleep(10);
    // One turn at a time per session.
    const overlapping = await prompt(c, sessionId, "and another thing").catch((e: unknown) => e);
    expect((overlapping as acp.RequestError).code).toBe(-32600);
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await turn).stopReason).toBe("cancelled");
    expect(c.text(sessionId).length).toBeLessThan("word ".repeat(400).length);
    const from = c.updatesOf(sessionId).length;
    expect((await prompt(c, sessionId, "are you there?")).stopReason).toBe("end_turn");
    expect(c.text(sessionId, from)).toContain("Still here.");
    // The interrupted reply stays in the history, marked.
    expect(JSON.stringify(mainRequests(s)[1].messages)).toContain("(interrupted by the user)");
  });

  test("an MCP server slow to start is said in the thread, once it has taken a second", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: "sh", args: ["-c", `sleep 2; exec '${NODE}' '${EVERYTHING}' stdio`] } } }));
    const s = await server([{ text: "Here." }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--mcp-config", config] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    expect((await prompt(c, sessionId, "hello")).stopReason).toBe("end_turn");
    const text = c.text(sessionId);
    expect(text).toContain("Waiting for the tools of mcp (starting)…\n");
    expect(text.indexOf("Waiting for the tools")).toBeLessThan(text.indexOf("Here."));
  });

  test("an MCP server that fails to start is said in the thread, once per session", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { broken: { command: "false" } } }));
    const s = await server([{ text: "Here." }, { text: "Again." }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--mcp-config", config] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "hello");
    await prompt(c, sessionId, "hello again");
    const said = c.text(sessionId).split("\n").filter((l) => l.includes("MCP server broken") && l.includes("did not start"));
    expect(said).toHaveLength(1);
    expect(said[0]).toStartWith("Warning: ");
  });

  test("an MCP server that failed to start is remembered: after a restart it is skipped at once, said once in the thread with how to retry", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    const starts = join(repo.root, "..", "starts.txt");
    writeFileSync(config, JSON.stringify({ mcpServers: { broken: { command: "sh", args: ["-c", `echo start >> '${starts}'; exit 1`] } } }));
    const s = await server([{ text: "Here." }, { text: "After the restart." }, { text: "Again." }]);
    const first = start(repo.root, s, { home: repo.home, args: ["--mcp-config", config] });
    await first.initialize();
    const one = await session(first, repo.root);
    await prompt(first, one.sessionId, "hello");
    await first.close();
    expect(readFileSync(starts, "utf8").split("\n").filter(Boolean)).toHaveLength(1);

    const second = start(repo.root, s, { home: repo.home, args: ["--mcp-config", config] });
    await second.initialize();
    const { sessionId } = await session(second, repo.root);
    expect((await prompt(second, sessionId, "hello")).stopReason).toBe("end_turn");
    expect((await prompt(second, sessionId, "hello again")).stopReason).toBe("end_turn");
    // Not started again: one start in all.
    expect(readFileSync(starts, "utf8").split("\n").filter(Boolean)).toHaveLength(1);
    const said = second.text(sessionId).split("\n").filter((l) => l.includes("MCP server broken"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Warning: MCP server broken skipped, as it failed to start (less than a minute|\d+ min) ago: .*\/mcp or `coder mcp list` tries it again now/);
  });

  test("session/cancel while an MCP server is still starting: the prompt ends cancelled at once, and no request is sent", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const config = join(repo.root, "..", "mcp.json");
    // A server that never answers initialize, with a start-up timeout longer than this test's.
    writeFileSync(config, JSON.stringify({ mcpServers: { slow: { command: "sleep", args: ["1000"], timeout: 600 } } }));
    const s = await server([{ text: "never asked" }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--mcp-config", config] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const turn = prompt(c, sessionId, "hello");
    await Bun.sleep(1000);
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await turn).stopReason).toBe("cancelled");
    expect(mainRequests(s)).toHaveLength(0);
  }, 60_000);

  test("session/cancel during the tests: the test run's process group is stopped, its card fails, and the prompt ends cancelled", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n") }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--test-cmd", "echo $$ > test.pid; exec sleep 1000", "--auto-test"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const turn = prompt(c, sessionId, "set x to 2", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    const pidFile = join(repo.root, "test.pid");
    while (!existsSync(pidFile) || !readFileSync(pidFile, "utf8").trim()) await Bun.sleep(20);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await turn).stopReason).toBe("cancelled");
    expect(repo.read("a.py")).toBe("x = 2\n");
    let alive = true;
    for (let i = 0; i < 100 && alive; i++) {
      try {
        process.kill(pid, 0);
        await Bun.sleep(50);
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
    const run = toolCalls(c.updatesOf(sessionId)).find((t) => t.title === "Test: echo $$ > test.pid; exec sleep 1000")!;
    expect(toolUpdates(c.updatesOf(sessionId), run.toolCallId).at(-1)?.status).toBe("failed");
    expect(mainRequests(s)).toHaveLength(1);
  });

  test("SIGTERM from the editor mid-stream stops the turn like Ctrl-C and exits 143", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "word ".repeat(400), chunkChars: 5, chunkDelayMs: 20 }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const turn = prompt(c, sessionId, "talk a lot").catch((e: unknown) => e);
    await s.waitForChat(1);
    c.proc.kill("SIGTERM");
    expect(await c.proc.exited).toBe(143);
    await turn;
    expect(c.text(sessionId).length).toBeLessThan("word ".repeat(400).length);
  });

  test("files through the editor: the unsaved buffer is what the model sees, and the edit is written with fs/write_text_file", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const abs = join(repo.root, "a.py");
    const buffers = new Map([[abs, "x = 1\ny = 5\n"]]);
    const s = await server([{ text: block("a.py", "y = 5\n", "y = 6\n") }]);
    const c = start(repo.root, s, { home: repo.home, fs: true, buffers });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "bump y", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(c.reads).toContain(abs);
    expect(JSON.stringify(mainRequests(s)[0].messages)).toContain("y = 5");
    expect(c.writes).toEqual([{ path: abs, content: "x = 1\ny = 6\n" }]);
    expect(repo.read("a.py")).toBe("x = 1\ny = 6\n");
    expect(repo.git("show", "HEAD:a.py")).toBe("x = 1\ny = 6\n");
  });

  test("a buffer the user types in while the model answers: the reply's listing is merged onto it, never written over it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\ny = 1\nz = 1\n" });
    const abs = join(repo.root, "a.py");
    const buffers = new Map([[abs, "x = 1\ny = 1\nz = 1\n"]]);
    const s = await server([{ text: "a.py\n```python\nx = 2\ny = 1\nz = 1\n```\n", waitFor: async () => void buffers.set(abs, "x = 1\ny = 1\nz = 99\n") }]);
    const c = start(repo.root, s, { home: repo.home, fs: true, buffers, args: ["--edit-format", "whole"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "set x to 2", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(JSON.stringify(mainRequests(s)[0].messages)).toContain("z = 1");
    expect(c.writes).toEqual([{ path: abs, content: "x = 2\ny = 1\nz = 99\n" }]);
    expect(repo.read("a.py")).toBe("x = 2\ny = 1\nz = 99\n");
  });

  test("a buffer the user types in while the model answers: a SEARCH/REPLACE edit lands on what the buffer holds now", async () => {
    const repo = makeRepo({ "a.py": "x = 1\ny = 1\nz = 1\n" });
    const abs = join(repo.root, "a.py");
    const buffers = new Map([[abs, "x = 1\ny = 1\nz = 1\n"]]);
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n"), waitFor: async () => void buffers.set(abs, "x = 1\ny = 1\nz = 99\n") }]);
    const c = start(repo.root, s, { home: repo.home, fs: true, buffers });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "set x to 2", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(c.writes).toEqual([{ path: abs, content: "x = 2\ny = 1\nz = 99\n" }]);
  });

  test("session/load after a restart replays the conversation, and the next request carries it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "The answer is 42." }, { text: "You asked about the answer." }]);
    const first = start(repo.root, s, { home: repo.home });
    await first.initialize();
    const { sessionId } = await session(first, repo.root);
    await prompt(first, sessionId, "what is the answer?", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    await first.close();

    const second = start(repo.root, s, { home: repo.home });
    await second.initialize();
    const loaded = await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: repo.root, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("code");
    const replay = second.updatesOf(sessionId);
    expect(replay).toContainEqual({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "what is the answer?" } });
    expect(replay).toContainEqual({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "The answer is 42." } });
    await prompt(second, sessionId, "what did I ask?");
    const messages = JSON.stringify(mainRequests(s)[1].messages);
    expect(messages).toContain("what is the answer?");
    expect(messages).toContain("The answer is 42.");
    expect(messages).toContain("x = 1"); // the chat file came back too

    const unknown = await second.agent.request(acp.methods.agent.session.load, { sessionId: "00000000-0000-0000-0000-000000000000", cwd: repo.root, mcpServers: [] }).catch((e: unknown) => e);
    expect((unknown as acp.RequestError).code).toBe(-32002);
  });

  test("session/list shows saved sessions with titles; session/load replays the edit as a card with its diff and commit line; session/delete removes it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: `Changing it.\n\n${block("a.py", "x = 1\n", "x = 2\n")}` }]);
    const first = start(repo.root, s, { home: repo.home });
    const init = await first.initialize();
    expect(init.agentCapabilities?.sessionCapabilities).toEqual({ list: {}, close: {}, delete: {} });
    const { sessionId } = await session(first, repo.root);
    await prompt(first, sessionId, "set x to 2\nand nothing else", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    const live = toolCalls(first.updatesOf(sessionId)).find((t) => t.kind === "edit")!;
    const liveDone = toolUpdates(first.updatesOf(sessionId), live.toolCallId).at(-1)!;
    await first.close();

    const second = start(repo.root, s, { home: repo.home });
    await second.initialize();
    const listed = await second.agent.request(acp.methods.agent.session.list, { cwd: repo.root });
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]).toMatchObject({ sessionId, cwd: repo.root, title: "set x to 2" });
    expect(Date.parse(listed.sessions[0]!.updatedAt ?? "")).toBeGreaterThan(0);
    await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: repo.root, mcpServers: [] });
    const replay = second.updatesOf(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
    expect(kinds(replay)).toEqual(["user_message_chunk", "agent_message_chunk", "tool_call"]);
    const card = replay[2] as Extract<acp.SessionUpdate, { sessionUpdate: "tool_call" }>;
    expect(card).toMatchObject({ title: "Edit a.py", kind: "edit", status: "completed", locations: live.locations });
    expect(card.content).toEqual(liveDone.content ?? []);
    expect(JSON.stringify(card.content)).toContain(`Committed ${repo.git("log", "-1", "--format=%h").trim()}`);

    await second.agent.request(acp.methods.agent.session.delete, { sessionId });
    expect((await second.agent.request(acp.methods.agent.session.list, { cwd: repo.root })).sessions).toEqual([]);
    const gone = await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: repo.root, mcpServers: [] }).catch((e: unknown) => e);
    expect((gone as acp.RequestError).code).toBe(-32002);
  });

  test("two sessions in one process, each on its own repository, prompted at the same time", async () => {
    const one = makeRepo({ "one.py": "a = 1\n" });
    const two = makeRepo({ "two.py": "b = 1\n" });
    const s = await server([
      { text: block("one.py", "a = 1\n", "a = 2\n"), match: "first", chunkDelayMs: 5 },
      { text: block("two.py", "b = 1\n", "b = 2\n"), match: "second", chunkDelayMs: 5 },
    ]);
    const c = start(one.root, s, { home: one.home });
    await c.initialize();
    const a = await session(c, one.root);
    const b = await session(c, two.root);
    expect(a.sessionId).not.toBe(b.sessionId);
    const [ra, rb] = await Promise.all([
      prompt(c, a.sessionId, "first", [{ type: "resource_link", uri: fileUri(one.root, "one.py"), name: "one.py" }]),
      prompt(c, b.sessionId, "second", [{ type: "resource_link", uri: fileUri(two.root, "two.py"), name: "two.py" }]),
    ]);
    expect([ra.stopReason, rb.stopReason]).toEqual(["end_turn", "end_turn"]);
    expect(one.read("one.py")).toBe("a = 2\n");
    expect(two.read("two.py")).toBe("b = 2\n");
    expect(one.git("log", "--format=%s").split("\n")).toContain("feat: apply the requested change");
    expect(two.git("log", "--format=%s").split("\n")).toContain("feat: apply the requested change");
    // Each session's updates name its own file only.
    expect(JSON.stringify(c.updatesOf(a.sessionId))).not.toContain("two.py");
    expect(JSON.stringify(c.updatesOf(b.sessionId))).not.toContain("one.py");
  });

  test("slash commands: listed in available_commands_update, and a prompt starting with / runs one", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    const s = await server([{ text: "Seen." }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    const result = await prompt(c, sessionId, "/add b.py");
    expect(result.stopReason).toBe("end_turn");
    const listed = c.updatesOf(sessionId).find((u) => u.sessionUpdate === "available_commands_update");
    const names = listed && listed.sessionUpdate === "available_commands_update" ? listed.availableCommands.map((x) => x.name) : [];
    expect(names).toEqual(expect.arrayContaining(["add", "drop", "ask", "code", "architect", "undo", "tokens"]));
    expect(c.text(sessionId)).toContain("Added to the chat: b.py");
    expect(mainRequests(s)).toHaveLength(0);
    await prompt(c, sessionId, "what is in b?");
    expect(JSON.stringify(mainRequests(s)[0].messages)).toContain("y = 1");
  });

  test("modes: ask / code / architect; set_mode to ask stops edits, /code switches back with a current_mode_update", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: `You could do:\n\n${block("a.py", "x = 1\n", "x = 3\n")}` }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const created = await session(c, repo.root);
    const { sessionId } = created;
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["ask", "code", "architect"]);
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "ask" });
    await prompt(c, sessionId, "how would I set x to 3?", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(repo.read("a.py")).toBe("x = 1\n");
    expect(toolCalls(c.updatesOf(sessionId)).filter((t) => t.kind === "edit")).toHaveLength(0);
    await prompt(c, sessionId, "/code");
    expect(c.updatesOf(sessionId)).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "code" });
    const bad = await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" }).catch((e: unknown) => e);
    expect((bad as acp.RequestError).code).toBe(-32602);
  });

  test("architect: the plan is a plan update before the editor's edit", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "1. Change x to 4 in a.py\n2. Keep the rest\n" }, { text: block("a.py", "x = 1\n", "x = 4\n") }]);
    const c = start(repo.root, s, { home: repo.home, args: ["--auto-accept-architect"] });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "architect" });
    await prompt(c, sessionId, "make x 4", [{ type: "resource_link", uri: fileUri(repo.root, "a.py"), name: "a.py" }]);
    expect(repo.read("a.py")).toBe("x = 4\n");
    const updates = c.updatesOf(sessionId);
    const plan = updates.findIndex((u) => u.sessionUpdate === "plan");
    const edit = updates.findIndex((u) => u.sessionUpdate === "tool_call" && u.kind === "edit");
    expect(plan).toBeGreaterThanOrEqual(0);
    expect(plan).toBeLessThan(edit);
    expect(updates[plan]).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "Change x to 4 in a.py", priority: "medium", status: "pending" },
        { content: "Keep the rest", priority: "medium", status: "pending" },
      ],
    });
  });

  test("prompt resources: an embedded resource is the editor's text of a chat file, a link outside the repository joins read-only", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const outside = join(repo.home, "STYLE.md");
    writeFileSync(outside, "Use tabs.\n");
    const s = await server([{ text: "Noted." }, { text: "Switched." }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const { sessionId, configOptions } = await session(c, repo.root);
    await prompt(c, sessionId, "look", [
      { type: "resource", resource: { uri: fileUri(repo.root, "a.py"), text: "x = 1\nz = 9\n", mimeType: "text/x-python" } },
      { type: "resource_link", uri: pathToFileURL(outside).href, name: "STYLE.md" },
    ]);
    const sent = JSON.stringify(mainRequests(s)[0].messages);
    expect(sent).toContain("z = 9");
    expect(sent).toContain("Use tabs.");
    expect(c.text(sessionId)).toContain(`Added to the chat: a.py, ${outside} (read-only)`);

    // The model is a session config option.
    const model = configOptions?.find((o) => o.id === "model");
    expect(model).toMatchObject({ category: "model", type: "select", currentValue: "openai/gpt-4.1" });
    const changed = await c.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "openai/gpt-4o" });
    expect(changed.configOptions.find((o) => o.id === "model")?.currentValue).toBe("openai/gpt-4o");
    await prompt(c, sessionId, "again");
    expect(mainRequests(s)[1].model).toBe("gpt-4o");
    const bad = await c.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "nosuchprovider/x" }).catch((e: unknown) => e);
    expect((bad as acp.RequestError).code).toBe(-32602);
  });

  test("an image in the prompt is kept under .coder/pastes/ and reaches the request as an image part, byte for byte", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const shot = await png(64, 40);
    const s = await server([{ text: "A small pattern." }]);
    const c = start(repo.root, s, { home: repo.home });
    await c.initialize();
    const { sessionId } = await session(c, repo.root);
    await prompt(c, sessionId, "what is this?", [{ type: "image", data: Buffer.from(shot).toString("base64"), mimeType: "image/png" }]);
    const parts = (mainRequests(s)[0].messages as any[]).filter((m) => Array.isArray(m.content)).flatMap((m) => m.content);
    const image = parts.find((p) => p.type === "image_url");
    expect(image.image_url.url).toStartWith("data:image/png;base64,");
    expect(Buffer.from(image.image_url.url.slice(image.image_url.url.indexOf(",") + 1), "base64")).toEqual(Buffer.from(shot));
    expect(c.text(sessionId)).toMatch(/Added to the chat: \.coder\/pastes\/acp-[0-9a-f]{12}\.png \(read-only\)/);
  });

  test("a malformed line, an unknown method and an unknown session get JSON-RPC errors; the agent keeps serving; stdout holds only protocol", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([]);
    const proc = spawnRawAcp(repo.root, repo.home, ["--api-base", s.url, "--api-key", "sk-test", "--model", "openai/gpt-4.1"]);
    const stdin = proc.stdin as import("bun").FileSink;
    const lines = acpLines(proc.stdout as ReadableStream<Uint8Array>);
    const send = (text: string) => {
      stdin.write(`${text}\n`);
      stdin.flush();
    };
    send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }));
    expect((await lines.next()).id).toBe(1);
    send("{this is not json");
    expect((await lines.next()).error.code).toBe(-32700);
    send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/frobnicate", params: {} }));
    const unknownMethod = await lines.next();
    expect(unknownMethod.id).toBe(2);
    expect(unknownMethod.error.code).toBe(-32601);
    send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] } }));
    const unknownSession = await lines.next();
    expect(unknownSession.id).toBe(3);
    expect(unknownSession.error.message).toContain("unknown session");
    send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/new", params: { cwd: repo.root, mcpServers: [] } }));
    const created = await lines.next();
    expect(created.id).toBe(4);
    expect(typeof created.result.sessionId).toBe("string");
    // Every line on stdout is a JSON-RPC message.
    expect((await lines.next()).method).toBe("session/update");
    stdin.end();
    await proc.exited;
    expect(lines.rest().every((l) => JSON.parse(l).jsonrpc === "2.0")).toBe(true);
  });
});

function sinkStream(sink: import("bun").FileSink): WritableStream<Uint8Array> {
  return new WritableStream({
    write: async (chunk) => {
      sink.write(chunk);
      await sink.flush();
    },
  });
}

/** JSON lines from a stream, one at a time. */
