// Prompt assembly in a fixed, most-stable-first order, so a provider's prefix
// cache keeps hitting: the bytes of an earlier chunk change only when its own
// inputs change. Pure: no disk, no network, no clock.
import { mediaTokens, partsText } from "./parts.ts";
import type { ChatMessage, ContentPart, Fence, ImageRules } from "../plugin.ts";

/** A block of context text with a label for `/tokens`; `parts` are images or documents sent after the text. */
export interface ContextText {
  label: string;
  text: string;
  parts?: ContentPart[];
}

export interface ChunkInputs {
  /** Format rules + platform facts + fence note. */
  system: string;
  examples: readonly ChatMessage[];
  /** Read-only files and `static` providers (conventions). */
  staticBlocks: readonly ContextText[];
  /** `session` providers (the repo map). */
  sessionBlocks: readonly ContextText[];
  /** Done history (possibly summarised). */
  history: readonly ChatMessage[];
  /** The chat files' current contents, or null when none are in the chat. */
  chatFiles: ContextText | null;
  /** `turn` providers. */
  turnBlocks: readonly ContextText[];
  /** The current turn: the request and its reflections so far. */
  current: readonly ChatMessage[];
  reminder: string;
  /** Where the reminder goes: appended to the last user message (default), or a system message after the request. */
  reminderRole?: "user" | "system";
  /** The model takes a `system` role (else the system text travels as a user message). */
  systemRole: boolean;
  /** Mark cache breakpoints (providers with explicit breakpoints). */
  breakpoints: boolean;
}

export type ChunkName = "system" | "examples" | "static" | "session" | "history" | "chat-files" | "turn" | "current";

export interface Chunk {
  name: ChunkName;
  label: string;
  messages: ChatMessage[];
}

const ACK = "Ok.";

/**
 * A context block travels as a user message answered by a short acknowledgement (so does text
 * added to the history: a summary, a command's output). Images or documents follow its text as parts.
 */
export function blockMessages(text: string, parts?: readonly ContentPart[]): ChatMessage[] {
  const user: ChatMessage = parts?.length ? { role: "user", content: text, parts: [{ type: "text", text }, ...parts] } : { role: "user", content: text };
  return [user, { role: "assistant", content: ACK }];
}

/** The chunks of one request, in the order they are sent. Empty chunks are left out. */
export function assembleChunks(inputs: ChunkInputs): Chunk[] {
  const chunks: Chunk[] = [];
  const push = (name: ChunkName, label: string, messages: ChatMessage[]) => {
    if (messages.length) chunks.push({ name, label, messages });
  };

  push("system", "system messages", inputs.systemRole ? [{ role: "system", content: inputs.system }] : blockMessages(inputs.system));
  if (inputs.examples.length) {
    push("examples", "examples", [
      ...inputs.examples.map((m) => ({ ...m })),
      {
        role: "user",
        content: "The conversation above only showed the edit format. It is not about this repository: do not edit those example files.",
      },
      { role: "assistant", content: ACK },
    ]);
  }
  for (const b of inputs.staticBlocks) push("static", b.label, blockMessages(b.text, b.parts));
  for (const b of inputs.sessionBlocks) push("session", b.label, blockMessages(b.text, b.parts));
  push("history", "chat history", inputs.history.map((m) => ({ ...m })));
  if (inputs.chatFiles) push("chat-files", inputs.chatFiles.label, blockMessages(inputs.chatFiles.text));
  for (const b of inputs.turnBlocks) push("turn", b.label, blockMessages(b.text, b.parts));

  const current = inputs.current.map((m) => ({ ...m }));
  const lastUser = current.findLastIndex((m) => m.role === "user");
  // A system-role reminder follows the request; a model without a system role gets it in the request.
  const asSystem = inputs.reminderRole === "system" && inputs.systemRole;
  if (inputs.reminder && lastUser >= 0 && asSystem) current.push({ role: "system", content: inputs.reminder });
  else if (inputs.reminder && lastUser >= 0) {
    const m = current[lastUser] as ChatMessage;
    const reminded: ChatMessage = { ...m, content: `${m.content}\n\n${inputs.reminder}` };
    if (m.parts) reminded.parts = [...m.parts, { type: "text", text: inputs.reminder }];
    current[lastUser] = reminded;
  }
  push("current", "current request", current);

  if (inputs.breakpoints) markBreakpoints(chunks);
  return chunks;
}

