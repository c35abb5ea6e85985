// Parsing SEARCH/REPLACE blocks out of a reply (pure). The path sits alone on a
// line before the block (outside or inside the fence); markers take 5-9 chars and
// must pair up. A block with several divider-shaped lines (a setext title, a
// merge-conflict example) keeps every way to split it: the file decides at apply.
// Shell-tagged fences that are not followed by a block are shell suggestions.
// kit.formats.parseBlocks hands it to any format; `diff` and `diff-fenced` use it.
import type { BlockPathPlace, Fence, SearchReplaceBlock, SearchReplaceBlocks, SplitReading } from "../plugin.ts";
import { isShellFence, readShellBlock } from "./shell-fence.ts";

export const HEAD = /^<{5,9} SEARCH>?\s*$/;
export const DIVIDER = /^={5,9}\s*$/;
export const UPDATED = /^>{5,9} REPLACE\s*$/;

const TRIPLE = "```";

export type RawBlock = SearchReplaceBlock;
export type RawParse = SearchReplaceBlocks;

/** A malformed reply: `message` is for the model. */
export class BlockSyntaxError extends Error {}

/** A filename candidate from one line, or null (fence lines yield one only when they carry a path). */
export function stripFilename(line: string, fence: Fence): string | null {
  let name = line.trim();
  if (name === "..." || name === "") return null;
  for (const open of [fence[0], TRIPLE]) {
    if (name.startsWith(open)) {
      const rest = name.slice(open.length).trim();
      return rest && (rest.includes(".") || rest.includes("/")) ? rest : null;
    }
  }
  name = name.replace(/:+$/, "").replace(/^#+/, "").trim();
  name = name.replace(/^`+|`+$/g, "").replace(/^\*+|\*+$/g, "").replace(/^`+|`+$/g, "").trim();
  return name === "" ? null : name;
}

const letters = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
const baseName = (p: string) => p.slice(Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\")) + 1);

/**
 * The filename for a block from the (up to 3) lines before its SEARCH marker: walk back
 * while lines are fences; prefer a chat file, then a chat file's basename, then a chat
 * file with the same letters and digits, then anything with an extension, then the nearest.
 */
export function findFilename(before: readonly string[], fence: Fence, chatFiles: readonly string[] = []): string | null {
  const names: string[] = [];
  for (const line of before.slice(-3).reverse()) {
    const name = stripFilename(line, fence);
    if (name) names.push(name);
    const t = line.trim();
    if (!t.startsWith(fence[0]) && !t.startsWith(TRIPLE)) break;
  }
  if (names.length === 0) return null;
  for (const n of names) if (chatFiles.includes(n)) return n;
  for (const n of names) {
    const hit = chatFiles.find((f) => baseName(f) === n);
    if (hit) return hit;
  }
  for (const n of names) {
    const hits = chatFiles.filter((f) => letters(f) === letters(n));
    if (hits.length === 1) return hits[0]!;
  }
  return names.find((n) => n.includes(".")) ?? names[0]!;
}

const joinLines = (lines: readonly string[]) => (lines.length ? lines.join("\n") + "\n" : "");

function excerpt(lines: readonly string[], from: number, to: number): string {
  return lines.slice(Math.max(0, from), to + 1).join("\n");
}

/** The canonical divider: the one preferred when several divider-shaped lines could split a block. */
export const CANONICAL_DIVIDER = "=======";

/**
 * A path line that names no file: decoration only (`*`, `**`, `#`) or a glob (`*.py`,
 * `src/*`). Null when the line is a path, prose, blank or a fence.
 */
function notAPath(before: readonly string[], fence: Fence): string | null {
  for (const line of before.slice(-3).reverse()) {
    const t = line.trim();
    if (t.startsWith(fence[0]) || t.startsWith(TRIPLE)) continue;
    if (t === "" || t === "...") return null;
    const unwrapped = t.replace(/^\*\*(.*)\*\*$/, "$1").replace(/^`(.*)`$/, "$1").trim();
    const decorationOnly = stripFilename(t, fence) === null;
    return decorationOnly || /[*?]/.test(unwrapped.replace(/^#+\s*/, "")) ? t : null;
  }
  return null;
}

/** The ways to split a block's lines (between its markers) at each divider-shaped line. */
function splitsOf(body: readonly string[]): SplitReading[] {
  const dividers = body.flatMap((l, k) => (DIVIDER.test(l.trim()) ? [k] : []));
  const last = dividers[dividers.length - 1];
  return dividers.map((d) => {
    let replace = body.slice(d + 1);
    // A divider written again just before `>>>>>>> REPLACE` is a stray end marker (models do
    // this), not content: unless SEARCH itself holds divider-shaped lines, or it differs.
    const stray = last !== undefined && last !== d && last === body.length - 1 && body[last]!.trim() === body[d]!.trim() && !dividers.some((k) => k < d);
    if (stray) replace = replace.slice(0, -1);
    return { search: joinLines(body.slice(0, d)), replace: joinLines(replace), divider: body[d]!.trim() };
  });
}

/**
 * Every SEARCH/REPLACE block and shell suggestion of `text`, in order. Throws
 * BlockSyntaxError (message written for the model) on a missing filename or marker.
 */
export function parseEditBlocks(text: string, fence: Fence, chatFiles: readonly string[] = [], variant: BlockPathPlace = "before-fence"): RawParse {
  const where = variant === "before-fence" ? `alone on the line before the opening fence ${fence[0]}` : `alone on the line after the opening fence ${fence[0]}`;
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const blocks: RawBlock[] = [];
  const shell: string[] = [];
  let current: string | null = null;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const nextIsBlock = [1, 2].some((k) => i + k < lines.length && HEAD.test(lines[i + k]!.trim()));
    if (isShellFence(line) && !nextIsBlock) {
      const { command, next } = readShellBlock(lines, i);
      if (command) shell.push(command);
      i = next;
      continue;
    }
    if (!HEAD.test(line.trim())) {
      i++;
      continue;
    }
    const start = i;
    const before = lines.slice(Math.max(0, i - 3), i);
    const bogus = notAPath(before, fence);
    if (bogus !== null) {
      throw new BlockSyntaxError(
        syntaxMessage(variant, lines, start, start, `\`${bogus}\` is not a file path: write the one file's path ${where} of each SEARCH/REPLACE block (no wildcards).`),
      );
    }
    const filename: string | null = findFilename(before, fence, chatFiles) ?? current;
    if (!filename) {
      throw new BlockSyntaxError(
        syntaxMessage(variant, lines, start, start, `Bad or missing filename: the file path must be ${where} of each SEARCH/REPLACE block.`),
      );
    }
    current = filename;
    // The block runs to the first `>>>>>>> REPLACE` before any other `<<<<<<< SEARCH`.
    let end = i + 1;
    while (end < lines.length && !UPDATED.test(lines[end]!.trim()) && !HEAD.test(lines[end]!.trim())) end++;
    const body = lines.slice(start + 1, Math.min(end, lines.length));
    const splits = splitsOf(body);
    if (splits.length === 0) {
      const at = start + 1 + body.findIndex((l) => HEAD.test(l.trim()) || UPDATED.test(l.trim()));
      throw new BlockSyntaxError(syntaxMessage(variant, lines, start, Math.min(at > start ? at : end, lines.length - 1), "Expected `=======` after the SEARCH section."));
    }
    if (end >= lines.length || !UPDATED.test(lines[end]!.trim())) {
      throw new BlockSyntaxError(
        syntaxMessage(variant, lines, start, Math.min(end, lines.length) - 1, "Expected `>>>>>>> REPLACE` to end the REPLACE section: every `<<<<<<< SEARCH` needs one `=======` and one `>>>>>>> REPLACE`, in that order (the reply may have been cut off)."),
      );
    }
    const preferred = splits.find((sp) => sp.divider === CANONICAL_DIVIDER) ?? splits[0]!;
    blocks.push({ filename, search: preferred.search, replace: preferred.replace, line: start, end, ...(splits.length > 1 ? { splits } : {}) });
    i = end + 1;
  }
  return { blocks, shell };
}

function syntaxMessage(variant: BlockPathPlace, lines: readonly string[], start: number, at: number, reason: string): string {
  const shown = excerpt(lines, Math.max(start - 3, at - 12), at);
  return [
    "Your reply has a malformed SEARCH/REPLACE block, so none of its edits were applied.",
    "",
    reason,
    "",
    "The problem is at the end of this part of your reply:",
    shown,
    "^^^ " + reason,
    "",
    `Each block is: ${variant === "before-fence" ? "the file path alone on a line, the opening fence" : "the opening fence, the file path alone on the next line"}, \`<<<<<<< SEARCH\`, the exact existing lines, \`=======\`, the new lines, \`>>>>>>> REPLACE\`, the closing fence. Send all the blocks again, complete.`,
  ].join("\n");
}
