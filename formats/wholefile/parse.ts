// Parsing whole-file listings (pure): a path line, a fence, the complete new
// content, the closing fence. A fenced block without a path line is prose (an example,
// a snippet in a question) unless it is the reply's only such block: then it is a
// candidate for the chat file the nearest prose names in backticks, or for the chat
// files, and the apply step keeps it only where it plausibly is the whole file. A line
// before a fence that is neither a path nor prose, or text glued to a closing fence,
// means a fence inside the content closed the listing early: the reply is refused.
import type { Fence, FormatHelpers } from "../../core/plugin.ts";

/** How shell-tagged fences are read (kit.formats). */
export type ShellFences = Pick<FormatHelpers, "isShellFence" | "readShellBlock">;

export interface RawListing {
  filename: string;
  /** Where the name came from: the path line before the fence, a backticked mention on the prose line before it, the chat files. */
  origin: "block" | "saw" | "chat";
  content: string;
  /** For a listing without a path line: that line as written ("" when blank or absent). */
  label?: string;
  /** For a listing without a path line: every chat file it may be (apply keeps the one it plausibly is). */
  candidates?: readonly string[];
  /** The fence as written when it is not the one taught (``` under a ```` fence). */
  offFence?: string;
}

/** Fenced blocks the parser read as prose, not listings: how many, and whether one's label looked like a path it could not take. */
export interface ProseBlocks {
  count: number;
  /** A label that looks like a file path but is not one coder can take (e.g. "notes/meeting notes.md" where no path has a space). */
  pathlike: string | null;
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

/**
 * An opening fence: its marker as written. Besides the taught fence, any run of three or more
 * backticks opens a listing (a model writes ``` even when taught ````); the caller checks such
 * an off-fence listing against the file before trusting it.
 */
function openingMarker(line: string, fence: Fence): string | null {
  if (fence[0].startsWith("<") && line.startsWith(fence[0])) return fence[0];
  const run = /^`{3,}/.exec(line);
  return run ? run[0] : null;
}

/** Is `marker` shorter than the taught fence (``` under ````), or backticks where a tag fence was taught? */
const isOffFence = (marker: string, fence: Fence) => (fence[0].startsWith("<") ? marker !== fence[0] : marker.length < fence[0].length);

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

/** Does the reply end by asking something: its last line of prose (outside fences) ends with "?". */
function askedQuestion(lines: readonly string[]): boolean {
  let inFence = false;
  let last = "";
  for (const line of lines) {
    if (/^(`{3,}|<\/?[a-z]+>)/.test(line.trim())) {
      inFence = !inFence;
      continue;
    }
    if (!inFence && line.trim() !== "") last = line.trim();
  }
  return /\?["'*_)]*$/.test(last);
}

/** Does a rejected label still look like a file name (the model meant a path line)? */
export function pathlikeLabel(label: string): boolean {
  const name = unwrap(label);
  return name !== "" && !name.includes("`") && !name.endsWith("?") && name.split(/\s+/).length <= 4 && /\.[A-Za-z0-9_+-]{1,12}$/.test(name);
}

/** The chat file named in backticks on the nearest non-blank line among the two before `at`, or null. */
function mentionedBefore(lines: readonly string[], at: number, chatFiles: readonly string[]): string | null {
  for (let k = at - 1; k >= Math.max(0, at - 3); k--) {
    const line = lines[k]!.trim();
    if (line === "") continue;
    let hit: string | null = null;
    for (const word of line.split(/\s+/)) {
      const w = word.replace(/[.:,;!?]+$/, "");
      hit = chatFiles.find((f) => w === "`" + f + "`") ?? hit;
    }
    return hit;
  }
  return null;
}

export function parseListings(
  text: string,
  fence: Fence,
  chatFiles: readonly string[],
  shellFences: ShellFences,
  repoFiles?: readonly string[],
): { listings: RawListing[]; shell: string[]; prose: ProseBlocks } {
  const facts: PathFacts = { chatFiles, repoFiles };
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const named: RawListing[] = [];
  const unnamed: { content: string; label: string; saw: string | null; offFence?: string }[] = [];
  const shell: string[] = [];
  let open: { filename: string | null; saw: string | null; line: number; marker: string; depth: number; label: string } | null = null;
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
          const content = body.length ? body.join("\n") + "\n" : "";
          const off = isOffFence(open.marker, fence) ? { offFence: open.marker } : {};
          if (open.filename !== null) named.push({ filename: open.filename, origin: "block", content, ...off });
          else unnamed.push({ content, label: open.label, saw: open.saw, ...off });
          justClosed = { name: open.filename ?? open.saw ?? "the listing", line: i };
          open = null;
          body = [];
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
      const path = kind.kind === "path" ? kind.name : null;
      if (!path && shellFences.isShellFence(line)) {
        const { command, next } = shellFences.readShellBlock(lines, i);
        if (command) shell.push(command);
        i = next - 1;
        continue;
      }
      open = { filename: path, saw: path ? null : mentionedBefore(lines, i, chatFiles), line: i, marker, depth: 0, label: before.trim() };
      continue;
    }
    // Text glued to a closing fence, and the next fence a bare one (as an inner example's
    // closing fence is): the close was a line of content.
    const opensNext = i + 1 < lines.length && openingMarker(lines[i + 1]!, fence) !== null && classifyLine(line, facts).kind === "path";
    if (justClosed && justClosed.line === i - 1 && line.trim() !== "" && !opensNext) {
      const next = lines.find((l, k) => k > i && openingMarker(l, fence) !== null);
      if (next !== undefined && /^`+$|^<[a-z]+>$/.test(next.trim())) throw earlyClose(justClosed.name, justClosed.line, line, fence);
    }
  }
  if (open) {
    throw new ListingSyntaxError(
      `The listing of ${open.filename ?? open.saw ?? "a file"} (from line ${open.line + 1}) has no closing ${fence[1]}: the reply was cut off or the fence is missing. Nothing was written. Send the complete file again, ending with the closing fence.`,
    );
  }
  // One listing per file, the first named one winning: a path line, then a backticked mention
  // on the prose line just before the fence (unless the reply asks a question: then its
  // blocks are more likely examples, and are weighed like blocks with no name at all).
  const asks = askedQuestion(lines);
  const listings: RawListing[] = [];
  const add = (l: RawListing) => {
    if (!listings.some((k) => k.filename === l.filename)) listings.push(l);
  };
  for (const l of named) add(l);
  const seen = asks ? [] : unnamed.filter((u) => u.saw !== null);
  for (const u of seen) add({ filename: u.saw!, origin: "saw", content: u.content, label: u.label, ...(u.offFence ? { offFence: u.offFence } : {}) });
  // A block with no name is a listing only when it is the reply's one such block.
  const rest = unnamed.filter((u) => !seen.includes(u));
  const only = rest.length === 1 ? rest[0]! : null;
  const free = chatFiles.filter((f) => !listings.some((l) => l.filename === f));
  const candidates = only ? (only.saw ? (free.includes(only.saw) ? [only.saw] : []) : free) : [];
  const taken = only !== null && candidates.length > 0;
  if (only && taken) {
    const { content, label, offFence } = only;
    listings.push({ filename: candidates[0]!, origin: "chat", content, label, candidates, ...(offFence ? { offFence } : {}) });
  }
  const prose = rest.filter((u) => !(taken && u === only));
  return { listings, shell, prose: { count: prose.length, pathlike: prose.map((u) => u.label).find(pathlikeLabel) ?? null } };
}
