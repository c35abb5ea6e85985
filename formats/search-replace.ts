// Applying SEARCH/REPLACE-shaped edits (the `diff` formats and the `tool` format's
// edit_file): through kit.matcher, falling back to the other chat files when a
// block does not match in the file it names (never for an empty SEARCH).
import type { Edit, EditOutcome, Kit, MatchRung, Workspace } from "../core/plugin.ts";

export interface SearchReplaceEdit extends Edit {
  search: string;
  replace: string;
}

/** Apply edits in order to the staged workspace; one outcome each, never throws for a mismatch. */
export function applySearchReplaceEdits<E extends SearchReplaceEdit>(kit: Kit, edits: E[], ws: Workspace): EditOutcome<E>[] {
  return edits.map((edit) => applyOne(kit, edit, ws));
}

function applyOne<E extends SearchReplaceEdit>(kit: Kit, edit: E, ws: Workspace): EditOutcome<E> {
  const { path, search, replace } = edit;
  const refused = ws.check?.(path);
  const content = ws.read(path);
  if (search.trim() === "") {
    if (refused) return { status: "failed", edit, path, reason: "refused", detail: refused };
    if (content === null || content === "") return stageWrite(edit, ws, path, withFinalNewline(replace), content === null ? "created" : "filled");
    const r = kit.matcher.replace(content, search, replace);
    if (r.status === "applied") return stageWrite(edit, ws, path, r.content, "appended", r.rung);
    return { status: "failed", edit, path, reason: r.reason, detail: kit.matcher.explain(r, search, replace, path), match: r };
  }
  const first = content === null ? null : kit.matcher.replace(content, search, replace);
  if (first?.status === "applied" && !refused) return stageWrite(edit, ws, path, first.content, undefined, first.rung);
  // Not found in the named file (or the file is missing): try the other chat files, as Aider does.
  if (first === null || (first.status === "failed" && first.reason === "not-found")) {
    for (const other of ws.chatFiles) {
      if (other === path || ws.check?.(other)) continue;
      const text = ws.read(other);
      if (text === null) continue;
      const r = kit.matcher.replace(text, search, replace);
      if (r.status === "applied") return stageWrite(edit, ws, other, r.content, `the SEARCH text was not in ${path}; it matched in ${other}, which was edited instead`, r.rung);
    }
  }
  if (refused) return { status: "failed", edit, path, reason: "refused", detail: refused };
  if (first === null) {
    return {
      status: "failed",
      edit,
      path,
      reason: "missing-file",
      detail: `${path} does not exist, and the SEARCH text was not found in any other file in the chat. To create a new file, leave the SEARCH section empty and put the whole file in REPLACE.`,
    };
  }
  if (first.status === "applied") return stageWrite(edit, ws, path, first.content, undefined, first.rung);
  return { status: "failed", edit, path, reason: first.reason, detail: kit.matcher.explain(first, search, replace, path), match: first };
}

/** A whole new file's text: `text`, ending with a newline unless empty. */
export const withFinalNewline = (text: string) => (text === "" || text.endsWith("\n") ? text : text + "\n");

/** Stage `content` for `path`: applied (with `note` and `rung` when given), or refused with the workspace's reason. */
export function stageWrite<E extends Edit>(edit: E, ws: Workspace, path: string, content: string, note?: string, rung?: MatchRung): EditOutcome<E> {
  try {
    ws.write(path, content);
  } catch (err) {
    return { status: "failed", edit, path, reason: "refused", detail: (err as Error).message };
  }
  return { status: "applied", edit, path, ...(rung ? { rung } : {}), ...(note ? { note } : {}) };
}
