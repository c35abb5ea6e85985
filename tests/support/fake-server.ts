// A fake OpenAI-compatible Chat Completions server for tests: scripted replies streamed
// in the real SSE format (or as one JSON body), fault injection, and a record of every
// request. It checks image and document parts as a real server would, answers
// `/audio/transcriptions` (multipart) with scripted transcripts, and serves static web
// pages (also as an HTTP proxy would, for absolute-form requests) on 127.0.0.1.
// Import `startFakeServer`, or run this file to serve a script to another process:
//   bun tests/support/fake-server.ts script.json [--log requests.jsonl] [--port N]
// prints its base URL (ending in /v1) as the first stdout line and serves until killed.

/** A tool call the scripted reply makes. */
export interface FakeToolCall {
  /** Defaults to `call_<n>`. */
  id?: string;
  name: string;
  /** The raw JSON arguments string (an object is JSON-encoded for you). */
  arguments: string | Record<string, unknown>;
}

/** Usage reported with a reply; fields left out are estimated (about 4 characters a token). */
export interface FakeUsage {
  promptTokens?: number;
  completionTokens?: number;
  /** Sent as `prompt_tokens_details.cached_tokens`. */
  cachedTokens?: number;
  /** Sent as Anthropic-style `cache_creation_input_tokens`. */
  cacheWriteTokens?: number;
}

/**
 * One scripted answer. The server consumes the first queued step whose `model` and
 * `match` filters fit the request (steps with `repeat` stay queued).
 *
 * @example
 * { text: "Hello!" }                                            // a plain reply
 * { toolCalls: [{ name: "edit_file", arguments: { path: "a.py", search: "", replace: "x" } }] }
 * { text: "cut off he", finishReason: "length" }
 * { status: 429, retryAfter: 0.01 }                            // then the next step answers
 * { status: 500 }
 * { text: "partial reply that never ends", cutAfter: 2 }      // connection dropped after 2 chunks
 * { text: "slow", delayMs: 500 }                               // slow first byte
 */
export interface FakeStep {
  text?: string;
  /** Reasoning streamed before the text, as DeepSeek and vLLM send it (`delta.reasoning_content`), or as OpenRouter does (`delta.reasoning`) with `reasoningField`. */
  reasoning?: string;
  reasoningField?: "reasoning_content" | "reasoning";
  toolCalls?: FakeToolCall[];
  /** Default: "tool_calls" when there are tool calls, else "stop". */
  finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
  usage?: FakeUsage;
  /** A raw `usage` object sent as is (to test other providers' cache fields). */
  usageRaw?: Record<string, unknown>;
  /** An HTTP error status instead of a reply (429, 500, 401, ...). */
  status?: number;
  /** `Retry-After` header in seconds (with `status`). */
  retryAfter?: number;
  /** `retry-after-ms` header (with `status`). */
  retryAfterMs?: number;
  /** Error message in the JSON error body (with `status`). */
  errorMessage?: string;
  /** Streaming only: drop the connection after this many SSE chunks (no finish, no [DONE]). */
  cutAfter?: number;
  /** Wait this long before answering at all (slow first byte). */
  delayMs?: number;
  /** Answer only once this resolves (called when the request has arrived), e.g. when a file the client makes exists. */
  waitFor?: (request: RecordedRequest) => Promise<void>;
  /** Streaming: wait this long between chunks. */
  chunkDelayMs?: number;
  /** Streaming: characters per text delta (default 8). */
  chunkChars?: number;
  /** Only answer requests for this model (exact, or the part after a "provider/" prefix). */
  model?: string;
  /** Only answer requests whose last message contains this text. */
  match?: string;
  /** Keep the step queued after answering (e.g. every commit-message request of a weak model). */
  repeat?: boolean;
  /** Answer with this body as it is (status 200 unless `status`), e.g. a proxy's HTML page instead of a completion. */
  rawBody?: { body: string; contentType: string };
  /** An `/audio/transcriptions` answer instead of a chat reply: the transcribed text. Chat requests skip these steps. */
  transcript?: string;
}

/**
 * A static page served at its path (outside /v1), e.g. `pages: { "/docs": { body: "<html>..." } }`.
 *
 * @example
 * { body: "<html>...</html>" }                            // text/html; charset=utf-8
 * { body: "%PDF-1.4", contentType: "application/pdf" }
 * { status: 302, location: "/elsewhere" }                 // a redirect
 * { body: "<html>", delayMs: 5000 }                       // a slow page
 * { bytes: 20_000_000 }                                   // a huge page, streamed without a length
 */
export interface FakePage {
  /** The page as text (sent as UTF-8) or as bytes (sent as they are). */
  body?: string | Uint8Array;
  contentType?: string;
  status?: number;
  /** `Location` header (with a 3xx status). */
  location?: string;
  delayMs?: number;
  /** Stream this many bytes of filler HTML (no Content-Length), ignoring `body`. */
  bytes?: number;
}