/** Breakpoints after the prompt's stable layers: format, context blocks, chat files (at most 3 + the provider's own). */
function markBreakpoints(chunks: Chunk[]): void {
  const lastOf = (names: ChunkName[]) => chunks.findLast((c) => names.includes(c.name));
  for (const group of [["system", "examples"], ["static", "session"], ["history", "chat-files"]] as ChunkName[][]) {
    const chunk = lastOf(group);
    const last = chunk?.messages.at(-1);
    if (last) last.cacheBreakpoint = true;
  }
}

export function chunkMessages(chunks: readonly Chunk[]): ChatMessage[] {
  return chunks.flatMap((c) => c.messages);
}

/**
 * Messages' token estimate: content plus a small per-message overhead, as the wire format adds;
 * images and documents by the provider's rules (`imageRules`, OpenAI's when absent).
 */
export function countMessageTokens(messages: readonly ChatMessage[], count: (text: string) => number, imageRules?: ImageRules): number {
  let total = 0;
  for (const m of messages) {
    // With parts, their text is what is sent (labels between images included).
    total += 4 + count(m.parts ? partsText(m.parts) : m.content) + mediaTokens(m.parts, imageRules);
    for (const call of m.toolCalls ?? []) total += count(call.name) + count(call.arguments) + 4;
  }
  return total;
}

export interface TokenRow {
  label: string;
  tokens: number;
  /** A chat or read-only file this row is: `/tokens` offers `/drop PATH` for it. */
  file?: string;
}

/** Tokens per chunk (the `/tokens` view and the context-window check). */
export function tokenRows(chunks: readonly Chunk[], count: (text: string) => number, imageRules?: ImageRules): TokenRow[] {
  return chunks.map((c) => ({ label: c.label, tokens: countMessageTokens(c.messages, count, imageRules) }));
}

/**
 * `/tokens`: a table with a row per part of the next request (each chat file its own row, with
 * a `/drop` hint), tokens, and the cost of sending it when the model's prices are known.
 */
export function renderTokenReport(rows: readonly TokenRow[], contextWindow: number, pricePerMillion: number | null = null): string {
  const total = rows.reduce((s, r) => s + r.tokens, 0);
  const remaining = Math.max(0, contextWindow - total);
  const cost = (tokens: number) => (pricePerMillion === null ? "" : `$${((tokens * pricePerMillion) / 1_000_000).toFixed(4)}`);
  const width = Math.max("tokens".length, ...[...rows.map((r) => r.tokens), total, remaining].map((n) => n.toLocaleString("en-US").length));
  const costWidth = pricePerMillion === null ? 0 : Math.max("cost".length, cost(total).length);
  const labelWidth = Math.max("part".length, ...rows.map((r) => r.label.length), "total".length);
  const line = (tokens: string, price: string, label: string, hint = "") =>
    `${tokens.padStart(width)}  ${costWidth ? `${price.padStart(costWidth)}  ` : ""}${hint ? label.padEnd(labelWidth) : label}${hint ? `  ${hint}` : ""}`.trimEnd();
  const n = (x: number) => x.toLocaleString("en-US");
  const lines = [line("tokens", costWidth ? "cost" : "", "part")];
  for (const r of rows) lines.push(line(n(r.tokens), cost(r.tokens), r.label, r.file ? `/drop ${r.file}` : ""));
  lines.push(`${"─".repeat(width)}  ${costWidth ? `${"─".repeat(costWidth)}  ` : ""}${"─".repeat(labelWidth)}`);
  lines.push(line(n(total), cost(total), "total"));
  lines.push(line(n(remaining), "", `remaining of the ${n(contextWindow)}-token context window`));
  if (pricePerMillion === null) lines.push("(cost unknown: the model table has no prices for this model)");
  return lines.join("\n");
}

