// The built-in model adapter: every OpenAI-compatible Chat Completions endpoint of the
// provider table (OpenAI, Anthropic's and Gemini's compatible endpoints, OpenRouter,
// DeepSeek, Ollama, llama.cpp...), through the `openai` package, loaded only when a
// request is made. Our own retry loop runs (the client's is off): backoff with jitter,
// Retry-After honoured, cut streams retried, one total time bound, one-line errors.
import type { Kit, ModelAdapter, ModelEvent, ModelInfo, ModelRequest, Plugin, PluginObject } from "../../core/plugin.ts";
import { ModelRequestAborted, ModelRequestError } from "./errors.ts";
import { infoForResolved, listModels, resolveModel } from "./lookup.ts";
import { EndpointConfigError, PROVIDERS, resolveEndpoint, type Endpoint } from "./providers.ts";
import { transcribe } from "./speech.ts";
import { backoffDelay, classifyError, DEFAULT_RETRY, displayUrl, oneLine, redact, type AttemptFailure, type RetryPolicy } from "./retry.ts";
import { ChunkReader, completionEvents, toWireParams } from "./wire.ts";

export interface OpenAIAdapterOptions {
  /** Retry and timeout policy (tests shorten the delays). */
  retry?: Partial<RetryPolicy>;
  /** Capabilities assumed for models the table lacks (the kernel's defaults apply to its own checks). */
  unknownModelInfo?: (name: string) => ModelInfo;
}

export { ModelRequestAborted, ModelRequestError };

const FALLBACK_CAPS: ModelInfo["capabilities"] = { tools: true, systemPrompt: true, temperature: true, reasoningEffort: false, prefill: false, cache: "none" };

/**
 * A model the table lacks gets `diff`, the format that fails safest: over a weak model's usual
 * deviations (elided code, lines retyped from memory, a listing that stops early) a SEARCH that
 * does not match is a repair message, where a whole-file listing is a silent wrong write
 * (formats/unknown-default.test.ts: whole 3 of 6, diff 0).
 */
function fallbackInfo(name: string): ModelInfo {
  return { name, contextWindow: 128_000, maxOutput: 8_192, prices: { input: 0, output: 0 }, editFormat: "diff", capabilities: FALLBACK_CAPS, unknown: true };
}

type OpenAIModule = typeof import("./sdk.ts");
let openaiModule: Promise<OpenAIModule> | undefined;
const loadOpenAI = () => (openaiModule ??= import("./sdk.ts"));

/** `--no-verify-ssl`: Bun's fetch, accepting any TLS certificate (a self-signed proxy, a company gateway). */
const acceptAnyCertificate = ((input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, tls: { rejectUnauthorized: false } } as RequestInit)) as typeof fetch;

/** Wait `ms`, or reject at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ModelRequestAborted());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelRequestAborted());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Why our own controller aborted an attempt. */
type StopCause = "user" | "idle" | "deadline";

class Attempt {
  readonly controller = new AbortController();
  cause: StopCause | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly deadlineTimer: ReturnType<typeof setTimeout>;
  private readonly onUserAbort = () => this.stop("user");

  constructor(
    private readonly userSignal: AbortSignal,
    private readonly idleMs: number | undefined,
    readonly deadlineMs: number,
  ) {
    if (userSignal.aborted) this.stop("user");
    userSignal.addEventListener("abort", this.onUserAbort, { once: true });
    this.deadlineTimer = setTimeout(() => this.stop("deadline"), Math.max(0, deadlineMs));
    this.touch();
  }

  /** Something arrived: restart the idle watchdog. */
  touch(): void {
    if (this.idleMs === undefined) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stop("idle"), this.idleMs);
  }

  stop(cause: StopCause): void {
    this.cause ??= cause;
    this.controller.abort();
  }

  dispose(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.deadlineTimer);
    this.userSignal.removeEventListener("abort", this.onUserAbort);
  }
}

/** A failure of one attempt, carried out of the attempt's generator. */
class AttemptError extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.reason);
  }
}

