// Message translation rules that depend on model capabilities.
import { describe, expect, test } from "bun:test";
import type { ChatMessage, ModelInfo, ModelRequest } from "../../core/plugin.ts";
import { ChunkReader, mapFinishReason, toWireMessages, toWireParams } from "./wire.ts";

const caps = (over: Partial<ModelInfo["capabilities"]> = {}): ModelInfo["capabilities"] => ({
  tools: true,
  systemPrompt: true,
  temperature: true,
  reasoningEffort: false,
  prefill: false,
  cache: "none",
  ...over,
});

test("models without a system role get the system text at the head of the first user message", () => {
  const wire = toWireMessages(
    [
      { role: "system", content: "Rules." },
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi" },
      { role: "user", content: "Again" },
    ],
    caps({ systemPrompt: false }),
  );
  expect(wire).toEqual([
    { role: "user", content: "Rules.\n\nHello" },
    { role: "assistant", content: "Hi" },
    { role: "user", content: "Again" },
  ]);
  expect(toWireMessages([{ role: "system", content: "Only rules." }], caps({ systemPrompt: false }))).toEqual([{ role: "user", content: "Only rules." }]);
});

test("at most four breakpoints, the last ones kept", () => {
  const messages = Array.from({ length: 6 }, (_, i) => ({ role: "user" as const, content: `m${i}`, cacheBreakpoint: true }));
  const wire = toWireMessages(messages, caps({ cache: "breakpoints" }));
  expect(wire.map((m) => typeof m.content !== "string")).toEqual([false, false, true, true, true, true]);
});

test("finish reasons from several servers map onto ours", () => {
  expect(mapFinishReason("stop")).toBe("stop");
  expect(mapFinishReason("length")).toBe("length");
  expect(mapFinishReason("max_tokens")).toBe("length");
  expect(mapFinishReason("tool_calls")).toBe("tool_calls");
  expect(mapFinishReason("function_call")).toBe("tool_calls");
  expect(mapFinishReason("content_filter")).toBe("content_filter");
  expect(mapFinishReason("weird")).toBe("other");
});

test("tool calls without an id get one; usage is reported once, last value wins", () => {
  const reader = new ChunkReader();
  reader.read({ choices: [{ delta: { tool_calls: [{ function: { name: "f", arguments: "{" } }] } }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
  reader.read({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: "}" } }] }, finish_reason: "tool_calls" }] });
  reader.read({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 3 } });
  expect(reader.finished).toBe(true);
  expect(reader.close()).toEqual([
    { type: "tool-call", index: 0, id: "call_0", argumentsDelta: "" },
    { type: "usage", promptTokens: 10, completionTokens: 3, cachedTokens: 0 },
    { type: "finish", reason: "tool_calls" },
  ]);
});

test("reasoning deltas (reasoning_content, or reasoning) are reasoning events, apart from the text", () => {
  const reader = new ChunkReader();
  expect(reader.read({ choices: [{ delta: { reasoning_content: "think " } }] })).toEqual([{ type: "reasoning", text: "think " }]);
  expect(reader.read({ choices: [{ delta: { reasoning: "more", content: "Answer" } }] } as never)).toEqual([
    { type: "reasoning", text: "more" },
    { type: "text", text: "Answer" },
  ]);
  expect(reader.read({ choices: [{ delta: { reasoning: { effort: "high" } } }] } as never)).toEqual([]);
});

test("stream_options only where the server takes it; Groq's x_groq usage is read", () => {
  const info: ModelInfo = { name: "mistral/x", contextWindow: 1000, maxOutput: 100, prices: { input: 0, output: 0 }, editFormat: "diff", capabilities: caps() };
  const req = { model: "mistral/x", messages: [{ role: "user" as const, content: "hi" }], stream: true, env: {} };
  expect(toWireParams(req, { provider: "mistral", id: "x", info, streamOptions: false }).stream_options).toBeUndefined();
  expect(toWireParams(req, { provider: "groq", id: "x", info }).stream_options).toEqual({ include_usage: true });
  const reader = new ChunkReader();
  reader.read({ choices: [{ delta: { content: "a" }, finish_reason: "stop" }], x_groq: { usage: { prompt_tokens: 5, completion_tokens: 1 } } });
  expect(reader.close()).toContainEqual({ type: "usage", promptTokens: 5, completionTokens: 1, cachedTokens: 0 });
});

