// Helpers the bench sections share (scripts/bench.ts and scripts/bench/*.ts). It lives
// outside scripts/bench/, where every file is run as a section of its own.

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Run git in `cwd`; its trimmed stdout, or an error with its stderr. */
export function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

/** Make `repo` a git repository with everything in it committed by a bench identity. */
export function commitAll(repo: string): void {
  git(repo, "init", "-q");
  git(repo, "config", "user.name", "Bench");
  git(repo, "config", "user.email", "bench@example.com");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "initial");
}
