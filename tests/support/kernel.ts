// Helpers for end-to-end tests of the built binary: temp homes and repositories,
// and running dist/coder with a clean, isolated environment.
import { afterAll } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const REPO = join(import.meta.dir, "..", "..");
export const BIN = process.env.CODER_BIN ?? join(REPO, "dist", "coder");
export const EXAMPLES = join(REPO, "examples", "plugins");

export function requireBinary(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` before the end-to-end tests`);
}

const made: string[] = [];
const removeMade = () => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
};
// This module is loaded once per run: its afterAll belongs to the first test file that imports
// it, so the folders of later files are removed when the run ends.
afterAll(removeMade);
process.on("exit", removeMade);

/** A fresh temp directory (real path), removed after the test file. */
export function tempDir(prefix = "coder-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Write files (path → content) under `dir`, creating folders. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

export const GIT_ENV = {
  GIT_AUTHOR_NAME: "Test Author",
  GIT_AUTHOR_EMAIL: "author@example.com",
  GIT_COMMITTER_NAME: "Test Author",
  GIT_COMMITTER_EMAIL: "author@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
};

/** A sandbox: a home folder (also XDG_CONFIG_HOME's parent) and a git repository inside the temp dir. */
export interface Sandbox {
  home: string;
  /** $XDG_CONFIG_HOME/coder: the global config folder. */
  configDir: string;
  repo: string;
  env: Record<string, string>;
}

export function sandbox(options: { git?: boolean } = {}): Sandbox {
  const base = tempDir();
  const home = join(base, "home");
  const repo = join(base, "repo");
  mkdirSync(join(home, ".config", "coder"), { recursive: true });
  mkdirSync(repo, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    NO_COLOR: "1",
    TERM: "dumb",
    ...GIT_ENV,
  };
  if (options.git !== false) {
    const init = Bun.spawnSync(["git", "init", "-q", "-b", "main", repo], { env });
    if (init.exitCode !== 0) throw new Error(`git init failed: ${init.stderr.toString()}`);
  }
  return { home, configDir: join(home, ".config", "coder"), repo, env };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the binary (not a TTY: stdin is a pipe, closed or fed with `stdin`). */
export async function coder(args: string[], options: { cwd: string; env: Record<string, string>; stdin?: string; bin?: string }): Promise<RunResult> {
  const proc = Bun.spawn([options.bin ?? BIN, ...args], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: options.cwd,
    env: options.env,
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A sandbox whose repository holds `files`, committed, and a `plugins` folder beside it holding `plugins`. */
export function committedSandbox(files: Record<string, string>, plugins: Record<string, string> = {}): Sandbox & { plugin: (file: string) => string } {
  const s = sandbox();
  writeFiles(s.repo, files);
  git(s.repo, ["add", "-A"], s.env);
  git(s.repo, ["commit", "-q", "-m", "init"], s.env);
  const dir = join(s.repo, "..", "plugins");
  mkdirSync(dir, { recursive: true });
  writeFiles(dir, plugins);
  return { ...s, plugin: (file) => join(dir, file) };
}

export function git(repo: string, args: string[], env: Record<string, string>): string {
  const r = Bun.spawnSync(["git", ...args], { cwd: repo, env });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

export function sha256(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}
