// Git as the safety net, through the `git` command line: the repository root
// and its files, coder's commits (one per reply, dirty changes first, on their
// own), a record of them in `.coder/commits.json`, and an /undo that refuses
// whenever reverting could lose someone's work.

import { existsSync, lstatSync, readdirSync, rmdirSync, statSync, unlinkSync, appendFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { cleanCommitMessage, commitMessagePrompt, type DiffStat, fallbackCommitMessage, fitSubject, withTrailers } from "./commit-message.ts";
import { replaceRecord, STATE_DIR } from "../edit/state.ts";
import { spawnGroup } from "../proc/spawn.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";
import { UsageError } from "../errors.ts";
import type { ChatMessage } from "../plugin.ts";

export { cleanCommitMessage, commitMessagePrompt, type DiffStat, fallbackCommitMessage } from "./commit-message.ts";

// ─── Running git ─────────────────────────────────────────────────────────────

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * coder's own git calls take paths literally (a file named `*.py` or `:x` is not a
 * pattern) and never hold optional locks (a `git status` does not block the user's git).
 */
const INTERNAL_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_LITERAL_PATHSPECS: "1", GIT_OPTIONAL_LOCKS: "0" };

export interface RunGitOptions {
  /** A command the user typed (`/git`): pathspecs are patterns, as on their command line. */
  user?: boolean;
  /**
   * Stop the command (and everything it started: hooks) after this long. It runs in its own
   * process group so a hook's children go with it; the result says it timed out.
   */
  timeoutMs?: number;
}

/** How long coder waits for another program's `index.lock` before giving up with git's message. */
const INDEX_LOCK_WAIT_MS = 10_000;

/**
 * Run `git args` in `cwd` (no shell, no terminal prompts). A held `index.lock` (another git
 * command, an editor's git integration) is waited for, up to 10 s, before git's error stands.
 */
export async function runGit(cwd: string, args: string[], env?: Record<string, string>, opts: RunGitOptions = {}): Promise<GitResult> {
  const deadline = Date.now() + INDEX_LOCK_WAIT_MS;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const r = await runGitOnce(cwd, args, env, opts);
    if (r.code === 0 || !/index\.lock': File exists/.test(r.stderr) || Date.now() + delay > deadline) return r;
    await Bun.sleep(delay);
  }
}

async function runGitOnce(cwd: string, args: string[], env: Record<string, string> | undefined, opts: RunGitOptions): Promise<GitResult> {
  const childEnv = { ...process.env, ...(opts.user ? { GIT_TERMINAL_PROMPT: "0" } : INTERNAL_ENV), ...env };
  // A git killed for its time leaves its index.lock behind: note whether one was there before.
  const lock = opts.timeoutMs === undefined ? null : indexLockOf(cwd);
  const lockedBefore = lock !== null && existsSync(lock);
  const r = await spawnGroup(["git", ...args], { cwd, env: childEnv, timeoutMs: opts.timeoutMs });
  if (r.startError !== undefined) throw new Error(`git could not be started: ${r.startError}`);
  if (!r.timedOut) return { code: r.code, stdout: r.stdout, stderr: r.stderr };
  let note = "";
  if (lock && !lockedBefore && existsSync(lock)) {
    try {
      unlinkSync(lock);
      note = "; the index.lock it left was removed";
    } catch {
      note = `; remove ${lock} before the next git command`;
    }
  }
  return { code: r.code, stdout: r.stdout, stderr: `${r.stderr}timed out after ${Math.round((opts.timeoutMs ?? 0) / 1000)} s (--commit-timeout); git and its hooks were stopped${note}\n` };
}