/** The model chosen by the keys that are set, in Aider's order of providers. */
const DEFAULT_MODELS: readonly { keys: readonly string[]; model: string }[] = [
  { keys: ["ANTHROPIC_API_KEY"], model: "anthropic/claude-sonnet-4-5" },
  { keys: ["OPENAI_API_KEY"], model: "openai/gpt-4.1" },
  { keys: ["GEMINI_API_KEY", "GOOGLE_API_KEY"], model: "gemini/gemini-2.5-pro" },
  { keys: ["OPENROUTER_API_KEY"], model: "openrouter/anthropic/claude-sonnet-4.5" },
  { keys: ["DEEPSEEK_API_KEY"], model: "deepseek/deepseek-chat" },
];

/** A Chat Completions body: an object with a `choices` list. */
function isCompletion(body: unknown): boolean {
  return typeof body === "object" && body !== null && Array.isArray((body as { choices?: unknown }).choices);
}

/** What came instead of a completion, in a few words: `"<!DOCTYPE html><html>…"`. */
function describeBody(body: unknown): string {
  const text = typeof body === "string" ? body : JSON.stringify(body) ?? String(body);
  const flat = text.replace(/\s+/g, " ").trim();
  return flat ? JSON.stringify(flat.length > 60 ? `${flat.slice(0, 59)}…` : flat) : "an empty body";
}

