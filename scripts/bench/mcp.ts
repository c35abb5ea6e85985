// Bench section "mcp": what MCP servers cost a one-shot request. Wall time of
// `coder -m` against a model that answers at once, with no server, with three
// servers (everything over stdio, filesystem over stdio, everything over
// Streamable HTTP) whose tool lists are not cached yet (they start), and with the
// lists cached (nothing starts); and the prompt tokens each offered tool adds.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "../../core/chat/tokens.ts";
import { startFakeServer } from "../../tests/support/fake-server.ts";
import { median } from "../bench-lib.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = process.env.CODER_BIN ?? join(ROOT, "dist", "coder");
const RUNS = Math.max(3, Number(process.env.BENCH_MCP_RUNS ?? 7));
const NODE = Bun.which("node") ?? process.execPath;
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

async function startHttpServer(): Promise<{ url: string; child: ChildProcess }> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = probe.port;
  probe.stop(true);
  const child = spawn(NODE, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve) => child.stderr?.on("data", (c: Buffer) => /listening on port/.test(c.toString()) && resolve()));
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "coder-bench-mcp-"));
  const repo = join(base, "repo");
  mkdirSync(repo);
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "home", ".config"), NO_COLOR: "1" };
  Bun.spawnSync(["git", "init", "-q", repo]);
  writeFileSync(join(repo, "a.txt"), "a\n");
  const http = await startHttpServer();
  const config = join(base, "mcp.json");
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] }, files: { command: NODE, args: [FILESYSTEM, repo] }, web: { url: http.url } } }),
  );
  const fake = await startFakeServer([], { whenEmpty: { text: "Nothing to change." } });
  const common = [BIN, "--model", "openai/gpt-4.1", "--api-base", fake.url, "--api-key", "k", "--map-tokens", "0", "--no-pretty", "--no-auto-commits"];
  const time = async (argv: string[], before?: () => void): Promise<number> => {
    const samples: number[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      before?.();
      const started = performance.now();
      const p = Bun.spawn(argv, { cwd: repo, env, stdout: "ignore", stderr: "pipe" });
      const code = await p.exited;
      if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${await new Response(p.stderr).text()}`);
      if (i > 0) samples.push(performance.now() - started);
    }
    return median(samples);
  };
  const dropCache = () => rmSync(join(repo, ".coder", "cache", "mcp"), { recursive: true, force: true });
  try {
    const version = await time([BIN, "--version"]);
    const none = await time([...common, "-m", "hi"]);
    const cold = await time([...common, "--mcp-config", config, "-m", "hi"], dropCache);
    const warm = await time([...common, "--mcp-config", config, "-m", "hi"]);
    const body = fake.chatBodies().at(-1);
    // Measured again last, so machine noise shows as a difference between the two rows.
    const noneAgain = await time([...common, "-m", "hi"]);
    const row = (label: string, ms: number) => `  ${label.padEnd(52)} ${ms.toFixed(0).padStart(6)} ms`;
    console.log(`mcp: start-up (median of ${RUNS} runs, model answers at once)`);
    console.log(row("coder --version", version));
    console.log(row("coder -m hi, no MCP server", none));
    console.log(row("coder -m hi, 3 servers, tool lists not cached (start)", cold));
    console.log(row("coder -m hi, 3 servers, tool lists cached (no start)", warm));
    console.log(row("coder -m hi, no MCP server (again)", noneAgain));

    // Tokens: the tools array of the last request, one tool at a time (o200k, as JSON).
    const tools = (body?.tools ?? []) as { function: { name: string } }[];
    const perTool = tools.map((t) => ({ name: t.function.name, tokens: countTokens(JSON.stringify(t)) }));
    const total = perTool.reduce((s, t) => s + t.tokens, 0);
    const sorted = [...perTool].sort((a, b) => a.tokens - b.tokens);
    console.log(`mcp: prompt tokens of the tools offered (${tools.length} tools from 3 servers, o200k count of each tool's JSON)`);
    console.log(`  total ${total}, per tool median ${median(perTool.map((t) => t.tokens))}, min ${sorted[0]?.tokens} (${sorted[0]?.name}), max ${sorted.at(-1)?.tokens} (${sorted.at(-1)?.name})`);
  } finally {
    await fake.stop();
    http.child.kill("SIGKILL");
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