export interface RecordedRequest {
  method: string;
  /** e.g. "/v1/chat/completions". */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (null for GET). For chat requests: model, messages, tools, stream, stream_options... */
  body: any;
  /** Index (0-based) into the order requests arrived. */
  index: number;
}

export interface FakeServerOptions {
  /** What to do when no queued step fits: answer with this step, or (default) a 400 error naming the problem. */
  whenEmpty?: FakeStep;
  /** A model that computes its answer (a chat request's parsed body in, a step out), asked when no queued step fits and before `whenEmpty`; undefined: not its request. */
  respond?: (body: any) => FakeStep | undefined;
  /** Static pages by path, e.g. { "/docs/widgets": { body: "<html>..." } }. */
  pages?: Record<string, FakePage>;
  /** Append each recorded request to this file as one JSON line. */
  log?: string;
  port?: number;
  /** Serve HTTPS with this certificate and key (PEM); the URL starts with https://. */
  tls?: { cert: string; key: string };
}

export interface FakeServer {
  /** Base URL including /v1, e.g. "http://127.0.0.1:53817/v1". */
  url: string;
  /** Scheme, host and port, e.g. "http://127.0.0.1:53817" (pages are served under it). */
  origin: string;
  /** Every request received, in order (chat requests, /v1/models, ...). */
  requests: RecordedRequest[];
  /** Just the chat-completions requests' bodies, in order. */
  chatBodies(): any[];
  /** The `/audio/transcriptions` requests' form fields (file as { name, type, size }), in order. */
  transcriptionBodies(): any[];
  /** Queue more steps. */
  push(...steps: FakeStep[]): void;
  /** Steps still queued. */
  pending(): readonly FakeStep[];
  /** Resolves once `count` chat requests have arrived (e.g. to press Ctrl-C while the reply streams). */
  waitForChat(count: number): Promise<RecordedRequest>;
  stop(): Promise<void>;
}

export type FakeScript = FakeStep[] | ({ steps: FakeStep[] } & FakeServerOptions);

const encoder = new TextEncoder();

/** Start the server on 127.0.0.1 (a free port unless `options.port`). */
export async function startFakeServer(script: FakeScript = [], options: FakeServerOptions = {}): Promise<FakeServer> {
  const opts: FakeServerOptions = Array.isArray(script) ? options : { ...script, ...options };
  const queue: FakeStep[] = [...(Array.isArray(script) ? script : script.steps)];
  const requests: RecordedRequest[] = [];
  let completionCount = 0;
  const waiters: { count: number; resolve: (r: RecordedRequest) => void }[] = [];
  const chats = () => requests.filter((r) => /\/chat\/completions\/?$/.test(r.path));
  const wake = () => {
    const all = chats();
    for (const w of [...waiters]) {
      if (all.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(all[w.count - 1]!);
      }
    }
  };

  const record = async (req: Request, path: string): Promise<RecordedRequest> => {
    let body: any = null;
    if (/multipart\/form-data/.test(req.headers.get("content-type") ?? "")) body = await formFields(req);
    else if (req.method !== "GET" && req.method !== "HEAD") {
      const raw = await req.text();
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
    }
    const entry: RecordedRequest = { method: req.method, path, headers: Object.fromEntries(req.headers), body, index: requests.length };
    requests.push(entry);
    wake();
    if (opts.log) {
      const { appendFileSync } = await import("node:fs");
      appendFileSync(opts.log, JSON.stringify(entry) + "\n");
    }
    return entry;
  };

  const takeStep = (body: any, audio = false): FakeStep | undefined => {
    const model = String(body?.model ?? "");
    const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
    const last = messages.length ? contentText(messages[messages.length - 1]?.content) : "";
    const index = queue.findIndex(
      (s) =>
        (s.transcript !== undefined) === audio &&
        (!s.model || s.model === model || model.endsWith("/" + s.model) || s.model.endsWith("/" + model)) &&
        (!s.match || last.includes(s.match)),
    );
    if (index < 0) return (!audio ? opts.respond?.(body) : undefined) ?? opts.whenEmpty;
    const step = queue[index]!;
    if (!step.repeat) queue.splice(index, 1);
    return step;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 0,
    ...(opts.tls ? { tls: opts.tls } : {}),
    async fetch(req) {
      const path = new URL(req.url).pathname;
      // Control endpoints for a standalone server driven from another process.
      if (path === "/__fake/push" && req.method === "POST") {
        const more = (await req.json()) as FakeStep | FakeStep[];
        queue.push(...(Array.isArray(more) ? more : [more]));
        return Response.json({ queued: queue.length });
      }
      if (path === "/__fake/requests") return Response.json(requests);
      const entry = await record(req, path);
      const page = opts.pages?.[path];
      if (page && req.method === "GET") return pageResponse(page, req.signal);
      if (req.method === "POST" && /\/audio\/transcriptions\/?$/.test(path)) return transcriptionResponse(entry.body, takeStep(entry.body, true));
      if (req.method === "GET" && /\/models\/?$/.test(path)) {
        const ids = new Set(["fake-model", ...queue.map((s) => s.model).filter((m): m is string => !!m)]);
        return Response.json({ object: "list", data: [...ids].map((id) => ({ id, object: "model", created: 0, owned_by: "fake" })) });
      }
      if (req.method !== "POST" || !/\/chat\/completions\/?$/.test(path)) {
        return Response.json({ error: { message: `fake server: no route ${req.method} ${path}`, type: "invalid_request_error" } }, { status: 404 });
      }
      const badPart = partProblem(entry.body);
      if (badPart) return Response.json({ error: { message: `fake server: ${badPart}`, type: "invalid_request_error" } }, { status: 400 });
      const step = takeStep(entry.body);
      if (!step) {
        return Response.json(
          { error: { message: `fake server: no scripted reply left for request #${entry.index} (model ${entry.body?.model})`, type: "invalid_request_error" } },
          { status: 400 },
        );
      }
      if (step.delayMs) await sleep(step.delayMs, req.signal);
      if (step.waitFor) await step.waitFor(entry);
      if (step.rawBody) return new Response(step.rawBody.body, { status: step.status ?? 200, headers: { "content-type": step.rawBody.contentType } });
      if (step.status && step.status >= 300) return errorResponse(step);
      const id = `chatcmpl-fake-${++completionCount}`;
      return entry.body?.stream ? streamResponse(step, entry.body, id) : jsonResponse(step, entry.body, id);
    },
  });

  return {
    url: `${opts.tls ? "https" : "http"}://127.0.0.1:${server.port}/v1`,
    origin: `${opts.tls ? "https" : "http"}://127.0.0.1:${server.port}`,
    requests,
    chatBodies: () => chats().map((r) => r.body),
    transcriptionBodies: () => requests.filter((r) => /\/audio\/transcriptions\/?$/.test(r.path)).map((r) => r.body),
    push: (...steps) => void queue.push(...steps),
    pending: () => queue,
    waitForChat: (count) =>
      new Promise((resolve) => {
        waiters.push({ count, resolve });
        wake();
      }),
    stop: async () => {
      await server.stop(true);
    },
  };
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: any) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

