// Parsing whole-file listings (pure): a path line, a fence, the complete new
// content, the closing fence. Without a path line, the last chat file the reply
// named in backticks, or the only chat file, is the target. A line before a fence
// that is neither a path nor prose, or text glued to a closing fence, means a fence
// inside the content closed the listing early: the reply is refused, not guessed at.
import type { Fence } from "../../core/plugin.ts";
import { shellTag } from "../shell.ts";

export interface RawListing {
  filename: string;
  /** Where the name came from: the line before the fence, a backticked mention, the only chat file. */
  origin: "block" | "saw" | "chat";
  content: string;
  /** For a listing without a path line: that line as written ("" when blank or absent). */
  label?: string;
}

export class ListingSyntaxError extends Error {}

/** What the repository looks like, for telling a path from prose. */
export interface PathFacts {
  chatFiles: readonly string[];
  /** Every repository file (when the kernel says); paths with spaces are plausible only if some exist. */
  repoFiles?: readonly string[];
}

/** Extensionless file names that are plausible new files. */
const BARE_NAMES = /^(Makefile|Dockerfile|Containerfile|Procfile|Gemfile|Rakefile|Jenkinsfile|Vagrantfile|Brewfile|Justfile|LICENSE|LICENCE|COPYING|NOTICE|AUTHORS|CODEOWNERS|README|CHANGELOG|VERSION)$/;
/** Characters of code, never of a path. */
const CODE_PUNCTUATION = /[(){}[\];=<>,"'|&!?$%^]/;

/** The line's text with what models wrap a path in removed: bold, backticks, a heading mark, a trailing colon. */
function unwrap(line: string): string {
  let name = line.trim();
  name = name.replace(/^\*+|\*+$/g, "").replace(/:+$/, "").replace(/^`+|`+$/g, "").replace(/^#+/, "").trim();
  return name.replace(/^`+|`+$/g, "").replace(/^\*+|\*+$/g, "").trim();
}

type LineBeforeFence = { kind: "path"; name: string } | { kind: "prose" } | { kind: "none" } | { kind: "code" };

/** What the line before an opening fence is: a file path, prose (or nothing), or code. */
export function classifyLine(line: string, facts: PathFacts): LineBeforeFence {
  if (line.trim() === "") return { kind: "none" };
  const name = unwrap(line);
  if (name === "") return { kind: "prose" };
  // A URL is text (a link in a README), never a file to write.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(name)) return { kind: "prose" };
  if (facts.chatFiles.includes(name) || facts.repoFiles?.includes(name)) return { kind: "path", name };
  const last = name.slice(name.lastIndexOf("/") + 1);
  const pathShaped = name.includes("/") || /\.[A-Za-z0-9_+-]{1,12}$/.test(last) || last.startsWith(".") || BARE_NAMES.test(last);
  if (!/\s/.test(name)) {
    if (CODE_PUNCTUATION.test(name)) return { kind: "code" };
    return pathShaped ? { kind: "path", name } : { kind: "prose" };
  }
  // With spaces: a path only where the repository has paths with spaces, and only path-shaped.
  const spaced = facts.repoFiles?.some((f) => /\s/.test(f)) ?? false;
  const segmentsLookLikeNames = name.split("/").every((seg) => seg.split(/\s+/).length <= 4 && !CODE_PUNCTUATION.test(seg));
  if (spaced && name.includes("/") && /\.[A-Za-z0-9_+-]{1,12}$/.test(last) && segmentsLookLikeNames && !line.trim().endsWith(":")) return { kind: "path", name };
  return /[;{}]\s*$/.test(name) ? { kind: "code" } : { kind: "prose" };
}

/** An opening fence: its marker as written (a run of backticks may be longer than the fence's). */
function openingMarker(line: string, fence: Fence): string | null {
  if (!line.startsWith(fence[0])) return null;
  if (!fence[0].startsWith("`")) return fence[0];
  return /^`+/.exec(line)![0];
}

/** Does `line` close a listing opened with `marker`? Backtick fences: a bare run at least as long. */
function closes(line: string, marker: string, fence: Fence): boolean {
  if (!marker.startsWith("`")) return line.trim() === fence[1];
  const t = line.trim();
  return /^`+$/.test(t) && t.length >= marker.length && line.startsWith("`");
}

/** A fence line with an info string (```js) as long as the listing's: it opens a fence inside the content. */
const opensNested = (line: string, marker: string) => marker.startsWith("`") && line.startsWith(marker) && /^`+[^`\s][^`]*$/.test(line.trim()) && /^`+/.exec(line)![0].length >= marker.length;

function earlyClose(name: string, closedAt: number, next: string, fence: Fence): ListingSyntaxError {
  return new ListingSyntaxError(
    `The listing of ${name} ended at the ${fence[1]} on line ${closedAt + 1} of your reply, but the next line (\`${next.trim().slice(0, 80)}\`) is neither a file path nor separate text. The file's content most likely holds a line that is just ${fence[1]}, which closed the listing early. Nothing was written. Send the listing again inside a longer fence (${fence[0].startsWith("`") ? "````" : "a longer fence"}) than any line of the content starts with.`,
  );
}

export function parseListings(text: string, fence: Fence, chatFiles: readonly string[], repoFiles?: readonly string[]): { listings: RawListing[]; shell: string[] } {
  const facts: PathFacts = { chatFiles, repoFiles };
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const found: RawListing[] = [];
  const shell: string[] = [];
  let saw: string | null = null;
  let open: { filename: string; origin: RawListing["origin"]; line: number; marker: string; depth: number; label: string } | null = null;
  let body: string[] = [];
  /** The last closed listing, while the text right after its fence has not been seen yet. */
  let justClosed: { name: string; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (open) {
      if (opensNested(line, open.marker)) open.depth++;
      else if (closes(line, open.marker, fence)) {
        if (open.depth > 0) open.depth--;
        else {
          found.push({ filename: open.filename, origin: open.origin, content: body.length ? body.join("\n") + "\n" : "", ...(open.origin === "block" ? {} : { label: open.label }) });
          justClosed = { name: open.filename, line: i };
          open = null;
          body = [];
          saw = null;
          continue;
        }
      }
      body.push(line);
      continue;
    }
    const marker = openingMarker(line, fence);
    if (marker) {
      const before = i > 0 ? lines[i - 1]! : "";
      const kind = classifyLine(before, facts);
      if (kind.kind === "code" || (justClosed && justClosed.line === i - 2 && kind.kind !== "path")) {
        if (justClosed && justClosed.line === i - 2) throw earlyClose(justClosed.name, justClosed.line, before, fence);
        throw new ListingSyntaxError(
          `The line before the ${fence[0]} fence on line ${i + 1} of your reply (\`${before.trim().slice(0, 80)}\`) looks like code, not a file path. If it belongs to the content of a listing above, that listing was closed early by a line of its content that is just ${fence[1]}: send it again inside a longer fence (${fence[0].startsWith("`") ? "````" : "a longer fence"}). Otherwise put the file's path alone on the line before the fence. Nothing was written.`,
        );
      }
      justClosed = null;
      const named = kind.kind === "path" ? kind.name : "";
      if (!named && shellTag(line, fence[0])) {
        const cmd: string[] = [];
        for (i++; i < lines.length && !lines[i]!.startsWith(fence[1]); i++) cmd.push(lines[i]!);
        if (cmd.join("\n").trim()) shell.push(cmd.join("\n").trim());
        continue;
      }
      const label = before.trim();
      if (named) open = { filename: named, origin: "block", line: i, marker, depth: 0, label };
      else if (saw) open = { filename: saw, origin: "saw", line: i, marker, depth: 0, label };
      else if (chatFiles.length === 1) open = { filename: chatFiles[0]!, origin: "chat", line: i, marker, depth: 0, label };
      else {
        throw new ListingSyntaxError(
          `No file path before the ${fence[0]} fence on line ${i + 1} of your reply. Put the file's path alone on the line just before the opening fence of each file listing.`,
        );
      }
      continue;
    }
    // Text glued to a closing fence, and the next fence a bare one (as an inner example's
    // closing fence is): the close was a line of content.
    const opensNext = i + 1 < lines.length && openingMarker(lines[i + 1]!, fence) !== null && classifyLine(line, facts).kind === "path";
    if (justClosed && justClosed.line === i - 1 && line.trim() !== "" && !opensNext) {
      const next = lines.find((l, k) => k > i && openingMarker(l, fence) !== null);
      if (next !== undefined && /^`+$|^<[a-z]+>$/.test(next.trim())) throw earlyClose(justClosed.name, justClosed.line, line, fence);
    }
    for (const word of line.trim().split(/\s+/)) {
      const w = word.replace(/[.:,;!]+$/, "");
      const hit = chatFiles.find((f) => w === "`" + f + "`");
      if (hit) saw = hit;
    }
  }
  if (open) {
    throw new ListingSyntaxError(
      `The listing of ${open.filename} (from line ${open.line + 1}) has no closing ${fence[1]}: the reply was cut off or the fence is missing. Nothing was written. Send the complete file again, ending with the closing fence.`,
    );
  }
  // One listing per file: a named block beats a backticked mention beats the only chat file.
  const seen = new Set<string>();
  const listings: RawListing[] = [];
  for (const origin of ["block", "saw", "chat"] as const) {
    for (const l of found) {
      if (l.origin !== origin || seen.has(l.filename)) continue;
      seen.add(l.filename);
      listings.push(l);
    }
  }
  return { listings, shell };
}