describe("image and document parts", () => {
  const message: ChatMessage = {
    role: "user",
    content: "see these",
    parts: [
      { type: "text", text: "see these" },
      { type: "image", mediaType: "image/png", data: "iVBORw0K", width: 10, height: 10, name: "shot.png" },
      { type: "document", mediaType: "application/pdf", data: "JVBERi0x", name: "docs/spec.pdf", pages: 1 },
    ],
  };

  test("OpenAI's form: images as data URLs, PDFs as file parts with a file name", () => {
    const [wire] = toWireMessages([message], caps());
    expect(wire!.content).toEqual([
      { type: "text", text: "see these" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0K" } },
      { type: "file", file: { filename: "docs/spec.pdf", file_data: "data:application/pdf;base64,JVBERi0x" } },
    ]);
  });

  test("Gemini's form: a PDF travels as an image_url data URL", () => {
    const [wire] = toWireMessages([message], caps(), "image_url");
    expect((wire!.content as { type: string }[]).map((p) => p.type)).toEqual(["text", "image_url", "image_url"]);
    expect(JSON.stringify(wire!.content)).toContain('"url":"data:application/pdf;base64,JVBERi0x"');
  });

  test("a cache breakpoint marks the last part; a folded system prompt becomes the first text part", () => {
    const wire = toWireMessages([{ role: "system", content: "Rules." }, { ...message, cacheBreakpoint: true }], caps({ systemPrompt: false, cache: "breakpoints" }));
    const parts = wire[0]!.content as Record<string, unknown>[];
    expect(parts[0]).toEqual({ type: "text", text: "Rules." });
    expect(parts.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(parts.slice(0, -1).some((p) => "cache_control" in p)).toBe(false);
  });

  test("messages without parts are sent exactly as before", () => {
    expect(toWireMessages([{ role: "user", content: "plain" }], caps())).toEqual([{ role: "user", content: "plain" }]);
  });
});

describe("reasoning settings in each provider's wire form", () => {
  const info: ModelInfo = { name: "p/m", contextWindow: 200_000, maxOutput: 64_000, prices: { input: 0, output: 0 }, editFormat: "diff", capabilities: caps() };
  const req: ModelRequest = { model: "p/m", messages: [{ role: "user", content: "hi" }], stream: false, env: {} };
  const reasoning = { ...info, capabilities: { ...info.capabilities, reasoningEffort: true, thinkingTokens: true } };
  const params = (provider: string, extra: Partial<ModelRequest>, modelInfo: ModelInfo = reasoning) =>
    toWireParams({ ...req, temperature: 0, ...extra }, { provider, id: "m", info: modelInfo });

  test("OpenAI and the rest: reasoning_effort", () => {
    expect(params("openai", { reasoningEffort: "high" }).reasoning_effort).toBe("high");
    expect(params("xai", { reasoningEffort: "low" }).reasoning_effort).toBe("low");
  });
  test("Anthropic: a thinking budget, no temperature, max_tokens above the budget", () => {
    const p = params("anthropic", { thinkingTokens: 8000, maxTokens: 4000 });
    expect(p.thinking).toEqual({ type: "enabled", budget_tokens: 8000 });
    expect(p.temperature).toBeUndefined();
    expect(p.max_tokens).toBe(8000 + 4096);
    expect(params("anthropic", { thinkingTokens: 0 }).thinking).toBeUndefined();
  });
  test("Gemini: thinking_config in the endpoint's extra_body field, or reasoning_effort", () => {
    expect(params("gemini", { thinkingTokens: 1024 }).extra_body).toEqual({ google: { thinking_config: { thinking_budget: 1024 } } });
    expect(params("gemini", { reasoningEffort: "medium" }).reasoning_effort).toBe("medium");
  });
  test("OpenRouter: its reasoning object", () => {
    expect(params("openrouter", { thinkingTokens: 2048 }).reasoning).toEqual({ max_tokens: 2048 });
    expect(params("openrouter", { reasoningEffort: "high" }).reasoning).toEqual({ effort: "high" });
  });
  test("a model the table says takes neither gets neither; a level it lacks is left out", () => {
    const p = params("openai", { reasoningEffort: "high", thinkingTokens: 4096 }, info);
    expect(p.reasoning_effort).toBeUndefined();
    expect(p.thinking).toBeUndefined();
    const grok = { ...info, capabilities: { ...info.capabilities, reasoningEffort: true, reasoningLevels: ["low", "high"] } };
    expect(params("xai", { reasoningEffort: "medium" }, grok).reasoning_effort).toBeUndefined();
    expect(params("xai", { reasoningEffort: "high" }, grok).reasoning_effort).toBe("high");
  });
});