export function createOpenAIAdapter(options: OpenAIAdapterOptions = {}): ModelAdapter {
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const infoFor = (model: string): ModelInfo | undefined => {
    const resolved = resolveModel(model);
    return resolved ? infoForResolved(resolved) : undefined;
  };

  /** One attempt: yields events as they arrive; throws AttemptError (or ModelRequestAborted). */
  async function* attemptOnce(
    endpoint: Endpoint,
    params: Record<string, unknown>,
    streaming: boolean,
    attempt: Attempt,
    verifySsl: boolean,
  ): AsyncGenerator<ModelEvent> {
    const { OpenAI } = await loadOpenAI();
    const client = new OpenAI({
      baseURL: endpoint.baseURL,
      apiKey: endpoint.apiKey,
      defaultHeaders: endpoint.headers,
      ...(verifySsl ? {} : { fetch: acceptAnyCertificate }),
      maxRetries: 0,
      timeout: attempt.deadlineMs + 60_000, // our watchdogs decide; this only backs them up
      logLevel: "off", // failures reach the user once, as our one-line error
    });
    const failed = (error?: unknown): AttemptError | ModelRequestAborted => {
      if (attempt.cause === "user") return new ModelRequestAborted();
      if (attempt.cause === "idle") return new AttemptError({ retryable: true, reason: `no response for ${Math.round(policy.idleTimeoutMs / 1000)}s` });
      if (attempt.cause === "deadline") return new AttemptError({ retryable: false, reason: "the time bound ran out" });
      if (error === undefined) return new AttemptError({ retryable: true, reason: "the stream ended before the reply was complete" });
      return new AttemptError(classifyError(error));
    };
    try {
      const response = await client.chat.completions.create(params as never, { signal: attempt.controller.signal });
      if (!streaming) {
        if (attempt.cause) throw failed();
        // A proxy's login page or an HTML error page can come with status 200: not a reply.
        if (!isCompletion(response)) throw new AttemptError({ retryable: false, reason: `the endpoint answered with something that is not a chat completion (${describeBody(response)}); check --api-base` });
        yield* completionEvents(response as never);
        return;
      }
      const reader = new ChunkReader();
      attempt.touch();
      for await (const chunk of response as unknown as AsyncIterable<Record<string, unknown>>) {
        attempt.touch();
        for (const event of reader.read(chunk)) yield event;
      }
      // The SDK ends quietly when its request is aborted: our watchdogs tell why.
      if (attempt.cause || !reader.finished) throw failed();
      yield* reader.close();
    } catch (error) {
      if (error instanceof AttemptError || error instanceof ModelRequestAborted) throw error;
      throw failed(error);
    }
  }

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const resolved = resolveModel(request.model);
    if (!resolved) throw new ModelRequestError(`unknown provider in model "${request.model}": use provider/model, e.g. openai/gpt-4.1`, 2);
    let endpoint: Endpoint;
    try {
      endpoint = resolveEndpoint(resolved.provider, request);
    } catch (error) {
      throw new ModelRequestError(redact((error as Error).message, request.apiKey), 2);
    }
    const info = infoForResolved(resolved) ?? options.unknownModelInfo?.(resolved.fullName) ?? fallbackInfo(resolved.fullName);
    const params = toWireParams(request, { provider: resolved.provider.name, id: resolved.id, info, streamOptions: resolved.provider.streamOptions, documents: resolved.provider.documents });
    const where = `${resolved.fullName} at ${displayUrl(endpoint.baseURL)}`;
    const totalMs = request.timeoutMs ?? policy.totalTimeoutMs;
    const started = Date.now();
    const fail = (failure: AttemptFailure, attempts: number): ModelRequestError => {
      const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
      const keyHint = `check ${resolved.provider.keyEnv[0] ?? "the API key"} or --api-key`;
      const hint = failure.hint ? ` (${failure.hint === "check the API key" ? keyHint : failure.hint})` : "";
      return new ModelRequestError(oneLine(redact(`model request to ${where} failed after ${tries}: ${failure.reason}${hint}`, endpoint.apiKey, request.apiKey), 500));
    };

    for (let n = 1; ; n++) {
      if (signal.aborted) throw new ModelRequestAborted();
      const remaining = totalMs - (Date.now() - started);
      const attempt = new Attempt(signal, request.stream ? policy.idleTimeoutMs : undefined, remaining);
      let failure: AttemptFailure;
      try {
        yield* attemptOnce(endpoint, params, request.stream, attempt, request.verifySsl !== false);
        return;
      } catch (error) {
        if (error instanceof ModelRequestAborted) throw error;
        if (!(error instanceof AttemptError)) throw error;
        failure = error.failure;
      } finally {
        attempt.dispose();
      }
      if (!failure.retryable || n >= policy.maxAttempts) throw fail(failure, n);
      const delayMs = backoffDelay(n, policy, failure.retryAfterMs);
      if (Date.now() - started + delayMs >= totalMs) {
        throw fail({ ...failure, reason: `${failure.reason}; the ${Math.round(totalMs / 1000)}s time bound leaves no room for another try` }, n);
      }
      yield { type: "retry", attempt: n, delayMs, reason: redact(failure.reason, endpoint.apiKey) };
      await sleep(delayMs, signal);
    }
  }

  return {
    name: "openai",
    matches: (model) => resolveModel(model) !== undefined,
    info: infoFor,
    list: listModels,
    stream,
    defaultModel: (env) => DEFAULT_MODELS.find((d) => d.keys.some((k) => env[k]?.trim()))?.model ?? null,
    defaultModelKeys: DEFAULT_MODELS.flatMap((d) => d.keys),
    // Without any key, coder still starts on OpenAI's model (and says which keys to set).
    fallbackModel: "openai/gpt-4.1",
    missingKey: (model, env) => {
      const resolved = resolveModel(model);
      if (!resolved) return null;
      try {
        resolveEndpoint(resolved.provider, { env });
        return null;
      } catch (error) {
        return error instanceof EndpointConfigError && /no API key/.test(error.message) ? error.message : null;
      }
    },
    providers: () => PROVIDERS.map((p) => ({ name: p.name, baseUrl: p.baseUrl, keyEnv: p.keyEnv, keyOptional: p.keyOptional, baseEnv: p.baseEnv })),
    transcribe,
  };
}

const plugin: Plugin = (_kit: Kit): PluginObject => ({ apiVersion: 1, name: "openai", models: [createOpenAIAdapter()] });
export default plugin;
