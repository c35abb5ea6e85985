// The model table, as data: what coder knows of each model it can reach through an
// OpenAI-compatible endpoint. Prices are USD per million tokens (input, output, cache
// read, cache write) as the providers publish them; a project's config `models` key
// overrides or adds entries, so a stale price is a one-line fix for the user.
//
// Capabilities start from the provider's defaults (FAMILY_CAPS) and an entry lists only
// what differs. `format` is the default edit format; `editorFormat` is the format of the
// editor step in architect mode (the kernel adds the editor-only prompt variant).
import type { ImageRules, ModelInfo, PromptSettings } from "../../core/plugin.ts";

export type Capabilities = ModelInfo["capabilities"];

export interface ModelEntry {
  /** "provider/model-id": the id after the first "/" is what the endpoint is sent. */
  name: string;
  /** Other names that reach this entry, e.g. "sonnet" or a dated snapshot id. */
  aliases?: string[];
  context: number;
  maxOutput: number;
  /** [input, output, cacheRead?, cacheWrite?] per million tokens. */
  price: [number, number, number?, number?];
  format: string;
  weak?: string;
  editor?: string;
  editorFormat?: string;
  caps?: Partial<Capabilities>;
  encoding?: string;
  /** Prompt settings (ModelInfo.prompting): where the reminder goes, and a "lazy" or "overeager" addendum. */
  prompting?: PromptSettings;
}

/**
 * Prompt settings that follow what is known of these families (the same ones Aider marks):
 * OpenAI's GPT-4o and GPT-4 Turbo weigh a system message more than a line appended to the request;
 * GPT-4 Turbo elides code ("lazy"); Anthropic's Sonnet and Opus 4 tend to change more than
 * was asked ("overeager").
 */
const SYSTEM_REMINDER: PromptSettings = { reminder: "system" };
const LAZY: PromptSettings = { reminder: "system", addendum: "lazy" };
const OVEREAGER: PromptSettings = { addendum: "overeager" };

const FULL: Capabilities = { tools: true, systemPrompt: true, temperature: true, reasoningEffort: false, thinkingTokens: false, prefill: false, cache: "none" };

/** Per-provider capability defaults (before an entry's own `caps`). */
export const FAMILY_CAPS: Record<string, Partial<Capabilities>> = {
  // Vision models take images and PDFs (as `file` parts) on Chat Completions.
  openai: { cache: "auto", images: true, pdf: true },
  // Anthropic's OpenAI-compatible endpoint ignores reasoning_effort and cache_control
  // (prompt caching needs its native API), but continues a trailing assistant message and
  // takes an extended-thinking budget (`thinking`). It takes images; PDFs only through the native API.
  anthropic: { prefill: true, thinkingTokens: true, images: true },
  gemini: { cache: "auto", images: true, pdf: true },
  deepseek: { cache: "auto" },
  xai: { cache: "auto" },
  openrouter: {},
};

/** Text-only models of a provider whose others see. */
const TEXT_ONLY: Partial<Capabilities> = { images: false, pdf: false };

/**
 * How each model family sizes and counts images, as the providers publish it (OpenAI's
 * rules, the kernel's default, apply to the others): Anthropic scales to 1568 pixels on the
 * long side and about 1.19 megapixels, and counts width × height / 750; it takes at most
 * 5 MB of base64 (3.75 MB of image). Gemini counts 258 tokens a 768-pixel tile.
 */
export const IMAGE_RULES: Record<string, ImageRules> = {
  anthropic: { tokens: "area", maxEdge: 1568, maxPixels: 1_192_464, maxBytes: 3_750_000 },
  gemini: { tokens: "gemini-tiles", maxEdge: 3072, maxBytes: 15_000_000 },
};

/** Reasoning models: no temperature, reasoning_effort accepted. */
const REASONING: Partial<Capabilities> = { temperature: false, reasoningEffort: true };

