// Pure retry rules: what is retried, how long to wait, and what never reaches the user.
import { expect, test } from "bun:test";
import { backoffDelay, classifyError, displayUrl, redact, retryAfterMs } from "./retry.ts";

test("Retry-After: seconds, HTTP date, retry-after-ms wins", () => {
  expect(retryAfterMs(new Headers({ "retry-after": "3" }))).toBe(3000);
  expect(retryAfterMs(new Headers({ "retry-after": "0.5", "retry-after-ms": "120" }))).toBe(120);
  const now = Date.parse("2026-01-01T00:00:00Z");
  expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), now)).toBe(10_000);
  expect(retryAfterMs(new Headers())).toBeUndefined();
});

test("backoff doubles with jitter between half and full, capped; Retry-After is honoured as given", () => {
  const policy = { baseDelayMs: 100, maxDelayMs: 1_000 };
  expect(backoffDelay(1, policy, undefined, () => 0)).toBe(50);
  expect(backoffDelay(1, policy, undefined, () => 1)).toBe(100);
  expect(backoffDelay(3, policy, undefined, () => 1)).toBe(400);
  expect(backoffDelay(10, policy, undefined, () => 1)).toBe(1_000);
  expect(backoffDelay(10, policy, 2_500)).toBe(2_500);
});

test("status classification", () => {
  const err = (status: number, message = "x", code?: string) => ({ status, error: { message }, code, headers: new Headers() });
  expect(classifyError(err(429)).retryable).toBe(true);
  expect(classifyError(err(500)).retryable).toBe(true);
  expect(classifyError(err(529)).reason).toContain("529 overloaded");
  expect(classifyError(err(408)).retryable).toBe(true);
  expect(classifyError(err(400)).retryable).toBe(false);
  expect(classifyError(err(401)).hint).toBe("check the API key");
  expect(classifyError(err(404)).hint).toContain("model name");
  const quota = classifyError(err(429, "You exceeded your current quota, please check your plan", "insufficient_quota"));
  expect(quota.retryable).toBe(false);
  expect(quota.hint).toContain("billing");
});

test("transport failures are retryable with a plain reason", () => {
  expect(classifyError(Object.assign(new Error("Connection error."), { cause: { code: "ECONNRESET" } }))).toEqual({ retryable: true, reason: "the connection dropped" });
  expect(classifyError(new Error("Request timed out.")).reason).toBe("the request timed out");
  expect(classifyError(Object.assign(new Error("Connection error."), { cause: { code: "ConnectionRefused", message: "Unable to connect" } })).reason).toBe("connection refused");
  expect(classifyError({ error: { message: "Overloaded" }, message: "Overloaded" })).toEqual({ retryable: true, reason: "error mid-stream: Overloaded" });
});

test("redaction takes the key in use only as a whole token, and never a key under 8 characters", () => {
  expect(redact("model openai/test-model failed", "test")).toBe("model openai/test-model failed");
  expect(redact("key abcd1234efgh was refused; xabcd1234efgh is another word", "abcd1234efgh")).toBe("key [redacted] was refused; xabcd1234efgh is another word");
  expect(redact("Authorization: token=local.key+1/x", "local.key+1/x")).toBe("Authorization: token=[redacted]");
});

test("redaction removes the key in use and key-shaped strings", () => {
  const text = "bad key sk-proj-abcdef1234567890 and AIzaSyA1234567890abcdefghijk, Bearer abcdefghijklmnop, url?key=zzz&x=1, mine: hunter2-secret";
  const out = redact(text, "hunter2-secret");
  for (const leaked of ["sk-proj-abcdef", "AIzaSy", "abcdefghijklmnop", "zzz", "hunter2"]) expect(out).not.toContain(leaked);
  expect(out).toContain("Bearer [redacted]");
  expect(out).toContain("?key=[redacted]&x=1");
});

test("URLs are shown without credentials or query", () => {
  expect(displayUrl("https://user:pass@example.com/v1/?key=abc")).toBe("https://example.com/v1");
  expect(displayUrl("http://127.0.0.1:11434/v1")).toBe("http://127.0.0.1:11434/v1");
});
