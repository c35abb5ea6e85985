// The provider table: every OpenAI-compatible endpoint coder knows by name, its
// default base URL and the environment variable holding its API key, plus the rules
// that turn `--api-base` / `--api-key` / the environment into one endpoint.

export interface Provider {
  /** The prefix of `--model provider/model`. */
  name: string;
  /** Default base URL (with its version path); absent for `openai-compatible`, which needs `--api-base`. */
  baseUrl?: string;
  /** Environment variables that may hold the API key, first found wins. */
  keyEnv: readonly string[];
  /** Local servers answer without a key; a placeholder is sent then. */
  keyOptional?: boolean;
  /** Environment variables that may hold the base URL (after `--api-base`, before `baseUrl`). */
  baseEnv?: readonly string[];
  /** Extra headers every request carries. */
  headers?: Readonly<Record<string, string>>;
  /** False for servers that reject `stream_options` (they report usage in the last chunk anyway). */
  streamOptions?: boolean;
  /** How a PDF travels: a `file` part (OpenAI's form, the default) or an `image_url` part with a PDF data URL (Gemini). */
  documents?: "file" | "image_url";
  /** The speech-to-text model of its `/audio/transcriptions` endpoint; absent: it has none. */
  speechModel?: string;
}

export const PROVIDERS: readonly Provider[] = [
  { name: "openai", baseUrl: "https://api.openai.com/v1", keyEnv: ["OPENAI_API_KEY"], baseEnv: ["OPENAI_BASE_URL", "OPENAI_API_BASE"], speechModel: "whisper-1" },
  { name: "anthropic", baseUrl: "https://api.anthropic.com/v1/", keyEnv: ["ANTHROPIC_API_KEY"] },
  { name: "gemini", baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai/", keyEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY"], documents: "image_url" },
  { name: "openrouter", baseUrl: "https://openrouter.ai/api/v1", keyEnv: ["OPENROUTER_API_KEY"], headers: { "X-Title": "coder" } },
  { name: "deepseek", baseUrl: "https://api.deepseek.com/v1", keyEnv: ["DEEPSEEK_API_KEY"] },
  { name: "groq", baseUrl: "https://api.groq.com/openai/v1", keyEnv: ["GROQ_API_KEY"], speechModel: "whisper-large-v3-turbo" },
  // Mistral validates request fields strictly and always sends usage with the last chunk.
  { name: "mistral", baseUrl: "https://api.mistral.ai/v1", keyEnv: ["MISTRAL_API_KEY"], streamOptions: false },
  { name: "xai", baseUrl: "https://api.x.ai/v1", keyEnv: ["XAI_API_KEY"] },
  { name: "together", baseUrl: "https://api.together.xyz/v1", keyEnv: ["TOGETHER_API_KEY", "TOGETHERAI_API_KEY"] },
  { name: "fireworks", baseUrl: "https://api.fireworks.ai/inference/v1", keyEnv: ["FIREWORKS_API_KEY"] },
  { name: "ollama", baseUrl: "http://127.0.0.1:11434/v1", keyEnv: ["OLLAMA_API_KEY"], keyOptional: true, baseEnv: ["OLLAMA_API_BASE"] },
  { name: "lmstudio", baseUrl: "http://127.0.0.1:1234/v1", keyEnv: ["LMSTUDIO_API_KEY"], keyOptional: true, baseEnv: ["LMSTUDIO_API_BASE"] },
  // llama.cpp, vLLM, LocalAI, a company gateway...: the URL must come from --api-base or OPENAI_BASE_URL.
  { name: "openai-compatible", keyEnv: ["OPENAI_API_KEY"], keyOptional: true, baseEnv: ["OPENAI_BASE_URL", "OPENAI_API_BASE"], speechModel: "whisper-1" },
];

const BY_NAME = new Map(PROVIDERS.map((p) => [p.name, p]));

export function providerNamed(name: string): Provider | undefined {
  return BY_NAME.get(name);
}

/** Split "provider/model" into a known provider and the model id sent on the wire; undefined when the prefix is no provider. */
export function splitModelName(model: string): { provider: Provider; id: string } | undefined {
  const slash = model.indexOf("/");
  if (slash <= 0) return undefined;
  const provider = BY_NAME.get(model.slice(0, slash));
  const id = model.slice(slash + 1);
  return provider && id ? { provider, id } : undefined;
}

/** Sent as the key to servers that need none (the openai client insists on a string). */
export const NO_KEY = "no-key-needed";

/** A configuration problem the user must fix (missing key, missing URL): exit 2, like other config errors. */
export class EndpointConfigError extends Error {
  readonly exitCode = 2;
}

export interface Endpoint {
  baseURL: string;
  apiKey: string;
  headers: Record<string, string>;
}

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() ? v.trim() : undefined);

/**
 * The endpoint for one request. Base URL: `--api-base` > the provider's base env var
 * (OPENAI_BASE_URL only for openai / openai-compatible) > the provider's default.
 * Key: `--api-key` > the provider's env vars (process env plus the repository's .env).
 */
export function resolveEndpoint(
  provider: Provider,
  request: { apiBase?: string; apiKey?: string; env: Readonly<Record<string, string | undefined>> },
): Endpoint {
  const fromEnv = (names: readonly string[] | undefined) => {
    for (const name of names ?? []) {
      const value = nonEmpty(request.env[name]);
      if (value) return value;
    }
    return undefined;
  };
  const baseURL = nonEmpty(request.apiBase) ?? fromEnv(provider.baseEnv) ?? provider.baseUrl;
  if (!baseURL) {
    throw new EndpointConfigError(
      `provider ${provider.name} has no default URL: pass --api-base URL (e.g. http://127.0.0.1:8080/v1) or set OPENAI_BASE_URL`,
    );
  }
  const apiKey = nonEmpty(request.apiKey) ?? fromEnv(provider.keyEnv) ?? (provider.keyOptional ? NO_KEY : undefined);
  if (!apiKey) {
    const vars = provider.keyEnv.join(" or ");
    throw new EndpointConfigError(`no API key for ${provider.name}: set ${vars} (in the environment or the repository's .env), or pass --api-key`);
  }
  return { baseURL, apiKey, headers: { ...provider.headers } };
}