/**
 * Null when the prompt fits (with room for the reply); else a message that says
 * what takes the room, largest first, and what can be dropped.
 */
export function contextOverflow(rows: readonly TokenRow[], contextWindow: number, replyReserve: number): string | null {
  const total = rows.reduce((s, r) => s + r.tokens, 0);
  if (total + replyReserve <= contextWindow) return null;
  const biggest = [...rows].sort((a, b) => b.tokens - a.tokens).slice(0, 5);
  return [
    `The request would need ${total} prompt tokens (+${replyReserve} for the reply), more than the model's context window of ${contextWindow}.`,
    "What takes the room:",
    ...biggest.map((r) => `  ${String(r.tokens).padStart(8)}  ${r.label}`),
    // Context providers get only the room the rest leaves (core/chat/budget.ts): files and history are what to cut.
    "Drop files with /drop, or clear the history with /clear.",
  ].join("\n");
}

/** One file listing for the prompt: path line, then the content in the chosen fence. */
export function renderFileListing(path: string, content: string, fence: Fence): string {
  const body = content.endsWith("\n") || content === "" ? content : `${content}\n`;
  return `${path}\n${fence[0]}\n${body}${fence[1]}\n`;
}

/** What a format does with the chat files, for the words around them. */
export type ChatFilesUse = "edit" | "read";

/**
 * The chat files' block (a null content is a file that does not exist yet); with no chat
 * files, a note saying so and what to do instead, so the model never guesses at content.
 */
export function chatFilesBlock(files: readonly { path: string; content: string | null }[], fence: Fence, use: ChatFilesUse = "edit"): ContextText {
  if (!files.length) {
    return {
      label: "chat files: none",
      text:
        use === "edit"
          ? "No files are in the chat yet, so you have not seen the content of any file. To create a new file, just write it. To change an existing file, name it by its full path and ask the user to add it to the chat; never edit a file you have not seen."
          : "No files are in the chat yet. If you need to see a file's content, name it by its full path and ask the user to add it to the chat.",
    };
  }
  return {
    label: `chat files: ${files.map((f) => f.path).join(", ")}`,
    text: [
      use === "edit"
        ? "These files are in the chat. You may edit them; this is their current content (trust it over anything earlier in the conversation):"
        : "These files are in the chat; this is their current content (trust it over anything earlier in the conversation):",
      "",
      ...files.map((f) => chatFileEntry(f, fence, use)),
    ].join("\n"),
  };
}

/** One file's entry in the chat files' block (`/tokens` counts each on its own row). */
export function chatFileEntry(file: { path: string; content: string | null }, fence: Fence, use: ChatFilesUse = "edit"): string {
  return file.content === null ? `${file.path}\n(does not exist yet${use === "edit" ? ": create it with an edit" : ""})\n` : renderFileListing(file.path, file.content, fence);
}

export function readOnlyBlock(path: string, content: string, fence: Fence): ContextText {
  return {
    label: `read-only: ${path}`,
    text: `This file is for reference only. Do not edit it.\n\n${renderFileListing(path, content, fence)}`,
  };
}

/** The kernel's part of the system message: the format's rules, then platform facts and the fence note. */
export function systemText(formatRules: string, platform: string, fence: Fence, toolCalls = false): string {
  const note = toolCalls
    ? `File listings in this conversation are wrapped in ${fence[0]} ... ${fence[1]}; the fence is not part of the file, and tool arguments carry the file's text without it.`
    : `File listings in this conversation are wrapped in ${fence[0]} ... ${fence[1]}; use the same fence when you write file content.`;
  return [formatRules.trimEnd(), "", `Platform: ${platform}.`, note].join("\n");
}
