// The user's uncommitted changes, kept from a silent revert. While a reply is staged, the
// files it may touch that differ from HEAD are known here; a SEARCH text that quotes such a
// file as it was committed, where the work tree has since changed those lines, is stale:
// matching it approximately would write the old lines back over the user's change.
import { diffArrays } from "diff";
import { isBlank, textLines, toFileLines } from "./lines.ts";
import { normalizeRel } from "./paths.ts";
import type { MatchFailure } from "../plugin.ts";

/** A file whose work-tree text differs from its last commit. */
export interface CommittedFile {
  /** Repository path. */
  path: string;
  /** Its text at HEAD (LF line endings). */
  head: string;
  /** Its text in the work tree now, as the file store reads it (an editor's buffer when it has one). */
  disk: string;
  /** What `head` is: the last commit (default), the saved file under an editor's unsaved buffer, or the text the model was shown (the file changed while it answered). */
  was?: "committed" | "saved" | "shown";
}

/** At most this many current lines are quoted back to the model (a stale SEARCH here; a whole text kit.formats.stage could not merge). */
export const QUOTED_LINES = 40;

/**
 * The dirty files of the replies being staged. The kernel opens a scope per reply
 * (`begin`) and the shared matcher asks `staleSearch` before it lets a SEARCH land
 * anywhere but on an exact copy of the current lines.
 */
export class UncommittedChanges {
  private readonly scopes = new Set<Scope>();

  /** Know these files until the returned function is called (when the reply is staged). */
  begin(files: readonly CommittedFile[]): () => void {
    if (files.length === 0) return () => {};
    const scope: Scope = { files: files.map(linesOf), committed: new Map(files.filter((f) => (f.was ?? "committed") === "committed").map((f) => [f.path, f.head])), verdicts: new Map() };
    this.scopes.add(scope);
    return () => void this.scopes.delete(scope);
  }

  /** True while a reply with dirty files is being staged. */
  get active(): boolean {
    return this.scopes.size > 0;
  }

  /** The last commit's text of `path` while a reply that may touch it is staged and `path` differs from it; else undefined. */
  committed(path: string): string | undefined {
    for (const scope of this.scopes) {
      const head = scope.committed.get(path) ?? scope.committed.get(normalizeRel(path));
      if (head !== undefined) return head;
    }
    return undefined;
  }

  /**
   * A failure when `search` quotes one of the dirty files exactly as committed but not as it is
   * now: the lines it quotes were changed and not committed, so it must not match approximately.
   */
  staleSearch(search: string): MatchFailure | null {
    for (const scope of this.scopes) {
      let verdict = scope.verdicts.get(search);
      if (verdict === undefined) {
        const s = textLines(search);
        verdict = s.every(isBlank) ? null : (scope.files.map((f) => staleQuote(f, s)).find((v) => v !== null) ?? null);
        scope.verdicts.set(search, verdict);
      }
      if (verdict) return verdict;
    }
    return null;
  }
}

interface FileLines {
  path: string;
  head: string[];
  disk: string[];
  was: "committed" | "saved" | "shown";
}

interface Scope {
  files: FileLines[];
  /** The dirty files' texts at HEAD, by path. */
  committed: Map<string, string>;
  /** Per SEARCH text: its verdict (formats ask again at every rung). */
  verdicts: Map<string, MatchFailure | null>;
}

function linesOf(f: CommittedFile): FileLines {
  return { path: f.path, head: toFileLines(f.head.replace(/\r\n/g, "\n")).lines, disk: toFileLines(f.disk.replace(/\r\n/g, "\n")).lines, was: f.was ?? "committed" };
}

/** Where `search` starts as an exact run of lines of `lines`, or -1. */
function findLines(lines: readonly string[], search: readonly string[]): number {
  outer: for (let i = 0; i + search.length <= lines.length; i++) {
    for (let j = 0; j < search.length; j++) if (lines[i + j] !== search[j]) continue outer;
    return i;
  }
  return -1;
}

function staleQuote(file: FileLines, search: string[]): MatchFailure | null {
  const at = findLines(file.head, search);
  if (at < 0 || findLines(file.disk, search) >= 0) return null;
  const { start, end } = currentRegion(file.head, file.disk, at, at + search.length);
  const shown = file.disk.slice(start, Math.min(end, start + QUOTED_LINES));
  const text = shown.length ? `${shown.join("\n")}\n` : "";
  const startLine = start + 1;
  const endLine = Math.max(startLine, Math.min(end, start + QUOTED_LINES));
  return {
    status: "failed",
    reason: "not-found",
    candidates: shown.length ? [{ startLine, endLine, similarity: 0, text }] : [],
    userChange: { path: file.path, startLine, endLine, text, committedLine: at + 1, was: file.was },
  };
}

/**
 * The work-tree lines [start, end) that stand where HEAD's lines [from, to) stood: between the
 * nearest unchanged lines around them (a line diff of HEAD against the work tree).
 */
function currentRegion(head: string[], disk: string[], from: number, to: number): { start: number; end: number } {
  const headToDisk = new Int32Array(head.length).fill(-1);
  let h = 0;
  let d = 0;
  for (const part of diffArrays(head, disk)) {
    const n = part.count ?? part.value.length;
    if (part.removed) h += n;
    else if (part.added) d += n;
    else {
      for (let k = 0; k < n; k++) headToDisk[h + k] = d + k;
      h += n;
      d += n;
    }
  }
  let start = 0;
  for (let i = from - 1; i >= 0; i--) {
    if (headToDisk[i]! >= 0) {
      start = headToDisk[i]! + 1;
      break;
    }
  }
  let end = disk.length;
  for (let i = to; i < head.length; i++) {
    if (headToDisk[i]! >= 0) {
      end = headToDisk[i]!;
      break;
    }
  }
  return { start, end: Math.max(start, end) };
}
