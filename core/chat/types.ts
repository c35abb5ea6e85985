// The types the chat engine's parts share: what every coder of a session shares
// (CoderServices), how a coder is set up, and what a request and a turn leave behind.
// They live here, below the turn loop, so the parts the loop calls need not import it.
import type { App } from "../kernel.ts";
import type { Gate } from "../gate/gate.ts";
import type { GitRepo } from "../git/git.ts";
import type { ChatFiles } from "./chat-files.ts";
import type { Output, Totals } from "./events.ts";
import type { Transcript } from "./history.ts";
import type { FileStoreLike } from "./reply/apply.ts";

/**
 * A command coder runs where the user sees it (lint, tests, `/run`, a suggested shell command),
 * after the gate allowed it: the runner decides only where it runs.
 */
export interface ShownCommand {
  /** A shell command line, run in the repository root. */
  command: string;
  purpose: "lint" | "test" | "run";
  timeoutMs: number;
  /** Ends the run (the command and what it started) as a timeout does. */
  signal?: AbortSignal;
  /** The output as it arrives; a runner that cannot stream it hands it all over once the command ended. */
  onOutput?: (text: string) => void;
  /** The command reads the terminal itself (`/run` in the REPL). */
  inheritStdin?: boolean;
}

/** What a shown command did: its exit code and output, as `kit.run` reports them. */
export interface ShownResult {
  code: number;
  stdout: string;
  stderr: string;
  /** It was stopped (a cancel or Ctrl-C), so its failure is no finding to report. */
  stopped?: boolean;
  /** It never ran: the place it was to run in refused it (an editor's terminal), with the reason. */
  refused?: string;
}

/** Where shown commands run: coder's own process group, or an editor's terminal (`coder acp`). */
export type CommandRunner = (run: ShownCommand) => Promise<ShownResult>;

/** Everything a coder shares with the other coders of the session (architect and editor). */
export interface CoderServices {
  app: App;
  out: Output;
  /** Runs lint, tests and shell commands where the user sees them. */
  runShown: CommandRunner;
  files: FileStoreLike;
  gate: Gate;
  git: GitRepo | null;
  transcript: Transcript;
  /** Usage and cost over the whole session, every model included. */
  totals: Totals;
  /** The terminal bell (--notifications); a front end without one does nothing. */
  bell: () => void;
  /** Repository files (git ls-files, cached). */
  listFiles(): Promise<string[]>;
  /** The files the last reply wrote (any coder of the session), for `/diff`; unset until one did. */
  lastReply?: LastReply;
  /** The text of the last reply the model sent (any coder of the session). */
  lastReplyText?: string;
  /** The last failure the session reported, for `/report`. */
  lastError?: string;
}

/** What the last reply that wrote files changed. */
export interface LastReply {
  /** Each file as it was before the reply and as the reply wrote it (null: missing / deleted). */
  files: { path: string; before: string | null; after: string | null }[];
  /** The commit holding the change; null when it stayed uncommitted (--no-auto-commits, or the commit failed). */
  commit: string | null;
}

export interface CoderSetup {
  model: string;
  editFormat: string;
  /** The editor step of architect: edit-only prompts, no repo map, fresh history. */
  editor: boolean;
  maxReflections: number;
  chat: ChatFiles;
}

export interface TurnResult {
  /** False when edits (or lint/tests) still failed when the budget ran out, or the request failed. */
  ok: boolean;
  reflections: number;
}

/** What one request leaves for the next: the reflection (the next user message), if any. */
export interface SendResult {
  reflection: string | null;
  /** The reflection is a repair (failed edits, lint, tests), not just "I added files". */
  failing: boolean;
}
