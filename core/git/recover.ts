// At start: a write batch that an earlier run left unfinished (killed between its
// first write and its commit, or a commit git refused) is found through its journal
// and offered back to the user: commit what was written as that reply, or restore
// the old contents. Never silently: otherwise the next edit's dirty commit would
// file the half-done reply away as the user's own "pending changes".
import { ConfigError } from "../errors.ts";
import type { FileStore } from "../edit/files.ts";
import type { Gate } from "../gate/gate.ts";
import type { GitRepo } from "./git.ts";
import { clearJournal, type Journal, journalOwner, journalState, readJournal, restoreJournal } from "../edit/journal.ts";
import { ownerRunning } from "../edit/lock.ts";

export interface RecoveryInput {
  root: string;
  git: GitRepo | null;
  files: FileStore;
  gate: Gate;
  /** A person can be asked (not --yes-always, which answers with the default). */
  interactive: boolean;
  yesAlways: boolean;
  print: (text: string) => void;
  warn: (text: string) => void;
}

/** Resolve an unfinished write batch, if one is pending; throws a ConfigError when nobody can decide. */
export async function recoverInterruptedWrite(input: RecoveryInput): Promise<void> {
  const journal = readJournal(input.root, input.warn);
  // A journal whose writer still runs is that session's business.
  if (!journal || (journal.pid !== process.pid && ownerRunning(journalOwner(journal)))) return;
  const state = journalState(input.root, journal);
  if (!state.written.length) {
    clearJournal(input.root);
    return;
  }
  const when = journal.started.replace("T", " ").slice(0, 19);
  const complete = state.untouched.length === 0 && state.changedSince.length === 0;
  const listed = state.written.join(", ");
  const story = complete
    ? `A coder run (at ${when} UTC) wrote ${listed} for the request "${shortRequest(journal)}" but did not commit ${state.written.length === 1 ? "it" : "them"}.`
    : `A coder run (at ${when} UTC) was stopped while writing the reply to "${shortRequest(journal)}": ${listed} ${state.written.length === 1 ? "was" : "were"} written${state.untouched.length ? `, ${state.untouched.join(", ")} not` : ""}.`;
  const changed = state.changedSince.length ? ` (${state.changedSince.join(", ")} changed since and ${state.changedSince.length === 1 ? "is" : "are"} left alone.)` : "";
  // A complete write is worth keeping; a half-written reply is better undone.
  const commitFirst = complete && input.git !== null;
  if (!input.interactive && !input.yesAlways) {
    throw new ConfigError(
      `${story}${changed} Run coder in a terminal to commit or restore ${state.written.length === 1 ? "it" : "them"}, or with --yes-always to ${commitFirst ? "commit them" : "restore the old contents"}.`,
    );
  }
  input.print(`${story}${changed}`);
  const commit = () => commitJournal(input, journal, state.written);
  const restore = () => restoreFiles(input, journal);
  const [first, second] = commitFirst ? [commit, restore] : [restore, commit];
  const [ask1, ask2] = commitFirst
    ? [`Commit ${listed} now, as that reply?`, `Restore the contents ${listed} had before?`]
    : [`Restore the contents ${listed} had before?`, input.git ? `Commit ${listed} as they are now?` : null];
  if (await input.gate.confirm(ask1, { key: "recover:first" })) await first();
  else if (ask2 && (await input.gate.confirm(ask2, { key: "recover:second" }))) await second();
  else input.warn(`Left ${listed} as they are, uncommitted.`);
  clearJournal(input.root);
}

function shortRequest(journal: Journal): string {
  const line = journal.request.split("\n")[0]?.trim() ?? "";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

async function commitJournal(input: RecoveryInput, journal: Journal, paths: string[]): Promise<void> {
  if (!input.git) return;
  const outcome = await input.git.commitEdits(paths, { request: journal.request, model: journal.model });
  if (outcome.status === "committed") input.print(`Committed ${outcome.commit.hash.slice(0, 7)} ${outcome.commit.message}`);
  else input.warn(`Could not commit ${paths.join(", ")}: ${outcome.message}`);
}

async function restoreFiles(input: RecoveryInput, journal: Journal): Promise<void> {
  const restored = restoreJournal(input.root, journal, (path, bytes) => input.files.restoreBytes(path, bytes));
  input.print(`Restored ${restored.join(", ")}.`);
}
