// End-to-end tests of MCP support through dist/coder, against MCP servers we did not
// write (the reference `everything` server over stdio and Streamable HTTP, the reference
// `filesystem` server on a temp folder) and the fake OpenAI-compatible model: listing,
// resources as context, prompts as commands, the gathering step with its gate and budget,
// and servers that crash, never start, or return 5 MB; trust, the tool cache, and process
// groups on every exit path (a helper the server forked never outlives coder).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { block, mainRequests, makeRepo, type Repo, runCoder, serverPerTest } from "./engine-harness.ts";
import { requireBinary } from "./support/kernel.ts";

setDefaultTimeout(90_000);
beforeAll(requireBinary);

const ROOT = join(import.meta.dir, "..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const CRASH_PROXY = join(import.meta.dir, "support/mcp-crash-proxy.ts");
const MORPH = join(import.meta.dir, "support/mcp-morph-server.ts");
const NODE = Bun.which("node") ?? process.execPath;
const server = serverPerTest();

const everything = { command: NODE, args: [EVERYTHING, "stdio"] };

/** Write an --mcp-config file in the repository's parent folder (outside the repository) and return its path. */
function mcpConfig(repo: Repo, servers: Record<string, unknown>): string {
  const file = join(repo.root, "..", "mcp.json");
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

/** The JSON events of a --json run. */
function events(stdout: string): any[] {
  return stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

function toolMessages(body: any): any[] {
  return body.messages.filter((m: any) => m.role === "tool");
}

function toolNames(body: any): string[] {
  return (body.tools ?? []).map((t: any) => t.function.name);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ─── The Streamable HTTP server, shared by the file ─────────────────────────

const remote: ChildProcess[] = [];
let httpUrl = "";
let sseUrl = "";

/** The everything server over HTTP ("streamableHttp" or legacy "sse") on a free port of 127.0.0.1; its port. */
async function startRemote(mode: "streamableHttp" | "sse"): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = Number(probe.port);
  probe.stop(true);
  const child = spawn(NODE, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  remote.push(child);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the everything server (${mode}) did not start listening`)), 30_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      if (/(listening|running) on port/.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return port;
}

beforeAll(async () => {
  const [http, sse] = await Promise.all([startRemote("streamableHttp"), startRemote("sse")]);
  httpUrl = `http://127.0.0.1:${http}/mcp`;
  sseUrl = `http://127.0.0.1:${sse}/sse`;
});

afterAll(() => {
  for (const child of remote) child.kill("SIGKILL");
});

describe("coder mcp list", () => {
  test("lists each server's status, tools, prompts and resources; a server that cannot start is reported once, the rest go on, and the exit code is 1", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([]);
    const config = mcpConfig(repo, {
      everything,
      web: { url: httpUrl },
      files: { command: NODE, args: [FILESYSTEM, repo.root] },
      missing: { command: "no-such-mcp-server-binary", args: ["--x"] },
      resting: { command: "no-such-either", disabled: true },
      legacy: { url: sseUrl, type: "sse" },
      guess: { url: sseUrl },
    });
    const r = await runCoder(repo, fake, ["mcp", "list", "--mcp-config", config]);
    // CLI.md: non-zero exit if a server failed to start.
    expect(r.code).toBe(1);
    const out = r.stdout;
    expect(out).toContain("MCP servers (7)");
    expect(out.split("\n").filter((l) => /\s$/.test(l))).toEqual([]);
    // Legacy SSE, named or found by falling back from Streamable HTTP.
    expect(out).toMatch(/legacy {2}running {2}sse: http:\/\/127\.0\.0\.1:\d+\/sse/);
    expect(out).toMatch(/guess {2}running {2}sse: http:\/\/127\.0\.0\.1:\d+\/sse/);
    expect(out).toContain("legacy__echo");
    expect(out).toMatch(/everything {2}running {2}stdio: /);
    expect(out).toMatch(/web {2}running {2}http: http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(out).toMatch(/files {2}running {2}stdio: /);
    expect(out).toContain("everything__echo");
    expect(out).toContain("web__get-sum");
    expect(out).toContain("files__read_text_file");
    expect(out).toContain("/everything:args-prompt");
    expect(out).toContain("demo://resource/static/document/architecture.md");
    expect(out).toMatch(/missing {2}failed/);
    expect(out).toContain("MCP server missing (no-such-mcp-server-binary --x) did not start");
    expect(out).toMatch(/resting {2}disabled/);
    // The failure is said once: in the listing, not again on stderr.
    expect(out.split("\n").filter((l) => l.includes("MCP server missing"))).toHaveLength(1);
    expect(r.stderr).not.toContain("MCP server missing");
    expect(fake.chatBodies()).toHaveLength(0);
  });

  test("--json: the failed server's problem is in the document only, and the exit code is 1; with every server running it is 0", async () => {
    const repo = makeRepo({});
    const fake = await server([]);
    const failing = mcpConfig(repo, { everything, missing: { command: "no-such-mcp-server-binary" } });
    const r = await runCoder(repo, fake, ["mcp", "list", "--json", "--mcp-config", failing]);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.servers.map((s: any) => [s.name, s.status])).toEqual([
      ["everything", "running"],
      ["missing", "failed"],
    ]);
    expect(doc.servers[1].problem).toContain("MCP server missing (no-such-mcp-server-binary) did not start");
    expect(r.stderr).not.toContain("MCP server missing");
    const fine = mcpConfig(repo, { everything });
    const ok = await runCoder(repo, fake, ["mcp", "list", "--mcp-config", fine]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/everything {2}running/);
  });

  test("a bad entry is named with its key and the fix", async () => {
    const repo = makeRepo({});
    const fake = await server([]);
    const config = mcpConfig(repo, { odd: { args: ["x"] } });
    const r = await runCoder(repo, fake, ["mcp", "list", "--mcp-config", config]);
    expect(r.stdout + r.stderr).toContain('mcpServers.odd: needs "command" (a local server) or "url" (a remote one)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("resources and prompts", () => {
  test("@server:uri in a message puts the resource in the request as context", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ text: "Noted." }]);
    const config = mcpConfig(repo, { everything });
    const doc = readFileSync(join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/docs/architecture.md"), "utf8");
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "off", "-m", "Summarise @everything:demo://resource/static/document/architecture.md please."]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Added MCP resource everything:demo://resource/static/document/architecture.md");
    const [body] = mainRequests(fake);
    const context = body.messages.find((m: any) => typeof m.content === "string" && m.content.includes("MCP resource everything:demo://resource/static/document/architecture.md"));
    expect(context).toBeDefined();
    expect(context.content).toContain(doc.split("\n")[0]);
    expect(context.content).toContain("read-only");
    // mcpTools off: no tool is offered.
    expect(body.tools).toBeUndefined();
  });

  test("/server:prompt ARGS runs the server's prompt and sends its text as the request", async () => {
    const repo = makeRepo({});
    const fake = await server([{ text: "Sunny." }]);
    const config = mcpConfig(repo, { everything });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "off", "--edit-format", "ask", "-m", "/everything:args-prompt Paris state=Texas"]);
    expect(r.code).toBe(0);
    const [body] = mainRequests(fake);
    expect(body.messages.at(-1).content).toContain("What's weather in Paris, Texas?");
  });

  test("a prompt missing its required argument says its usage and sends nothing", async () => {
    const repo = makeRepo({});
    const fake = await server([]);
    const config = mcpConfig(repo, { everything });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "-m", "/everything:args-prompt"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("missing city: usage CITY [STATE]");
    expect(fake.chatBodies()).toHaveLength(0);
  });
});

