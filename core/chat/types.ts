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

/** Everything a coder shares with the other coders of the session (architect and editor). */
export interface CoderServices {
  app: App;
  out: Output;
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
