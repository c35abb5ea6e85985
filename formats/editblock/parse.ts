// Parsing SEARCH/REPLACE blocks out of a reply (pure). The path sits alone on a
// line before the block (outside or inside the fence); markers take 5-9 chars.
// Shell-tagged fences that are not followed by a block are shell suggestions.
import type { Fence } from "../../core/plugin.ts";
import { isShellFence } from "../shell.ts";

export const HEAD = /^<{5,9} SEARCH>?\s*$/;
export const DIVIDER = /^={5,9}\s*$/;
export const UPDATED = /^>{5,9} REPLACE\s*$/;

const TRIPLE = "```";

export interface RawBlock {
  /** The path as the model wrote it (decoration stripped by the filename rules). */
  filename: string;
  search: string;
  replace: string;
  /** 0-based line of the SEARCH marker. */
  line: number;
}

export interface RawParse {
  blocks: RawBlock[];
  shell: string[];
}

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

/**
 * Every SEARCH/REPLACE block and shell suggestion of `text`, in order. Throws
 * BlockSyntaxError (message written for the model) on a missing filename or marker.
 */
export function parseEditBlocks(text: string, fence: Fence, chatFiles: readonly string[] = []): RawParse {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const blocks: RawBlock[] = [];
  const shell: string[] = [];
  let current: string | null = null;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const nextIsBlock = [1, 2].some((k) => i + k < lines.length && HEAD.test(lines[i + k]!.trim()));
    if (isShellFence(line) && !nextIsBlock) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(TRIPLE)) body.push(lines[i++]!);
      if (i < lines.length) i++;
      const command = body.join("\n").trim();
      if (command) shell.push(command);
      continue;
    }
    if (!HEAD.test(line.trim())) {
      i++;
      continue;
    }
    const start = i;
    const filename: string | null = findFilename(lines.slice(Math.max(0, i - 3), i), fence, chatFiles) ?? current;
    if (!filename) {
      throw new BlockSyntaxError(
        syntaxMessage(lines, start, start, `Bad or missing filename: the file path must be alone on the line before the opening fence ${fence[0]} of each SEARCH/REPLACE block.`),
      );
    }
    current = filename;
    const search: string[] = [];
    i++;
    while (i < lines.length && !DIVIDER.test(lines[i]!.trim())) {
      if (HEAD.test(lines[i]!.trim()) || UPDATED.test(lines[i]!.trim())) break;
      search.push(lines[i++]!);
    }
    if (i >= lines.length || !DIVIDER.test(lines[i]!.trim())) {
      throw new BlockSyntaxError(syntaxMessage(lines, start, Math.min(i, lines.length - 1), "Expected `=======` after the SEARCH section."));
    }
    const replace: string[] = [];
    i++;
    while (i < lines.length && !UPDATED.test(lines[i]!.trim()) && !DIVIDER.test(lines[i]!.trim())) {
      if (HEAD.test(lines[i]!.trim())) break;
      replace.push(lines[i++]!);
    }
    if (i >= lines.length || HEAD.test(lines[i]!.trim())) {
      throw new BlockSyntaxError(syntaxMessage(lines, start, Math.min(i, lines.length - 1), "Expected `>>>>>>> REPLACE` or `=======` to end the REPLACE section."));
    }
    blocks.push({ filename, search: joinLines(search), replace: joinLines(replace), line: start });
    i++;
  }
  return { blocks, shell };
}

function syntaxMessage(lines: readonly string[], start: number, at: number, reason: string): string {
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
    "Each block is: the file path alone on a line, the opening fence, `<<<<<<< SEARCH`, the exact existing lines, `=======`, the new lines, `>>>>>>> REPLACE`, the closing fence. Send all the blocks again, complete.",
  ].join("\n");
}
