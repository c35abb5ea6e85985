// When to retry a model request, how long to wait, and how to say what failed in one
// line that never carries an API key. Pure functions: the adapter (index.ts) runs them.

export interface RetryPolicy {
  /** Attempts in all (the first one included). */
  maxAttempts: number;
  /** Delay before the first retry; doubles each retry, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Give up on a response (or a streamed reply) when nothing arrives for this long. */
  idleTimeoutMs: number;
  /** Total time bound for the request, retries and waits included (ModelRequest.timeoutMs wins). */
  totalTimeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  idleTimeoutMs: 300_000,
  totalTimeoutMs: 600_000,
};

/** Why one attempt failed, as the adapter saw it. */
export interface AttemptFailure {
  retryable: boolean;
  /** Short, one line: "429 rate limited: ...", "connection dropped mid-stream", "no response for 300s". */
  reason: string;
  /** The server asked to wait this long (Retry-After / retry-after-ms). */
  retryAfterMs?: number;
  /** For non-retryable failures: a hint for the user (which variable to check...). */
  hint?: string;
}

interface ErrorLike {
  status?: unknown;
  headers?: unknown;
  error?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  name?: unknown;
}

const STATUS_TEXT: Record<number, string> = {
  400: "bad request",
  401: "unauthorized",
  402: "payment required",
  403: "forbidden",
  404: "not found",
  408: "request timeout",
  409: "conflict",
  413: "request too large",
  422: "unprocessable request",
  429: "rate limited",
  500: "server error",
  502: "bad gateway",
  503: "service unavailable",
  504: "gateway timeout",
  529: "overloaded",
};

const RETRYABLE_STATUS = new Set([408, 409, 425, 429]);

function header(headers: unknown, name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : null;
}

/** Retry-After in ms from `retry-after-ms`, or `retry-after` as seconds or an HTTP date. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const ms = Number(header(headers, "retry-after-ms"));
  if (header(headers, "retry-after-ms") !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = header(headers, "retry-after");
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** The server's own message from an openai APIError (or any error), one line. */
function serverMessage(err: ErrorLike): string {
  const body = err.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const fromBody = typeof body?.message === "string" ? body.message : typeof body?.error?.message === "string" ? body.error.message : undefined;
  const raw = fromBody ?? (typeof err.message === "string" ? err.message : String(err));
  // The SDK prefixes "429 " to its messages; we add the status ourselves.
  return raw.replace(/^\d{3}\s+/, "");
}

/** Classify a thrown error from one attempt. */
export function classifyError(error: unknown): AttemptFailure {
  const err = (error ?? {}) as ErrorLike;
  const status = typeof err.status === "number" ? err.status : undefined;
  if (status !== undefined) {
    const label = `${status} ${STATUS_TEXT[status] ?? "error"}`;
    const message = oneLine(serverMessage(err), 200);
    const reason = message ? `${label}: ${message}` : label;
    // A 429 for an exhausted quota (OpenAI's insufficient_quota) will not clear by waiting.
    const quota = status === 429 && (err.code === "insufficient_quota" || /insufficient.quota|exceeded your current quota|billing/i.test(message));
    const retryable = !quota && (RETRYABLE_STATUS.has(status) || status >= 500);
    const failure: AttemptFailure = { retryable, reason };
    if (quota) failure.hint = "the account's quota or credit is used up: check its plan and billing";
    const after = retryAfterMs(err.headers);
    if (after !== undefined) failure.retryAfterMs = after;
    if (status === 401 || status === 403) failure.hint = "check the API key";
    if (status === 404) failure.hint = "check the model name and the API base URL";
    return failure;
  }
  const name = typeof err.name === "string" ? err.name : "";
  const text = `${name} ${typeof err.message === "string" ? err.message : ""} ${causeText(err.cause)}`;
  if (/certificate|SELF_SIGNED|CERT_|UNABLE_TO_VERIFY/i.test(text)) {
    return { retryable: false, reason: "the endpoint's TLS certificate could not be verified", hint: "trust its certificate authority, or pass --no-verify-ssl to accept it" };
  }
  if (/timeout|timed out/i.test(text)) return { retryable: true, reason: "the request timed out" };
  if (/ECONNREFUSED|Unable to connect|ConnectionRefused/i.test(text)) return { retryable: true, reason: "connection refused" };
  // A name that does not resolve is a wrong --api-base or no network, not a passing fault: no retries.
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo|DNS/i.test(text)) return { retryable: false, reason: "host not found", hint: "check the API base URL (--api-base, OPENAI_BASE_URL) and the network" };
  if (/ECONNRESET|socket|closed unexpectedly|terminated|network|fetch failed|Connection error|EPIPE|aborted/i.test(text)) {
    return { retryable: true, reason: "the connection dropped" };
  }
  if (err instanceof SyntaxError || /malformed|JSON/i.test(text)) return { retryable: true, reason: "the server sent a malformed reply" };
  // An error payload inside an SSE stream (e.g. "overloaded" after some text): the SDK raises
  // an APIError with the payload as `error` and no status.
  if (err.error && typeof err.error === "object") return { retryable: true, reason: `error mid-stream: ${oneLine(serverMessage(err), 200)}` };
  return { retryable: false, reason: oneLine(serverMessage(err), 200) || "the request failed" };
}

function causeText(cause: unknown): string {
  if (!cause || typeof cause !== "object") return "";
  const c = cause as ErrorLike;
  return `${typeof c.code === "string" ? c.code : ""} ${typeof c.message === "string" ? c.message : ""}`;
}

/**
 * Delay before retry `retry` (1 = first retry): exponential with jitter in
 * [half, full], capped; a server's Retry-After (or retry-after-ms) is honoured as given.
 */
export function backoffDelay(retry: number, policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">, retryAfter?: number, random = Math.random): number {
  const full = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = Math.round(full / 2 + (random() * full) / 2);
  return retryAfter ?? jittered;
}

export function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

const KEY_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_\-]{8,}/g, // OpenAI, Anthropic (sk-ant-...), DeepSeek, OpenRouter (sk-or-...)
  /\bAIza[0-9A-Za-z_\-]{20,}/g, // Google
  /\bgsk_[A-Za-z0-9]{8,}/g, // Groq
  /\bxai-[A-Za-z0-9]{8,}/g, // xAI
  /\bfw_[A-Za-z0-9]{8,}/g, // Fireworks
  /(Bearer\s+)[A-Za-z0-9._\-]{8,}/gi,
  /([?&](?:key|api[_-]?key|token)=)[^&\s]+/gi,
];

/** A key this short is no secret worth hiding, and hiding it would blank out ordinary words ("test" in "openai/test-model"). */
const MIN_SECRET_CHARS = 8;

/**
 * Remove API keys (the one in use, and anything shaped like one) from text meant for the user.
 * The key in use goes where it stands as a whole token, never out of the middle of a word.
 */
export function redact(text: string, ...secrets: (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_CHARS) continue;
    const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), "[redacted]");
  }
  for (const pattern of KEY_PATTERNS) out = out.replace(pattern, (_m, prefix?: unknown) => (typeof prefix === "string" ? `${prefix}[redacted]` : "[redacted]"));
  return out;
}

/** A base URL fit to print: no user:password@, no query string. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return redact(url);
  }
}
