// Which model a chat runs when the settings name none, and whether it has its key: read
// from the settings, the environment and the model adapters alone, so `coder acp` can ask
// before the rest of the kernel is built (core/acp/initialize.ts).
import type { App } from "../kernel.ts";
import { UsageError } from "../errors.ts";

/** What choosing a model reads: the settings, the environment and the registered model adapters. */
export type ModelChoiceView = Pick<App, "settings" | "registry" | "env">;

/**
 * The model to run: --model (or its config/env), else the first adapter's default for the keys
 * found, else the fallback model; `warn` hears, when no key is found at all, which to set.
 */
export function chooseModel(app: ModelChoiceView, warn: (text: string) => void): string {
  const o = app.settings.options;
  if (o.model) return o.model;
  const adapters = [...app.registry.models.values()].map((entry) => entry.item);
  for (const adapter of adapters) {
    const model = adapter.defaultModel?.(app.env);
    if (model) return model;
  }
  if (!o.apiKey) {
    const keys = [...new Set(adapters.flatMap((a) => a.defaultModelKeys ?? []))];
    if (keys.length) warn(`no API key found: set ${keys.join(", ")} (in the environment or the repository's .env), or choose a model with --model (e.g. ollama/qwen2.5-coder)`);
  }
  const fallback = adapters.find((a) => a.fallbackModel)?.fallbackModel;
  if (!fallback) throw new UsageError("no model: no model adapter finds an API key or names a fallback; choose one with --model");
  return fallback;
}

/**
 * The variables to set when the model chosen cannot run for want of an API key (no key at
 * all, or none for the chosen model's provider), or null when a model is usable.
 */
export function missingApiKey(app: ModelChoiceView): string | null {
  let warning: string | null = null;
  const model = chooseModel(app, (text) => (warning = text));
  if (warning || app.settings.options.apiKey) return warning;
  // A model is chosen (--model, CODER_MODEL, a config): is its own key there?
  try {
    return app.registry.adapterFor(model).missingKey?.(model, app.env) ?? null;
  } catch {
    return null; // an unknown provider is reported by the first request
  }
}