/**
 * Why a chat request's content parts would be refused, or null: parts must be text, an
 * image as a data (or http) URL, or a file with base64 data, as OpenAI's Chat Completions takes them.
 */
function partProblem(body: any): string | null {
  for (const [i, m] of (Array.isArray(body?.messages) ? body.messages : []).entries()) {
    if (!Array.isArray(m?.content)) continue;
    for (const part of m.content) {
      const where = `messages[${i}] part ${JSON.stringify(part?.type)}`;
      if (part?.type === "text") {
        if (typeof part.text !== "string") return `${where} has no text`;
      } else if (part?.type === "image_url") {
        if (!/^(data:(image\/(png|jpeg|gif|webp)|application\/pdf);base64,[A-Za-z0-9+/]+=*$|https?:\/\/)/.test(part.image_url?.url ?? "")) return `${where} needs a base64 data URL or an http(s) URL`;
      } else if (part?.type === "file") {
        if (!/^data:application\/pdf;base64,[A-Za-z0-9+/]+=*$/.test(part.file?.file_data ?? "") && !part.file?.file_id) return `${where} needs file_data as a base64 PDF data URL`;
        if (part.file?.file_data && !part.file?.filename) return `${where} needs a filename`;
      } else return `${where} is not a content part this server knows (text, image_url, file)`;
    }
  }
  return null;
}

/** A multipart body's fields; a file as { name, type, size }. */
async function formFields(req: Request): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of (await req.formData()).entries()) {
    fields[key] = typeof value === "string" ? value : { name: value.name, type: value.type, size: value.size };
  }
  return fields;
}

function transcriptionResponse(fields: any, step: FakeStep | undefined): Response {
  const bad = (message: string) => Response.json({ error: { message: `fake server: ${message}`, type: "invalid_request_error" } }, { status: 400 });
  if (!fields || typeof fields !== "object") return bad("/audio/transcriptions takes multipart/form-data");
  if (!fields.model) return bad("/audio/transcriptions needs a model field");
  if (!fields.file?.size) return bad("/audio/transcriptions needs a non-empty file");
  if (!step) return bad("no scripted transcript left");
  if (step.status && step.status >= 300) return errorResponse(step);
  return Response.json({ text: step.transcript });
}

