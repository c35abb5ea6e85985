// Parsing whole-file listings (pure): a path line, a fence, the complete new
// content, the closing fence. Without a path line, the last `chat file` the reply
// named in backticks, or the only chat file, is the target.
import type { Fence } from "../../core/plugin.ts";
import { shellTag } from "../shell.ts";

export interface RawListing {
  filename: string;
  /** Where the name came from: the line before the fence, a backticked mention, the only chat file. */
  origin: "block" | "saw" | "chat";
  content: string;
}

export class ListingSyntaxError extends Error {}


/** The path a line before a fence names, or "" (headings, bold, backticks and a trailing colon stripped). */
function nameOnLine(line: string, chatFiles: readonly string[]): string {
  let name = line.trim();
  name = name.replace(/^\*+|\*+$/g, "").replace(/:+$/, "").replace(/^`+|`+$/g, "").replace(/^#+/, "").trim();
  name = name.replace(/^`+|`+$/g, "").replace(/^\*+|\*+$/g, "").trim();
  if (name.length === 0 || name.length > 250) return "";
  if (chatFiles.includes(name)) return name;
  // Prose such as "Run it like this" is not a path: a path has no spaces, or has a `/` and an extension.
  const last = name.slice(name.lastIndexOf("/") + 1);
  const plausible = !/\s/.test(name) || (name.includes("/") && !/\s/.test(last) && last.includes("."));
  return plausible ? name : "";
}

export function parseListings(text: string, fence: Fence, chatFiles: readonly string[]): { listings: RawListing[]; shell: string[] } {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const found: RawListing[] = [];
  const shell: string[] = [];
  let saw: string | null = null;
  let open: { filename: string; origin: RawListing["origin"]; line: number } | null = null;
  let body: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (open) {
      if (line.startsWith(fence[1]) && line.trim() === fence[1]) {
        found.push({ filename: open.filename, origin: open.origin, content: body.length ? body.join("\n") + "\n" : "" });
        open = null;
        body = [];
        saw = null;
      } else body.push(line);
      continue;
    }
    if (line.startsWith(fence[0])) {
      const named = i > 0 ? nameOnLine(lines[i - 1]!, chatFiles) : "";
      if (!named && shellTag(line, fence[0])) {
        const cmd: string[] = [];
        for (i++; i < lines.length && !lines[i]!.startsWith(fence[1]); i++) cmd.push(lines[i]!);
        if (cmd.join("\n").trim()) shell.push(cmd.join("\n").trim());
        continue;
      }
      if (named) open = { filename: named, origin: "block", line: i };
      else if (saw) open = { filename: saw, origin: "saw", line: i };
      else if (chatFiles.length === 1) open = { filename: chatFiles[0]!, origin: "chat", line: i };
      else {
        throw new ListingSyntaxError(
          `No file path before the ${fence[0]} fence on line ${i + 1} of your reply. Put the file's path alone on the line just before the opening fence of each file listing.`,
        );
      }
      continue;
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