describe("tools in the gathering step", () => {
  test("the model calls echo (stdio), gets the result, then edits a file with it", async () => {
    const repo = makeRepo({ "note.txt": "old\n" });
    const fake = await server([
      { toolCalls: [{ name: "everything__echo", arguments: { message: "hello from mcp" } }] },
      { match: "Echo: hello from mcp", text: block("note.txt", "old\n", "Echo: hello from mcp\n") },
    ]);
    const config = mcpConfig(repo, { everything });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "--json", "-m", "Put the echo in note.txt", "note.txt"]);
    expect(r.code).toBe(0);
    expect(repo.read("note.txt")).toBe("Echo: hello from mcp\n");
    const [first, second] = mainRequests(fake);
    expect(toolNames(first)).toContain("everything__echo");
    expect(toolNames(first)).toContain("everything__get-sum");
    expect(toolMessages(second)).toEqual([{ role: "tool", tool_call_id: "call_1", content: "Echo: hello from mcp" }]);
    const tool = events(r.stdout).filter((e) => e.type === "tool");
    expect(tool).toHaveLength(1);
    expect(tool[0]).toMatchObject({ name: "everything__echo", origin: "MCP server everything", status: "ok", output: "Echo: hello from mcp", arguments: '{"message":"hello from mcp"}' });
  });

  test("over Streamable HTTP, with mcpTools auto from the user's config: get-sum runs without a question and the answer is used", async () => {
    const repo = makeRepo({ "sum.txt": "?\n" });
    const configDir = join(repo.home, ".config", "coder");
    await Bun.write(join(configDir, "config.json"), JSON.stringify({ mcpTools: "auto", mcpServers: { web: { url: httpUrl } } }));
    const fake = await server([
      { toolCalls: [{ name: "web__get-sum", arguments: { a: 2, b: 40 } }] },
      { match: "The sum of 2 and 40 is 42.", text: block("sum.txt", "?\n", "42\n") },
    ]);
    const r = await runCoder(repo, fake, ["--json", "-m", "Add 2 and 40 into sum.txt", "sum.txt"]);
    expect(r.code).toBe(0);
    expect(repo.read("sum.txt")).toBe("42\n");
    const tool = events(r.stdout).find((e) => e.type === "tool");
    expect(tool).toMatchObject({ name: "web__get-sum", status: "ok", output: "The sum of 2 and 40 is 42." });
  });

  test("with the tool edit format, MCP tools sit beside edit_file and create_file", async () => {
    const repo = makeRepo({ "note.txt": "old\n" });
    const fake = await server([
      { toolCalls: [{ name: "everything__echo", arguments: { message: "via tools" } }] },
      { match: "Echo: via tools", toolCalls: [{ name: "edit_file", arguments: { path: "note.txt", search: "old\n", replace: "Echo: via tools\n" } }] },
    ]);
    const config = mcpConfig(repo, { everything });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--edit-format", "tool", "--mcp-tools", "auto", "-m", "Echo into note.txt", "note.txt"]);
    expect(r.code).toBe(0);
    expect(repo.read("note.txt")).toBe("Echo: via tools\n");
    const names = toolNames(mainRequests(fake)[0]);
    expect(names.slice(0, 2)).toEqual(["edit_file", "create_file"]);
    expect(names).toContain("everything__echo");
  });

  test("--yes-always does not answer a tool call: with nobody to ask it is declined, and coder says how to run tools unasked", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ toolCalls: [{ name: "everything__echo", arguments: { message: "secret" } }] }, { match: "declined", text: "I will do without it." }]);
    const config = mcpConfig(repo, { everything });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--yes-always", "--json", "-m", "Echo something"]);
    expect(r.code).toBe(0);
    const all = events(r.stdout);
    expect(all.find((e) => e.type === "tool")).toMatchObject({ name: "everything__echo", status: "declined" });
    expect(all.some((e) => e.type === "warning" && e.message.includes('--yes-always does not answer tool calls (set "mcpTools": "auto" to run these tools'))).toBe(true);
    expect(toolMessages(mainRequests(fake)[1])[0].content).toContain("the user declined this call");
  });

  test("a gated tool answered No is not run; the model hears it was declined and answers", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ toolCalls: [{ name: "everything__echo", arguments: { message: "secret" } }] }, { match: "declined", text: "I will do without it." }]);
    const config = mcpConfig(repo, { everything });
    // No terminal and no --yes-always: nobody can say yes, so the gate answers No.
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--json", "-m", "Echo something"]);
    expect(r.code).toBe(0);
    const all = events(r.stdout);
    const tool = all.find((e) => e.type === "tool");
    expect(tool).toMatchObject({ name: "everything__echo", status: "declined" });
    expect(all.some((e) => e.type === "warning" && /Run tool everything__echo \(MCP server everything\) with \{"message":"secret"\}\?/.test(e.message))).toBe(true);
    const second = mainRequests(fake)[1];
    expect(toolMessages(second)[0].content).toContain("Not run: the user declined this call");
    expect(JSON.stringify(second)).not.toContain("Echo: secret");
  });

  test("--max-tool-calls: past the budget the model is told to answer now, and further calls are not run", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    // A model that never stops calling tools.
    const fake = await server([{ toolCalls: [{ name: "everything__echo", arguments: { message: "again" } }], repeat: true }]);
    const config = mcpConfig(repo, { everything });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "--max-tool-calls", "2", "--json", "-m", "Loop"]);
    expect(r.code).toBe(0);
    const requests = mainRequests(fake);
    expect(requests).toHaveLength(3);
    expect(events(r.stdout).filter((e) => e.type === "tool").map((e) => e.status)).toEqual(["ok", "ok"]);
    const last = requests[2].messages.at(-1);
    expect(last.role).toBe("user");
    expect(last.content).toContain("You have made 2 tool calls, the most allowed for one request. Do not call tools again: answer now");
  });

  test("a server that crashes mid-call: the model hears the failure (with its stderr), the run goes on", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ toolCalls: [{ name: "shaky__echo", arguments: { message: "x" } }] }, { match: "The call failed", text: "The server broke; nothing to do." }]);
    const config = mcpConfig(repo, { shaky: { command: process.execPath, args: [CRASH_PROXY, NODE, EVERYTHING, "stdio"] } });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "--json", "-m", "Echo"]);
    expect(r.code).toBe(0);
    const tool = events(r.stdout).find((e) => e.type === "tool");
    expect(tool.status).toBe("error");
    expect(tool.output).toContain("The call failed: MCP server shaky");
    expect(tool.output).toContain("the server stopped (exit code 3); stderr: ");
    expect(tool.output).toContain("crash-proxy: dying mid-call");
    const answer = toolMessages(mainRequests(fake)[1])[0].content;
    expect(answer).toContain("The call failed");
    expect(mainRequests(fake)).toHaveLength(2);
  });

  test("servers that never start (no such program; no answer within the timeout) are reported and the chat goes on without their tools", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ text: "Fine." }]);
    const config = mcpConfig(repo, {
      ghost: { command: "no-such-mcp-server-binary" },
      mute: { command: "sleep", args: ["600"], timeout: 1 },
      everything,
    });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "-m", "Hello"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("MCP server ghost (no-such-mcp-server-binary) did not start");
    expect(r.stderr).toContain("MCP server mute (sleep 600) did not start: no answer to initialize within 1 s");
    const names = toolNames(mainRequests(fake)[0]);
    expect(names.some((n) => n.startsWith("everything__"))).toBe(true);
    expect(names.some((n) => n.startsWith("ghost__") || n.startsWith("mute__"))).toBe(false);
  });

  test("a server that failed to start is remembered: the next run skips it at once and says how to retry; coder mcp list tries it again", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ text: "One." }, { text: "Two." }]);
    // Each start of the mute server leaves a line in starts.txt, then never answers initialize.
    const starts = join(repo.root, "..", "starts.txt");
    const config = mcpConfig(repo, { mute: { command: "sh", args: ["-c", `echo start >> ${starts}; exec sleep 600`], timeout: 1 }, everything });
    const startsSoFar = () => (existsSync(starts) ? readFileSync(starts, "utf8").split("\n").filter(Boolean).length : 0);

    const first = await runCoder(repo, fake, ["--mcp-config", config, "-m", "Hello"]);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("did not start: no answer to initialize within 1 s");
    expect(startsSoFar()).toBe(1);
    const remembered = JSON.parse(readFileSync(join(repo.root, ".coder/cache/mcp/failures.json"), "utf8"));
    expect(Object.keys(remembered).map((k) => k.split(":")[0])).toEqual(["mute"]);

    // The next run does not start it again: it is skipped, with why and how to try again.
    const second = await runCoder(repo, fake, ["--mcp-config", config, "-m", "Again"]);
    expect(second.code).toBe(0);
    expect(startsSoFar()).toBe(1);
    const skipped = second.stderr.split("\n").filter((l) => l.includes("MCP server mute"));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatch(/MCP server mute skipped, as it failed to start (less than a minute|\d+ min) ago: MCP server mute \(sh -c .*\) did not start: no answer to initialize within 1 s.*\. It is skipped for \d+ min more; \/mcp or `coder mcp list` tries it again now$/);
    expect(second.stderr).not.toContain("starting MCP server mute");
    const names = toolNames(mainRequests(fake)[1]);
    expect(names.some((n) => n.startsWith("everything__"))).toBe(true);
    expect(names.some((n) => n.startsWith("mute__"))).toBe(false);

    // coder mcp list tries it again (and it fails again: exit 1, its own timeout reported).
    const list = await runCoder(repo, fake, ["mcp", "list", "--mcp-config", config]);
    expect(list.code).toBe(1);
    expect(startsSoFar()).toBe(2);
    expect(list.stdout).toMatch(/mute {2}failed/);
    expect(list.stdout).toContain("no answer to initialize within 1 s");
    expect(list.stdout).not.toContain("skipped");
  });

  test("a tool that returns 5 MB: the model gets the first 40,000 characters and a note; the event keeps the full size", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const big = "0123456789abcdef\n".repeat(Math.ceil((5 * 1024 * 1024) / 17));
    const folder = join(repo.root, "..", "data");
    await Bun.write(join(folder, "big.txt"), big);
    const fake = await server([{ toolCalls: [{ name: "files__read_text_file", arguments: { path: join(folder, "big.txt") } }] }, { match: "Output cut", text: "It is big." }]);
    const config = mcpConfig(repo, { files: { command: NODE, args: [FILESYSTEM, folder] } });
    const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "--json", "-m", "Read it"]);
    expect(r.code).toBe(0);
    const tool = events(r.stdout).find((e) => e.type === "tool");
    expect(tool.status).toBe("ok");
    expect(tool.chars).toBe(big.length);
    const sent = toolMessages(mainRequests(fake)[1])[0].content as string;
    expect(sent.length).toBeLessThan(41_000);
    expect(sent.startsWith(big.slice(0, 40_000))).toBe(true);
    expect(sent).toContain(`[Output cut: the tool returned ${big.length.toLocaleString("en-US")} characters`);
  });
});

