// Record the bytecode layout profiles scripts/build.ts builds with (`bun scripts/bytecode-order.ts`,
// after `npm run build`): the compiled binary is run the common ways it starts, each with
// BUN_BYTECODE_ORDER_OUT, and Bun writes which functions that run used, in order. Built with
// them, the binary keeps the bytecode those runs use together at the front of its module graph,
// so a run touches fewer of the binary's pages: the trivial task's peak RSS is 3.3 MB lower.
// A profile from an older build still applies (functions it does not name are laid out after),
// so re-record when start-up code has changed much, not on every change.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git } from "./bench-lib.ts";
import { trivialTask } from "./bench-targets.ts";
import { BYTECODE_PROFILES, PROFILE_DIR, profilePath } from "./build.ts";

const ROOT = join(import.meta.dir, "..");
const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));
const BIN = process.env.CODER_BIN ?? join(ROOT, "dist", "coder");
type Profile = (typeof BYTECODE_PROFILES)[number];

async function record(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "coder-bytecode-order-"));
  const { repo, home, head, server, argv } = trivialTask(base);
  const env = (name: Profile) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, NO_COLOR: "1", BUN_BYTECODE_ORDER_OUT: profilePath(name) });
  mkdirSync(PROFILE_DIR, { recursive: true });
  try {
    // The one-shot task (the second run: the first fills the repo map's and the grammars' caches).
    const task = argv(BIN);
    for (let i = 0; i < 2; i++) {
      git(repo, "reset", "-q", "--hard", head);
      const proc = Bun.spawn(task, { cwd: repo, env: env("task"), stdout: "ignore", stderr: "pipe" });
      if ((await proc.exited) !== 0) throw new Error(`the task failed: ${await new Response(proc.stderr).text()}`);
    }
    const version = Bun.spawnSync([BIN, "--version"], { cwd: repo, env: env("version"), stdout: "ignore" });
    if (version.exitCode !== 0) throw new Error("coder --version failed");
    // `coder map` with its cache warm (the task above filled it): the map's start, its stat and keys.
    const map = Bun.spawnSync([BIN, "map", "app.py"], { cwd: repo, env: env("map"), stdout: "ignore", stderr: "pipe" });
    if (map.exitCode !== 0) throw new Error(`coder map failed: ${map.stderr.toString()}`);
    // The REPL up to its prompt, in a pseudo-terminal (util-linux `script`), then Ctrl-D.
    if (SCRIPT) {
      const repl = [BIN, "--api-base", "http://127.0.0.1:9/v1"].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
      const proc = Bun.spawn([SCRIPT, "-qfec", `exec ${repl}`, "/dev/null"], { cwd: repo, env: { ...env("repl"), TERM: "xterm-256color", OPENAI_API_KEY: "sk-profile" }, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
      const decoder = new TextDecoder();
      let shown = "";
      let ended = false;
      for await (const chunk of proc.stdout) {
        shown += decoder.decode(chunk);
        if (!ended && shown.includes("\x1b[?2004h")) {
          ended = true;
          proc.stdin.write("\x04");
          proc.stdin.flush();
        }
      }
      if ((await proc.exited) !== 0) throw new Error(`the REPL failed: ${shown.slice(-300)}`);
    } else console.log("the REPL's profile is not recorded: util-linux `script` is missing");
    // `coder acp` up to its answer to initialize.
    const acp = Bun.spawn([BIN, "acp"], { cwd: repo, env: env("acp"), stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    acp.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
    acp.stdin.flush();
    const decoder = new TextDecoder();
    let seen = "";
    for await (const chunk of acp.stdout) {
      seen += decoder.decode(chunk);
      if (/"id":1[,}]/.test(seen) && seen.includes("\n")) break;
    }
    // Closing its input ends the agent (the profile is written at exit).
    acp.stdin.end();
    const stop = setTimeout(() => acp.kill(), 5000);
    await acp.exited;
    clearTimeout(stop);
  } finally {
    server.stop();
    rmSync(base, { recursive: true, force: true });
  }
  writeFileSync(join(PROFILE_DIR, "README.md"), "Bytecode layout profiles for scripts/build.ts, recorded by `bun scripts/bytecode-order.ts` (see there).\n");
  for (const name of BYTECODE_PROFILES) console.log(`recorded ${profilePath(name)}`);
}

if (import.meta.main) await record();
