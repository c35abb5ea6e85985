// Speech to text through a provider's OpenAI-compatible `/audio/transcriptions` endpoint
// (a multipart upload). The chat model's provider transcribes when it has a speech model;
// otherwise OpenAI does, with OPENAI_API_KEY. Errors are one line without the key
// (ModelRequestError, exit code 2 when the cause is configuration: no key, no endpoint).
import type { TranscriptionRequest } from "../../core/plugin.ts";
import { ModelRequestAborted, ModelRequestError } from "./errors.ts";
import { resolveModel } from "./lookup.ts";
import { EndpointConfigError, type Endpoint, type Provider, providerNamed, resolveEndpoint } from "./providers.ts";
import { classifyError, displayUrl, oneLine, redact } from "./retry.ts";

const SPEECH_TIMEOUT_MS = 120_000;

/** The provider, model and endpoint that transcribe for `request.model`. */
export function speechEndpoint(request: TranscriptionRequest): { provider: Provider; model: string; endpoint: Endpoint } {
  const resolved = resolveModel(request.model);
  if (!resolved) throw new ModelRequestError(`unknown provider in model "${request.model}": use provider/model, e.g. openai/gpt-4.1`, 2);
  const own = resolved.provider;
  try {
    if (own.speechModel) return { provider: own, model: own.speechModel, endpoint: resolveEndpoint(own, request) };
    // --api-base and --api-key belong to the chat provider: OpenAI's speech endpoint takes its own key.
    const openai = providerNamed("openai")!;
    return { provider: openai, model: openai.speechModel!, endpoint: resolveEndpoint(openai, { env: request.env }) };
  } catch (error) {
    if (!(error instanceof EndpointConfigError)) throw error;
    const why = own.speechModel ? error.message : `${own.name} has no speech-to-text endpoint, so /voice uses OpenAI's, and ${error.message}`;
    throw new ModelRequestError(redact(why, request.apiKey), 2);
  }
}

/** Transcribe `request.audio`; returns the text. */
export async function transcribe(request: TranscriptionRequest, signal: AbortSignal): Promise<string> {
  const { provider, model, endpoint } = speechEndpoint(request);
  const { OpenAI, toFile } = await import("./sdk.ts");
  const client = new OpenAI({
    baseURL: endpoint.baseURL,
    apiKey: endpoint.apiKey,
    defaultHeaders: endpoint.headers,
    maxRetries: 2,
    timeout: request.timeoutMs ?? SPEECH_TIMEOUT_MS,
    logLevel: "off",
  });
  try {
    const file = await toFile(request.audio, request.fileName);
    const result = await client.audio.transcriptions.create(
      { file, model, response_format: "json", ...(request.language ? { language: request.language } : {}) },
      { signal },
    );
    return result.text.trim();
  } catch (error) {
    if (signal.aborted) throw new ModelRequestAborted("transcription");
    const failure = classifyError(error);
    const hint = failure.hint ? ` (${failure.hint === "check the API key" ? `check ${provider.keyEnv[0]}` : failure.hint})` : "";
    const message = `speech-to-text with ${provider.name}/${model} at ${displayUrl(endpoint.baseURL)} failed: ${failure.reason}${hint}`;
    throw new ModelRequestError(oneLine(redact(message, endpoint.apiKey, request.apiKey), 500));
  }
}
