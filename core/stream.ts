// One model call, streamed: deltas go out as they arrive, tool-call deltas are
// assembled, a retry voids what streamed before it, and a reply cut at the
// output limit is continued from an assistant prefill when the model allows it.
import { ConfigError, Interrupted, PluginError, RuntimeFailure, exitCodeFor } from "./errors.ts";
import type { FinishReason, ModelAdapter, ModelInfo, ModelRequest, ToolCall } from "./plugin.ts";
import { messageOf } from "./registry.ts";
import type { Output, Usage } from "./term/events.ts";

export interface StreamedReply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  /** False when the endpoint reported no usage (the caller estimates it). */
  usageReported: boolean;
}

/** At most this many continuations of a `length`-cut reply. */
const MAX_CONTINUATIONS = 2;

export async function streamReply(adapter: ModelAdapter, request: ModelRequest, signal: AbortSignal, out: Output, model: ModelInfo): Promise<StreamedReply> {
  let text = "";
  const calls = new Map<number, ToolCall>();
  let finishReason: FinishReason = "stop";
  const usage: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  let usageReported = false;

  for (let continuation = 0; ; continuation++) {
    let chunkText = "";
    try {
      for await (const event of adapter.stream(request, signal)) {
        switch (event.type) {
          case "text":
            chunkText += event.text;
            out.emit({ type: "delta", text: event.text });
            break;
          case "tool-call": {
            const call = calls.get(event.index) ?? { id: "", name: "", arguments: "" };
            if (event.id) call.id = event.id;
            if (event.name) call.name = event.name;
            call.arguments += event.argumentsDelta;
            calls.set(event.index, call);
            break;
          }
          case "usage":
            usageReported = true;
            usage.promptTokens += event.promptTokens;
            usage.completionTokens += event.completionTokens;
            usage.cachedTokens += event.cachedTokens;
            break;
          case "finish":
            finishReason = event.reason;
            break;
          case "retry":
            chunkText = "";
            calls.clear();
            out.emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
            break;
        }
      }
    } catch (error) {
      if (signal.aborted) throw new Interrupted();
      if (error instanceof PluginError) throw new RuntimeFailure(error.message);
      const message = messageOf(error).split("\n")[0] || "the model request failed";
      // An adapter marks a missing key or endpoint as a configuration error (exit 2), Ctrl-C as 130.
      const code = exitCodeFor(error);
      if (code === 130) throw new Interrupted();
      if (code === 2) throw new ConfigError(message);
      throw new RuntimeFailure(message);
    }
    if (signal.aborted) throw new Interrupted();
    text += chunkText;
    if (finishReason !== "length" || calls.size > 0) break;
    if (!model.capabilities.prefill || continuation >= MAX_CONTINUATIONS) {
      out.warn(`The reply hit the model's output limit (${model.maxOutput} tokens) and was cut off; edits after the cut are lost.`);
      break;
    }
    // Continue the cut reply: the text so far becomes an assistant prefill (replacing an earlier one).
    const base = request.messages.at(-1)?.role === "assistant" ? request.messages.slice(0, -1) : request.messages;
    request = { ...request, messages: [...base, { role: "assistant", content: text }] };
  }

  if (finishReason === "content_filter") out.warn("The provider's content filter stopped the reply; what arrived before it is used as is.");
  const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }));
  return { text, toolCalls, finishReason, usage, usageReported };
}