/** Where git keeps the index lock of the repository at `cwd` (worktrees have their own), or null. */
function indexLockOf(cwd: string): string | null {
  const r = runGitSync(cwd, ["rev-parse", "--path-format=absolute", "--git-path", "index.lock"]);
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

function runGitSync(cwd: string, args: string[]): GitResult {
  // Not INTERNAL_ENV: check-ignore (the one sync call) rejects literal pathspecs; it takes plain paths anyway.
  const proc = Bun.spawnSync(["git", ...args], { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" }, stdin: "ignore" });
  return { code: proc.exitCode ?? 1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

async function gitOk(cwd: string, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await runGit(cwd, args, env);
  if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

// ─── Root and files ──────────────────────────────────────────────────────────

/** The top of the git work tree containing `cwd`, or null outside a repository (or without git). */
export async function findRepoRoot(cwd: string): Promise<string | null> {
  try {
    const r = await runGit(cwd, ["rev-parse", "--show-toplevel"]);
    return r.code === 0 ? r.stdout.trim() || null : null;
  } catch {
    return null; // no git binary
  }
}

/**
 * Why git cannot serve the repository at `root` (git missing, "dubious ownership",
 * a broken `.git`), in git's own words; null when it can.
 */
export async function gitProblem(root: string): Promise<string | null> {
  let r: GitResult;
  try {
    r = await runGit(root, ["rev-parse", "--show-toplevel"]);
  } catch {
    return "git is not installed or not on PATH";
  }
  if (r.code === 0 && r.stdout.trim()) return null;
  return (r.stderr || r.stdout).trim().replace(/\n+/g, " ") || `git rev-parse exited ${r.code}`;
}

/**
 * Files under `.coder/` that git tracks in the repository at `root`: coder keeps that folder
 * out of git, so any there were put there by someone else. Empty when git cannot say.
 */
export async function trackedStateFiles(root: string): Promise<string[]> {
  // Read off the whole listing when the index is known: the kit's first listing is then this same git call, started early.
  const index = indexPaths.get(root) ?? plainIndexPath(root);
  if (index !== null) {
    const listed = await trackedListing(root, index);
    return listed instanceof Error ? [] : listed.filter((path) => path === STATE_DIR || path.startsWith(`${STATE_DIR}/`));
  }
  try {
    const r = await runGit(root, ["ls-files", "-z", "--", STATE_DIR]);
    return r.code === 0 ? r.stdout.split("\0").filter(Boolean) : [];
  } catch {
    return []; // no git binary
  }
}

/** Create a repository in `dir` (interactive mode offers this when there is none). */
export async function initRepository(dir: string): Promise<void> {
  await gitOk(dir, ["init", "-q"]);
}

/**
 * No repository at `dir`: offer to create one (`ask` is the gate's confirm, so it is asked
 * in interactive mode only and remembered on "Don't ask again"). Returns the new repository,
 * or null when declined or git is missing.
 *
 * @example
 * const git = (await GitRepo.open(root)) ?? (app.interactive ? await offerRepository(root, (q) => gate.confirm(q, { key: "git:init" })) : null);
 */
export async function offerRepository(dir: string, ask: (question: string) => Promise<boolean>, opts: GitRepoOptions = {}): Promise<GitRepo | null> {
  if (await findRepoRoot(dir)) return GitRepo.open(dir, opts);
  if (!(await ask(`${dir} is not a git repository: create one, so every change coder makes is committed and /undo works?`))) return null;
  try {
    await initRepository(dir);
  } catch {
    return null;
  }
  return GitRepo.open(dir, opts);
}

interface FileListCache {
  stamp: string;
  files: string[];
}

const fileListCache = new Map<string, FileListCache>();

/**
 * Repository-relative paths of the files git tracks (index entries), with
 * `.coderignore` (gitignore syntax; `ignoreFile` instead, e.g. Aider's `.aiderignore`) applied. Cached per `.git/index` and
 * `.coderignore` state. Outside a repository (or with `git: false`): every file under
 * `root`, skipping `.git`, `node_modules`, dot-directories and `.gitignore`d paths.
 */
export async function listRepoFiles(root: string, opts: { git?: boolean; ignoreFile?: string } = {}): Promise<string[]> {
  const ignoreFile = opts.ignoreFile ?? join(root, ".coderignore");
  if (opts.git !== false) {
    // One git call when the index is known: remembered, or where a plain repository keeps it.
    // If git cannot list there, the index is asked of git as below.
    const known = indexPaths.get(root) ?? plainIndexPath(root);
    const listed = known === null ? null : await listTracked(root, known, ignoreFile, true);
    if (listed) {
      indexPaths.set(root, known!);
      return listed;
    }
  }
  const indexPath = opts.git === false ? "" : await indexPathOf(root);
  if (indexPath !== "") return (await listTracked(root, indexPath, ignoreFile, false))!;
  return applyCoderignore(ignoreFile, [...new Set(await walkFiles(root))]);
}

/**
 * The tracked files, cached per state of the index and the ignore file (the stamp is taken
 * before git reads the index: a change while it lists leaves a stamp the next call differs from).
 * With `fallible`, null when git cannot be run or fails; otherwise that throws.
 */
async function listTracked(root: string, indexPath: string, ignoreFile: string, fallible: boolean): Promise<string[] | null> {
  const stamp = ["git", fileStamp(indexPath), ignoreFile, fileStamp(ignoreFile), ""].join("|");
  const cached = fileListCache.get(root);
  if (cached?.stamp === stamp) return cached.files;
  const listed = await trackedListing(root, indexPath);
  if (listed instanceof Error) {
    if (fallible) return null;
    throw listed;
  }
  const files = await applyCoderignore(ignoreFile, [...new Set(listed)]);
  fileListCache.set(root, { stamp, files });
  return files;
}

/** A `git ls-files` under way or done, for the index in the state `stamp` was taken of before it started. */
interface TrackedListing {
  indexPath: string;
  stamp: string;
  listed: Promise<string[] | Error>;
}

const trackedListings = new Map<string, TrackedListing>();

/**
 * Every index entry's path (`git ls-files -z --cached`, a path once per stage), or the Error
 * saying why git could not list. Callers while the index stays as it was share one git call
 * (the settings' check of `.coder` and the kit's first listing); a failure is not kept.
 */
function trackedListing(root: string, indexPath: string): Promise<string[] | Error> {
  const stamp = fileStamp(indexPath);
  const known = trackedListings.get(root);
  if (known && known.indexPath === indexPath && known.stamp === stamp) return known.listed;
  const listed = runGit(root, ["ls-files", "-z", "--cached"]).then(
    (r): string[] | Error => (r.code === 0 ? r.stdout.split("\0").filter(Boolean) : new Error(`git ls-files failed: ${(r.stderr || r.stdout).trim()}`)),
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  const entry = { indexPath, stamp, listed };
  trackedListings.set(root, entry);
  void listed.then((result) => {
    if (result instanceof Error && trackedListings.get(root) === entry) trackedListings.delete(root);
  });
  return listed;
}

/** Git's variables that move its folder, index or work tree: with any set, git is asked where the index is. */
const GIT_LOCATION_VARIABLES = ["GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR"];

/**
 * The index of a plain repository at `root` (a `.git` folder there holding HEAD and an index,
 * and no git variable moving them), where `git rev-parse --git-path index` would name it, without
 * starting git; null otherwise (a worktree's or submodule's `.git` file, a repository with no index yet).
 */
export function plainIndexPath(root: string): string | null {
  if (GIT_LOCATION_VARIABLES.some((name) => process.env[name] !== undefined)) return null;
  const index = join(root, ".git", "index");
  try {
    return statSync(join(root, ".git", "HEAD")).isFile() && statSync(index).isFile() ? index : null;
  } catch {
    return null;
  }
}

const indexPaths = new Map<string, string>();

/** The index file of the repository at `root` ("" outside a repository), remembered per root. */
async function indexPathOf(root: string): Promise<string> {
  let path = indexPaths.get(root);
  if (path === undefined) {
    path = (await findRepoRoot(root)) ? (await runGit(root, ["rev-parse", "--path-format=absolute", "--git-path", "index"])).stdout.trim() : "";
    if (path) indexPaths.set(root, path);
  }
  return path;
}

function fileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return "-";
  }
}

async function applyCoderignore(file: string, files: string[]): Promise<string[]> {
  const { coderIgnoreRules } = await import("../edit/ignore-rules.ts");
  const rules = coderIgnoreRules(file);
  return rules ? files.filter((f) => !rules.ignores(f)) : files;
}

async function walkFiles(root: string): Promise<string[]> {
  const { IgnoreRules } = await import("../edit/ignore-rules.ts");
  const rules = new IgnoreRules(root);
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split("\\").join("/");
      if (e.isDirectory()) {
        if (e.name.startsWith(".") || e.name === "node_modules" || rules.isIgnored(rel, true)) continue;
        walk(abs);
      } else if ((e.isFile() || e.isSymbolicLink()) && !rules.isIgnored(rel)) {
        out.push(rel);
      }
    }
  };
  walk(root);
  return out.sort();
}

/**
 * Does git ignore `rel` in the repository at `root` (`git check-ignore`: every `.gitignore`,
 * `.git/info/exclude` and the user's `core.excludesFile`; a tracked file is never ignored)?
 */
export function gitIgnores(root: string, rel: string): boolean {
  return runGitSync(root, ["check-ignore", "-q", "--", rel]).code === 0;
}

/** `git ls-files --ignored --directory` output: files, and folders (ending in "/") ignored whole. */
class IgnoredPaths {
  private readonly files = new Set<string>();
  private readonly folders: string[] = [];

  constructor(entries: readonly string[]) {
    for (const e of entries) {
      if (e.endsWith("/")) this.folders.push(e);
      else this.files.add(e);
    }
  }

  has(rel: string): boolean {
    return this.files.has(rel) || this.folders.some((f) => rel.startsWith(f));
  }
}

// ─── The repository ──────────────────────────────────────────────────────────

/** How coder marks its commits (`--attribution`). */
export type Attribution = "trailer" | "author" | "committer" | "none";

/** The name and address coder signs with (trailer, and the fallback identity). */
export const CODER_NAME = "coder";
export const CODER_EMAIL = "coder@noreply.invalid";

/** One commit coder made, as kept in `.coder/commits.json`. */
export interface CoderCommit {
  hash: string;
  /** `edit`: a reply's edits (undoable); `dirty`: the user's pending changes saved before an edit. */
  kind: "edit" | "dirty";
  message: string;
  /** Files in the commit; `created` ones did not exist before it. */
  files: { path: string; created: boolean; deleted: boolean }[];
  model?: string;
  time: string;
  /** Set when /undo reverted it. */
  undone?: boolean;
}

export type CommitOutcome =
  | { status: "committed"; commit: CoderCommit; hooks: string }
  | { status: "nothing"; message: string }
  | { status: "failed"; message: string }
  /** `review` refused it: the files stay as they are, uncommitted. */
  | { status: "refused"; message: string };

export interface CommitEditsOptions {
  /** The message (e.g. from the weak model, already cleaned); absent or null: the deterministic fallback. */
  message?: string | null;
  /** The user's request for this reply (for the fallback message). */
  request?: string;
  /** The model that wrote the edits (named in the attribution). */
  model: string;
  attribution?: Attribution;
  /** Run commit hooks (false: `--no-verify`). Default true. */
  verify?: boolean;
  /** The final say on the message (plugins' onCommit): the message to use, or why not to commit. */
  review?: (message: string, files: readonly string[]) => Promise<{ message: string; trailers: readonly string[] } | { refused: string }>;
}

export interface GitRepoOptions {
  /** Where coder's records live; default `<root>/.coder`. */
  stateDir?: string;
  /** Things the user should know (missing identity, hooks run or skipped). */
  notify?: (level: "info" | "warn", text: string) => void;
  /** Writes a commit message from `commitMessagePrompt` messages (the weak model), for `/commit` without a message. */
  writeMessage?: (messages: ChatMessage[]) => Promise<string>;
  /** Default attribution and hook policy for commits made by `commitPending`/`commitDirty`. */
  verify?: boolean;
  /** A commit (hooks included) that takes longer fails (`--commit-timeout`); default 120 s. */
  commitTimeoutMs?: number;
}

/**
 * A multi-step git operation the user is in the middle of, or unresolved conflicts left by one
 * (`git stash pop`, `checkout -m`): coder does not commit inside one.
 */
export type GitOperation = "merge" | "rebase" | "cherry-pick" | "revert" | "conflict resolution";

/**
 * One git repository as coder uses it. Implements the plugin API's `SessionGit`
 * (`undo`, `lastDiff`, `commitPending`, `run`), so it can be handed to slash commands.
 *
 * @example
 * const repo = await GitRepo.open(root, { notify: (lvl, t) => console.error(t) });
 * if (repo) {
 *   await repo.commitDirty(["src/app.ts"]);            // the user's pending work, on its own
 *   // ... write the model's edits ...
 *   await repo.commitEdits(["src/app.ts"], { message, request, model: "openai/gpt-4.1" });
 * }
 */
export class GitRepo {
  private readonly stateDir: string;
  private identityChecked: Record<string, string> | null = null;

  private constructor(
    readonly root: string,
    private readonly opts: GitRepoOptions,
  ) {
    this.stateDir = opts.stateDir ?? join(root, ".coder");
  }

  /** The repository whose work tree contains `root`, or null when there is none (or no git). */
  static async open(root: string, opts: GitRepoOptions = {}): Promise<GitRepo | null> {
    const top = await findRepoRoot(root);
    return top ? new GitRepo(top, opts) : null;
  }

  /** Run `git args` in the repository (for `/git`). */
  async run(args: string[]): Promise<{ code: number; output: string }> {
    const r = await runGit(this.root, args, undefined, { user: true });
    return { code: r.code, output: (r.stdout + r.stderr).replace(/\n$/, "") };
  }

  /**
   * Is `rel` ignored by git (`git check-ignore`; tracked files are never ignored)? A file git
   * ignored before coder's first write of the run (`freezeIgnored`) stays ignored for the whole
   * run, whatever a `.gitignore` says later: un-ignoring `.env` never makes it writable or
   * committable. Synchronous for the file store.
   */
  isIgnored(rel: string): boolean {
    if (!rel || rel.startsWith("../")) return false;
    if (this.ignoredSnapshot?.has(rel)) return true;
    return gitIgnores(this.root, rel);
  }

  private ignoredSnapshot: IgnoredPaths | null = null;

  /**
   * Remember the untracked files and folders git ignores now, for the rest of the run (one
   * `git ls-files`). The file store calls it before it writes anything, so no change coder
   * makes to a `.gitignore` can un-ignore a file; until then the rules on disk are the run's.
   */
  freezeIgnored(): void {
    if (this.ignoredSnapshot) return;
    const r = runGitSync(this.root, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]);
    this.ignoredSnapshot = new IgnoredPaths(r.code === 0 ? r.stdout.split("\0").filter(Boolean) : []);
  }

  /**
   * The text at HEAD of those of `paths` whose work-tree or staged content differs from it (the
   * user's uncommitted changes), CRLF folded; empty without a commit. For the matcher's guard.
   */
  async committedTexts(paths: readonly string[]): Promise<Map<string, string>> {
    const texts = new Map<string, string>();
    if (paths.length === 0) return texts;
    const changed = await runGit(this.root, ["diff", "--name-only", "--no-renames", "-z", "HEAD", "--", ...paths]);
    if (changed.code !== 0) return texts;
    for (const path of changed.stdout.split("\0").filter(Boolean)) {
      const shown = await runGit(this.root, ["show", `HEAD:${path}`]);
      if (shown.code === 0) texts.set(path, shown.stdout.replace(/\r\n/g, "\n"));
    }
    return texts;
  }

  /** Does git track `rel` (it is in the index)? */
  async isTracked(rel: string): Promise<boolean> {
    return (await runGit(this.root, ["ls-files", "--error-unmatch", "--", rel])).code === 0;
  }

  /** Does `rel` hold changes git has not committed: modified, staged, deleted, or untracked (and not ignored)? */
  async isDirty(rel: string): Promise<boolean> {
    return (await this.dirtyFiles([rel])).length > 0;
  }

  /** The ones of `paths` (all files without it) that have uncommitted changes or are untracked and not ignored. */
  async dirtyFiles(paths?: readonly string[]): Promise<string[]> {
    const args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"];
    if (paths) {
      if (paths.length === 0) return [];
      args.push("--", ...paths);
    }
    const out = await gitOk(this.root, args);
    const dirty: string[] = [];
    const entries = out.split("\0");
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.length < 4) continue;
      if (e[0] === "R" || e[0] === "C") i++; // the source path follows
      const path = e.slice(3);
      if (!path.startsWith(".coder/")) dirty.push(path); // coder's own records are never the user's pending work
    }
    return dirty;
  }

  /** The merge, rebase, cherry-pick or revert in progress, if any. */
  async operationInProgress(): Promise<GitOperation | null> {
    const gitDir = (await runGit(this.root, ["rev-parse", "--path-format=absolute", "--git-dir"])).stdout.trim();
    if (!gitDir) return null;
    const has = (name: string) => existsSync(join(gitDir, name));
    if (has("rebase-merge") || has("rebase-apply")) return "rebase";
    if (has("MERGE_HEAD")) return "merge";
    if (has("CHERRY_PICK_HEAD")) return "cherry-pick";
    if (has("REVERT_HEAD")) return "revert";
    return this.unmergedFiles().size ? "conflict resolution" : null;
  }

  /** Files with unmerged (conflict) stages in the index. Synchronous for the gate. */
  unmergedFiles(): Set<string> {
    const out = runGitSync(this.root, ["ls-files", "-u", "-z"]).stdout;
    return new Set(out.split("\0").filter(Boolean).map((entry) => entry.slice(entry.indexOf("\t") + 1)));
  }

  private submodules: string[] | null = null;

  /** The submodule (its path) that holds `rel`, or null; coder edits no file inside a submodule. */
  submoduleOf(rel: string): string | null {
    this.submodules ??= runGitSync(this.root, ["ls-files", "-s", "-z"])
      .stdout.split("\0")
      .filter((entry) => entry.startsWith("160000 "))
      .map((entry) => entry.slice(entry.indexOf("\t") + 1));
    return this.submodules.find((sub) => rel === sub || rel.startsWith(`${sub}/`)) ?? null;
  }

  /** Does the repository have a commit yet? */
  async hasHead(): Promise<boolean> {
    return (await runGit(this.root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).code === 0;
  }

  /**
   * Commit the user's pending changes to `paths` (those that are dirty or untracked) on
   * their own, before coder edits them, so an edit commit holds only the model's change.
   * Independent of `--no-auto-commits`.
   */
  async commitDirty(paths: readonly string[], opts: { verify?: boolean } = {}): Promise<CommitOutcome> {
    // A file git ignores, or ignored before coder's first write (a `.env`), is never the user's work to save.
    const dirty = (await this.dirtyFiles(paths)).filter((p) => !this.isIgnored(p));
    if (dirty.length === 0) return { status: "nothing", message: "no pending changes in those files" };
    const stats = await this.stagedStats(dirty);
    const names = dirty.length === 1 ? dirty[0]! : `${dirty.length} files`;
    const message = fitSubject("chore: ", `save pending changes to ${names} before coder edits`);
    return this.commit(message, { kind: "dirty", verify: opts.verify ?? this.opts.verify ?? true, attribution: "none", stats });
  }

  /**
   * Commit a reply's edits: only `paths` (the files coder changed; other staged work of the
   * user stays staged), with `message` or a deterministic fallback, marked as coder's by
   * `attribution` (default a `Co-authored-by` trailer). Recorded in `.coder/commits.json` so
   * `/undo` works across sessions.
   */
  async commitEdits(paths: readonly string[], opts: CommitEditsOptions): Promise<CommitOutcome> {
    const files = [...new Set(paths.map((p) => posix.normalize(p)))];
    const stats = await this.stagedStats(files);
    if (stats.length === 0) return { status: "nothing", message: "the edits left every file as it was" };
    let message = (opts.message && cleanCommitMessage(opts.message)) || fallbackCommitMessage(files, stats, opts.request ?? "");
    let trailers: readonly string[] = [];
    if (opts.review) {
      const verdict = await opts.review(message, files);
      if ("refused" in verdict) return { status: "refused", message: verdict.refused };
      message = verdict.message;
      trailers = verdict.trailers;
    }
    return this.commit(message, { trailers, kind: "edit", verify: opts.verify ?? true, attribution: opts.attribution ?? "trailer", model: opts.model, stats });
  }

  /**
   * `/commit [message]`: commit every pending change to tracked files (not untracked ones)
   * with `message`, or one written by the weak model, or the fallback.
   */
  async commitPending(message?: string): Promise<{ ok: boolean; message: string }> {
    const dirty = await this.dirtyFiles();
    const tracked: string[] = [];
    for (const f of dirty) if (await this.isTracked(f)) tracked.push(f);
    if (tracked.length === 0) return { ok: false, message: dirty.length ? "Nothing to commit: only untracked files (git add them first)." : "Nothing to commit: the work tree is clean." };
    const stats = await this.stagedStats(tracked);
    let text = message?.trim() || null;
    if (!text && this.opts.writeMessage) {
      try {
        const diff = (await runGit(this.root, ["diff", "HEAD", "--", ...tracked])).stdout;
        text = cleanCommitMessage(await this.opts.writeMessage(commitMessagePrompt("commit the pending changes", diff)));
      } catch {
        text = null;
      }
    }
    text ??= fallbackCommitMessage(tracked, stats, "");
    const outcome = await this.commit(text, { kind: "user", verify: this.opts.verify ?? true, attribution: "none", stats });
    if (outcome.status === "committed") return { ok: true, message: `Committed ${outcome.commit.hash.slice(0, 7)} ${outcome.commit.message}` };
    return { ok: false, message: outcome.message };
  }

  /** Every commit coder recorded in this repository (oldest first). */
  coderCommits(): CoderCommit[] {
    try {
      const data = JSON.parse(readCappedText(join(this.stateDir, "commits.json"), { maxBytes: 16 * SMALL_FILE_BYTES }).text ?? "{}") as { commits?: CoderCommit[] };
      return Array.isArray(data.commits) ? data.commits : [];
    } catch {
      return [];
    }
  }

  private saveCommits(commits: CoderCommit[]): void {
    replaceRecord(join(this.stateDir, "commits.json"), `${JSON.stringify({ version: 1, commits: commits.slice(-500) }, null, 2)}\n`);
  }

  /** Stage `files` (those that exist or are tracked) and return their change against HEAD. */
  private async stagedStats(files: readonly string[]): Promise<DiffStat[]> {
    const present: string[] = [];
    for (const f of files) if (existsSync(join(this.root, f)) || (await this.isTracked(f))) present.push(f);
    if (present.length === 0) return [];
    await gitOk(this.root, ["add", "-A", "--", ...present]);
    const base = (await this.hasHead()) ? ["HEAD"] : [];
    const numstat = (await gitOk(this.root, ["diff", "--cached", "--no-renames", "--numstat", "-z", ...base, "--", ...present])).split("\0");
    const status = (await gitOk(this.root, ["diff", "--cached", "--no-renames", "--name-status", "-z", ...base, "--", ...present])).split("\0");
    const kinds = new Map<string, string>();
    for (let i = 0; i + 1 < status.length; i += 2) kinds.set(status[i + 1]!, status[i]!);
    const stats: DiffStat[] = [];
    for (const entry of numstat) {
      const [added, removed, path] = entry.split("\t");
      if (!path) continue;
      const kind = kinds.get(path);
      stats.push({ path, added: Number(added) || 0, removed: Number(removed) || 0, created: kind === "A", deleted: kind === "D" });
    }
    return stats;
  }

  /** Commit the files of `how.stats` (staged by stagedStats) with `message`. */
  private async commit(
    message: string,
    how: { kind: CoderCommit["kind"] | "user"; verify: boolean; attribution: Attribution; model?: string; stats: DiffStat[]; trailers?: readonly string[] },
  ): Promise<CommitOutcome> {
    const paths = how.stats.map((s) => s.path);
    if (paths.length === 0) return { status: "nothing", message: "nothing to commit in those files" };
    const env = await this.identityEnv(how.attribution);
    const attribution = how.attribution === "trailer" && how.model ? [`Co-authored-by: ${CODER_NAME} (${how.model}) <${CODER_EMAIL}>`] : [];
    const body = withTrailers(message, [...(how.trailers ?? []), ...attribution]);
    const hooks = await this.hookReport(how.verify);
    const args = ["commit", "-q", "--no-edit", "-m", body, ...(how.verify ? [] : ["--no-verify"]), "--", ...paths];
    const r = await runGit(this.root, args, env, { timeoutMs: this.opts.commitTimeoutMs ?? 120_000 });
    if (r.code !== 0) {
      const why = (r.stderr || r.stdout).trim();
      return { status: "failed", message: `git commit failed${hooks.ran.length ? ` (hooks ran: ${hooks.ran.join(", ")})` : ""}: ${why}` };
    }
    if (hooks.text) this.opts.notify?.("info", hooks.text);
    const hash = (await gitOk(this.root, ["rev-parse", "HEAD"])).trim();
    const subject = (await gitOk(this.root, ["log", "-1", "--format=%s", hash])).trim();
    const commit: CoderCommit = {
      hash,
      kind: how.kind === "user" ? "edit" : how.kind,
      message: subject,
      files: how.stats.map((s) => ({ path: s.path, created: !!s.created, deleted: !!s.deleted })),
      model: how.model,
      time: new Date().toISOString(),
    };
    if (how.kind !== "user") this.saveCommits([...this.coderCommits(), commit]);
    return { status: "committed", commit, hooks: hooks.text };
  }

  /** Which commit hooks exist, and whether this commit runs or skips them (said to the user). */
  private async hookReport(verify: boolean): Promise<{ ran: string[]; text: string }> {
    const dir = (await runGit(this.root, ["rev-parse", "--path-format=absolute", "--git-path", "hooks"])).stdout.trim();
    const present = ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"].filter((h) => {
      try {
        return (statSync(join(dir, h)).mode & 0o111) !== 0;
      } catch {
        return false;
      }
    });
    if (present.length === 0) return { ran: [], text: "" };
    const skippable = ["pre-commit", "commit-msg"];
    const skipped = verify ? [] : present.filter((h) => skippable.includes(h));
    const ran = present.filter((h) => !skipped.includes(h));
    const parts: string[] = [];
    if (ran.length) parts.push(`ran git hooks: ${ran.join(", ")}`);
    if (skipped.length) parts.push(`skipped git hooks (--no-verify): ${skipped.join(", ")}`);
    return { ran, text: parts.join("; ") };
  }

  /**
   * Environment for a commit: the user's identity is kept; if git has none, coder
   * says so once and signs its commits with a local fallback (never written to config).
   */
  private async identityEnv(attribution: Attribution): Promise<Record<string, string>> {
    if (!this.identityChecked) {
      const cfg = async (key: string) => (await runGit(this.root, ["config", "--get", key])).stdout.trim();
      const name = process.env.GIT_AUTHOR_NAME || (await cfg("user.name"));
      const email = process.env.GIT_AUTHOR_EMAIL || process.env.EMAIL || (await cfg("user.email"));
      const env: Record<string, string> = {};
      if (!name || !email) {
        this.opts.notify?.(
          "warn",
          `git has no ${!name ? "user.name" : ""}${!name && !email ? " or " : ""}${!email ? "user.email" : ""} configured here: coder signs its commits as "${name || CODER_NAME} <${email || CODER_EMAIL}>" for now (set yours with git config user.name / user.email).`,
        );
        const n = name || CODER_NAME;
        const e = email || CODER_EMAIL;
        Object.assign(env, { GIT_AUTHOR_NAME: n, GIT_AUTHOR_EMAIL: e, GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME || n, GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL || e });
      }
      this.identityChecked = env;
    }
    const env = { ...this.identityChecked };
    if (attribution === "author" || attribution === "committer") {
      const who = attribution === "author" ? "AUTHOR" : "COMMITTER";
      const ident = (await runGit(this.root, ["var", `GIT_${who}_IDENT`], env)).stdout;
      const name = /^(.*?) </.exec(ident)?.[1] ?? CODER_NAME;
      env[`GIT_${who}_NAME`] = `${name} (${CODER_NAME})`;
    }
    return env;
  }

  /**
   * Undo coder's last commit: only when HEAD is a commit coder recorded as an edit, not a
   * merge, not on its upstream or any remote branch, and none of its files changed since.
   * Restores those files (deleting files the commit created) and moves HEAD back one commit.
   * A refusal says exactly why.
   */
  async undo(): Promise<{ ok: boolean; message: string }> {
    const refuse = (message: string) => ({ ok: false, message: `Not undoing: ${message}` });
    if (!(await this.hasHead())) return refuse("the repository has no commits yet.");
    const head = (await gitOk(this.root, ["rev-parse", "HEAD"])).trim();
    const short = head.slice(0, 7);
    const subject = (await gitOk(this.root, ["log", "-1", "--format=%s", head])).trim();
    const records = this.coderCommits();
    const rec = records.findLast((r) => r.hash === head && !r.undone);
    if (!rec) {
      const last = records.findLast((r) => r.kind === "edit" && !r.undone);
      const tail = last
        ? ` coder's latest commit ${last.hash.slice(0, 7)} is not the last commit any more; use \`git revert ${last.hash.slice(0, 7)}\` if you want it gone.`
        : " coder has recorded no commits in this repository.";
      return refuse(`the last commit ${short} "${subject}" was not made by coder, and /undo only reverts coder's own commits.${tail}`);
    }
    if (rec.kind !== "edit") return refuse(`the last commit ${short} "${subject}" holds your own pending changes, which coder committed on their own before editing; /undo only reverts coder's edits. Use git if you want it undone.`);
    const parents = (await gitOk(this.root, ["rev-list", "--parents", "-n", "1", head])).trim().split(/\s+/).slice(1);
    if (parents.length > 1) return refuse(`the last commit ${short} is a merge commit.`);
    if (parents.length === 0) return refuse(`${short} is the repository's first commit; there is no earlier commit to go back to.`);
    for (const ref of ["MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD"]) {
      if ((await runGit(this.root, ["rev-parse", "-q", "--verify", ref])).code === 0) return refuse(`a merge, rebase or cherry-pick is in progress (${ref} exists); finish or abort it first.`);
    }
    const upstream = await runGit(this.root, ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}"]);
    if (upstream.code === 0 && (await runGit(this.root, ["merge-base", "--is-ancestor", head, "@{u}"])).code === 0) {
      return refuse(`${short} "${subject}" was already pushed to ${upstream.stdout.trim()}; undoing it would rewrite published history. Use \`git revert ${short}\` instead.`);
    }
    const remotes = (await runGit(this.root, ["branch", "-r", "--contains", head])).stdout.trim();
    if (remotes) return refuse(`${short} "${subject}" is already on the remote branch ${remotes.split("\n")[0]!.trim()}; use \`git revert ${short}\` instead.`);
    const changes = (await gitOk(this.root, ["diff-tree", "-r", "--no-commit-id", "--no-renames", "--name-status", "-z", parents[0]!, head])).split("\0");
    const created: string[] = [];
    const restored: string[] = [];
    for (let i = 0; i + 1 < changes.length; i += 2) (changes[i] === "A" ? created : restored).push(changes[i + 1]!);
    const changedSince = await this.dirtyFiles([...created, ...restored]);
    if (changedSince.length) return refuse(`${changedSince.join(", ")} changed since coder's commit ${short} (uncommitted changes); commit or discard them first, or they would be lost.`);
    if (restored.length) await gitOk(this.root, ["checkout", parents[0]!, "--", ...restored]);
    if (created.length) {
      await gitOk(this.root, ["rm", "-q", "--cached", "--", ...created]);
      for (const f of created) {
        try {
          unlinkSync(join(this.root, f));
        } catch {
          // already gone
        }
        // The folders the edit created for it go too, when nothing else is in them.
        for (let dir = dirname(f); dir !== "." && dir !== "/" && dir !== ""; dir = dirname(dir)) {
          try {
            rmdirSync(join(this.root, dir));
          } catch {
            break; // not empty (or gone): its parents are not empty either
          }
        }
      }
    }
    await gitOk(this.root, ["reset", "-q", "--soft", parents[0]!]);
    this.saveCommits(records.map((r) => (r === rec ? { ...r, undone: true } : r)));
    const what = [restored.length ? `restored ${restored.join(", ")}` : "", created.length ? `deleted ${created.join(", ")} (created by it)` : ""].filter(Boolean).join("; ");
    return { ok: true, message: `Undid ${short} "${subject}": ${what}. HEAD is now ${parents[0]!.slice(0, 7)}.` };
  }

  /** The diff of coder's last edit commit (what the last reply changed), or a note when there is none. */
  async lastDiff(): Promise<string> {
    const last = this.coderCommits().findLast((r) => r.kind === "edit" && !r.undone);
    if (!last || (await runGit(this.root, ["cat-file", "-e", `${last.hash}^{commit}`])).code !== 0) return "No changes from coder to show yet.";
    const r = await runGit(this.root, ["show", "--format=commit %h %s", "--no-renames", last.hash]);
    return r.stdout.trimEnd();
  }

  /**
   * Make sure `.coder/` is git-ignored: nothing when it already is, else append it to
   * `.gitignore` if `ask` agrees (the gate: asks interactively, yes under --yes-always).
   */
  async ensureGitignore(ask: (question: string) => Promise<boolean>): Promise<"present" | "added" | "declined"> {
    if (this.isIgnored(".coder/commits.json")) return "present";
    if (!(await ask("Add .coder/ (coder's history and caches) to .gitignore?"))) return "declined";
    const file = join(this.root, ".gitignore");
    // git does not follow a symlinked .gitignore, and coder never appends through one: it may lead anywhere.
    if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new UsageError(`.gitignore is a symlink; coder does not write through it to add .coder/ (add ".coder/" to .git/info/exclude, or make .gitignore a regular file)`);
    }
    const read = readCappedText(file, { maxBytes: SMALL_FILE_BYTES, name: ".gitignore" });
    if (read.problem) throw new UsageError(`${read.problem}; coder cannot add .coder/ to it (make it a regular file)`);
    const before = read.text ?? "";
    appendFileSync(file, `${before && !before.endsWith("\n") ? "\n" : ""}.coder/\n`);
    return "added";
  }
}
