// Writing what a reply changed and committing it: the user's pending changes are
// committed first, the files written atomically, one commit per reply with the weak
// model's message. Also `/diff`, which shows that change again.
import { Interrupted } from "./errors.ts";
import type { WriteReport } from "./files.ts";
import { type CommitStyle, styleCommitPrompt } from "./commit-message.ts";
import { commitMessagePrompt } from "./git.ts";
import type { ChatMessage, Kit } from "./plugin.ts";
import { messageOf } from "./registry.ts";
import { type AppliedReply, outcomeDetail } from "./reply.ts";
import { trace } from "./term/trace.ts";
import type { CoderServices } from "./turn.ts";

/** Who commits, and for which request. */
export interface CommitAuthor {
  services: CoderServices;
  /** The model that wrote the reply, named in the commit. */
  model: string;
  /** The model that writes the commit message. */
  weakModel: string;
  /** The user's request of the turn, for the commit message. */
  request: string;
  /** False: no model writes the message; git's summary is used (`--apply`). */
  askModel?: boolean;
}

const COMMIT_MESSAGE_TIMEOUT_MS = 30_000;

/** The weak model's answer to `commitMessagePrompt` messages (in the user's commit style): short, and not worth a long wait. */
export async function askCommitMessage(kit: Kit, model: string, messages: ChatMessage[], style: CommitStyle, signal?: AbortSignal): Promise<string> {
  return (await kit.complete({ model, messages: styleCommitPrompt(messages, style), maxTokens: 100, timeoutMs: COMMIT_MESSAGE_TIMEOUT_MS }, signal)).text;
}

/**
 * Write the staged changes (or show them with --dry-run), emit one edit event per
 * outcome, and commit what was written. Returns the written paths.
 */
export async function writeAndCommit(author: CommitAuthor, staged: AppliedReply, signal: AbortSignal): Promise<string[]> {
  const { services } = author;
  const { out } = services;
  const { outcomes, changes } = staged;
  const dryRun = services.app.settings.options.dryRun;
  let written: string[] = [];
  let message: Promise<string | null> = Promise.resolve(null);
  if (changes.size && dryRun) {
    for (const [path, after] of changes) out.print(services.app.kit.diff.unified(path, staged.before.get(path) ?? "", after ?? ""));
    await services.files.writeAll(changes, { dryRun: true });
  } else if (changes.size) {
    // The weak model writes the commit message while git and the disk do their part.
    message = commitMessage(author, [...changes.keys()], staged.before, changes, signal).catch(() => null);
    const report = await writeChanges(services, changes);
    trace("reply: written");
    written = report.written.map((w) => w.path);
    if (written.length) services.lastReply = { files: report.written.map(({ path, before, after }) => ({ path, before, after })), commit: null };
    // A write the store refused fails every edit of that file, with the store's reason.
    for (const refusal of report.refused) {
      outcomes.forEach((o, i) => {
        if (o.path === refusal.path && o.status === "applied") outcomes[i] = { status: "failed", edit: o.edit, path: o.path, reason: "refused", detail: refusal.reason };
      });
    }
  }
  for (const o of outcomes) {
    const notWritten = dryRun && o.status === "applied";
    out.emit({ type: "edit", path: o.path, status: o.status, detail: notWritten ? "dry run: not written" : outcomeDetail(o), ...(notWritten ? { dryRun: true } : {}) });
  }
  // The human renderers say "Applied edit to ..." for every applied outcome; say plainly that nothing was written.
  if (dryRun && changes.size) out.print(`Dry run (--dry-run): nothing was written or committed (${changes.size} file${changes.size === 1 ? "" : "s"} would change).`);
  if (written.length) {
    // The files are on disk now: commit them even after Ctrl-C (the aborted message
    // request resolves to null, so the deterministic summary is used). Leaving them
    // uncommitted would let /undo revert an older commit instead of this change.
    const text = signal.aborted ? null : await message;
    trace("reply: commit message");
    const commit = await commitReply(author, written, text);
    if (services.lastReply) services.lastReply.commit = commit;
    trace("reply: committed");
    if (signal.aborted) throw new Interrupted();
  }
  return written;
}

/** Dirty-commit the user's pending changes to these files, then write atomically. */
async function writeChanges(services: CoderServices, changes: Map<string, string | null>): Promise<WriteReport> {
  const { git, out } = services;
  const options = services.app.settings.options;
  if (git && options.dirtyCommits) {
    const outcome = await git.commitDirty([...changes.keys()], { verify: options.verify });
    if (outcome.status === "committed") out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
    else if (outcome.status === "failed") out.warn(`Could not commit the pending changes first: ${outcome.message}`);
  }
  return services.files.writeAll(changes, { dryRun: false });
}

/** The weak model's commit message for these changes; null (git's deterministic summary) when it fails. */
async function commitMessage(author: CommitAuthor, paths: string[], before: Map<string, string | null>, changes: Map<string, string | null>, signal: AbortSignal): Promise<string | null> {
  const { git, out, app } = author.services;
  if (!git || !app.settings.options.autoCommits || author.askModel === false) return null;
  const diff = paths.map((p) => app.kit.diff.unified(p, before.get(p) ?? "", changes.get(p) ?? "")).join("\n");
  try {
    // A commit message is not worth a long wait: git's summary is the fallback.
    const text = await askCommitMessage(app.kit, author.weakModel, commitMessagePrompt(author.request, diff), app.settings.options, signal);
    return text.trim() || null;
  } catch (error) {
    if (signal.aborted) throw new Interrupted();
    out.warn(`The weak model could not write the commit message (${messageOf(error).split("\n")[0]}); using a summary.`);
    return null;
  }
}

/** One commit per applied reply; returns its hash, or null when nothing was committed. */
async function commitReply(author: CommitAuthor, paths: string[], message: string | null): Promise<string | null> {
  const { git, out } = author.services;
  const options = author.services.app.settings.options;
  if (!git || !options.autoCommits) return null;
  const outcome = await git.commitEdits(paths, { message, request: author.request, model: author.model, attribution: options.attribution, verify: options.verify });
  if (outcome.status === "committed") {
    out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
    return outcome.commit.hash;
  }
  if (outcome.status === "failed") out.warn(`Commit failed: ${outcome.message}`);
  return null;
}

/**
 * `/diff`: what the last reply changed. A committed reply is shown from git (its commit);
 * an uncommitted one (--no-auto-commits, a failed commit, no git) from the contents it replaced.
 */
export async function lastReplyDiff(services: CoderServices): Promise<string> {
  const { git, app } = services;
  const last = services.lastReply;
  if (last && last.commit === null) {
    const diffs = last.files.map(({ path, before, after }) => {
      const what = before === null ? " (created)" : after === null ? " (deleted)" : "";
      const body = app.kit.diff.unified(path, before ?? "", after ?? "").replace(/^=+\n/, "").trimEnd();
      return what ? `${path}${what}\n${body}` : body;
    });
    return [`The last reply's changes (not committed):`, ...diffs].join("\n\n");
  }
  // With auto-commits the last reply is coder's last commit, in this session or an earlier one.
  if (git && (last || app.settings.options.autoCommits)) return git.lastDiff();
  return git ? "No reply has changed files in this session yet." : "No reply has changed files yet.";
}
