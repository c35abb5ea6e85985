// The conversation's memory: `done` (finished turns, summarised in the
// background when they outgrow their budget) and `cur` (the turn in progress),
// plus the markdown transcript in .coder/chat.history.md.
import { blockMessages } from "./chunks.ts";
import type { ChatMessage } from "../plugin.ts";
import { appendRecord } from "../edit/state.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";

/** Done-history budget: min(max(context/16, 1024), 8192) tokens. */
export function historyBudget(contextWindow: number): number {
  return Math.min(Math.max(Math.floor(contextWindow / 16), 1024), 8192);
}

export type Summariser = (messages: readonly ChatMessage[]) => Promise<string>;
export type Counter = (messages: readonly ChatMessage[]) => number;

const MAX_DEPTH = 3;

/** The summary stands in for the head of the history as a user message, acknowledged. */
export function summaryMessages(summary: string): ChatMessage[] {
  return blockMessages(`Summary of our conversation so far (I wrote it to save room):\n\n${summary.trim()}`);
}

/**
 * Shrink `messages` under `budget` tokens: keep a verbatim tail of under half
 * the budget that starts after an assistant message, summarise the head, and
 * recurse (at most 3 levels) when summary + tail still do not fit.
 */
export async function summariseHistory(
  messages: readonly ChatMessage[],
  budget: number,
  count: Counter,
  summarise: Summariser,
  depth = 0,
): Promise<ChatMessage[]> {
  if (count(messages) <= budget) return [...messages];
  if (messages.length < 2 || depth >= MAX_DEPTH) return [...summaryMessages(await summarise(messages))];

  // Walk back from the end while the tail stays under half the budget.
  let split = messages.length;
  let tailTokens = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const t = count([messages[i] as ChatMessage]);
    if (tailTokens + t >= budget / 2) break;
    tailTokens += t;
    split = i;
  }
  // The head must end with an assistant message (a complete exchange).
  while (split > 0 && messages[split - 1]?.role !== "assistant") split--;
  // A tool answer belongs with the call before it: never start the tail on one.
  while (split < messages.length && messages[split]?.role === "tool") split++;
  if (split <= 0) return [...summaryMessages(await summarise(messages))];

  const head = messages.slice(0, split);
  const tail = messages.slice(split);
  const result = [...summaryMessages(await summarise(head)), ...tail];
  if (count(result) <= budget) return result;
  return summariseHistory(result, budget, count, summarise, depth + 1);
}

/** What the weak model is asked, in our words: a first-person digest that keeps names. */
export function summaryPrompt(messages: readonly ChatMessage[]): ChatMessage[] {
  const transcript = messages
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => `# ${m.role.toUpperCase()}\n${m.content}`)
    .join("\n\n");
  return [
    {
      role: "system",
      content: [
        "You condense a conversation between a developer (USER) and an AI coding assistant (ASSISTANT).",
        "Write the summary as the developer, in the first person, addressed to the assistant (\"I asked you to...\", \"you changed...\").",
        "Keep every file name, function, class and variable name, library and command that was discussed, and the decisions taken.",
        "Leave out code listings and edit blocks; say in words what changed. Be brief. Start directly with the content.",
      ].join("\n"),
    },
    { role: "user", content: transcript },
  ];
}

/** done/cur messages with background summarisation of `done`. */
export class ChatHistory {
  done: ChatMessage[] = [];
  cur: ChatMessage[] = [];
  private pending: Promise<void> | null = null;

  /** The finished turn joins the history. */
  finishTurn(): void {
    this.done.push(...this.cur);
    this.cur = [];
  }

  clear(): void {
    this.done = [];
    this.cur = [];
  }

  /** Is a summary running in the background? */
  get summarising(): boolean {
    return this.pending !== null;
  }

