// Temp git repositories for the git/gate tests: a private HOME (no global git
// config leaks in), a fixed identity in the environment, and small git helpers.

import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const IDENTITY = {
  GIT_AUTHOR_NAME: "Test User",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test User",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

/** Point HOME at a fresh temp dir and set a git identity in process.env (git.ts spawns with process.env). */
export function isolateGitEnv(withIdentity = true): string {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "coder-home-")));
  process.env.HOME = home;
  process.env.XDG_CONFIG_HOME = join(home, ".config");
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  delete process.env.GIT_CONFIG_GLOBAL;
  delete process.env.EMAIL;
  for (const [k, v] of Object.entries(IDENTITY)) {
    if (withIdentity) process.env[k] = v;
    else delete process.env[k];
  }
  return home;
}

export function sh(cwd: string, args: string[], env: Record<string, string> = {}): string {
  const p = Bun.spawnSync(["git", ...args], { cwd, env: { ...process.env, ...env } });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

export function write(root: string, rel: string, text: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

/** A new repository with one commit holding `files`. */
export function makeRepo(files: Record<string, string> = { "README.md": "# demo\n" }): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-repo-")));
  sh(root, ["init", "-q", "-b", "main"]);
  for (const [rel, text] of Object.entries(files)) write(root, rel, text);
  if (Object.keys(files).length) {
    sh(root, ["add", "-A"]);
    sh(root, ["commit", "-q", "-m", "initial"]);
  }
  return root;
}

export function head(root: string): string {
  return sh(root, ["rev-parse", "HEAD"]).trim();
}

export function log(root: string, format = "%s"): string[] {
  return sh(root, ["log", `--format=${format}`]).trim().split("\n");
}

export function filesIn(root: string, rev = "HEAD"): string[] {
  return sh(root, ["diff-tree", "--no-commit-id", "--name-only", "-r", rev]).trim().split("\n").filter(Boolean);
}