export const MODELS: readonly ModelEntry[] = [
  // ── OpenAI ────────────────────────────────────────────────────────────────
  { name: "openai/gpt-5.4", context: 1_050_000, maxOutput: 128_000, price: [2.5, 15, 0.25], format: "diff", weak: "openai/gpt-5.4-mini", editor: "openai/gpt-5.4", editorFormat: "diff", caps: REASONING },
  { name: "openai/gpt-5.4-mini", context: 400_000, maxOutput: 128_000, price: [0.75, 4.5, 0.075], format: "diff", weak: "openai/gpt-5.4-mini", caps: REASONING },
  { name: "openai/gpt-5.1", context: 400_000, maxOutput: 128_000, price: [1.25, 10, 0.125], format: "diff", weak: "openai/gpt-5-mini", editor: "openai/gpt-5.1", editorFormat: "diff", caps: REASONING },
  { name: "openai/gpt-5", context: 400_000, maxOutput: 128_000, price: [1.25, 10, 0.125], format: "diff", weak: "openai/gpt-5-mini", editor: "openai/gpt-5", editorFormat: "diff", caps: REASONING },
  { name: "openai/gpt-5-mini", context: 400_000, maxOutput: 128_000, price: [0.25, 2, 0.025], format: "diff", weak: "openai/gpt-5-nano", caps: REASONING },
  { name: "openai/gpt-5-nano", context: 400_000, maxOutput: 128_000, price: [0.05, 0.4, 0.005], format: "whole", weak: "openai/gpt-5-nano", caps: REASONING },
  { name: "openai/gpt-5-codex", context: 400_000, maxOutput: 128_000, price: [1.25, 10, 0.125], format: "diff", weak: "openai/gpt-5-mini", caps: REASONING },
  { name: "openai/gpt-4.1", aliases: ["4.1"], context: 1_047_576, maxOutput: 32_768, price: [2, 8, 0.5], format: "diff", weak: "openai/gpt-4.1-mini", editor: "openai/gpt-4.1", editorFormat: "diff" },
  { name: "openai/gpt-4.1-mini", context: 1_047_576, maxOutput: 32_768, price: [0.4, 1.6, 0.1], format: "diff", weak: "openai/gpt-4.1-mini" },
  { name: "openai/gpt-4.1-nano", context: 1_047_576, maxOutput: 32_768, price: [0.1, 0.4, 0.025], format: "whole", weak: "openai/gpt-4.1-nano" },
  { name: "openai/gpt-4o", aliases: ["4o"], context: 128_000, maxOutput: 16_384, price: [2.5, 10, 1.25], format: "diff", weak: "openai/gpt-4o-mini", editor: "openai/gpt-4o", editorFormat: "diff", prompting: SYSTEM_REMINDER },
  { name: "openai/gpt-4o-mini", context: 128_000, maxOutput: 16_384, price: [0.15, 0.6, 0.075], format: "whole", weak: "openai/gpt-4o-mini", prompting: SYSTEM_REMINDER },
  { name: "openai/o3", context: 200_000, maxOutput: 100_000, price: [2, 8, 0.5], format: "diff", weak: "openai/gpt-4.1-mini", editor: "openai/gpt-4.1", editorFormat: "diff", caps: REASONING },
  { name: "openai/o3-pro", context: 200_000, maxOutput: 100_000, price: [20, 80], format: "diff", weak: "openai/gpt-4.1-mini", editor: "openai/gpt-4.1", editorFormat: "diff", caps: REASONING },
  { name: "openai/o4-mini", context: 200_000, maxOutput: 100_000, price: [1.1, 4.4, 0.275], format: "diff", weak: "openai/gpt-4.1-mini", editor: "openai/gpt-4.1", editorFormat: "diff", caps: REASONING },
  { name: "openai/o3-mini", context: 200_000, maxOutput: 100_000, price: [1.1, 4.4, 0.55], format: "diff", weak: "openai/gpt-4o-mini", editor: "openai/gpt-4o", editorFormat: "diff", caps: { ...REASONING, tools: true, ...TEXT_ONLY } },
  { name: "openai/gpt-4-turbo", context: 128_000, maxOutput: 4_096, price: [10, 30], format: "udiff", weak: "openai/gpt-4o-mini", encoding: "cl100k_base", caps: { pdf: false }, prompting: LAZY },
  { name: "openai/gpt-3.5-turbo", context: 16_385, maxOutput: 4_096, price: [0.5, 1.5], format: "whole", weak: "openai/gpt-3.5-turbo", encoding: "cl100k_base", caps: TEXT_ONLY },

  // ── Anthropic (OpenAI-compatible endpoint) ───────────────────────────────
  { name: "anthropic/claude-sonnet-5", context: 200_000, maxOutput: 64_000, price: [2, 10, 0.2, 2.5], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-5", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-opus-4-7", context: 200_000, maxOutput: 128_000, price: [5, 25, 0.5, 6.25], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-6", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-opus-4-6", context: 200_000, maxOutput: 128_000, price: [5, 25, 0.5, 6.25], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-6", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-sonnet-4-6", context: 200_000, maxOutput: 64_000, price: [3, 15, 0.3, 3.75], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-6", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-opus-4-5", context: 200_000, maxOutput: 64_000, price: [5, 25, 0.5, 6.25], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-5", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-sonnet-4-5", aliases: ["sonnet", "claude-sonnet-4-5-20250929"], context: 200_000, maxOutput: 64_000, price: [3, 15, 0.3, 3.75], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-5", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-opus-4-1", aliases: ["opus", "claude-opus-4-1-20250805"], context: 200_000, maxOutput: 32_000, price: [15, 75, 1.5, 18.75], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-5", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-opus-4-0", aliases: ["claude-opus-4", "claude-opus-4-20250514"], context: 200_000, maxOutput: 32_000, price: [15, 75, 1.5, 18.75], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-0", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-sonnet-4-0", aliases: ["claude-sonnet-4", "claude-sonnet-4-20250514"], context: 200_000, maxOutput: 64_000, price: [3, 15, 0.3, 3.75], format: "diff", weak: "anthropic/claude-haiku-4-5", editor: "anthropic/claude-sonnet-4-0", editorFormat: "diff", prompting: OVEREAGER },
  { name: "anthropic/claude-haiku-4-5", aliases: ["haiku", "claude-haiku-4-5-20251001"], context: 200_000, maxOutput: 64_000, price: [1, 5, 0.1, 1.25], format: "diff", weak: "anthropic/claude-haiku-4-5" },
  { name: "anthropic/claude-3-5-haiku-latest", aliases: ["claude-3-5-haiku-20241022"], context: 200_000, maxOutput: 8_192, price: [0.8, 4, 0.08, 1], format: "diff", weak: "anthropic/claude-3-5-haiku-latest", caps: { thinkingTokens: false } },

  // ── Google Gemini (OpenAI-compatible endpoint) ───────────────────────────
  { name: "gemini/gemini-3.1-pro-preview", context: 1_048_576, maxOutput: 65_536, price: [2, 12, 0.2], format: "diff-fenced", weak: "gemini/gemini-2.5-flash", editor: "gemini/gemini-3.1-pro-preview", editorFormat: "diff-fenced", caps: { reasoningEffort: true } },
  { name: "gemini/gemini-3-pro-preview", context: 1_048_576, maxOutput: 65_536, price: [2, 12, 0.2], format: "diff-fenced", weak: "gemini/gemini-2.5-flash", editor: "gemini/gemini-3-pro-preview", editorFormat: "diff-fenced", caps: { reasoningEffort: true } },
  { name: "gemini/gemini-2.5-pro", aliases: ["gemini"], context: 1_048_576, maxOutput: 65_536, price: [1.25, 10, 0.125], format: "diff-fenced", weak: "gemini/gemini-2.5-flash", editor: "gemini/gemini-2.5-pro", editorFormat: "diff-fenced", caps: { reasoningEffort: true, thinkingTokens: true } },
  { name: "gemini/gemini-2.5-flash", aliases: ["flash"], context: 1_048_576, maxOutput: 65_536, price: [0.3, 2.5, 0.03], format: "diff", weak: "gemini/gemini-2.5-flash-lite", caps: { reasoningEffort: true, thinkingTokens: true } },
  { name: "gemini/gemini-2.5-flash-lite", context: 1_048_576, maxOutput: 65_536, price: [0.1, 0.4, 0.01], format: "whole", weak: "gemini/gemini-2.5-flash-lite", caps: { reasoningEffort: true, thinkingTokens: true } },

  // ── DeepSeek ──────────────────────────────────────────────────────────────
  { name: "deepseek/deepseek-chat", aliases: ["deepseek"], context: 128_000, maxOutput: 8_192, price: [0.28, 0.42, 0.028], format: "diff", weak: "deepseek/deepseek-chat", editor: "deepseek/deepseek-chat", editorFormat: "diff" },
  { name: "deepseek/deepseek-reasoner", aliases: ["r1"], context: 128_000, maxOutput: 65_536, price: [0.28, 0.42, 0.028], format: "diff", weak: "deepseek/deepseek-chat", editor: "deepseek/deepseek-chat", editorFormat: "diff", caps: { temperature: false, tools: false } },

  // ── xAI ───────────────────────────────────────────────────────────────────
  { name: "xai/grok-4", context: 256_000, maxOutput: 64_000, price: [3, 15, 0.75], format: "diff", weak: "xai/grok-code-fast-1", editor: "xai/grok-4", editorFormat: "diff", caps: { temperature: true, images: true } },
  { name: "xai/grok-code-fast-1", context: 256_000, maxOutput: 32_000, price: [0.2, 1.5, 0.02], format: "diff", weak: "xai/grok-code-fast-1" },
  { name: "xai/grok-3-mini", context: 131_072, maxOutput: 32_000, price: [0.3, 0.5, 0.075], format: "whole", weak: "xai/grok-3-mini", caps: { reasoningEffort: true, reasoningLevels: ["low", "high"] } },

  // ── Mistral ───────────────────────────────────────────────────────────────
  { name: "mistral/codestral-latest", context: 256_000, maxOutput: 32_000, price: [0.3, 0.9], format: "whole", weak: "mistral/mistral-small-latest" },
  { name: "mistral/devstral-medium-latest", context: 128_000, maxOutput: 32_000, price: [0.4, 2], format: "diff", weak: "mistral/mistral-small-latest" },
  { name: "mistral/mistral-large-latest", context: 128_000, maxOutput: 32_000, price: [0.5, 1.5], format: "diff", weak: "mistral/mistral-small-latest" },
  { name: "mistral/mistral-medium-latest", context: 128_000, maxOutput: 32_000, price: [0.4, 2], format: "diff", weak: "mistral/mistral-small-latest", caps: { images: true } },
  { name: "mistral/mistral-small-latest", context: 128_000, maxOutput: 32_000, price: [0.1, 0.3], format: "whole", weak: "mistral/mistral-small-latest", caps: { images: true } },

  // ── Groq ──────────────────────────────────────────────────────────────────
  { name: "groq/moonshotai/kimi-k2-instruct-0905", context: 262_144, maxOutput: 16_384, price: [1, 3], format: "diff", weak: "groq/llama-3.1-8b-instant" },
  { name: "groq/openai/gpt-oss-120b", context: 131_072, maxOutput: 65_536, price: [0.15, 0.75], format: "diff", weak: "groq/llama-3.1-8b-instant", caps: { reasoningEffort: true } },
  { name: "groq/llama-3.3-70b-versatile", context: 131_072, maxOutput: 32_768, price: [0.59, 0.79], format: "whole", weak: "groq/llama-3.1-8b-instant" },
  { name: "groq/llama-3.1-8b-instant", context: 131_072, maxOutput: 8_192, price: [0.05, 0.08], format: "whole", weak: "groq/llama-3.1-8b-instant" },

  // ── Together / Fireworks (open-weight models hosted) ──────────────────────
  { name: "together/Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", context: 262_144, maxOutput: 65_536, price: [2, 2], format: "diff", weak: "together/meta-llama/Llama-3.3-70B-Instruct-Turbo" },
  { name: "together/deepseek-ai/DeepSeek-V3", context: 131_072, maxOutput: 16_384, price: [1.25, 1.25], format: "diff", weak: "together/meta-llama/Llama-3.3-70B-Instruct-Turbo" },
  { name: "together/meta-llama/Llama-3.3-70B-Instruct-Turbo", context: 131_072, maxOutput: 16_384, price: [0.88, 0.88], format: "whole", weak: "together/meta-llama/Llama-3.3-70B-Instruct-Turbo" },
  { name: "fireworks/accounts/fireworks/models/qwen3-coder-480b-a35b-instruct", context: 262_144, maxOutput: 65_536, price: [0.45, 1.8], format: "diff", weak: "fireworks/accounts/fireworks/models/qwen3-coder-480b-a35b-instruct" },
  { name: "fireworks/accounts/fireworks/models/kimi-k2-instruct-0905", context: 262_144, maxOutput: 16_384, price: [0.6, 2.5], format: "diff", weak: "fireworks/accounts/fireworks/models/kimi-k2-instruct-0905" },
  { name: "fireworks/accounts/fireworks/models/deepseek-v3p1", context: 163_840, maxOutput: 16_384, price: [0.56, 1.68], format: "diff", weak: "fireworks/accounts/fireworks/models/deepseek-v3p1" },

  // ── OpenRouter: a few entries of its own; other "vendor/model" ids fall back to the vendor's entry ─
  { name: "openrouter/anthropic/claude-sonnet-4.5", context: 1_000_000, maxOutput: 64_000, price: [3, 15, 0.3, 3.75], format: "diff", weak: "openrouter/anthropic/claude-haiku-4.5", editor: "openrouter/anthropic/claude-sonnet-4.5", editorFormat: "diff", caps: { images: true, thinkingTokens: true }, prompting: OVEREAGER },
  { name: "openrouter/anthropic/claude-haiku-4.5", context: 200_000, maxOutput: 64_000, price: [1, 5, 0.1, 1.25], format: "diff", weak: "openrouter/anthropic/claude-haiku-4.5", caps: { images: true, thinkingTokens: true } },
  { name: "openrouter/qwen/qwen3-coder", context: 262_144, maxOutput: 65_536, price: [0.22, 0.95], format: "diff", weak: "openrouter/qwen/qwen3-coder" },
  { name: "openrouter/moonshotai/kimi-k2", context: 131_072, maxOutput: 16_384, price: [0.5, 2.4], format: "diff", weak: "openrouter/moonshotai/kimi-k2" },

  // ── Local servers: no prices; the context is what the model supports (raise the server's own limit to match) ─
  { name: "ollama/qwen2.5-coder", aliases: ["qwen2.5-coder"], context: 32_768, maxOutput: 8_192, price: [0, 0], format: "whole", weak: "ollama/qwen2.5-coder" },
  { name: "ollama/qwen2.5-coder:32b", context: 32_768, maxOutput: 8_192, price: [0, 0], format: "diff", weak: "ollama/qwen2.5-coder:32b" },
  { name: "ollama/qwen3-coder", context: 262_144, maxOutput: 65_536, price: [0, 0], format: "diff", weak: "ollama/qwen3-coder" },
  { name: "ollama/devstral", context: 131_072, maxOutput: 32_768, price: [0, 0], format: "diff", weak: "ollama/devstral" },
  { name: "ollama/gpt-oss:20b", context: 131_072, maxOutput: 32_768, price: [0, 0], format: "diff", weak: "ollama/gpt-oss:20b", caps: { reasoningEffort: true } },
  { name: "ollama/deepseek-r1", context: 131_072, maxOutput: 32_768, price: [0, 0], format: "whole", weak: "ollama/deepseek-r1", caps: { tools: false } },
  { name: "ollama/llama3.1", context: 131_072, maxOutput: 8_192, price: [0, 0], format: "whole", weak: "ollama/llama3.1" },
  { name: "lmstudio/qwen2.5-coder-32b-instruct", context: 32_768, maxOutput: 8_192, price: [0, 0], format: "diff", weak: "lmstudio/qwen2.5-coder-32b-instruct" },
  { name: "lmstudio/qwen/qwen3-coder-30b", context: 262_144, maxOutput: 32_768, price: [0, 0], format: "diff", weak: "lmstudio/qwen/qwen3-coder-30b" },
];

/** OpenRouter vendor prefixes → our provider names, for "openrouter/<vendor>/<model>" fallbacks. */
export const OPENROUTER_VENDORS: Record<string, string> = {
  openai: "openai",
  anthropic: "anthropic",
  google: "gemini",
  deepseek: "deepseek",
  "x-ai": "xai",
  mistralai: "mistral",
};

/** The full capability set of an entry. */
export function capabilitiesOf(entry: ModelEntry): Capabilities {
  const provider = entry.name.slice(0, entry.name.indexOf("/"));
  return { ...FULL, ...FAMILY_CAPS[provider], ...entry.caps };
}
