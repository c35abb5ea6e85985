// A model adapter for a fixed, offline model: `--model echo` answers every
// request with the text of the last user message. Useful for trying formats
// and plugins without a network or an API key (and for coder's own tests).
import type { ModelInfo, Plugin } from "../../core/plugin.ts";

const ECHO: ModelInfo = {
  name: "echo",
  contextWindow: 1_000_000,
  maxOutput: 100_000,
  prices: { input: 0, output: 0 },
  editFormat: "whole",
  capabilities: { tools: false, systemPrompt: true, temperature: false, reasoningEffort: false, prefill: false, cache: "none" },
};

const served = (model: string) => model === "echo" || model === "echo/echo";

export default {
  apiVersion: 1,
  name: "echo-model",
  models: [
    {
      name: "echo",
      matches: served,
      info: (model) => (served(model) ? { ...ECHO, name: model } : undefined),
      list: () => [ECHO],
      async *stream(request) {
        const last = [...request.messages].reverse().find((m) => m.role === "user");
        const text = last?.content ?? "";
        // Stream it in a few pieces, as a real model would.
        for (let i = 0; i < text.length; i += 16) yield { type: "text", text: text.slice(i, i + 16) };
        yield { type: "usage", promptTokens: request.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0), completionTokens: Math.ceil(text.length / 4), cachedTokens: 0 };
        yield { type: "finish", reason: "stop" };
      },
    },
  ],
} satisfies Plugin;
