// install.sh end to end: it fetches this machine's build of dist/coder from a release server on
// 127.0.0.1 (GitHub's layout), checks it against SHA256SUMS, installs it and runs it; and every
// failure (tampered asset, unknown version, missing build, unknown platform, no downloader)
// is one line on stderr, a non-zero exit and nothing installed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO, tempDir } from "./support/kernel.ts";
import { VERSION, hostPlatform, startReleaseServer, type ReleaseServer } from "./support/release-server.ts";

const INSTALL_SH = join(REPO, "install.sh");
const platform = hostPlatform();
let server: ReleaseServer;

beforeAll(() => {
  if (platform) server = startReleaseServer(platform);
});
afterAll(() => server?.stop());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run install.sh with `shell` (as a file, or fed on stdin as `curl ... | sh` does). */
async function install(env: Record<string, string>, options: { shell?: string[]; stdin?: boolean } = {}): Promise<Run> {
  const shell = options.shell ?? ["sh"];
  const home = tempDir("coder-install-home-");
  const [command, ...args] = shell;
  const executable = Bun.which(command!) ?? command!;
  const proc = Bun.spawn(options.stdin ? [executable, ...args] : [executable, ...args, INSTALL_SH], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SHELL: "/bin/sh", ...env },
    stdin: options.stdin ? Bun.file(INSTALL_SH) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

function sha256(path: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
}

/** A refusal: non-zero, exactly one line on stderr matching `pattern`, nothing on stdout. */
function expectRefusal(run: Run, pattern: RegExp): void {
  expect(run.code).not.toBe(0);
  expect(run.stdout).toBe("");
  const lines = run.stderr.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^coder install: /);
  expect(lines[0]).toMatch(pattern);
}

/** A folder of symlinks to the given commands only (the ones found on this machine). */
function pathWith(commands: string[]): string {
  const dir = tempDir("coder-install-path-");
  for (const command of commands) {
    const found = Bun.which(command);
    if (found) symlinkSync(found, join(dir, command));
  }
  return dir;
}

// Every external command install.sh may run on Linux, bar the downloaders and hashers.
const BASE_TOOLS = ["uname", "mktemp", "rm", "sed", "head", "awk", "mkdir", "cp", "chmod", "mv", "basename", "grep", "ldd"];

// Each install copies and hashes the whole binary (~180 MB) a few times: allow for a busy machine.
const SLOW = 180_000;

