// One model call, streamed: deltas go out as they arrive, tool-call deltas are
// assembled, a retry voids what streamed before it, and a reply cut at the
// output limit is continued from an assistant prefill when the model allows it.
import { ConfigError, Interrupted, PluginError, RuntimeFailure, exitCodeFor } from "../errors.ts";
import type { FinishReason, ModelAdapter, ModelEvent, ModelInfo, ModelRequest, ToolCall } from "../plugin.ts";
import { messageOf } from "../plugins/registry.ts";
import type { Output, Usage } from "./events.ts";

export interface StreamedReply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
  /** False when the endpoint reported no usage (the caller estimates it). */
  usageReported: boolean;
}

/**
 * Folds a model stream's events into a reply: text, tool calls assembled from their
 * deltas by index, the finish reason and usage. A `retry` voids the text and tool
 * calls streamed before it (usage is kept: those tokens were spent). streamReply
 * and kit.complete both collect replies with it.
 */
export class ReplyAssembler {
  /** Text streamed since the last retry (or the last takeText). */
  text = "";
  finishReason: FinishReason = "stop";
  readonly usage: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  /** False until the endpoint reports usage. */
  usageReported = false;
  private readonly calls = new Map<number, ToolCall>();

  add(event: ModelEvent): void {
    switch (event.type) {
      case "text":
        this.text += event.text;
        break;
      case "tool-call": {
        const call = this.calls.get(event.index) ?? { id: "", name: "", arguments: "" };
        if (event.id) call.id = event.id;
        if (event.name) call.name = event.name;
        call.arguments += event.argumentsDelta;
        this.calls.set(event.index, call);
        break;
      }
      case "usage":
        this.usageReported = true;
        this.usage.promptTokens += event.promptTokens;
        this.usage.completionTokens += event.completionTokens;
        this.usage.cachedTokens += event.cachedTokens;
        break;
      case "finish":
        this.finishReason = event.reason;
        break;
      case "retry":
        this.text = "";
        this.calls.clear();
        break;
    }
  }

  /** The text so far, handed over and cleared (a continuation's retry then voids only its own text). */
  takeText(): string {
    const text = this.text;
    this.text = "";
    return text;
  }

  get hasToolCalls(): boolean {
    return this.calls.size > 0;
  }

  /** The tool calls in index order; with `fillIds`, a call streamed without an id gets `call_<index>`. */
  toolCalls(options: { fillIds?: boolean } = {}): ToolCall[] {
    return [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map(([i, c]) => (options.fillIds ? { ...c, id: c.id || `call_${i}` } : c));
  }
}

/** Ctrl-C stopped the reply: what had arrived, and the tokens it cost (kept in the history and the totals). */
export class InterruptedReply extends Interrupted {
  constructor(
    readonly text: string,
    readonly usage: Usage,
    readonly usageReported: boolean,
  ) {
    super();
  }
}

/** At most this many continuations of a `length`-cut reply. */
const MAX_CONTINUATIONS = 2;

export async function streamReply(adapter: ModelAdapter, request: ModelRequest, signal: AbortSignal, out: Output, model: ModelInfo): Promise<StreamedReply> {
  let text = "";
  const reply = new ReplyAssembler();

  for (let continuation = 0; ; continuation++) {
    try {
      for await (const event of adapter.stream(request, signal)) {
        reply.add(event);
        if (event.type === "text") out.emit({ type: "delta", text: event.text });
        else if (event.type === "reasoning") out.emit({ type: "reasoning", text: event.text });
        else if (event.type === "retry") out.emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
      }
    } catch (error) {
      if (signal.aborted) throw new InterruptedReply(text + reply.takeText(), reply.usage, reply.usageReported);
      if (error instanceof PluginError) throw new RuntimeFailure(error.message);
      const message = messageOf(error).split("\n")[0] || "the model request failed";
      // An adapter marks a missing key or endpoint as a configuration error (exit 2), Ctrl-C as 130.
      const code = exitCodeFor(error);
      if (code === 130) throw new Interrupted();
      if (code === 2) throw new ConfigError(message);
      throw new RuntimeFailure(message);
    }
    if (signal.aborted) throw new InterruptedReply(text + reply.takeText(), reply.usage, reply.usageReported);
    text += reply.takeText();
    if (reply.finishReason !== "length" || reply.hasToolCalls) break;
    if (!model.capabilities.prefill || continuation >= MAX_CONTINUATIONS) {
      out.warn(`The reply hit the model's output limit (${model.maxOutput} tokens) and was cut off; edits after the cut are lost.`);
      break;
    }
    // Continue the cut reply: the text so far becomes an assistant prefill (replacing an earlier one).
    const base = request.messages.at(-1)?.role === "assistant" ? request.messages.slice(0, -1) : request.messages;
    request = { ...request, messages: [...base, { role: "assistant", content: text }] };
  }

  if (reply.finishReason === "content_filter") out.warn("The provider's content filter stopped the reply; what arrived before it is used as is.");
  const { finishReason, usage, usageReported } = reply;
  return { text, toolCalls: reply.toolCalls({ fillIds: true }), finishReason, usage, usageReported };
}
