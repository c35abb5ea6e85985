// The package-manager channels: the npm wrapper and this machine's platform package, filled
// from a release directory by scripts/package-npm.ts, packed with `npm pack` and installed from
// the tarballs offline, run `coder --version` through the shim; the Homebrew formula carries
// each binary's URL and sha256; and every copy of the repository's name agrees.
import { describe, expect, test } from "bun:test";
import { Language, Parser, type Node } from "web-tree-sitter";
import { readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOMEBREW_TAP } from "../scripts/package-homebrew.ts";
import { GITHUB_REPO, NPM_PACKAGE, assetName } from "../scripts/release-lib.ts";
import { makeRepo, removeRepos, serverWith } from "./engine-harness.ts";
import { BIN, REPO, requireBinary, tempDir } from "./support/kernel.ts";
import { SCRIPT, inTerminal } from "./support/pty.ts";
import { VERSION, hostPlatform } from "./support/release-server.ts";

const platform = hostPlatform();

function run(command: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const result = Bun.spawnSync(command, {
    cwd: options.cwd ?? REPO,
    env: { ...process.env, ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** A release directory holding dist/coder as this machine's asset, and its SHA256SUMS. */
function hostRelease(): string {
  requireBinary();
  const dir = tempDir("coder-release-");
  const asset = assetName(VERSION, `bun-${platform!.suffix}`);
  symlinkSync(BIN, join(dir, asset));
  const sha = new Bun.CryptoHasher("sha256").update(readFileSync(BIN)).digest("hex");
  writeFileSync(join(dir, "SHA256SUMS"), `${sha}  ${asset}\n`);
  return dir;
}

/**
 * npm, offline, with a private cache, never touching the user's config or the registry; without
 * the npm_* variables of an enclosing `npm test`, which would point it at this repository.
 */
function npm(args: string[], cwd: string, cache: string) {
  const [command, ...rest] = args;
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))) as Record<string, string>;
  const result = Bun.spawnSync(["npm", command!, "--offline", "--no-audit", "--no-fund", "--cache", cache, "--loglevel", "error", ...rest], {
    cwd,
    env: { ...env, npm_config_userconfig: join(cache, "npmrc"), npm_config_update_notifier: "false" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

describe.skipIf(!platform)("npm packages", () => {
  test(
    "the wrapper and this machine's platform package, packed and installed from tarballs, run coder --version through the shim",
    async () => {
      const release = hostRelease();
      const out = tempDir("coder-npm-");
      const fill = run([process.execPath, "scripts/package-npm.ts", "--from", release, "--out", out, "--only", platform!.suffix]);
      expect(fill.stderr).toBe("");
      expect(fill.code).toBe(0);
      expect(readdirSync(out).sort()).toEqual(["coder", `coder-${platform!.suffix}`]);

      const wrapper = JSON.parse(readFileSync(join(out, "coder", "package.json"), "utf8"));
      expect(wrapper.name).toBe(NPM_PACKAGE);
      expect(wrapper.version).toBe(VERSION);
      expect(wrapper.bin).toEqual({ coder: "bin/coder.js" });
      expect(Object.keys(wrapper.optionalDependencies)).toHaveLength(7);
      expect(wrapper.optionalDependencies[`${NPM_PACKAGE}-${platform!.suffix}`]).toBe(VERSION);
      const native = JSON.parse(readFileSync(join(out, `coder-${platform!.suffix}`, "package.json"), "utf8"));
      expect(native).toMatchObject({ name: `${NPM_PACKAGE}-${platform!.suffix}`, version: VERSION, os: [platform!.os], cpu: [platform!.arch] });

      const work = tempDir("coder-npm-work-");
      const cache = join(work, "cache");
      const packed = npm(["pack", join(out, "coder"), join(out, `coder-${platform!.suffix}`), "--pack-destination", work], work, cache);
      expect(packed.code).toBe(0);
      const tarballs = readdirSync(work).filter((name) => name.endsWith(".tgz")).map((name) => join(work, name));
      expect(tarballs).toHaveLength(2);

      // The other platforms' packages are not published here: npm skips those optional dependencies.
      const prefix = join(work, "prefix");
      const installed = npm(["install", "--prefix", prefix, ...tarballs], work, cache);
      expect(installed.code).toBe(0);
      const shim = join(prefix, "node_modules", ".bin", "coder");
      const version = run([shim, "--version"], { cwd: work });
      expect(version).toEqual({ code: 0, stdout: `coder ${VERSION}\n`, stderr: "" });
      // Arguments and the exit status pass through unchanged.
      const direct = run([BIN, "--no-such-option"], { cwd: work });
      const viaShim = run([shim, "--no-such-option"], { cwd: work });
      expect(direct.code).not.toBe(0);
      expect(viaShim).toEqual(direct);

      // In a terminal, Ctrl-C reaches coder (which aborts the request in flight) and the shim
      // outlives it: the session goes on to a second answer and exits 0.
      if (SCRIPT) {
        const repo = makeRepo({ "a.py": "x = 1\n" });
        const server = await serverWith([
          { model: "gpt-4.1", text: "too late", delayMs: 30_000 },
          { model: "gpt-4.1", text: "Second answer." },
        ]);
        try {
          const args = ["--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", server.url, "--api-key", "sk-test"];
          const terminal = inTerminal([shim, ...args, "--yes-always", "--map-tokens", "0", "a.py"], {
            cwd: repo.root,
            env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), TERM: "dumb", GIT_CONFIG_NOSYSTEM: "1" },
          });
          await terminal.waitFor("> ");
          terminal.send("slow question\r");
          await server.waitForChat(1);
          terminal.send("\x03");
          await terminal.waitFor("stopped before the reply began");
          await terminal.waitFor("> ");
          terminal.send("next question\r");
          await terminal.waitFor("Second answer.");
          await terminal.waitFor("> ");
          terminal.send("/exit\r");
          expect(await terminal.proc.exited).toBe(0);
        } finally {
          await server.stop();
          removeRepos();
        }
      } else {
        console.log("skipped the shim's Ctrl-C check: util-linux script is not installed here");
      }

      // npx (npm exec) from the same tarballs: the way to run coder on a machine with only Node.
      const npx = npm(["exec", "--yes", ...tarballs.map((path) => `--package=${path}`), "--", "coder", "--version"], work, cache);
      expect(npx).toMatchObject({ code: 0, stdout: `coder ${VERSION}\n` });

      // Without the platform package (optional dependencies omitted) the shim says what is missing.
      const bare = join(work, "bare");
      expect(npm(["install", "--prefix", bare, tarballs.find((path) => !path.includes(platform!.suffix))!], work, cache).code).toBe(0);
      const missing = run([join(bare, "node_modules", ".bin", "coder"), "--version"], { cwd: work });
      expect(missing.code).toBe(1);
      expect(missing.stdout).toBe("");
      expect(missing.stderr).toBe(
        `coder: the package ${NPM_PACKAGE}-${platform!.suffix} (coder's binary for ${platform!.suffix}) is not installed. ` +
          `npm skips it when optional dependencies are omitted: reinstall ${NPM_PACKAGE} without --omit=optional or --no-optional.\n`,
      );
    },
    300_000,
  );

  test("the fill script refuses a binary that does not match SHA256SUMS, and a release missing a platform", () => {
    const release = tempDir("coder-release-");
    const asset = assetName(VERSION, `bun-${platform!.suffix}`);
    writeFileSync(join(release, asset), "not the released binary\n");
    writeFileSync(join(release, "SHA256SUMS"), `${"a".repeat(64)}  ${asset}\n`);
    const out = tempDir("coder-npm-");
    const tampered = run([process.execPath, "scripts/package-npm.ts", "--from", release, "--out", out, "--only", platform!.suffix]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toMatch(new RegExp(`^package-npm: .*/${asset} does not match SHA256SUMS \\(sha256 [0-9a-f]{64}, expected a{64}\\)\\n$`));
    // This platform's binary now matches; the other six are missing.
    const sha = new Bun.CryptoHasher("sha256").update("not the released binary\n").digest("hex");
    writeFileSync(join(release, "SHA256SUMS"), `${sha}  ${asset}\n`);
    const all = run([process.execPath, "scripts/package-npm.ts", "--from", release, "--out", out]);
    expect(all.code).toBe(1);
    expect(all.stderr).toMatch(/^package-npm: coder-[^ ]+ is not listed in .*SHA256SUMS\n$/);
  });
});

describe("Homebrew formula", () => {
  const suffixes = ["linux-x64", "linux-arm64", "linux-x64-musl", "linux-arm64-musl", "darwin-x64", "darwin-arm64", "windows-x64"];
  const sums = new Map(suffixes.map((suffix, index) => [assetName(VERSION, `bun-${suffix}`), String(index + 1).repeat(64)]));
  const sumsText = [...sums].map(([name, sha]) => `${sha}  ${name}`).join("\n") + "\n";

  test("carries each macOS and Linux binary's release URL and its sha256 from SHA256SUMS", () => {
    const dir = tempDir("coder-brew-");
    writeFileSync(join(dir, "SHA256SUMS"), sumsText);
    const out = join(dir, "formula", "coder.rb");
    const fill = run([process.execPath, "scripts/package-homebrew.ts", "--sums", join(dir, "SHA256SUMS"), "--out", out]);
    expect(fill.code).toBe(0);
    const formula = readFileSync(out, "utf8");
    expect(formula).not.toContain("{{");
    expect(formula).toContain(`version "${VERSION}"`);
    const pairs = [...formula.matchAll(/url "([^"]+)"\n\s+sha256 "([0-9a-f]{64})"/g)].map((match) => [match[1], match[2]]);
    expect(pairs).toEqual(
      ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64"].map((suffix) => {
        const asset = assetName(VERSION, `bun-${suffix}`);
        return [`https://github.com/${GITHUB_REPO}/releases/download/v${VERSION}/${asset}`, sums.get(asset)];
      }),
    );
    if (Bun.which("ruby")) {
      expect(run(["ruby", "-c", out])).toMatchObject({ code: 0, stdout: "Syntax OK\n" });
    } else {
      console.log("skipped the formula's Ruby syntax check: ruby is not installed here");
    }
  });

  test("refuses SHA256SUMS without a binary the formula needs", () => {
    const dir = tempDir("coder-brew-");
    const incomplete = sumsText
      .split("\n")
      .filter((line) => !line.endsWith("-darwin-arm64"))
      .join("\n");
    writeFileSync(join(dir, "SHA256SUMS"), incomplete);
    const fill = run([process.execPath, "scripts/package-homebrew.ts", "--sums", join(dir, "SHA256SUMS"), "--out", join(dir, "coder.rb")]);
    expect(fill.code).toBe(1);
    expect(fill.stderr).toBe(
      `package-homebrew: SHA256SUMS has no ${assetName(VERSION, "bun-darwin-arm64")}: the formula needs every macOS and Linux (glibc) binary\n`,
    );
  });
});

test("install.sh, install.ps1 and README name the repository, tap and npm package that scripts/release-lib.ts defines", () => {
  const installSh = readFileSync(join(REPO, "install.sh"), "utf8");
  const installPs1 = readFileSync(join(REPO, "install.ps1"), "utf8");
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  expect(installSh).toContain(`\nCODER_GITHUB_REPO="${GITHUB_REPO}"\n`);
  expect(installPs1).toContain(`\n$CoderGitHubRepo = '${GITHUB_REPO}'\n`);
  for (const [name, text] of [
    ["install.sh", installSh],
    ["install.ps1", installPs1],
    ["README.md", readme],
  ] as const) {
    const repos = [...text.matchAll(/github\.com\/([\w.-]+\/[\w.-]+)\/releases\//g)].map((match) => match[1]);
    expect(repos.length).toBeGreaterThan(0);
    expect({ name, repos: [...new Set(repos)] }).toEqual({ name, repos: [GITHUB_REPO] });
  }
  expect(readme).toContain(`https://github.com/${GITHUB_REPO}/releases/latest/download/install.sh | sh`);
  expect(readme).toContain(`npm install -g ${NPM_PACKAGE}`);
  expect(readme).toContain(`brew install ${HOMEBREW_TAP}/coder`);
  expect([...readme.matchAll(/--repo ([\w.-]+\/[\w.-]+)/g)].map((match) => match[1])).toEqual([GITHUB_REPO]);
  expect([...readme.matchAll(/([\w.-]+)\/homebrew-tap/g)].map((match) => match[1])).toEqual([HOMEBREW_TAP.split("/")[0]]);
  expect(readme).toContain("`scripts/release-lib.ts`");
});

// No PowerShell runs here, so install.ps1 is checked by parsing it with PowerShell's
// tree-sitter grammar: a syntax error is an ERROR or MISSING node.
test("install.ps1 parses as PowerShell and reads the same settings as install.sh", async () => {
  await Parser.init();
  const language = await Language.load(join(REPO, "node_modules", "tree-sitter-powershell", "tree-sitter-powershell.wasm"));
  const parser = new Parser();
  parser.setLanguage(language);
  const problems = (source: string): string[] => {
    const found: string[] = [];
    const walk = (node: Node) => {
      if (node.isError || node.isMissing) found.push(`${node.startPosition.row + 1}: ${node.type} ${node.text.split("\n")[0]}`);
      for (const child of node.children) if (child) walk(child);
    };
    walk(parser.parse(source)!.rootNode);
    return found;
  };
  const script = readFileSync(join(REPO, "install.ps1"), "utf8");
  expect(problems(script)).toEqual([]);
  // The check can fail: the same script with an if's closing parenthesis removed does not parse.
  expect(problems(script.replace("if ($actual -ne $expected) {", "if ($actual -ne $expected {")).length).toBeGreaterThan(0);
  for (const setting of ["CODER_VERSION", "CODER_INSTALL_DIR", "CODER_DOWNLOAD_BASE"]) {
    expect(script).toContain(`$env:${setting}`);
    expect(readFileSync(join(REPO, "install.sh"), "utf8")).toContain(`\${${setting}`);
  }
  expect(script).toContain('$asset = "coder-$version-$platform.exe"');
  expect(script).toContain("$base/v$version/SHA256SUMS");
});