describe.skipIf(!platform)("install.sh", () => {
  test("installs this machine's binary from the latest GitHub release, runs it, and says how to put it on PATH", async () => {
    const dir = join(tempDir(), "home", ".local", "bin");
    const run = await install({ CODER_DOWNLOAD_BASE: `${server.origin}/releases/download/`, CODER_INSTALL_DIR: dir });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`coder ${VERSION} installed at ${dir}/coder\n`);
    expect(run.stdout).toContain(`${dir} is not on your PATH`);
    expect(run.stdout).toContain(`export PATH="${dir}:$PATH"`);
    // The latest release is found from its SHA256SUMS, then that version's files are fetched.
    expect(server.requests.slice(-3)).toEqual([
      "/releases/latest/download/SHA256SUMS",
      `/releases/download/v${VERSION}/SHA256SUMS`,
      `/releases/download/v${VERSION}/${server.asset}`,
    ]);
    expect(readdirSync(dir)).toEqual(["coder"]);
    expect(sha256(join(dir, "coder"))).toBe(server.sha256);
    expect(statSync(join(dir, "coder")).mode & 0o777).toBe(0o755);
    const version = Bun.spawnSync([join(dir, "coder"), "--version"]);
    expect(version.stdout.toString().trim()).toBe(`coder ${VERSION}`);
  }, SLOW);

  test("from a mirror (latest read from <base>/latest/SHA256SUMS) it replaces an older binary in a directory on PATH", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "coder"), "#!/bin/sh\necho coder 0.0.1\n");
    chmodSync(join(dir, "coder"), 0o755);
    const run = await install({
      CODER_DOWNLOAD_BASE: `${server.origin}/mirror`,
      CODER_INSTALL_DIR: dir,
      PATH: `${dir}:${process.env.PATH}`,
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`coder ${VERSION} installed at ${dir}/coder\n`);
    expect(server.requests.slice(-3)).toEqual([
      "/mirror/latest/SHA256SUMS",
      `/mirror/v${VERSION}/SHA256SUMS`,
      `/mirror/v${VERSION}/${server.asset}`,
    ]);
    expect(readdirSync(dir)).toEqual(["coder"]);
    expect(sha256(join(dir, "coder"))).toBe(server.sha256);
  }, SLOW);

  test("a tampered asset is refused in one line, and nothing is installed or replaced", async () => {
    const fresh = join(tempDir(), "bin");
    expectRefusal(
      await install({ CODER_DOWNLOAD_BASE: `${server.origin}/tampered`, CODER_INSTALL_DIR: fresh, CODER_VERSION: VERSION }),
      new RegExp(`checksum mismatch for ${server.asset}: SHA256SUMS says ${server.sha256}, the download is [0-9a-f]{64}; nothing was installed`),
    );
    expect(existsSync(fresh)).toBe(false);

    const existing = tempDir();
    writeFileSync(join(existing, "coder"), "#!/bin/sh\necho coder 0.0.1\n");
    expectRefusal(
      await install({ CODER_DOWNLOAD_BASE: `${server.origin}/tampered`, CODER_INSTALL_DIR: existing, CODER_VERSION: VERSION }),
      /checksum mismatch/,
    );
    expect(readdirSync(existing)).toEqual(["coder"]);
    expect(readFileSync(join(existing, "coder"), "utf8")).toBe("#!/bin/sh\necho coder 0.0.1\n");
  }, SLOW);

  test("an unknown version fails cleanly", async () => {
    const dir = join(tempDir(), "bin");
    expectRefusal(
      await install({ CODER_DOWNLOAD_BASE: `${server.origin}/releases/download`, CODER_INSTALL_DIR: dir, CODER_VERSION: "9.9.9" }),
      new RegExp(`could not download ${server.origin}/releases/download/v9\\.9\\.9/SHA256SUMS: is 9\\.9\\.9 a released version of coder\\?$`),
    );
    expect(existsSync(dir)).toBe(false);
    expectRefusal(
      await install({ CODER_DOWNLOAD_BASE: `${server.origin}/releases/download`, CODER_INSTALL_DIR: dir, CODER_VERSION: "../../etc" }),
      /CODER_VERSION=\.\.\/\.\.\/etc is not a version such as 0\.1\.0/,
    );
    expect(existsSync(dir)).toBe(false);
  }, SLOW);

  test("a release without this platform's build (musl detected too), and an unknown platform, fail in one line", async () => {
    const dir = join(tempDir(), "bin");
    expectRefusal(
      await install({ CODER_DOWNLOAD_BASE: `${server.origin}/other-platforms`, CODER_INSTALL_DIR: dir, CODER_VERSION: VERSION }),
      new RegExp(`release v${VERSION.replace(/\./g, "\\.")} has no coder build for ${platform!.suffix} \\(${server.asset} is not in its SHA256SUMS\\)`),
    );
    const fake = tempDir("coder-fake-uname-");
    const uname = (system: string, machine: string) => {
      writeFileSync(join(fake, "uname"), `#!/bin/sh\ncase "$1" in -m) echo ${machine} ;; *) echo ${system} ;; esac\n`);
      chmodSync(join(fake, "uname"), 0o755);
    };
    const env = { CODER_DOWNLOAD_BASE: `${server.origin}/releases/download`, CODER_INSTALL_DIR: dir, PATH: `${fake}:${process.env.PATH}` };
    const requested = server.requests.length;
    uname("SunOS", "sun4v");
    expectRefusal(await install(env), /no coder build for this operating system \(SunOS\)/);
    uname("Linux", "riscv64");
    expectRefusal(await install(env), /no coder build for this processor \(riscv64 on Linux\)/);
    uname("MINGW64_NT-10.0", "x86_64");
    expectRefusal(await install(env), /run install\.ps1 in PowerShell instead/);
    expect(existsSync(dir)).toBe(false);
    expect(server.requests.length).toBe(requested); // refused before any download

    // musl is detected (here through ldd, as on a musl system without /lib/ld-musl-*): the
    // musl build is asked for, which this release's SHA256SUMS does not list.
    if (platform!.os === "linux" && !platform!.musl) {
      const musl = tempDir("coder-fake-ldd-");
      writeFileSync(join(musl, "ldd"), "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.5' >&2\nexit 1\n");
      chmodSync(join(musl, "ldd"), 0o755);
      expectRefusal(
        await install({ ...env, PATH: `${musl}:${process.env.PATH}`, CODER_VERSION: VERSION }),
        new RegExp(`has no coder build for ${platform!.suffix}-musl \\(coder-${VERSION.replace(/\./g, "\\.")}-${platform!.suffix}-musl is not in its SHA256SUMS\\)`),
      );
    }
  }, SLOW);

  test("a pinned version (v prefix allowed) works with wget and shasum when curl and sha256sum are absent; no downloader is refused", async () => {
    if (!Bun.which("wget") || !Bun.which("shasum")) {
      console.log("skipped: wget or shasum is not installed here");
      return;
    }
    const dir = tempDir();
    const run = await install({
      CODER_DOWNLOAD_BASE: `${server.origin}/releases/download`,
      CODER_INSTALL_DIR: dir,
      CODER_VERSION: `v${VERSION}`,
      PATH: pathWith([...BASE_TOOLS, "wget", "shasum"]),
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(server.requests.slice(-2)).toEqual([`/releases/download/v${VERSION}/SHA256SUMS`, `/releases/download/v${VERSION}/${server.asset}`]);
    expect(sha256(join(dir, "coder"))).toBe(server.sha256);

    const none = join(tempDir(), "bin");
    expectRefusal(
      await install({ CODER_DOWNLOAD_BASE: `${server.origin}/releases/download`, CODER_INSTALL_DIR: none, PATH: pathWith([...BASE_TOOLS, "sha256sum"]) }),
      /neither curl nor wget is installed/,
    );
    expect(existsSync(none)).toBe(false);
  }, SLOW);

  // dash is the strictest common /bin/sh (Debian's, Ubuntu's); posh and busybox also run it when present.
  test("runs under dash, fed on stdin as `curl ... | sh` does (and under posh and busybox sh where installed)", async () => {
    if (!Bun.which("dash")) {
      console.log("skipped: dash is not installed here (apt-get install dash; .ci/run installs it)");
      return;
    }
    const shells = [["dash"], ...(Bun.which("posh") ? [["posh"]] : []), ...(Bun.which("busybox") ? [["busybox", "sh"]] : [])];
    for (const shell of shells) {
      const dir = join(tempDir(), "bin");
      mkdirSync(dir);
      const env = { CODER_DOWNLOAD_BASE: `${server.origin}/releases/download`, CODER_INSTALL_DIR: dir };
      const run = await install(env, { shell, stdin: true });
      expect({ shell: shell.join(" "), stderr: run.stderr, code: run.code }).toEqual({ shell: shell.join(" "), stderr: "", code: 0 });
      expect(run.stdout).toContain(`coder ${VERSION} installed at ${dir}/coder`);
      expect(sha256(join(dir, "coder"))).toBe(server.sha256);
      const tampered = join(tempDir(), "bin");
      expectRefusal(
        await install({ ...env, CODER_DOWNLOAD_BASE: `${server.origin}/tampered`, CODER_INSTALL_DIR: tampered, CODER_VERSION: VERSION }, { shell }),
        /checksum mismatch/,
      );
      expect(existsSync(tampered)).toBe(false);
    }
  }, SLOW);
});

test("install.sh passes shellcheck as POSIX sh (where shellcheck is installed)", () => {
  if (!Bun.which("shellcheck")) {
    console.log("skipped: shellcheck is not installed here (apt-get install shellcheck)");
    return;
  }
  const result = Bun.spawnSync(["shellcheck", "--shell=sh", "--severity=warning", INSTALL_SH], { stdout: "pipe", stderr: "pipe" });
  expect(result.stdout.toString() + result.stderr.toString()).toBe("");
  expect(result.exitCode).toBe(0);
});