describe("a plugin's tool provider, without MCP", () => {
  test("the example todo-tool's list_todos runs without a question; its result reaches the model", async () => {
    const repo = makeRepo({ "app.py": "x = 1  # TODO: name this\n" });
    const fake = await server([{ toolCalls: [{ name: "list_todos", arguments: {} }] }, { match: "app.py:1:", text: "One TODO." }]);
    const r = await runCoder(repo, fake, ["--plugin", join(ROOT, "examples/plugins/todo-tool.ts"), "--json", "-m", "What is left to do?"]);
    expect(r.code).toBe(0);
    expect(toolMessages(mainRequests(fake)[1])[0].content).toBe("app.py:1:x = 1  # TODO: name this");
    expect(events(r.stdout).find((e) => e.type === "tool")).toMatchObject({ name: "list_todos", origin: "plugin todo-tool", status: "ok" });
  });
});

describe("coder doctor", () => {
  test("checks that each enabled server starts; one that cannot is a failed check", async () => {
    const repo = makeRepo({});
    const fake = await server([]);
    const config = mcpConfig(repo, { everything, ghost: { command: "no-such-mcp-server-binary" }, resting: { command: "x", disabled: true } });
    const text = await runCoder(repo, fake, ["doctor", "--mcp-config", config]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/ok {4}mcp everything {2}starts \(mcp-servers\/everything [\d.]+\): 13 tools, 4 prompts, 7 resources/);
    expect(text.stdout).toContain("FAIL  mcp ghost  MCP server ghost (no-such-mcp-server-binary) did not start");
    expect(text.stdout).toContain("ok    mcp resting  disabled");
    const json = await runCoder(repo, fake, ["doctor", "--json", "--mcp-config", config]);
    const report = JSON.parse(json.stdout);
    expect(report.tools.map((t: any) => [t.provider, t.name, t.ok])).toEqual([
      ["mcp", "everything", true],
      ["mcp", "ghost", false],
      ["mcp", "resting", true],
    ]);
  });
});

