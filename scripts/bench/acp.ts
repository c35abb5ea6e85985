// Bench section "acp": `coder acp` beside the CLI's one-shot run, on the same generated
// 200-file repository against a model that answers instantly. For the agent: spawn →
// `initialize` answered, `session/new` answered, and `session/prompt` → the first request
// at the model server (the first prompt of the process, then a second one in the same
// session), with the prompt sent at once and after a pause. For the CLI: launch → first
// request of `coder -m`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { median, git } from "../bench-lib.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = process.env.CODER_BIN ?? join(ROOT, "dist", "coder");
const RUNS = Math.max(5, Number(process.env.BENCH_ACP_RUNS ?? 10));
const FILES = 200;
/** How long "the user types" before the first prompt, in the second set of agent runs. */
const PAUSE_MS = 1000;

function generateRepo(dir: string): void {
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  for (let i = 0; i < FILES; i++) {
    const dep = (i * 7 + 3) % FILES;
    write(`pkg${i % 10}/mod${i}.py`, `from pkg${dep % 10}.mod${dep} import compute_${dep}\n\n\ndef compute_${i}(value):\n    return compute_${dep}(value) + ${i}\n`);
  }
  write("app.py", "LIMIT = 1\n");
  write(".gitignore", ".coder/\n");
  git(dir, "init", "-q");
  git(dir, "config", "user.name", "Bench");
  git(dir, "config", "user.email", "bench@example.com");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "initial");
}

/** An instant endpoint that notes when each main-model request arrives; it answers with no edit (nothing to commit). */
function instantServer() {
  const state = { arrivals: [] as number[] };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const arrived = performance.now();
      const body = (await req.json()) as { model: string };
      if (!body.model.includes("weak")) state.arrivals.push(arrived);
      const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      return new Response(`${chunk({ role: "assistant", content: "Done." }, null)}${chunk({}, "stop")}data: [DONE]\n\n`, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, state, stop: () => server.stop(true) };
}

interface AgentRun {
  init: number;
  created: number;
  first: number;
  second: number;
}

/** One agent process: initialize, session/new, then two prompts in the session (the first `pauseMs` after it opened). */
async function agentRun(repo: string, env: Record<string, string>, flags: string[], server: ReturnType<typeof instantServer>, pauseMs: number): Promise<AgentRun> {
  server.state.arrivals = [];
  const launched = performance.now();
  const proc = Bun.spawn([BIN, "acp", ...flags], { cwd: repo, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const sink = proc.stdin as import("bun").FileSink;
  const toAgent = new WritableStream<Uint8Array>({ write: async (c) => void (sink.write(c), await sink.flush()) });
  const connection = acp.client({ name: "bench" }).onNotification(acp.methods.client.session.update, () => {}).connect(acp.ndJsonStream(toAgent, proc.stdout as ReadableStream<Uint8Array>));
  const agent = connection.agent;
  await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const initialized = performance.now();
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: repo, mcpServers: [] });
  const sessionReady = performance.now();
  if (pauseMs) await Bun.sleep(pauseMs);
  const link: acp.ContentBlock = { type: "resource_link", uri: pathToFileURL(join(repo, "app.py")).href, name: "app.py" };
  let sent = performance.now();
  await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Raise LIMIT to 2." }, link] });
  const first = (server.state.arrivals[0] ?? Number.NaN) - sent;
  sent = performance.now();
  await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "And again." }] });
  const second = (server.state.arrivals[1] ?? Number.NaN) - sent;
  connection.close();
  sink.end();
  await proc.exited;
  return { init: initialized - launched, created: sessionReady - initialized, first, second };
}

/** One `coder -m` run: launch → the first request at the server. */
async function cliRun(repo: string, env: Record<string, string>, flags: string[], server: ReturnType<typeof instantServer>): Promise<number> {
  server.state.arrivals = [];
  const launched = performance.now();
  const proc = Bun.spawn([BIN, ...flags, "--no-pretty", "-m", "Raise LIMIT to 2.", "app.py"], { cwd: repo, env, stdout: "ignore", stderr: "pipe" });
  if ((await proc.exited) !== 0) throw new Error(`coder -m failed: ${await new Response(proc.stderr).text()}`);
  return (server.state.arrivals[0] ?? Number.NaN) - launched;
}

export default async function run(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "coder-bench-acp-"));
  const repo = join(base, "repo");
  const home = join(base, "home");
  mkdirSync(repo, { recursive: true });
  mkdirSync(home, { recursive: true });
  const server = instantServer();
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
  const flags = ["--model", "openai/gpt-4.1", "--weak-model", "openai/weak", "--api-base", server.url, "--api-key", "sk-bench"];
  try {
    generateRepo(repo);
    // The three kinds of run take turns, so a machine whose load changes weighs on each alike.
    const cli: number[] = [];
    const atOnce: AgentRun[] = [];
    const paused: AgentRun[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const c = await cliRun(repo, env, flags, server);
      const a = await agentRun(repo, env, flags, server, 0);
      const p = await agentRun(repo, env, flags, server, PAUSE_MS);
      if (i === 0) continue; // warm-up: fills the repo-map cache
      cli.push(c);
      atOnce.push(a);
      paused.push(p);
    }
    const row = (label: string, values: number[]) => console.log(`  ${label.padEnd(52)}${median(values).toFixed(1).padStart(7)} ms`);
    console.log(`## acp: coder acp beside coder -m, ${FILES}-file repository, instant model, warm cache (median of ${RUNS} runs)`);
    row("coder -m: launch → first request", cli);
    for (const [when, runs] of [["prompt sent at once", atOnce], [`prompt sent ${PAUSE_MS} ms after session/new (the user types)`, paused]] as const) {
      console.log(`  coder acp, ${when}:`);
      row("  spawn → initialize answered", runs.map((r) => r.init));
      row("  session/new answered (after initialize)", runs.map((r) => r.created));
      row("  1st session/prompt → its first model request", runs.map((r) => r.first));
      row("  2nd session/prompt → its model request", runs.map((r) => r.second));
    }
  } finally {
    server.stop();
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.main) await run();