  /**
   * Start summarising `done` in the background when it exceeds `budget`. The
   * result replaces the messages it was made from, only if they are still the
   * head of the history (a /clear meanwhile discards it).
   */
  maybeSummarise(budget: number, count: Counter, summarise: Summariser, onError: (e: unknown) => void = () => {}): boolean {
    if (this.pending || count(this.done) <= budget) return false;
    return this.replaceInBackground((source) => summariseHistory(source, budget, count, summarise), onError);
  }

  /** Summarise all of `done` into one summary (after an edit-format switch, so the model stops imitating the old format). */
  summariseAll(summarise: Summariser, onError: (e: unknown) => void = () => {}): boolean {
    if (!this.done.length) return false;
    return this.replaceInBackground(async (source) => summaryMessages(await summarise(source)), onError);
  }

  private replaceInBackground(compute: (source: ChatMessage[]) => Promise<ChatMessage[]>, onError: (e: unknown) => void): boolean {
    if (this.pending) return false;
    const source = this.done.slice();
    this.pending = compute(source)
      .then((summary) => {
        const stillHead = source.every((m, i) => this.done[i] === m);
        if (stillHead) this.done = [...summary, ...this.done.slice(source.length)];
      })
      .catch(onError)
      .finally(() => {
        this.pending = null;
      });
    return true;
  }

  /** Wait for a running summary (before a request, so it goes out summarised). */
  async settle(): Promise<void> {
    if (this.pending) await this.pending;
  }
}

/** The markdown transcript: `#### ` lines are the user's, other text the assistant's, `> ` lines tool notes. */
export class Transcript {
  constructor(private readonly path: string | null) {}

  private append(text: string): void {
    if (!this.path) return;
    try {
      appendRecord(this.path, text);
    } catch {
      // The transcript is a convenience: a read-only disk must not stop the session.
    }
  }

  sessionStart(when: Date = new Date()): void {
    this.append(`\n# coder chat started at ${when.toISOString().replace("T", " ").slice(0, 19)}\n\n`);
  }

  user(text: string): void {
    this.append(`${text.split("\n").map((l) => `#### ${l}`.trimEnd()).join("\n")}\n\n`);
  }

  assistant(text: string): void {
    if (text.trim()) this.append(`${text.trimEnd()}\n\n`);
  }

  note(text: string): void {
    this.append(`${text.split("\n").map((l) => `> ${l}`.trimEnd()).join("\n")}\n\n`);
  }
}

/** Messages from a transcript, for `--restore-chat-history`. */
export function parseTranscript(text: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let role: "user" | "assistant" | null = null;
  let lines: string[] = [];
  const flush = () => {
    const content = lines.join("\n").trim();
    if (role && content) messages.push({ role, content });
    lines = [];
  };
  for (const line of text.split("\n")) {
    if (line.startsWith("# coder chat started at")) {
      flush();
      role = null;
      continue;
    }
    if (line.startsWith(">")) continue;
    const isUser = line.startsWith("####");
    const lineRole = isUser ? "user" : "assistant";
    if (lineRole !== role && (isUser || line.trim())) {
      flush();
      role = lineRole;
    }
    lines.push(isUser ? line.replace(/^####\s?/, "") : line);
  }
  flush();
  // Consecutive same-role messages merge; the history must alternate.
  const merged: ChatMessage[] = [];
  for (const m of messages) {
    const last = merged.at(-1);
    if (last && last.role === m.role) last.content += `\n\n${m.content}`;
    else merged.push({ ...m });
  }
  return merged;
}

/** The most of a transcript read back (--restore-chat-history): far more than any context window holds. */
const TRANSCRIPT_READ_BYTES = 64 * SMALL_FILE_BYTES;

export function loadTranscript(path: string): ChatMessage[] {
  // Never a device, a pipe or a file past the cap (a planted transcript must not hang the start).
  const text = readCappedText(path, { maxBytes: TRANSCRIPT_READ_BYTES }).text;
  return text === null ? [] : parseTranscript(text);
}
