// The saved sessions of a repository, for `session/list` and `session/delete`: each record
// under .coder/acp/ that loads (records.ts decides which are believed), newest first, titled
// by its first request.
import { existsSync, readdirSync } from "node:fs";
import { dirname, relative } from "node:path";
import { removeState, stateDirOf } from "../edit/state.ts";
import type * as acp from "@agentclientprotocol/sdk";
import { loadRecord, recordPath, type SessionRecord } from "./records.ts";

/** The longest title shown for a session. */
const TITLE_CHARS = 80;

/** A session's title: the first line of its first request, shortened. */
export function sessionTitle(record: SessionRecord): string | null {
  const first = record.messages.find((m) => m.role === "user")?.content.trim().split("\n")[0]?.trim();
  if (!first) return null;
  return first.length > TITLE_CHARS ? `${first.slice(0, TITLE_CHARS - 1)}…` : first;
}

/** The saved sessions of the repository at `root`, newest first. */
export function listSessions(root: string): acp.SessionInfo[] {
  const folder = dirname(recordPath(root, "x"));
  if (!existsSync(folder)) return [];
  const records = readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .map((name) => loadRecord(root, name.slice(0, -".json".length)))
    .filter((r): r is SessionRecord => r !== null);
  records.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  return records.map((r) => ({ sessionId: r.id, cwd: r.cwd, title: sessionTitle(r), ...(r.updatedAt ? { updatedAt: r.updatedAt } : {}) }));
}

/** Remove a saved session; false when there was none. */
export function deleteSession(root: string, id: string): boolean {
  if (!loadRecord(root, id)) return false;
  // Through the state folder's own remover: a link is removed, never followed.
  removeState(root, relative(stateDirOf(root), recordPath(root, id)));
  return true;
}
