// Writing what a reply changed and committing it: the user's pending changes are
// committed first, the files written atomically, one commit per reply with the weak
// model's message. Also `/diff`, which shows that change again.
import { Interrupted } from "../../errors.ts";
import type { WriteOptions, WriteReport } from "../../edit/files.ts";
import { type CommitStyle, styleCommitPrompt } from "../../git/commit-message.ts";
import { commitMessagePrompt, type GitOperation } from "../../git/git.ts";
import { clearJournal, sha256, writeJournal } from "../../edit/journal.ts";
import { RepoLock } from "../../edit/lock.ts";
import { keptLines, mergedNote } from "../../edit/rebase.ts";
import type { ChatMessage, EditOutcome, Kit } from "../../plugin.ts";
import { messageOf } from "../../plugins/registry.ts";
import { type AppliedReply, editTargets, isStale, outcomeDetail } from "./apply.ts";
import { failureSummary } from "../failures.ts";
import { trace } from "../../trace.ts";
import { diffsShown } from "../events.ts";
import type { CoderServices } from "../types.ts";

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

/** What writing a reply did: the paths written, the reply as finally staged, and a commit that failed. */
export interface WriteResult {
  written: string[];
  /** What `alongside` returned (null when nothing was written, or it was not given). */
  checked: string | null;
  /** The staged reply the outcomes come from (staged again when another writer changed a file meanwhile). */
  staged: AppliedReply;
  /** git's message when the commit failed (the files stay written; the journal offers to finish it). */
  commitError: string | null;
}

/** How long a reply waits for another coder session's write-and-commit (its hooks included) in the same repository. */
const LOCK_WAIT_MS = 180_000;

/**
 * Write the staged changes (or show them with --dry-run), emit one edit event per
 * outcome, and commit what was written. The write-and-commit step holds the
 * repository's lock, re-applies the edits when another writer changed a file since
 * they were computed, and keeps a journal until the commit is made.
 */
export async function writeAndCommit(author: CommitAuthor, first: AppliedReply, signal: AbortSignal, alongside?: Alongside): Promise<WriteResult> {
  const { services } = author;
  const { out } = services;
  const dryRun = services.app.settings.options.dryRun;
  // The edit events go out once the files are written, before the commit (CLI.md's order).
  // Each written file's diff rides on its last applied edit; failures carry a summary for people.
  const announce = (staged: AppliedReply, written: readonly string[]) => {
    const { outcomes, changes } = staged;
    const pathOf = (o: EditOutcome) => services.files.canonical(o.path);
    const lastApplied = new Map(outcomes.flatMap((o, i) => (o.status === "applied" ? [[pathOf(o), i] as const] : [])));
    outcomes.forEach((o, i) => {
      const path = pathOf(o);
      const notWritten = dryRun && o.status === "applied";
      const diff = written.includes(path) && lastApplied.get(path) === i ? services.app.kit.diff.unified(path, staged.before.get(path) ?? staged.before.get(o.path) ?? "", changes.get(path) ?? "") : null;
      const summary = failureSummary(o);
      out.emit({
        type: "edit",
        path: o.path,
        status: o.status,
        detail: notWritten ? "dry run: not written" : outcomeDetail(o),
        ...(o.status === "applied" && o.rung ? { rung: o.rung } : {}),
        ...(notWritten ? { dryRun: true } : {}),
        ...(diff ? { diff } : {}),
        ...(summary ? { summary } : {}),
      });
    });
    showWhatToCheck(services, staged, written);
  };
  let staged = first;
  let written: string[] = [];
  let commitError: string | null = null;
  let checked: string | null = null;
  if (staged.changes.size && dryRun) {
    for (const [path, after] of staged.changes) out.print(services.app.kit.diff.unified(path, staged.before.get(path) ?? "", after ?? ""));
    await services.files.writeAll(staged.changes, { dryRun: true });
    announce(staged, []);
    // The human renderers say "Applied edit to ..." for every applied outcome; say plainly that nothing was written.
    out.print(`Dry run (--dry-run): nothing was written or committed (${staged.changes.size} file${staged.changes.size === 1 ? "" : "s"} would change).`);
  } else if (staged.changes.size) {
    const lock = new RepoLock(services.app.root);
    let locked: Awaited<ReturnType<RepoLock["acquire"]>> | Error;
    try {
      locked = await lock.acquire(LOCK_WAIT_MS, {
        signal,
        onWait: ({ pid, ageMs }) => out.print(`Waiting for coder pid ${pid} (started ${Math.round(ageMs / 1000)} s ago) to finish writing in this repository…`),
        onTakeOver: (why) => out.warn(why),
      });
    } catch (error) {
      locked = error instanceof Error ? error : new Error(String(error));
    }
    if (locked !== "held") {
      const why =
        locked === "busy"
          ? "another coder session held this repository's write lock (.coder/write.lock) for 3 minutes; nothing was written"
          : locked === "aborted"
            ? "interrupted while waiting for this repository's write lock (.coder/write.lock); nothing was written"
            : `could not take this repository's write lock (.coder/write.lock): ${locked.message}; nothing was written`;
      failApplied(staged.outcomes, () => true, why);
      announce(staged, []);
    } else {
      try {
        // Another session (or an editor) wrote a file while this reply was computed: apply it to the new content.
        if (isStale(staged, services.files)) staged = await staged.restage();
        out.writing?.([...staged.changes.keys()]);
        ({ written, commitError, checked } = await writeThenCommit(author, staged, signal, announce, alongside));
      } finally {
        lock.release();
      }
    }
  } else announce(staged, []);
  if (commitError) out.emit({ type: "error", message: `the edits were written but not committed: ${commitError}`, code: 1 });
  if (signal.aborted && written.length) throw new Interrupted();
  return { written, staged, commitError, checked };
}