describe("start-up cost", () => {
  const PROBE = `
const { main } = await import(${JSON.stringify(join(ROOT, "main.ts"))});
const code = await main(process.argv.slice(2));
console.error("\\n@@" + JSON.stringify({ code, modules: Object.keys(require.cache) }));
process.exit(0);
`;
  /** The modules a run of main.ts (from source) loaded. */
  async function modulesFor(repo: Repo, args: string[]): Promise<string[]> {
    const probe = join(repo.root, "..", "probe.ts");
    writeFileSync(probe, PROBE);
    const proc = Bun.spawn([process.execPath, probe, ...args], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config") }, stdout: "ignore", stderr: "pipe", timeout: 90_000, killSignal: "SIGKILL" });
    const stderr = await new Response(proc.stderr).text();
    await proc.exited;
    const line = stderr.split("\n").find((l) => l.startsWith("@@"));
    if (!line) throw new Error(`no probe output: ${stderr}`);
    return (JSON.parse(line.slice(2)) as { modules: string[] }).modules;
  }
  const SDK = /node_modules\/@modelcontextprotocol\/|plugins\/mcp\/(connection|stdio)\.ts$/;

  test("--version and a one-shot request without MCP servers load no MCP client", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ text: "Hi." }]);
    expect((await modulesFor(repo, ["--version"])).filter((m) => m.includes("plugins/mcp/") || SDK.test(m))).toEqual([]);
    const modules = await modulesFor(repo, ["--model", "openai/gpt-4.1", "--api-base", fake.url, "--api-key", "k", "--map-tokens", "0", "--no-pretty", "-m", "hello"]);
    expect(fake.chatBodies()).toHaveLength(1);
    expect(modules.filter((m) => SDK.test(m))).toEqual([]);
  });

  test("with servers configured and their tools cached, a request that calls no tool loads no MCP client and starts nothing", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const fake = await server([{ text: "One." }, { text: "Two." }]);
    const config = mcpConfig(repo, { everything });
    const base = ["--model", "openai/gpt-4.1", "--api-base", fake.url, "--api-key", "k", "--map-tokens", "0", "--no-pretty", "--mcp-config", config];
    const first = await modulesFor(repo, [...base, "-m", "first"]);
    expect(first.some((m) => SDK.test(m))).toBe(true);
    const second = await modulesFor(repo, [...base, "-m", "second"]);
    expect(second.filter((m) => SDK.test(m))).toEqual([]);
    expect(toolNames(fake.chatBodies()[1])).toContain("everything__echo");
  });
});