async function pageResponse(page: FakePage, signal: AbortSignal): Promise<Response> {
  if (page.delayMs) await sleep(page.delayMs, signal);
  const headers: Record<string, string> = { "content-type": page.contentType ?? "text/html; charset=utf-8" };
  if (page.location) headers.location = page.location;
  if (page.bytes === undefined) return new Response(page.body ?? "", { status: page.status ?? 200, headers });
  const chunk = encoder.encode(`<p>${"filler ".repeat(1_000)}</p>\n`);
  let sent = 0;
  const total = page.bytes;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
  return new Response(stream, { status: page.status ?? 200, headers });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

function errorResponse(step: FakeStep): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (step.retryAfter !== undefined) headers["retry-after"] = String(step.retryAfter);
  if (step.retryAfterMs !== undefined) headers["retry-after-ms"] = String(step.retryAfterMs);
  const type = step.status === 429 ? "rate_limit_exceeded" : step.status! >= 500 ? "server_error" : "invalid_request_error";
  const message = step.errorMessage ?? `fake server: scripted ${step.status}`;
  return new Response(JSON.stringify({ error: { message, type, code: null } }), { status: step.status, headers });
}

function toolCallsOf(step: FakeStep) {
  return (step.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i + 1}`,
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
  }));
}

function usageOf(step: FakeStep, body: any): Record<string, unknown> {
  if (step.usageRaw) return step.usageRaw;
  const u = step.usage ?? {};
  const prompt = u.promptTokens ?? Math.ceil(JSON.stringify(body?.messages ?? []).length / 4);
  const completion = u.completionTokens ?? Math.ceil(((step.text ?? "").length + JSON.stringify(step.toolCalls ?? []).length) / 4);
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: u.cachedTokens ?? 0 },
  };
  if (u.cacheWriteTokens !== undefined) usage.cache_creation_input_tokens = u.cacheWriteTokens;
  return usage;
}

function finishOf(step: FakeStep): string {
  return step.finishReason ?? (step.toolCalls?.length ? "tool_calls" : "stop");
}

function jsonResponse(step: FakeStep, body: any, id: string): Response {
  const calls = toolCallsOf(step);
  const message: Record<string, unknown> = { role: "assistant", content: step.text ?? (calls.length ? null : "") };
  if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return Response.json({
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body?.model ?? "fake-model",
    choices: [{ index: 0, message, finish_reason: finishOf(step), logprobs: null }],
    usage: usageOf(step, body),
  });
}

/** The SSE chunks of one reply, in the order a real server sends them. */
function replyChunks(step: FakeStep, body: any, id: string): Record<string, unknown>[] {
  const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body?.model ?? "fake-model" };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  const out: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  const size = Math.max(1, step.chunkChars ?? 8);
  const reasoning = step.reasoning ?? "";
  for (let i = 0; i < reasoning.length; i += size) out.push(chunk({ [step.reasoningField ?? "reasoning_content"]: reasoning.slice(i, i + size) }));
  const text = step.text ?? "";
  for (let i = 0; i < text.length; i += size) out.push(chunk({ content: text.slice(i, i + size) }));
  toolCallsOf(step).forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (let i = 0; i < call.arguments.length; i += size) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + size) } }] }));
    }
  });
  out.push(chunk({}, finishOf(step)));
  if (body?.stream_options?.include_usage) out.push({ ...base, choices: [], usage: usageOf(step, body) });
  return out;
}

function streamResponse(step: FakeStep, body: any, id: string): Response {
  const chunks = replyChunks(step, body, id);
  const cutAfter = step.cutAfter;
  let sent = 0;
  let done = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return;
      if (cutAfter !== undefined && sent >= cutAfter) {
        done = true;
        // Let what was sent reach the client, then error the body: Bun drops the
        // connection without ending the chunked body, as a dying proxy would.
        // (An undefined reason keeps Bun from logging the error to the test output.)
        await sleep(25);
        controller.error(undefined);
        return;
      }
      if (sent > 0 && step.chunkDelayMs) await sleep(step.chunkDelayMs);
      if (sent < chunks.length) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunks[sent])}\n\n`));
        sent++;
        return;
      }
      done = true;
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" } });
}

// ─── Standalone ──────────────────────────────────────────────────────────────

if (import.meta.main) {
  const { parseArgs } = await import("node:util");
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options: { log: { type: "string" }, port: { type: "string" } },
    allowPositionals: true,
  });
  const file = positionals[0];
  const script: FakeScript = file ? JSON.parse(await Bun.file(file).text()) : [];
  const server = await startFakeServer(script, {
    ...(values.log ? { log: values.log } : {}),
    ...(values.port ? { port: Number(values.port) } : {}),
  });
  process.stdout.write(server.url + "\n");
  const shutdown = () => void server.stop().then(() => process.exit(0));
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}
