// Applying SEARCH/REPLACE-shaped edits (the `diff` formats, the `tool` format's
// edit_file, a user's format: all reach it as kit.formats): through the shared
// matcher, falling back to the other chat files when a block does not match in the
// file it names (never for an empty SEARCH). A SEARCH that matches several places
// lands only where the reply's clues point to one.
import type { Edit, EditOutcome, FormatHelpers, Matcher, MatchResult, MatchRung, SearchReplaceEdit, Workspace } from "../plugin.ts";
import { FormatError } from "../errors.ts";
import { BlockSyntaxError, parseEditBlocks } from "./blocks.ts";
import { fenced } from "./fence.ts";
import { SharedMatcher } from "./matcher.ts";
import { keepUncommitted, keptNote, mergedNote, rebaseWhole } from "./rebase.ts";
import { QUOTED_LINES, type UncommittedChanges } from "./uncommitted.ts";
import { choosePlace, hintsFromHunkHeader, hintsFromProse } from "./placement.ts";
import { isShellFence, readShellBlock, shellBlocks } from "./shell-fence.ts";

/** Ambiguous matches the matcher lists in full (it reports one more when there are more). */
const MAX_PLACES = 12;

/** The canonical divider, preferred when several divider-shaped lines could split a block. */
const CANONICAL_DIVIDER = "=======";

/** Apply edits in order to the staged workspace; one outcome each, never throws for a mismatch. */
export function applySearchReplaceEdits<E extends SearchReplaceEdit>(matcher: Matcher, edits: E[], ws: Workspace): EditOutcome<E>[] {
  // Where the previous edit of each file ended: a clue for the next edit of the same file.
  const lastEnd = new Map<string, number>();
  return edits.map((edit) => {
    const read = edit.splits ? readSplits(matcher, edit, ws) : edit;
    if ("status" in read) return read;
    const { outcome, endLine } = applyOne(matcher, read, ws, lastEnd.get(edit.path) ?? null);
    if (outcome.status === "applied" && endLine !== undefined) lastEnd.set(outcome.path, endLine);
    return outcome;
  });
}

/**
 * The one reading of a block with several divider-shaped lines whose SEARCH fits the file.
 * Only splits at a canonical `=======` are considered when there is one. Several that fit at
 * the same place: the longest SEARCH (the file holds the other divider-shaped lines there).
 */
function readSplits<E extends SearchReplaceEdit>(matcher: Matcher, edit: E, ws: Workspace): E | EditOutcome<E> {
  const splits = edit.splits!;
  const canonical = splits.filter((s) => s.divider === CANONICAL_DIVIDER);
  const pool = canonical.length ? canonical : splits;
  const content = ws.read(edit.path);
  const tried = pool.map((s) => ({ split: s, result: content === null ? null : matcher.replace(content, s.search, s.replace) }));
  const fits = tried.filter((t) => t.result?.status === "applied" || (t.result?.status === "failed" && t.result.reason === "no-op"));
  const startOf = (r: MatchResult | null) => (r?.status === "applied" ? r.startLine : r?.status === "failed" ? r.candidates[0]?.startLine : undefined);
  const samePlace = fits.length > 1 && fits.every((f) => startOf(f.result) === startOf(fits[0]!.result));
  const chosen = fits.length === 1 || samePlace ? fits.reduce((a, b) => (b.split.search.length > a.split.search.length ? b : a)) : null;
  if (chosen) return { ...edit, search: chosen.split.search, replace: chosen.split.replace, splits: undefined };

  const dividers = [...new Set(splits.map((s) => `\`${s.divider}\``))].join(", ");
  const intro = `This block has ${splits.length} lines shaped like the \`=======\` divider (${dividers}), so it can be read ${splits.length} ways.`;
  const rule =
    "Rule: a line that looks like `=======` (a title underline, a merge-conflict example) is read as the divider. Choose SEARCH lines that leave such lines out, or make SEARCH long enough that only one reading matches the file.";
  if (content === null) return { status: "failed", edit, path: edit.path, reason: "missing-file", detail: `${intro} ${edit.path} does not exist, so no reading can be checked against it.\n\n${rule}` };
  if (fits.length === 0) {
    const first = tried[0]!;
    const why = first.result?.status === "failed" ? matcher.explain(first.result, first.split.search, first.split.replace, edit.path) : "";
    return { status: "failed", edit, path: edit.path, reason: "not-found", detail: `${intro} Under none of them does the SEARCH text match ${edit.path}. Read at the first \`${first.split.divider}\`:\n\n${why}\n\n${rule}` };
  }
  const where = fits.map((f) => `at line ${startOf(f.result)}`).join(", ");
  return { status: "failed", edit, path: edit.path, reason: "ambiguous", detail: `${intro} ${fits.length} readings match ${edit.path} at different places (${where}), so it is not clear which line divides SEARCH from REPLACE.\n\n${rule}` };
}

