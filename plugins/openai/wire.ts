// Translation between coder's ModelRequest/ModelEvent and the Chat Completions wire
// format: messages (tool calls, tool results, cache breakpoints, system-prompt merging,
// image and document parts), parameters the model accepts, and streamed chunks or whole
// replies back into events.
import type { ChatMessage, ContentPart, FinishReason, ModelEvent, ModelInfo, ModelRequest } from "../../core/plugin.ts";

/** Anthropic accepts at most four cache breakpoints per request. */
const MAX_BREAKPOINTS = 4;

type CacheControl = { cache_control?: { type: "ephemeral" } };
type WirePart = (
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: { filename: string; file_data: string } }
) &
  CacheControl;
type WireContent = string | WirePart[] | null;

/** How a PDF travels: OpenAI's `file` part, or an `image_url` part holding a PDF data URL (Gemini). */
export type DocumentForm = "file" | "image_url";

const dataUrl = (mediaType: string, base64: string) => `data:${mediaType};base64,${base64}`;

/** Parts in the Chat Completions form: images as base64 data URLs, PDFs as the provider takes them. */
export function toWireParts(parts: readonly ContentPart[], documents: DocumentForm = "file"): WirePart[] {
  return parts.map((p): WirePart => {
    if (p.type === "text") return { type: "text", text: p.text };
    const url = dataUrl(p.mediaType, p.data);
    if (p.type === "image" || documents === "image_url") return { type: "image_url", image_url: { url } };
    return { type: "file", file: { filename: p.name, file_data: url } };
  });
}

export interface WireMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: WireContent;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** Merge system messages into the first user message, for models without a system role. */
function foldSystem(messages: readonly ChatMessage[]): ChatMessage[] {
  const system = messages.filter((m) => m.role === "system").map((m) => m.content);
  if (!system.length) return [...messages];
  const rest = messages.filter((m) => m.role !== "system");
  const firstUser = rest.findIndex((m) => m.role === "user");
  const preamble = system.join("\n\n");
  if (firstUser < 0) return [{ role: "user", content: preamble }, ...rest];
  const target = rest[firstUser]!;
  const folded: ChatMessage = { ...target, content: `${preamble}\n\n${target.content}`, cacheBreakpoint: target.cacheBreakpoint || messages.some((m) => m.role === "system" && m.cacheBreakpoint) };
  if (target.parts) folded.parts = [{ type: "text", text: preamble }, ...target.parts];
  rest[firstUser] = folded;
  return rest;
}

export function toWireMessages(messages: readonly ChatMessage[], caps: ModelInfo["capabilities"], documents: DocumentForm = "file"): WireMessage[] {
  const source = caps.systemPrompt ? [...messages] : foldSystem(messages);
  // Keep the last breakpoints: each covers the whole prefix before it.
  const marked = source.map((m, i) => (m.cacheBreakpoint ? i : -1)).filter((i) => i >= 0);
  const breakpoints = caps.cache === "breakpoints" ? new Set(marked.slice(-MAX_BREAKPOINTS)) : new Set<number>();
  return source.map((m, i) => {
    let content: WireContent = breakpoints.has(i) && m.content ? [{ type: "text", text: m.content, cache_control: { type: "ephemeral" } }] : m.content;
    if (m.role === "user" && m.parts?.length) {
      const parts = toWireParts(m.parts, documents);
      if (breakpoints.has(i)) parts[parts.length - 1]!.cache_control = { type: "ephemeral" };
      content = parts;
    }
    if (m.role === "tool") return { role: "tool", content: content ?? "", tool_call_id: m.toolCallId ?? "" };
    if (m.role === "assistant" && m.toolCalls?.length) {
      return {
        role: "assistant",
        content: m.content ? content : null,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })),
      };
    }
    return { role: m.role, content };
  });
}

export interface WireOptions {
  provider: string;
  /** How this provider takes PDFs (default `file`). */
  documents?: DocumentForm;
  /** Send `stream_options.include_usage` (default true). */
  streamOptions?: boolean;
  /** The model id sent to the endpoint. */
  id: string;
  info: ModelInfo;
}

