// Where a task runs: a temporary git worktree of a commit's parent (history), or a temporary
// copy of an exercise made a repository of its own. Both live in the system's temp folder,
// never in the user's tree; each is removed after its task, and every one still open is
// removed on the way out (also after Ctrl-C) and unregistered from the repository. Every write
// goes through the kit's temp folder, confined to it.
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Kit, SpawnResult, TempFolder } from "../../core/plugin.ts";

/** git with no hooks of the repository (a checkout must not run its post-checkout hook), never a pager or a prompt. */
export async function git(kit: Kit, cwd: string, args: string[], options: { bytes?: boolean; signal?: AbortSignal } = {}): Promise<SpawnResult> {
  const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", LC_ALL: "C" };
  return kit.spawn(["git", "-c", "core.hooksPath=/dev/null", ...args], { cwd, env, bytes: options.bytes, timeoutMs: 120_000, signal: options.signal });
}

export async function gitOk(kit: Kit, cwd: string, args: string[]): Promise<string> {
  const r = await git(kit, cwd, args);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${(r.stderr || r.stdout).trim().split("\n")[0] ?? r.code}`);
  return r.stdout;
}

/** The file in a worktree's temp folder naming the process that made it. */
const OWNER = "coder-eval.pid";

/** The process named in `file` still runs (an unreadable file counts as alive: not ours to remove). */
function ownerAlive(file: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(file, "utf8").trim());
  } catch {
    return true;
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code !== "ESRCH";
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const IDENTITY = ["-c", "user.name=coder eval", "-c", "user.email=eval@coder.invalid", "-c", "commit.gpgsign=false"];

/** The temp folders and worktrees open now, so an interrupted run can remove them all. */
export class Workspaces {
  readonly #open = new Map<string, { folder: TempFolder; dir: string; repo: string | null }>();
  /** Each worker's worktree, kept between its tasks (see `checkout`). */
  readonly #slots = new Map<number, string>();

  constructor(private readonly kit: Kit) {}

  /**
   * Worker `slot`'s worktree, at `commit`: made on its first task, then reset and switched for
   * each next one. Reusing it keeps the files that did not change between the commits as they
   * were, so the repo map's cache in its `.coder/cache/` stays warm (a fresh worktree makes every
   * task map the whole repository again). Everything else the last task left is removed.
   */
  async checkout(repo: string, commit: string, slot: number): Promise<string> {
    const known = this.#slots.get(slot);
    if (known && this.#open.has(join(known, ".."))) {
      await gitOk(this.kit, known, ["reset", "--hard", "--quiet"]);
      await gitOk(this.kit, known, ["clean", "-ffdxq", "-e", "/.coder/"]);
      for (const entry of readdirSafe(join(known, ".coder"))) if (entry !== "cache" && entry !== ".gitignore") this.removeIn(known, `.coder/${entry}`);
      await gitOk(this.kit, known, ["checkout", "--detach", "--quiet", commit]);
      return known;
    }
    const dir = await this.worktree(repo, commit);
    this.#slots.set(slot, dir);
    return dir;
  }

  /** A detached worktree of `commit` of the repository at `repo`, in a new temp folder. */
  async worktree(repo: string, commit: string): Promise<string> {
    const folder = this.kit.tempFolder("eval");
    const base = folder.path;
    const dir = join(base, basename(base)); // the worktree's name in .git/worktrees: unique, so parallel adds never collide
    this.#open.set(base, { folder, dir, repo });
    folder.write(OWNER, String(process.pid));
    await gitOk(this.kit, repo, ["worktree", "add", "--detach", "--quiet", dir, commit]);
    return dir;
  }

  /** A copy of `source` (without the folders named in `leaveOut`) as a new repository with one commit. */
  async copy(source: string, leaveOut: readonly string[]): Promise<string> {
    const folder = this.kit.tempFolder("eval");
    const dir = join(folder.path, "task");
    this.#open.set(folder.path, { folder, dir, repo: null });
    folder.copyIn(source, "task", { skip: leaveOut });
    await gitOk(this.kit, dir, ["init", "--quiet"]);
    await gitOk(this.kit, dir, ["add", "-A"]);
    await gitOk(this.kit, dir, [...IDENTITY, "commit", "--quiet", "--no-verify", "-m", "exercise"]);
    return dir;
  }

  /**
   * Remove the workspace holding `dir`. A worktree is unregistered from its repository first;
   * when git cannot (its folder went missing), `git worktree prune` forgets it. Prune runs only
   * then: it would also forget a worktree of the user's whose folder is on a drive not mounted.
   */
  async remove(dir: string): Promise<void> {
    const base = join(dir, "..");
    const entry = this.#open.get(base);
    if (!entry) return;
    this.#open.delete(base);
    const removed = entry.repo ? (await git(this.kit, entry.repo, ["worktree", "remove", "--force", dir])).code === 0 : true;
    entry.folder.remove();
    if (!removed && entry.repo) await git(this.kit, entry.repo, ["worktree", "prune"]);
  }

  /**
   * Remove the worktrees an earlier run left when it was killed outright (no Ctrl-C to clean
   * up): ours by their temp folder's name, and only when the process that made them is gone.
   */
  async sweep(repo: string): Promise<number> {
    const list = await git(this.kit, repo, ["worktree", "list", "--porcelain"]);
    let removed = 0;
    for (const line of list.stdout.split("\n")) {
      const path = /^worktree (.+)$/.exec(line)?.[1];
      if (!path) continue;
      const base = dirname(path);
      if (!/^coder-eval-[A-Za-z0-9]{6}$/.test(basename(base)) || basename(path) !== basename(base)) continue;
      if (ownerAlive(join(base, OWNER))) continue;
      await git(this.kit, repo, ["worktree", "remove", "--force", path]);
      this.kit.reopenTempFolder("eval", base)?.remove();
      removed++;
    }
    if (removed) await git(this.kit, repo, ["worktree", "prune"]);
    return removed;
  }

  /** Copy the file `source` over `rel` in workspace `dir` (a link the task left at that name is replaced, not written through). */
  copyInto(dir: string, source: string, rel: string): void {
    this.#folderOf(dir).copyIn(source, `${basename(dir)}/${rel}`);
  }

  /** Remove `rel` in workspace `dir` when it is there. */
  removeIn(dir: string, rel: string): void {
    this.#folderOf(dir).remove(`${basename(dir)}/${rel}`);
  }

  #folderOf(dir: string): TempFolder {
    const entry = this.#open.get(join(dir, ".."));
    if (!entry) throw new Error(`${dir} is not a workspace of this run`);
    return entry.folder;
  }

  /** Remove every workspace still open (after Ctrl-C, the ones whose tasks were stopped). */
  async removeAll(): Promise<void> {
    for (const { dir } of [...this.#open.values()]) await this.remove(dir);
  }
}
