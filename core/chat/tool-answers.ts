// Answers to a reply's tool calls: the Chat Completions protocol rejects a history in
// which an assistant's tool call has no `tool` message answering its id.
import type { ChatMessage, EditOutcome, ToolCall } from "../plugin.ts";

/** One `tool` message per call: what became of the edits it carried (or why none was applied). */
export function answerToolCalls(cur: ChatMessage[], calls: ToolCall[], outcomes: EditOutcome[], error: string | null): void {
  for (const call of calls) {
    const mine = outcomes.filter((o) => o.edit.toolCallId === call.id);
    let content: string;
    if (error) content = `Not applied: ${error}`;
    else if (!mine.length) content = "No edit was made from this call.";
    else content = mine.map(answerFor).join("\n");
    cur.push({ role: "tool", toolCallId: call.id, content });
  }
}

function answerFor(o: EditOutcome): string {
  switch (o.status) {
    case "applied":
      return `Applied to ${o.path}.`;
    case "failed":
      return `Not applied to ${o.path}: ${o.reason} (see the report).`;
    case "skipped":
      return `Not applied to ${o.path}: skipped, ${o.detail}.`;
  }
}

/** After an interrupted request: answer the last assistant message's calls that are still unanswered. */
export function answerDanglingToolCalls(cur: ChatMessage[]): void {
  const last = cur.findLastIndex((m) => m.role === "assistant");
  const calls = cur[last]?.toolCalls ?? [];
  const answered = new Set(cur.slice(last + 1).map((m) => m.toolCallId));
  for (const call of calls) if (!answered.has(call.id)) cur.push({ role: "tool", toolCallId: call.id, content: "Not applied: the request was interrupted." });
}