/** The request body for chat.completions.create (stream flag and stream_options included). */
export function toWireParams(request: ModelRequest, opts: WireOptions): Record<string, unknown> {
  const caps = opts.info.capabilities;
  const params: Record<string, unknown> = { model: opts.id, messages: toWireMessages(request.messages, caps, opts.documents) };
  if (request.tools?.length && caps.tools) {
    params.tools = request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
  }
  // OpenAI's reasoning models reject max_tokens; most other servers only know max_tokens.
  let maxTokens = request.maxTokens;
  if (maxTokens === undefined && opts.provider === "anthropic") maxTokens = Math.min(opts.info.maxOutput, request.stream ? 32_000 : 16_384);
  if (maxTokens !== undefined) params[opts.provider === "openai" ? "max_completion_tokens" : "max_tokens"] = maxTokens;
  if (request.temperature !== undefined && caps.temperature) params.temperature = request.temperature;
  Object.assign(params, reasoningParams(opts.provider, request, opts.info, params));
  if (request.stream) {
    params.stream = true;
    if (opts.streamOptions !== false) params.stream_options = { include_usage: true };
  }
  return params;
}

/**
 * Reasoning settings in each provider's wire form, for the models whose capabilities say
 * they take them: `reasoning_effort`; Anthropic's `thinking` budget (no temperature with
 * it, and room for the reply above the budget); Gemini's `thinking_config` (its OpenAI-compatible
 * endpoint reads it from an `extra_body` field); OpenRouter's `reasoning` object.
 */
export function reasoningParams(provider: string, request: Pick<ModelRequest, "reasoningEffort" | "thinkingTokens">, info: ModelInfo, params: Record<string, unknown>): Record<string, unknown> {
  const caps = info.capabilities;
  const levels = caps.reasoningLevels;
  const effort = request.reasoningEffort && caps.reasoningEffort && (!levels || levels.includes(request.reasoningEffort)) ? request.reasoningEffort : undefined;
  const budget = request.thinkingTokens !== undefined && caps.thinkingTokens ? Math.floor(request.thinkingTokens) : undefined;
  const out: Record<string, unknown> = {};
  switch (provider) {
    case "openrouter":
      if (budget !== undefined) out.reasoning = budget > 0 ? { max_tokens: budget } : { enabled: false };
      else if (effort) out.reasoning = { effort };
      return out;
    case "gemini":
      if (budget !== undefined) out.extra_body = { google: { thinking_config: { thinking_budget: budget } } };
      else if (effort) out.reasoning_effort = effort;
      return out;
    case "anthropic":
    case "openai-compatible":
      if (effort) out.reasoning_effort = effort;
      if (budget !== undefined && budget > 0) {
        out.thinking = { type: "enabled", budget_tokens: budget };
        // Extended thinking takes no temperature, and max_tokens must leave room above the budget.
        delete params.temperature;
        const key = "max_tokens" in params ? "max_tokens" : "max_completion_tokens";
        const current = typeof params[key] === "number" ? (params[key] as number) : 0;
        if (current <= budget) out[key] = Math.min(info.maxOutput, budget + Math.max(current, 4096));
      }
      return out;
    default:
      if (effort) out.reasoning_effort = effort;
      return out;
  }
}

export function mapFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
    case "end_turn":
    case "stop_sequence":
    case "eos":
      return "stop";
    case "length":
    case "max_tokens":
    case "MAX_TOKENS":
      return "length";
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool_calls";
    case "content_filter":
    case "SAFETY":
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}

type UsageEvent = Extract<ModelEvent, { type: "usage" }>;

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/**
 * A usage event from a provider's `usage` object: OpenAI's prompt_tokens_details.cached_tokens,
 * DeepSeek's prompt_cache_hit_tokens, Anthropic-style cache_read/cache_creation_input_tokens,
 * OpenRouter's prompt_tokens_details.cache_write_tokens.
 */