describe("trust and lifetime", () => {
  test("an untrusted project config's server is not started; trusted, it is", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const marker = join(repo.root, "..", "started");
    repo.write(".coder.json", JSON.stringify({ mcpServers: { local: { command: "sh", args: ["-c", `touch ${marker}; exec ${NODE} ${EVERYTHING} stdio`] } } }));
    repo.git("add", "-A");
    repo.git("commit", "-q", "-m", "project MCP server");
    const fake = await server([{ text: "Hi." }, { text: "Hi again." }]);
    // Nobody can be asked (no terminal): the run stops before anything starts, naming the key and the fix.
    const untrusted = await runCoder(repo, fake, ["-m", "Hello"]);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toContain("this repository's config sets mcpServers (it runs code on this machine), and the repository is not trusted");
    const listed = await runCoder(repo, fake, ["mcp", "list"]);
    expect(listed.code).toBe(2);
    expect(existsSync(marker)).toBe(false);
    expect(fake.chatBodies()).toHaveLength(0);
    const trusted = await runCoder(repo, fake, ["--trust", "-m", "Hello"]);
    expect(trusted.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(toolNames(mainRequests(fake)[0])).toContain("local__echo");
  });

  test("a stdio server's whole process group ends with coder", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const pidFile = join(repo.root, "..", "child.pid");
    // The server's shell leaves a child of its own behind; only a process-group kill ends it.
    const config = mcpConfig(repo, { grouped: { command: "sh", args: ["-c", `sleep 600 & echo $! > ${pidFile}; exec ${NODE} ${EVERYTHING} stdio`] } });
    const fake = await server([{ text: "Hi." }]);
    const r = await runCoder(repo, fake, ["--mcp-config", config, "-m", "Hello"]);
    expect(r.code).toBe(0);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(pid).toBeGreaterThan(0);
    for (let i = 0; i < 50 && alive(pid); i++) await Bun.sleep(100);
    expect(alive(pid)).toBe(false);
  });

  test("the tool cache follows a server whose tools change (tools/list_changed): the next run offers the new list", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const config = mcpConfig(repo, { morph: { command: process.execPath, args: [MORPH] } });
    const fake = await server([{ toolCalls: [{ name: "morph__first", arguments: {} }] }, { match: "first ran", text: "Done." }, { text: "Second run." }]);
    const first = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "-m", "Call first"]);
    expect(first.code).toBe(0);
    // The second run starts no server: its tools come from the cache, which must hold the change.
    const second = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "-m", "Again"]);
    expect(second.code).toBe(0);
    const offered = toolNames(mainRequests(fake)[2]);
    expect(offered).toContain("morph__second");
    expect(offered).not.toContain("morph__first");
  });

  test("with the tool list cached, a request that uses no tool starts no server", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const marker = join(repo.root, "..", "starts");
    const config = mcpConfig(repo, { counted: { command: "sh", args: ["-c", `echo x >> ${marker}; exec ${NODE} ${EVERYTHING} stdio`] } });
    const fake = await server([{ text: "One." }, { text: "Two." }]);
    await runCoder(repo, fake, ["--mcp-config", config, "-m", "First"]);
    const second = await runCoder(repo, fake, ["--mcp-config", config, "-m", "Second"]);
    expect(second.code).toBe(0);
    expect(readFileSync(marker, "utf8")).toBe("x\n");
    // The second request still offered the server's tools, from the cache.
    expect(toolNames(mainRequests(fake)[1])).toContain("counted__echo");
  });
});

