// Fences that wrap file text in prompts and replies: pick one that no chat
// file's line starts with, so a file's own ``` lines never close the listing.
import type { Fence } from "../plugin.ts";

/** Tried in order: triple backticks, quadruple backticks, then tag fences. */
export const FENCES: readonly Fence[] = [
  ["```", "```"],
  ["````", "````"],
  ["<source>", "</source>"],
  ["<code>", "</code>"],
  ["<pre>", "</pre>"],
  ["<codeblock>", "</codeblock>"],
  ["<sourcecode>", "</sourcecode>"],
];

/** The first fence whose markers start no line of any of `texts`; the last tag fence when all clash. */
export function chooseFence(texts: readonly string[]): Fence {
  for (const fence of FENCES) {
    if (!texts.some((text) => fenceClashes(text, fence))) return fence;
  }
  return FENCES[FENCES.length - 1]!;
}

function fenceClashes(text: string, [open, close]: Fence): boolean {
  if (!text.includes(open) && !text.includes(close)) return false;
  for (const line of text.split("\n")) {
    const t = line.trimStart();
    if (t.startsWith(open) || t.startsWith(close)) return true;
  }
  return false;
}

/** Wrap `text` in a fence that none of its own lines clash with (for echoing text in reports). */
export function fenced(text: string, fence: Fence = chooseFence([text]), info = ""): string {
  const body = text.endsWith("\n") || text === "" ? text : text + "\n";
  const [open, close] = fenceClashes(text, fence) ? chooseFence([text]) : fence;
  return `${open}${open.startsWith("<") ? "" : info}\n${body}${close}`;
}
