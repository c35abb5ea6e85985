// What `session/load` restores: one JSON file per ACP session under the repository's
// .coder/acp/ (chat files, model, edit format, history, "allow always" answers),
// rewritten after every prompt turn.
import type { ChatMessage } from "../plugin.ts";
import { foreignOrigin, readState, recordOrigin, writeState } from "../edit/state.ts";

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
  /** Keys answered "allow always". */
  allowed: string[];
  updatedAt: string;
}

/** Session ids are ours (UUIDs): anything else names no file. */
const ID = /^[0-9a-f-]{36}$/;

/** Where a session's record is kept, under .coder/. */
function recordPath(id: string): string {
  return `acp/${id}.json`;
}

/** Past this a record is no session coder saved (a long history is a few MB). */
const RECORD_MAX_BYTES = 256 * 1024 * 1024;

/** Save `record`, with the machine and repository that wrote it (a record planted or copied from elsewhere is not loaded). */
export function saveRecord(root: string, record: SessionRecord): void {
  writeState(root, recordPath(record.id), `${JSON.stringify({ ...record, origin: recordOrigin(root) })}\n`);
}

/**
 * The saved session `id` of the repository at `root`, or null when there is none, it is
 * unreadable, or coder did not write it on this machine for this repository (then `ignored`
 * hears why).
 */
export function loadRecord(root: string, id: string, ignored?: (why: string) => void): SessionRecord | null {
  if (!ID.test(id)) return null;
  const bytes = readState(root, recordPath(id), RECORD_MAX_BYTES);
  if (!bytes) return null;
  try {
    const data = JSON.parse(new TextDecoder().decode(bytes)) as Partial<SessionRecord> & { origin?: unknown };
    if (data.version !== 1 || data.id !== id || !Array.isArray(data.messages)) return null;
    const foreign = foreignOrigin(root, data.origin);
    if (foreign) {
      ignored?.(`.coder/${recordPath(id)} was ignored: ${foreign}, so it is not a session coder saved here`);
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
      allowed: strings(data.allowed),
      updatedAt: String(data.updatedAt ?? ""),
    };
  } catch {
    return null;
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
