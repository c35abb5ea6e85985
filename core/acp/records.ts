// What `session/load` restores: one JSON file per ACP session under the repository's
// .coder/acp/ (chat files, model, edit format, history, "allow always" answers),
// rewritten after every prompt turn.
import type { ChatMessage } from "../plugin.ts";
import { join } from "node:path";
import { foreignOrigin, readState, recordOrigin, stateDirOf, writeState } from "../edit/state.ts";

/**
 * The "allow always" answers a record keeps: edits and new files inside the repository.
 * A shell command, a config change or a conflicted file is asked every time, so such a key
 * is never written, and never believed when a record (perhaps planted) holds one.
 */
export function persistentAllowance(key: string): boolean {
  return /^(edit|create):(?!\/|\.\.(\/|$))./.test(key);
}

export interface SessionRecord {
  version: 1;
  id: string;
  cwd: string;
  model: string;
  editFormat: string;
  editable: string[];
  readOnly: string[];
  /** The finished conversation (as the model will see it: summaries included). */
  messages: ChatMessage[];
  /** Keys answered "allow always" (edits and new files only: `persistentAllowance`). */
  allowed: string[];
  updatedAt: string;
  /** The session's finished tool calls (edits with their diffs and commit lines, runs, MCP calls), replayed by `session/load`. */
  cards?: ReplayCard[];
}

/** A finished tool call as the editor last saw it, shown again after message number `after`. */
export interface ReplayCard {
  after: number;
  title: string;
  kind: string;
  status: "completed" | "failed";
  content: unknown[];
  locations?: unknown[];
}

/** Session ids are ours (UUIDs): anything else names no file. */
const ID = /^[0-9a-f-]{36}$/;

/** Where a session's record is kept, under .coder/. */
function recordRel(id: string): string {
  return `acp/${id}.json`;
}

export function recordPath(root: string, id: string): string {
  return join(stateDirOf(root), recordRel(id));
}

/** Past this a record is no session coder saved (a long history is a few MB). */
const RECORD_MAX_BYTES = 256 * 1024 * 1024;

/** Save `record`, with the machine and repository that wrote it (a record planted or copied from elsewhere is not loaded). */
export function saveRecord(root: string, record: SessionRecord): void {
  writeState(root, recordRel(record.id), `${JSON.stringify({ ...record, allowed: record.allowed.filter(persistentAllowance), origin: recordOrigin(root) })}\n`);
}

/**
 * The saved session `id` of the repository at `root`, or null when there is none, it is
 * unreadable, or coder did not write it on this machine for this repository (then `ignored`
 * hears why).
 */
export function loadRecord(root: string, id: string, ignored?: (why: string) => void): SessionRecord | null {
  if (!ID.test(id)) return null;
  const bytes = readState(root, recordRel(id), RECORD_MAX_BYTES);
  if (!bytes) return null;
  try {
    const data = JSON.parse(new TextDecoder().decode(bytes)) as Partial<SessionRecord> & { origin?: unknown };
    if (data.version !== 1 || data.id !== id || !Array.isArray(data.messages)) return null;
    const foreign = foreignOrigin(root, data.origin);
    if (foreign) {
      ignored?.(`.coder/${recordRel(id)} was ignored: ${foreign}, so it is not a session coder saved here`);
      return null;
    }
    return {
      version: 1,
      id,
      cwd: String(data.cwd ?? root),
      model: String(data.model ?? ""),
      editFormat: String(data.editFormat ?? ""),
      editable: strings(data.editable),
      readOnly: strings(data.readOnly),
      messages: data.messages.filter((m): m is ChatMessage => !!m && typeof m === "object" && typeof m.role === "string" && typeof m.content === "string"),
      allowed: strings(data.allowed).filter(persistentAllowance),
      cards: Array.isArray(data.cards) ? data.cards.filter(isReplayCard) : [],
      updatedAt: String(data.updatedAt ?? ""),
    };
  } catch {
    return null;
  }
}

function isReplayCard(value: unknown): value is ReplayCard {
  const c = value as Partial<ReplayCard> | null;
  return !!c && typeof c === "object" && typeof c.after === "number" && typeof c.title === "string" && typeof c.kind === "string" && (c.status === "completed" || c.status === "failed") && Array.isArray(c.content);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
