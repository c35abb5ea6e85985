// End to end on dist/coder (issue 21, item G): a stdio MCP server that forks a helper
// (`sleep 1000 &`) leaves no process behind, however coder ends (SIGTERM, SIGHUP or SIGINT
// mid-request) and when the server dies on its own first. Checked by the helper's pid.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mainRequests, makeRepo, type Repo, runCoder, serverPerTest } from "./engine-harness.ts";
import { requireBinary } from "./support/kernel.ts";

setDefaultTimeout(90_000);
beforeAll(requireBinary);

const ROOT = join(import.meta.dir, "..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const CRASH_PROXY = join(import.meta.dir, "support/mcp-crash-proxy.ts");
const NODE = Bun.which("node") ?? process.execPath;
const server = serverPerTest();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

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