// ─── Process groups on every exit path (issue 21 G) ─────────────────────────

/**
 * An --mcp-config whose one server's shell forks `sleep 1000` (its pid in the returned file),
 * then runs `serve`. `quiet`: the helper's output goes to /dev/null, so it holds none of the
 * server's pipes.
 */
function forkingServer(repo: Repo, serve: string, quiet = false): { config: string; pidFile: string } {
  const pidFile = join(repo.root, "..", "helper.pid");
  const config = join(repo.root, "..", "mcp.json");
  const helper = quiet ? "sleep 1000 </dev/null >/dev/null 2>&1 &" : "sleep 1000 &";
  writeFileSync(config, JSON.stringify({ mcpServers: { forks: { command: "sh", args: ["-c", `${helper} echo $! > ${pidFile}; exec ${serve}`] } } }));
  return { config, pidFile };
}

/** The helper's pid, once it has written it. */
async function helperPid(pidFile: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    try {
      const pid = Number(readFileSync(pidFile, "utf8").trim());
      if (pid > 0) return pid;
    } catch {
      // not yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`the MCP server never wrote ${pidFile}`);
}

/** After coder exited: the helper must be gone (a killed process can take a moment to be reaped). */
async function expectGone(pid: number): Promise<void> {
  for (let i = 0; i < 50 && alive(pid); i++) await Bun.sleep(100);
  const left = alive(pid);
  if (left) process.kill(pid, "SIGKILL");
  expect(left).toBe(false);
}

describe("an MCP server's helper process never outlives coder", () => {
  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
    test(`coder stopped by ${signal} mid-request`, async () => {
      const repo = makeRepo({ "a.txt": "a\n" });
      const { config, pidFile } = forkingServer(repo, `${NODE} ${EVERYTHING} stdio`);
      // The model takes its time: the signal arrives while the request waits for it.
      const fake = await server([{ text: "slow", delayMs: 20_000 }]);
      let pid = 0;
      const r = await runCoder(repo, fake, ["--mcp-config", config, "-m", "Hello"], {
        onStart: (proc) => {
          void (async () => {
            pid = await helperPid(pidFile);
            for (let i = 0; i < 400 && mainRequests(fake).length === 0; i++) await Bun.sleep(50);
            proc.kill(signal);
          })();
        },
      });
      expect(r.code).toBe({ SIGTERM: 143, SIGHUP: 129, SIGINT: 130 }[signal]);
      await expectGone(pid);
    });
  }

  for (const quiet of [true, false]) {
    test(`the server dies on its own mid-call: its helper (${quiet ? "output elsewhere" : "holding the server's pipes"}) goes too, and the run goes on`, async () => {
      const repo = makeRepo({ "a.txt": "a\n" });
      const { config, pidFile } = forkingServer(repo, `${process.execPath} ${CRASH_PROXY} ${NODE} ${EVERYTHING} stdio`, quiet);
      const fake = await server([{ toolCalls: [{ name: "forks__echo", arguments: { message: "x" } }] }, { match: "The call failed", text: "The server broke." }]);
      const r = await runCoder(repo, fake, ["--mcp-config", config, "--mcp-tools", "auto", "-m", "Echo"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("The server broke.");
      await expectGone(await helperPid(pidFile));
    });
  }
});