interface Applied<E extends Edit> {
  outcome: EditOutcome<E>;
  /** Last line of the edit's new text in the file (for the next edit's clue). */
  endLine?: number;
}

/** Why an empty SEARCH on an existing file the model never saw is refused. */
function existsUnseen(path: string): string {
  return `${path} already exists, but it was not in the chat, so you have not seen its content: a block with an empty SEARCH would add its REPLACE text to the end of it. Nothing was written to ${path}. If you meant a new file, choose a path that does not exist; to change ${path}, base your edits on its content.`;
}

/** Why a whole new text of an existing file the model was not shown is refused. */
function writtenBlind(path: string): string {
  return `${path} already exists, but it is not in the chat, so you have not seen its content: your text would replace all of it. Nothing was written to ${path}. If you meant a new file, choose a path that does not exist; if you meant an example, do not send it as the content of a file. To change ${path}, ask the user to add it to the chat.`;
}

function applyOne<E extends SearchReplaceEdit>(matcher: Matcher, edit: E, ws: Workspace, previousEnd: number | null): Applied<E> {
  const { path, search, replace } = edit;
  const refused = ws.check?.(path);
  const content = ws.read(path);
  const failed = (r: Extract<MatchResult, { status: "failed" }>, at = path): Applied<E> => ({
    outcome: { status: "failed", edit, path: at, reason: r.reason, detail: matcher.explain(r, search, replace, at), match: r },
  });
  const landed = (at: string, r: Extract<MatchResult, { status: "applied" }>, note?: string): Applied<E> => ({ outcome: stageWrite(edit, ws, at, r.content, note, r.rung), endLine: r.endLine });
  if (search.trim() === "") {
    if (refused) return { outcome: { status: "failed", edit, path, reason: "refused", detail: refused } };
    if (content === null || content === "") return { outcome: stageWrite(edit, ws, path, withFinalNewline(replace), content === null ? "created" : "filled") };
    // "Creating" a file that exists but was never shown to the model must not append to it.
    if (edit.unseen) return { outcome: { status: "failed", edit, path, reason: "invalid", detail: existsUnseen(path) } };
    const r = matcher.replace(content, search, replace);
    return r.status === "applied" ? landed(path, r, "appended") : failed(r);
  }
  let first = content === null ? null : matcher.replace(content, search, replace);
  let note: string | undefined;
  if (content !== null && first?.status === "failed" && first.reason === "ambiguous" && first.candidates.length <= MAX_PLACES) {
    const place = choosePlace(first.candidates, content, edit.hints ?? {}, previousEnd);
    const placed = place ? matcher.replace(content, search, replace, { at: place.at }) : null;
    if (placed?.status === "applied") {
      note = `the SEARCH text matches ${first.candidates.length} places; used lines ${placed.startLine}-${placed.endLine}: ${place!.why}`;
      first = placed;
    }
  }
  if (first?.status === "applied" && !refused) return landed(path, first, note);
  // Not found in the named file (or the file is missing): try the other chat files, as Aider does.
  if (first === null || (first.status === "failed" && first.reason === "not-found")) {
    // Only where exactly one of them holds it: two files with the same text (a/utils.py and
    // b/utils.py for "utils.py") leave no way to tell which one the model meant.
    const fits: [string, Extract<MatchResult, { status: "applied" }>][] = [];
    for (const other of ws.chatFiles) {
      if (other === path || ws.check?.(other)) continue;
      const text = ws.read(other);
      if (text === null) continue;
      const r = matcher.replace(text, search, replace);
      if (r.status === "applied") fits.push([other, r]);
    }
    const [only] = fits;
    if (fits.length === 1) return landed(only![0], only![1], `the SEARCH text was not in ${path}; it matched in ${only![0]}, which was edited instead`);
    if (fits.length > 1) {
      const names = fits.map(([f]) => f);
      const detail = `${path} ${first === null ? "does not exist" : "does not contain the SEARCH text"}, and the SEARCH text matches in ${names.length} files in the chat (${names.join(", ")}), so it is not clear which one you meant. Nothing was written. Send the block again under the file's full path as listed in the chat.`;
      return { outcome: { status: "failed", edit, path, reason: "ambiguous", detail } };
    }
  }
  if (refused) return { outcome: { status: "failed", edit, path, reason: "refused", detail: refused } };
  if (first === null) {
    return {
      outcome: {
        status: "failed",
        edit,
        path,
        reason: "missing-file",
        detail: `${path} does not exist, and the SEARCH text was not found in any other file in the chat. To create a new file, leave the SEARCH section empty and put the whole file in REPLACE.`,
      },
    };
  }
  return first.status === "applied" ? landed(path, first, note) : failed(first);
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


/**
 * Stage `content`, the whole new text of `path` the model wrote from the text it was shown
 * (`kit.formats.stage`). When the file changed while the model answered, the model's change is
 * merged onto it; a change to the same lines fails (nothing staged) and quotes them as they are now.
 * Where the user's uncommitted change (known to `uncommitted` while a reply is staged) is
 * missing from `content`, which has the committed lines there instead, the user's lines are kept.
 */
export function stageWhole<E extends Edit>(edit: E, ws: Workspace, path: string, content: string, note?: string, uncommitted?: Pick<UncommittedChanges, "committed">): EditOutcome<E> {
  const shown = ws.shown?.(path);
  const now = ws.read(path);
  // A file the request did not show (not in the chat): a whole text for it was written blind.
  if (ws.shown && shown === undefined && now !== null && now.trim() !== "") return { status: "failed", edit, path, reason: "invalid", detail: writtenBlind(path) };
  if (shown === undefined || shown === now) {
    const head = uncommitted?.committed(path);
    // CRLF files compare line by line only in LF (the committed text is LF): left as written.
    const kept = head !== undefined && now !== null && !now.includes("\r") ? keepUncommitted(head, now, content) : null;
    return kept ? stageWrite(edit, ws, path, kept.text, keptNote(path, kept.kept)) : stageWrite(edit, ws, path, content, note);
  }
  if (now === null) {
    const detail = `You wrote the new text of ${path} from the text you were shown, but ${path} was deleted while you were answering (most likely by the user). Nothing was written. Ask the user whether ${path} should come back before you send it again.`;
    return { status: "failed", edit, path, reason: "missing-file", detail };
  }
  const rebased = rebaseWhole(shown, now, content);
  if ("text" in rebased) return stageWrite(edit, ws, path, rebased.text, mergedNote(path));
  const { startLine, endLine, text, shownLine } = rebased.conflict;
  const quoted = text.split("\n").slice(0, QUOTED_LINES).join("\n");
  const where = startLine === endLine ? `line ${startLine}` : `lines ${startLine}-${Math.min(endLine, startLine + QUOTED_LINES - 1)}`;
  const detail = [
    `You wrote the new text of ${path} from the text you were shown, but ${path} changed while you were answering (most likely by the user, who is working on this file), and your change touches the same lines (line ${shownLine} of the text you were shown). Nothing was written to ${path}.`,
    "",
    ...(text ? [`Those lines now read (${where} of ${path}):`, fenced(quoted.endsWith("\n") ? quoted : `${quoted}\n`)] : [`Those lines are no longer in ${path} (they were deleted after line ${startLine - 1}).`]),
    "",
    `Rule: never undo the user's changes. Send ${path} again, written from its current text, and keep the user's change unless they asked to undo it.`,
  ].join("\n");
  return {
    status: "failed",
    edit,
    path,
    reason: "not-found",
    detail,
    match: { status: "failed", reason: "not-found", candidates: [], userChange: { path, startLine, endLine, text, committedLine: shownLine, was: "shown" } },
  };
}

/** `kit.formats`: the helpers above (and the block and shell-fence parsers) bound to the kit's matcher (and so to its uncommitted-change guard). */
export function formatHelpers(matcher: Matcher): FormatHelpers {
  return {
    applySearchReplace: (edits, ws) => applySearchReplaceEdits(matcher, edits, ws),
    parseBlocks: (text, fence, chatFiles, pathAt) => {
      try {
        return parseEditBlocks(text, fence, chatFiles, pathAt);
      } catch (err) {
        throw err instanceof BlockSyntaxError ? new FormatError(err.message) : err;
      }
    },
    shellBlocks,
    isShellFence,
    readShellBlock,
    stage: (edit, ws, path, content, note) => stageWhole(edit, ws, path, content, note, matcher instanceof SharedMatcher ? matcher.uncommitted : undefined),
    hintsFromProse,
    hintsFromHunkHeader,
    choosePlace,
  };
}