export function usageEvent(usage: Record<string, unknown> | null | undefined): UsageEvent | undefined {
  if (!usage || typeof usage !== "object") return undefined;
  const details = (usage.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const promptTokens = num(usage.prompt_tokens) ?? num(usage.input_tokens) ?? 0;
  const completionTokens = num(usage.completion_tokens) ?? num(usage.output_tokens) ?? 0;
  const cachedTokens = num(details.cached_tokens) ?? num(usage.prompt_cache_hit_tokens) ?? num(usage.cache_read_input_tokens) ?? 0;
  const cacheWrite = num(usage.cache_creation_input_tokens) ?? num(details.cache_write_tokens) ?? num(details.cache_creation_tokens);
  const event: UsageEvent = { type: "usage", promptTokens, completionTokens, cachedTokens };
  if (cacheWrite !== undefined) event.cacheWriteTokens = cacheWrite;
  return event;
}

interface ChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface Chunk {
  choices?: { index?: number; delta?: { content?: string | null; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: ChunkToolCall[] }; finish_reason?: string | null }[];
  usage?: Record<string, unknown> | null;
  /** Groq reports streamed usage here. */
  x_groq?: { usage?: Record<string, unknown> | null } | null;
}

/** Folds streamed chunks into events; `finish()` returns the closing events, or null if the reply never finished. */
export class ChunkReader {
  private finishReason: string | null = null;
  private usage: UsageEvent | undefined;
  /** Tool-call indexes seen, and whether each got an id. */
  private readonly calls = new Map<number, boolean>();

  read(chunk: Chunk): ModelEvent[] {
    const events: ModelEvent[] = [];
    const usage = usageEvent(chunk.usage ?? chunk.x_groq?.usage);
    if (usage) this.usage = usage;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return events;
    const delta = choice.delta ?? {};
    // DeepSeek, vLLM and llama.cpp send `reasoning_content`; OpenRouter and others `reasoning`.
    const reasoning = reasoningText(delta);
    if (reasoning) events.push({ type: "reasoning", text: reasoning });
    if (typeof delta.content === "string" && delta.content) events.push({ type: "text", text: delta.content });
    delta.tool_calls?.forEach((call, position) => {
      const index = call.index ?? position;
      const event: ModelEvent = { type: "tool-call", index, argumentsDelta: call.function?.arguments ?? "" };
      if (call.id) event.id = call.id;
      if (call.function?.name) event.name = call.function.name;
      this.calls.set(index, (this.calls.get(index) ?? false) || !!call.id);
      events.push(event);
    });
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return events;
  }

  get finished(): boolean {
    return this.finishReason !== null;
  }

  /** Closing events: an id for tool calls that never got one, usage, finish. */
  close(): ModelEvent[] {
    const events: ModelEvent[] = [];
    for (const [index, hasId] of this.calls) if (!hasId) events.push({ type: "tool-call", index, id: `call_${index}`, argumentsDelta: "" });
    if (this.usage) events.push(this.usage);
    events.push({ type: "finish", reason: mapFinishReason(this.finishReason) });
    return events;
  }
}

/** A delta's or message's reasoning text, whichever field the server uses; "" for none. */
function reasoningText(part: { reasoning_content?: unknown; reasoning?: unknown }): string {
  if (typeof part.reasoning_content === "string") return part.reasoning_content;
  if (typeof part.reasoning === "string") return part.reasoning;
  return "";
}

interface Completion {
  choices?: { message?: { content?: string | null; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason?: string | null }[];
  usage?: Record<string, unknown> | null;
}

/** Events of a whole (non-streamed) reply. */
export function completionEvents(completion: Completion): ModelEvent[] {
  const events: ModelEvent[] = [];
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const reasoning = message ? reasoningText(message) : "";
  if (reasoning) events.push({ type: "reasoning", text: reasoning });
  if (message?.content) events.push({ type: "text", text: message.content });
  message?.tool_calls?.forEach((call, index) => {
    events.push({ type: "tool-call", index, id: call.id || `call_${index}`, name: call.function?.name ?? "", argumentsDelta: call.function?.arguments ?? "" });
  });
  const usage = usageEvent(completion.usage);
  if (usage) events.push(usage);
  events.push({ type: "finish", reason: mapFinishReason(choice?.finish_reason) });
  return events;
}