/**
 * Work that runs once the files are written, while the weak model writes the commit message
 * (the syntax check, lint and tests): its result is shown as soon as it has one, and the commit
 * follows when both are done, so what a linter fixed is in the reply's commit every time.
 */
export type Alongside = (written: readonly string[], staged: AppliedReply) => Promise<string | null>;

/**
 * An edit placed by the fuzzy rung changed lines the model did not quote exactly, and one merged
 * onto a change made while the model answered was written from older text: the user sees what
 * it did, not only a `--json` detail.
 */
function showWhatToCheck(services: CoderServices, staged: AppliedReply, written: readonly string[]): void {
  const { files, out, app } = services;
  const shown = new Set<string>();
  for (const o of staged.outcomes) {
    const path = files.canonical(o.path);
    if (o.status !== "applied" || !written.includes(path) || shown.has(path)) continue;
    const kept = keptLines(o.note);
    const why =
      o.rung === "fuzzy"
        ? `The edit to ${o.path} matched approximately: its SEARCH text differs from the file`
        : o.note === mergedNote(o.path)
          ? `${o.path} changed while the model answered: its edit was merged onto that change`
          : kept
            ? `The model's new text of ${o.path} had the last commit's lines where you had changed ${kept}: your lines were kept`
            : null;
    if (!why) continue;
    shown.add(path);
    // The diff shown with "Applied edit" already says what changed: it is not printed twice.
    if (!app.settings.options.json && diffsShown(app.settings.options, app.interactive)) {
      out.print(`${why}, so check the change above.${kept ? ` ${dropHint(services)}` : ""}`);
      continue;
    }
    const diff = app.kit.diff.unified(path, staged.before.get(path) ?? staged.before.get(o.path) ?? "", staged.changes.get(path) ?? "");
    out.print(`${kept ? `${why}. ${dropHint(services)} The change` : `${why}, so check the change`}:\n${diff.trimEnd()}`);
  }
}

/** How the user drops a change of theirs that a whole text lacked and coder kept: ask again once it is committed. */
function dropHint(services: CoderServices): string {
  return services.app.settings.options.dirtyCommits ? "They are committed now: to drop them, ask again." : "To drop them, commit them (/commit) and ask again.";
}

/** Turn the applied outcomes that `affected` selects into failures with `detail`. */
function failApplied(outcomes: EditOutcome[], affected: (o: EditOutcome) => boolean, detail: string, declined = false): void {
  outcomes.forEach((o, i) => {
    if (o.status !== "applied" || !affected(o)) return;
    outcomes[i] = declined ? { status: "skipped", edit: o.edit, path: o.path, detail } : { status: "failed", edit: o.edit, path: o.path, reason: "refused", detail };
  });
}

