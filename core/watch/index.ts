// `--watch-files`: comments ending in AI! or AI? in the repository's files become a
// request. Every marked comment, with its file, goes in one request (the files join the
// chat); a change removes the comments in its own commit. Comments coder's own writes put
// in a file never start a request, files saved while a request runs are looked at after it,
// and comments already acted on are not sent again and again.
import type { App } from "../kernel.ts";
import { Interrupted } from "../errors.ts";
import { messageOf } from "../plugins/registry.ts";
import type { Output } from "../chat/events.ts";
import type { Coder } from "../chat/coder.ts";
import type { FileWrite } from "../edit/files.ts";
import { type AiAction, type AiComment, actionOfAll, findAiComments, removeAiComments } from "./comments.ts";
import { RepoWatcher } from "./watcher.ts";

/** Files bigger than this are not scanned for comments (generated or vendored code). */
const MAX_SCAN_BYTES = 1_000_000;
/** Lines shown before and after each comment in the request. */
const CONTEXT_LINES = 3;

/** The request for a set of AI comments: what is asked, then each comment in its file with a few lines around it. */
export function watchRequest(action: AiAction, marked: ReadonlyMap<string, readonly AiComment[]>, read: (path: string) => string | null): string {
  const lead =
    action === "!"
      ? 'The comments marked with █ below, in files I added to the chat, are my instructions. Make the changes they ask for (those ending in "AI!"), reading the others as context, and remove every one of these comments from the code in your edits.'
      : 'The comments marked with █ below, in files I added to the chat, hold my questions (ending in "AI?") and notes for you. Answer the questions.';
  const parts = [lead];
  for (const [path, comments] of marked) {
    const lines = (read(path) ?? "").split("\n");
    const bad = new Set(comments.map((c) => c.line));
    const shown = new Set<number>();
    for (const c of comments) for (let i = c.line - CONTEXT_LINES; i <= c.line + CONTEXT_LINES; i++) if (i >= 0 && i < lines.length) shown.add(i);
    const rows = [...shown].sort((a, b) => a - b);
    const width = String((rows.at(-1) ?? 0) + 1).length;
    const listing: string[] = [];
    rows.forEach((row, i) => {
      if (i > 0 && row > (rows[i - 1] as number) + 1) listing.push(`${" ".repeat(width + 1)}⋮`);
      listing.push(`${bad.has(row) ? "█" : " "}${String(row + 1).padStart(width)}│${lines[row]}`);
    });
    parts.push(`${path}:\n${listing.join("\n")}`);
  }
  return parts.join("\n\n");
}

/** Requests in a row for comments already acted on (nothing new from the user) before coder stops asking. */
const MAX_CHAINED = 2;

export class AiCommentWatch {
  /** Files with AI comments, in the order they were seen, and their comments. */
  private readonly marked = new Map<string, AiComment[]>();
  private wake: (() => void) | null = null;
  private waiting: Promise<void> | null = null;
  private busy = false;
  /** Files that changed while a request ran: looked at once it is done, so no comment saved meanwhile is lost. */
  private readonly queued = new Set<string>();
  /** Per file, the AI comments coder's own writes put there (the model wrote them): never a request. */
  private readonly ownComments = new Map<string, Set<string>>();
  /** Every comment (path and text) a request has carried: one seen again asks nothing new. */
  private readonly actedOn = new Set<string>();
  /** Requests in a row whose comments had all been acted on already. */
  private chained = 0;
  private readonly watcher: RepoWatcher;
  private readonly stopListening: () => void;

  constructor(
    private readonly app: App,
    private readonly coder: Coder,
    private readonly out: Output,
  ) {
    const { files, git } = coder.services;
    this.watcher = new RepoWatcher({
      root: app.root,
      listFiles: () => coder.services.listFiles(),
      accept: (rel) => !rel.startsWith(".git/") && !rel.startsWith(".coder/") && !(git?.isIgnored(rel) ?? false) && files.check(rel) === null,
      onChange: (paths) => this.scan(paths),
    });
    this.stopListening = files.onWrite((written) => this.noteOwnWrites(written));
  }

  async start(): Promise<void> {
    const folders = await this.watcher.start();
    this.out.print(`Watching ${folders} folder${folders === 1 ? "" : "s"} for comments ending in AI! (make the change) or AI? (answer).`);
  }

  stop(): void {
    this.watcher.stop();
    this.stopListening();
  }

  /** What the marked comments ask for now, if anything. */
  get action(): AiAction | null {
    return actionOfAll([...this.marked.values()].flat());
  }

  /** Resolves when comments ask for something (at once if they already do). */
  next(): Promise<void> {
    if (this.action) return Promise.resolve();
    this.waiting ??= new Promise((resolve) => {
      this.wake = resolve;
    });
    return this.waiting;
  }

  /** A comment that coder's write added (it was not in the text the write replaced) is the model's, not the user's. */
  private noteOwnWrites(written: readonly FileWrite[]): void {
    for (const w of written) {
      const after = w.after === null ? [] : findAiComments(w.path, w.after).map((c) => c.text);
      const before = new Set(w.before === null ? [] : findAiComments(w.path, w.before).map((c) => c.text));
      const known = this.ownComments.get(w.path) ?? new Set<string>();
      const own = new Set(after.filter((text) => known.has(text) || !before.has(text)));
      if (own.size) this.ownComments.set(w.path, own);
      else this.ownComments.delete(w.path);
    }
  }

