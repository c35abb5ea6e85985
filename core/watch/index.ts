// `--watch-files`: comments ending in AI! or AI? in the repository's files become a
// request. Every marked comment, with its file, goes in one request (the files join the
// chat); afterwards the comments the model left in are removed.
import type { App } from "../kernel.ts";
import { Interrupted } from "../errors.ts";
import { messageOf } from "../plugins/registry.ts";
import type { Output } from "../chat/events.ts";
import type { Coder } from "../chat/coder.ts";
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

export class AiCommentWatch {
  /** Files with AI comments, in the order they were seen, and their comments. */
  private readonly marked = new Map<string, AiComment[]>();
  private wake: (() => void) | null = null;
  private waiting: Promise<void> | null = null;
  private busy = false;
  private readonly watcher: RepoWatcher;

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
  }

  async start(): Promise<void> {
    const folders = await this.watcher.start();
    this.out.print(`Watching ${folders} folder${folders === 1 ? "" : "s"} for comments ending in AI! (make the change) or AI? (answer).`);
  }

  stop(): void {
    this.watcher.stop();
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

  private scan(paths: readonly string[]): void {
    if (this.busy) return; // the request's own writes; the files are looked at again when it is done
    const { files } = this.coder.services;
    for (const path of paths) {
      const text = files.read(path);
      const comments = text === null || text.length > MAX_SCAN_BYTES ? [] : findAiComments(path, text);
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
    this.busy = true;
    const chat = this.coder.chat;
    try {
      for (const path of marked.keys()) if (!chat.readOnly.includes(path)) chat.add(path);
      this.out.print(`AI comments in ${[...marked.keys()].join(", ")}: ${action === "!" ? "asking for the change" : "asking the question"}.`);
      const request = watchRequest(action, marked, (p) => this.coder.services.files.read(p));
      const previous = this.coder.format;
      // A question is answered by a format that only answers (its `mode` says so), whichever plugin gives it.
      const answering = [...this.coder.services.app.registry.formats.values()].find((e) => e.item.mode === "none")?.item.name;
      if (action === "?" && answering) this.coder.setEditFormat(answering);
      try {
        await this.coder.runOne(request);
      } finally {
        this.coder.format = previous;
      }
      await this.removeLeftovers(marked, action);
    } catch (error) {
      if (error instanceof Interrupted) throw error;
      this.out.warn(`The AI comments' request failed: ${messageOf(error)}`);
    } finally {
      this.busy = false;
    }
  }

  /** The comments still in the files go: they were acted on (and must not fire again). */
  private async removeLeftovers(marked: ReadonlyMap<string, readonly AiComment[]>, action: AiAction): Promise<void> {
    const { files, git, out } = this.coder.services;
    const cleaned = new Map<string, string>();
    for (const [path, comments] of marked) {
      const text = files.read(path);
      const without = text === null ? null : removeAiComments(text, comments);
      if (without !== null) cleaned.set(path, without);
    }
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