/** Under the lock: journal, dirty commit, write, commit (unless the user is mid-merge or mid-rebase). */
async function writeThenCommit(
  author: CommitAuthor,
  staged: AppliedReply,
  signal: AbortSignal,
  announce: (staged: AppliedReply, written: readonly string[]) => void,
  alongside?: Alongside,
): Promise<{ written: string[]; commitError: string | null; checked: string | null }> {
  const { services } = author;
  const { git, out, files } = services;
  const root = services.app.root;
  const { changes } = staged;
  const operation = git ? await git.operationInProgress() : null;
  // The weak model writes the commit message while git and the disk do their part.
  const message = operation ? Promise.resolve(null) : commitMessage(author, [...changes.keys()], staged.before, changes, signal).catch(() => null);
  const report = await writeChanges(services, staged, operation, (batch) =>
    writeJournal(root, {
      request: author.request,
      model: author.model,
      files: batch.map((b) => ({ path: b.path, before: b.before && Buffer.from(b.before).toString("base64"), beforeSha: b.before && sha256(b.before), afterSha: b.after && sha256(b.after) })),
    }),
  );
  trace("reply: written");
  const written = report.written.map((w) => w.path);
  if (written.length) services.lastReply = { files: report.written.map(({ path, before, after }) => ({ path, before, after })), commit: null };
  // A write the store refused fails every edit of that file, with the store's reason.
  // One the editor declined (its user said no) is the user's decision, like a declined question: not a failure to repair.
  for (const refusal of report.refused) failApplied(staged.outcomes, (o) => files.canonical(o.path) === refusal.path, refusal.reason, refusal.declined);
  announce(staged, written);
  if (!written.length) {
    clearJournal(root);
    return { written, commitError: null, checked: null };
  }
  // The checks run while the message is being written; the commit waits for both.
  const checks = alongside ? alongside(written, staged).catch((error: unknown) => (signal.aborted ? null : Promise.reject(error))) : Promise.resolve(null);
  if (operation) {
    clearJournal(root);
    out.warn(`A git ${operation} is in progress: coder wrote ${written.join(", ")} but did not commit (the commit belongs to your ${operation}; git add the files when they are ready).`);
    return { written, commitError: null, checked: await checks };
  }
  // The files are on disk now: commit them even after Ctrl-C or SIGTERM (the aborted message
  // request resolves to null, so the deterministic summary is used). Leaving them
  // uncommitted would let /undo revert an older commit instead of this change.
  let checked: string | null = null;
  let checkError: unknown = null;
  try {
    checked = await checks;
  } catch (error) {
    checkError = error;
  }
  const text = signal.aborted ? null : await message;
  trace("reply: commit message");
  const commit = await commitReply(author, written, text);
  trace("reply: committed");
  if (services.lastReply) services.lastReply.commit = commit.hash;
  // A failed commit keeps the journal: the next start offers to finish it or restore the files.
  if (commit.error === null) clearJournal(root);
  if (checkError) throw checkError;
  return { written, commitError: commit.error, checked };
}

/** Dirty-commit the user's pending changes to these files (not mid-merge), then write atomically, journal first. */
async function writeChanges(services: CoderServices, staged: AppliedReply, operation: GitOperation | null, journal: WriteOptions["beforeWrite"]): Promise<WriteReport> {
  const { git, out } = services;
  const options = services.app.settings.options;
  if (git && options.dirtyCommits && !operation) {
    const outcome = await git.commitDirty([...staged.changes.keys()], { verify: options.verify });
    if (outcome.status === "committed") out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
    else if (outcome.status === "failed") out.warn(`Could not commit the pending changes first: ${outcome.message}`);
  }
  // Each edit's paths (a move's destination and source) are written together or not at all.
  const together = staged.outcomes.flatMap((o) => (o.status === "applied" && editTargets(o.edit).length > 1 ? [editTargets(o.edit).map((p) => services.files.canonical(p))] : []));
  return services.files.writeAll(staged.changes, { dryRun: false, expected: staged.before, beforeWrite: journal, together });
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

/** One commit per applied reply: its hash (null when nothing was committed), or git's error. */
async function commitReply(author: CommitAuthor, paths: string[], message: string | null): Promise<{ hash: string | null; error: string | null }> {
  const { git, out } = author.services;
  const options = author.services.app.settings.options;
  if (!git || !options.autoCommits) return { hash: null, error: null };
  const { hooks } = author.services.app.registry;
  // Plugins' onCommit have the last word on the message: trailers, a new message, or a refusal.
  const review = hooks.has("onCommit")
    ? async (text: string, files: readonly string[]) => {
        const verdict = await hooks.commit({ message: text, files });
        return "veto" in verdict ? { refused: `plugin ${verdict.plugin} refused the commit: ${verdict.veto}` } : verdict;
      }
    : undefined;
  const outcome = await git.commitEdits(paths, { message, request: author.request, model: author.model, attribution: options.attribution, verify: options.verify, review });
  if (outcome.status === "refused") {
    out.warn(`${outcome.message}; the edits are written but not committed.`);
    return { hash: null, error: null };
  }
  if (outcome.status === "committed") {
    out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
    return { hash: outcome.commit.hash, error: null };
  }
  return { hash: null, error: outcome.status === "failed" ? outcome.message : null };
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