  private scan(paths: readonly string[]): void {
    if (this.busy) {
      // Coder's own writes, or the user saving meanwhile: looked at when the request is done.
      for (const path of paths) this.queued.add(path);
      return;
    }
    const { files } = this.coder.services;
    for (const path of paths) {
      const text = files.read(path);
      const own = this.ownComments.get(path);
      const comments = text === null || text.length > MAX_SCAN_BYTES ? [] : findAiComments(path, text).filter((c) => !own?.has(c.text));
      if (comments.length) this.marked.set(path, comments);
      else this.marked.delete(path);
    }
    if (this.action && this.wake) {
      const wake = this.wake;
      this.wake = null;
      this.waiting = null;
      wake();
    }
  }

  /** Send what the comments ask for: the files join the chat; a change in the editing format, a question in ask. */
  async runPending(): Promise<void> {
    const action = this.action;
    if (!action) return;
    const marked = new Map(this.marked);
    this.marked.clear();
    const keys = [...marked].flatMap(([path, comments]) => comments.filter((c) => c.action).map((c) => `${path}\0${c.text}`));
    this.chained = keys.every((k) => this.actedOn.has(k)) ? this.chained + 1 : 0;
    if (this.chained > MAX_CHAINED) {
      this.out.warn(
        `Not asking again about the AI comments in ${[...marked.keys()].join(", ")}: coder sent them ${MAX_CHAINED + 1} times in a row already, and nothing new from you asks for more. Edit a comment to ask again.`,
      );
      return;
    }
    for (const k of keys) this.actedOn.add(k);
    this.busy = true;
    const chat = this.coder.chat;
    const stripped = new Set<string>();
    try {
      for (const path of marked.keys()) if (!chat.readOnly.includes(path)) chat.add(path);
      this.out.print(`AI comments in ${[...marked.keys()].join(", ")}: ${action === "!" ? "asking for the change" : "asking the question"}.`);
      const request = watchRequest(action, marked, (p) => this.coder.services.files.read(p));
      const previous = this.coder.format;
      // A question is answered by a format that only answers (its `mode` says so), whichever plugin gives it.
      const answering = [...this.coder.services.app.registry.formats.values()].find((e) => e.item.mode === "none")?.item.name;
      if (action === "?" && answering) this.coder.setEditFormat(answering);
      // A change takes the comments out in its own commit (after the comment's own dirty commit, as Aider).
      if (action === "!") this.coder.amendReply = (_changes, read) => withoutComments(marked, read, stripped);
      try {
        await this.coder.runOne(request);
      } finally {
        this.coder.format = previous;
        this.coder.amendReply = null;
      }
      const o = this.app.settings.options;
      const removed = [...stripped].filter((p) => this.coder.services.lastReply?.files.some((f) => f.path === p));
      if (removed.length && !o.dryRun) this.out.print(`Removed the AI comments from ${removed.join(", ")} with the change${o.autoCommits ? ", in its commit" : ""}.`);
      await this.removeLeftovers(marked, action);
    } catch (error) {
      if (error instanceof Interrupted) throw error;
      this.out.warn(`The AI comments' request failed: ${messageOf(error)}`);
    } finally {
      this.busy = false;
      const again = [...this.queued];
      this.queued.clear();
      if (again.length) this.scan(again);
    }
  }

  /** The comments still in the files go: they were acted on (and must not fire again). */
  private async removeLeftovers(marked: ReadonlyMap<string, readonly AiComment[]>, action: AiAction): Promise<void> {
    const { files, git, out } = this.coder.services;
    const cleaned = withoutComments(marked, (path) => files.read(path));
    if (!cleaned.size) return;
    const report = await files.writeAll(cleaned, { dryRun: this.app.settings.options.dryRun });
    const written = report.written.map((w) => w.path);
    if (written.length) out.print(`Removed the AI comments left in ${written.join(", ")}.`);
    // After a change, the reply's commit held the comments: commit their removal on top of it.
    const last = this.coder.services.lastReply;
    const o = this.app.settings.options;
    const committed = action === "!" && last?.commit ? written.filter((p) => last.files.some((f) => f.path === p)) : [];
    if (!git || !o.autoCommits || !committed.length) return;
    const outcome = await git.commitEdits(committed, { message: "chore: remove the AI comments acted on", request: "remove the AI comments", model: this.coder.model, attribution: o.attribution, verify: o.verify });
    if (outcome.status === "committed") out.emit({ type: "commit", hash: outcome.commit.hash, message: outcome.commit.message });
  }

  /** Non-interactive `--watch-files`: act on comments until the process is stopped. */
  async runForever(): Promise<never> {
    for (;;) {
      await this.next();
      await this.runPending();
    }
  }
}

/** Each marked file's text (as `read` gives it) without its marked comments, when any is still there; `done` collects the paths. */
function withoutComments(marked: ReadonlyMap<string, readonly AiComment[]>, read: (path: string) => string | null, done?: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, comments] of marked) {
    const text = read(path);
    const without = text === null ? null : removeAiComments(text, comments);
    if (without === null) continue;
    out.set(path, without);
    done?.add(path);
  }
  return out;
}
