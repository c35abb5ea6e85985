// The adapter through the real `openai` client against the fake server: streaming, tool
// calls, usage, finish reasons, every fault, abort, and endpoint/key resolution.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ModelEvent, ModelRequest } from "../../core/plugin.ts";
import { startFakeServer, type FakeServer, type FakeStep } from "../../tests/support/fake-server.ts";
import plugin, { createOpenAIAdapter, ModelRequestAborted, ModelRequestError } from "./index.ts";

const KEY = "sk-test-SECRETKEY1234567890";
let server: FakeServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

// Short delays so fault tests run fast; assertions never depend on timing.
const adapter = createOpenAIAdapter({ retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 4, idleTimeoutMs: 2_000 } });

async function serve(...steps: FakeStep[]): Promise<FakeServer> {
  server = await startFakeServer(steps);
  return server;
}

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "openai-compatible/fake-model",
    apiBase: server!.url,
    apiKey: KEY,
    messages: [
      { role: "system", content: "You are a test." },
      { role: "user", content: "Say hello." },
    ],
    stream: true,
    env: {},
    ...extra,
  };
}

interface Collected {
  events: ModelEvent[];
  /** Text after the last retry event (what the engine keeps). */
  text: string;
  calls: { id?: string; name?: string; arguments: string }[];
  retries: Extract<ModelEvent, { type: "retry" }>[];
  usage?: Extract<ModelEvent, { type: "usage" }>;
  finish?: string;
}

async function collect(req: ModelRequest, signal = new AbortController().signal, onEvent?: (e: ModelEvent) => void): Promise<Collected> {
  const out: Collected = { events: [], text: "", calls: [], retries: [] };
  for await (const event of adapter.stream(req, signal)) {
    out.events.push(event);
    onEvent?.(event);
    if (event.type === "text") out.text += event.text;
    if (event.type === "retry") {
      out.retries.push(event);
      out.text = "";
      out.calls = [];
    }
    if (event.type === "tool-call") {
      const call = (out.calls[event.index] ??= { arguments: "" });
      if (event.id) call.id = event.id;
      if (event.name) call.name = event.name;
      call.arguments += event.argumentsDelta;
    }
    if (event.type === "usage") out.usage = event;
    if (event.type === "finish") out.finish = event.reason;
  }
  return out;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

describe("streaming", () => {
  test("text arrives as deltas, the request asks for usage, finish is last", async () => {
    await serve({ text: "Hello there, this is a streamed reply.", chunkChars: 5 });
    const out = await collect(request());
    expect(out.text).toBe("Hello there, this is a streamed reply.");
    expect(out.events.filter((e) => e.type === "text").length).toBeGreaterThan(3);
    expect(out.events.at(-1)).toEqual({ type: "finish", reason: "stop" });
    const [req] = server!.requests;
    expect(req!.body).toMatchObject({ model: "fake-model", stream: true, stream_options: { include_usage: true } });
    expect(req!.body.messages).toEqual([
      { role: "system", content: "You are a test." },
      { role: "user", content: "Say hello." },
    ]);
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.headers["x-stainless-retry-count"] ?? "0").toBe("0");
  });

  test("tool-call deltas assemble into whole calls; tools and tool turns go out in wire format", async () => {
    const args = { path: "src/app.py", search: "print(1)\n", replace: "print(2)\n" };
    await serve({ text: "Editing.", toolCalls: [{ id: "call_a", name: "edit_file", arguments: args }, { name: "create_file", arguments: { path: "b.py", content: "x = 1\n" } }] });
    const out = await collect(
      request({
        tools: [{ name: "edit_file", description: "Edit a file", parameters: { type: "object", properties: { path: { type: "string" } } } }],
        messages: [
          { role: "user", content: "first" },
          { role: "assistant", content: "", toolCalls: [{ id: "call_0", name: "edit_file", arguments: "{}" }] },
          { role: "tool", toolCallId: "call_0", content: "applied" },
          { role: "user", content: "again" },
        ],
      }),
    );
    expect(out.text).toBe("Editing.");
    expect(out.calls).toHaveLength(2);
    expect(out.calls[0]).toEqual({ id: "call_a", name: "edit_file", arguments: JSON.stringify(args) });
    expect(out.calls[1]!.name).toBe("create_file");
    expect(JSON.parse(out.calls[1]!.arguments)).toEqual({ path: "b.py", content: "x = 1\n" });
    expect(out.finish).toBe("tool_calls");
    const body = server!.requests[0]!.body;
    expect(body.tools).toEqual([{ type: "function", function: { name: "edit_file", description: "Edit a file", parameters: { type: "object", properties: { path: { type: "string" } } } } }]);
    expect(body.messages[1]).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function", function: { name: "edit_file", arguments: "{}" } }] });
    expect(body.messages[2]).toEqual({ role: "tool", tool_call_id: "call_0", content: "applied" });
  });

  test("usage carries cached tokens (OpenAI, DeepSeek and Anthropic-style fields)", async () => {
    await serve(
      { text: "a", usage: { promptTokens: 1200, completionTokens: 30, cachedTokens: 1024 } },
      { text: "b", usageRaw: { prompt_tokens: 500, completion_tokens: 5, prompt_cache_hit_tokens: 384, prompt_cache_miss_tokens: 116 } },
      { text: "c", usageRaw: { prompt_tokens: 900, completion_tokens: 7, cache_read_input_tokens: 600, cache_creation_input_tokens: 200 } },
    );
    expect((await collect(request())).usage).toEqual({ type: "usage", promptTokens: 1200, completionTokens: 30, cachedTokens: 1024 });
    expect((await collect(request())).usage).toEqual({ type: "usage", promptTokens: 500, completionTokens: 5, cachedTokens: 384 });
    expect((await collect(request())).usage).toEqual({ type: "usage", promptTokens: 900, completionTokens: 7, cachedTokens: 600, cacheWriteTokens: 200 });
  });

  test("finish reason length is reported as such", async () => {
    await serve({ text: "def f():\n    return 1 +", finishReason: "length" });
    const out = await collect(request({ maxTokens: 10 }));
    expect(out.finish).toBe("length");
    expect(out.text).toBe("def f():\n    return 1 +");
    expect(server!.requests[0]!.body.max_tokens).toBe(10);
  });

  test("stream: false gets one JSON reply turned into the same events", async () => {
    await serve({ text: "whole reply", toolCalls: [{ id: "c9", name: "edit_file", arguments: "{}" }], usage: { promptTokens: 10, completionTokens: 2, cachedTokens: 4 } });
    const out = await collect(request({ stream: false }));
    expect(out.text).toBe("whole reply");
    expect(out.calls).toEqual([{ id: "c9", name: "edit_file", arguments: "{}" }]);
    expect(out.usage?.cachedTokens).toBe(4);
    expect(out.finish).toBe("tool_calls");
    expect(server!.requests[0]!.body.stream).toBeUndefined();
    expect(server!.requests[0]!.body.stream_options).toBeUndefined();
  });
});

describe("faults", () => {
  test("429 is retried after exactly the Retry-After the server asked for", async () => {
    await serve({ status: 429, retryAfter: 0.05 }, { status: 429, retryAfterMs: 7 }, { text: "finally" });
    const out = await collect(request());
    expect(out.retries.map((r) => [r.attempt, r.delayMs])).toEqual([
      [1, 50],
      [2, 7],
    ]);
    expect(out.retries[0]!.reason).toContain("429");
    expect(out.text).toBe("finally");
    expect(server!.chatBodies()).toHaveLength(3);
  });

  test("500 then success", async () => {
    await serve({ status: 500, errorMessage: "upstream exploded" }, { text: "ok now" });
    const out = await collect(request());
    expect(out.retries).toHaveLength(1);
    expect(out.retries[0]!.reason).toContain("500");
    expect(out.text).toBe("ok now");
  });

  test("a stream cut halfway is retried; only the complete reply survives", async () => {
    await serve({ text: "this reply is cut off in the middle", cutAfter: 3 }, { text: "the complete reply" });
    const seen: string[] = [];
    const out = await collect(request(), undefined, (e) => e.type === "text" && seen.push(e.text));
    expect(seen.join("")).toStartWith("this reply is cut off".slice(0, 8)); // partial text was streamed...
    expect(out.retries).toHaveLength(1); // ...then voided by a retry event
    expect(out.retries[0]!.reason).toMatch(/connection dropped|ended before/);
    expect(out.text).toBe("the complete reply");
    expect(out.finish).toBe("stop");
  });

  test("a stream that ends without a finish reason is not taken as complete", async () => {
    server = await startFakeServer([{ text: "no finish", finishReason: "stop" }]);
    // Simulate a proxy that closes the stream cleanly mid-reply: a raw server sending chunks without finish/[DONE].
    const raw = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response(`data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { content: "half" }, finish_reason: null }] })}\n\n`, {
          headers: { "content-type": "text/event-stream" },
        }),
    });
    try {
      const err = await failure(collect(request({ apiBase: `http://127.0.0.1:${raw.port}/v1` })));
      expect(err).toBeInstanceOf(ModelRequestError);
      expect(err.message).toContain("ended before the reply was complete");
      expect(err.message).toContain("4 attempts");
    } finally {
      await raw.stop(true);
    }
  });

  test("a slow first byte within the idle timeout is just waited for", async () => {
    await serve({ text: "slow but fine", delayMs: 100 });
    const out = await collect(request());
    expect(out.retries).toHaveLength(0);
    expect(out.text).toBe("slow but fine");
  });

  test("no first byte within the idle timeout: the attempt is abandoned and retried", async () => {
    const impatient = createOpenAIAdapter({ retry: { baseDelayMs: 1, maxDelayMs: 1, idleTimeoutMs: 150 } });
    await serve({ text: "too late", delayMs: 5_000 }, { text: "on time" });
    const events: ModelEvent[] = [];
    for await (const e of impatient.stream(request(), new AbortController().signal)) events.push(e);
    const retry = events.find((e) => e.type === "retry");
    expect(retry && retry.type === "retry" && retry.reason).toContain("no response");
    expect(events.filter((e) => e.type === "text").map((e) => (e.type === "text" ? e.text : "")).join("")).toBe("on time");
  });

  test("exhaustion: one line naming the endpoint, what failed and the attempts; never the key", async () => {
    const echo = `Incorrect API key provided: ${KEY}. You can find your key at https://example.test/?key=${KEY}`;
    await serve({ status: 503, errorMessage: echo }, { status: 503, errorMessage: echo }, { status: 503, errorMessage: echo }, { status: 503, errorMessage: echo });
    const err = await failure(collect(request()));
    expect(err).toBeInstanceOf(ModelRequestError);
    expect((err as ModelRequestError).exitCode).toBe(1);
    expect(err.message).not.toContain("\n");
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain("SECRETKEY");
    expect(err.message).toContain("4 attempts");
    expect(err.message).toContain(server!.url.replace(/\/$/, ""));
    expect(err.message).toContain("503");
    expect(err.stack ?? "").not.toContain(KEY);
  });

  test("a 401 is not retried and says which key to check", async () => {
    await serve({ status: 401, errorMessage: `bad key ${KEY}` });
    const err = await failure(collect(request({ model: "openai/gpt-4.1", apiKey: undefined, env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server!.url } })));
    expect(err.message).toContain("1 attempt");
    expect(err.message).toContain("401");
    expect(err.message).toContain("OPENAI_API_KEY");
    expect(err.message).not.toContain(KEY);
    expect(server!.chatBodies()).toHaveLength(1);
  });

  test("an unreachable server fails after the attempts with a one-line error", async () => {
    server = await startFakeServer([]);
    const req = request();
    await server.stop();
    server = undefined;
    const err = await failure(collect(req));
    expect(err.message).toMatch(/connection|refused|dropped/);
    expect(err.message.split("\n")).toHaveLength(1);
  });

  test("the total time bound ends the retries early", async () => {
    const patient = createOpenAIAdapter({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, maxAttempts: 10 } });
    await serve({ status: 500 }, { text: "never reached" });
    const events: ModelEvent[] = [];
    const err = await failure(
      (async () => {
        for await (const e of patient.stream(request({ timeoutMs: 5_000 }), new AbortController().signal)) events.push(e);
      })(),
    );
    expect(err.message).toContain("time bound");
    expect(err.message).toContain("1 attempt");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(0);
  });
});

describe("abort", () => {
  test("aborting mid-stream stops at once with an interruption", async () => {
    await serve({ text: "a long and slow reply ".repeat(20), chunkDelayMs: 200 });
    const controller = new AbortController();
    let texts = 0;
    const err = await failure(
      collect(request(), controller.signal, (e) => {
        if (e.type === "text" && ++texts === 1) controller.abort();
      }),
    );
    expect(err).toBeInstanceOf(ModelRequestAborted);
    expect((err as ModelRequestAborted).exitCode).toBe(130);
    expect(texts).toBe(1);
  });

  test("aborting during a backoff wait stops at once", async () => {
    const slowBackoff = createOpenAIAdapter({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    await serve({ status: 500 }, { text: "never" });
    const controller = new AbortController();
    const err = await failure(
      (async () => {
        for await (const e of slowBackoff.stream(request(), controller.signal)) if (e.type === "retry") controller.abort();
      })(),
    );
    expect(err).toBeInstanceOf(ModelRequestAborted);
  });

  test("an already-aborted signal sends nothing", async () => {
    await serve({ text: "x" });
    const controller = new AbortController();
    controller.abort();
    expect(await failure(collect(request(), controller.signal))).toBeInstanceOf(ModelRequestAborted);
    expect(server!.requests).toHaveLength(0);
  });
});

describe("request shaping per model", () => {
  test("reasoning models: no temperature, reasoning_effort sent, max_completion_tokens on OpenAI", async () => {
    await serve({ text: "ok" });
    await collect(request({ model: "openai/o3", apiKey: KEY, temperature: 0, reasoningEffort: "high", maxTokens: 2000 }));
    const body = server!.requests[0]!.body;
    expect(body.model).toBe("o3");
    expect(body.temperature).toBeUndefined();
    expect(body.reasoning_effort).toBe("high");
    expect(body.max_completion_tokens).toBe(2000);
    expect(body.max_tokens).toBeUndefined();
  });

  test("ordinary models keep temperature and ignore reasoning_effort", async () => {
    await serve({ text: "ok" });
    await collect(request({ model: "openai/gpt-4.1", temperature: 0, reasoningEffort: "high" }));
    const body = server!.requests[0]!.body;
    expect(body.temperature).toBe(0);
    expect(body.reasoning_effort).toBeUndefined();
  });

  test("cache breakpoints become cache_control parts only for models that take them", async () => {
    await serve({ text: "ok" }, { text: "ok" });
    const messages = [
      { role: "system" as const, content: "rules", cacheBreakpoint: true },
      { role: "user" as const, content: "repo map", cacheBreakpoint: true },
      { role: "assistant" as const, content: "ok" },
      { role: "user" as const, content: "request" },
    ];
    await collect(request({ model: "openrouter/anthropic/claude-sonnet-4.5", apiKey: undefined, env: { OPENROUTER_API_KEY: KEY }, messages }));
    const cached = server!.requests[0]!.body;
    expect(cached.model).toBe("anthropic/claude-sonnet-4.5");
    expect(cached.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: "rules", cache_control: { type: "ephemeral" } }] });
    expect(cached.messages[1].content[0].cache_control).toEqual({ type: "ephemeral" });
    expect(cached.messages[3]).toEqual({ role: "user", content: "request" });
    expect(server!.requests[0]!.headers["x-title"]).toBe("coder");

    await collect(request({ model: "openai/gpt-4.1", messages }));
    expect(server!.requests[1]!.body.messages[0]).toEqual({ role: "system", content: "rules" });
  });
});

describe("endpoint and key resolution", () => {
  test("a missing key names the variable to set (exit 2)", async () => {
    const err = await failure(collect({ model: "anthropic/claude-sonnet-4-5", messages: [], stream: true, env: {} }));
    expect(err.message).toContain("ANTHROPIC_API_KEY");
    expect(err.message.split("\n")).toHaveLength(1);
    expect((err as ModelRequestError).exitCode).toBe(2);
  });

  test("openai-compatible needs --api-base or OPENAI_BASE_URL", async () => {
    const err = await failure(collect({ model: "openai-compatible/llama", messages: [], stream: true, env: {} }));
    expect(err.message).toContain("--api-base");
    await serve({ text: "via env" });
    const out = await collect({ model: "openai-compatible/llama", messages: [{ role: "user", content: "x" }], stream: true, env: { OPENAI_BASE_URL: server!.url } });
    expect(out.text).toBe("via env");
    expect(server!.requests[0]!.headers.authorization).toBe("Bearer no-key-needed");
  });

  test("--api-base beats OPENAI_BASE_URL; keys come from the env given (the repo's .env included)", async () => {
    await serve({ text: "ok" });
    await collect({ model: "gpt-4.1", apiBase: server!.url, messages: [{ role: "user", content: "x" }], stream: true, env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "sk-from-dotenv-123456789" } });
    expect(server!.requests[0]!.headers.authorization).toBe("Bearer sk-from-dotenv-123456789");
    expect(server!.requests[0]!.body.model).toBe("gpt-4.1");
  });

  test("local providers need no key", async () => {
    await serve({ text: "local" });
    const out = await collect({ model: "ollama/qwen2.5-coder:7b", apiBase: server!.url, messages: [{ role: "user", content: "x" }], stream: true, env: {} });
    expect(out.text).toBe("local");
    expect(server!.requests[0]!.body.model).toBe("qwen2.5-coder:7b");
  });
});

describe("model names and the table", () => {
  test("provider/model and bare names match; unknown providers do not", () => {
    expect(adapter.matches("openai/gpt-4.1")).toBe(true);
    expect(adapter.matches("gpt-4.1")).toBe(true);
    expect(adapter.matches("sonnet")).toBe(true);
    expect(adapter.matches("openai/some-future-model")).toBe(true);
    expect(adapter.matches("gpt-9-turbo")).toBe(true);
    expect(adapter.matches("nosuchprovider/model")).toBe(false);
    expect(adapter.matches("mystery-model")).toBe(false);
  });

  test("info: full names, bare names, aliases, snapshots, tags; unknown models are undefined", () => {
    expect(adapter.info("gpt-4.1")).toMatchObject({ name: "openai/gpt-4.1", contextWindow: 1_047_576, editFormat: "diff", weakModel: "openai/gpt-4.1-mini" });
    expect(adapter.info("openai/o3")!.capabilities).toMatchObject({ temperature: false, reasoningEffort: true, cache: "auto" });
    expect(adapter.info("sonnet")!.name).toBe("anthropic/claude-sonnet-4-5");
    expect(adapter.info("anthropic/claude-sonnet-4-5-20250929")!.prices).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(adapter.info("ollama/qwen2.5-coder:7b")!.name).toBe("ollama/qwen2.5-coder:7b");
    expect(adapter.info("ollama/qwen2.5-coder:7b")!.prices).toEqual({ input: 0, output: 0 });
    expect(adapter.info("openai/some-future-model")).toBeUndefined();
    expect(adapter.info("openai-compatible/llama")).toBeUndefined();
    const gateway = adapter.info("openai-compatible/gpt-4.1")!;
    expect(gateway).toMatchObject({ name: "openai-compatible/gpt-4.1", contextWindow: 1_047_576 });
    expect(gateway.weakModel).toBeUndefined();
    const viaRouter = adapter.info("openrouter/anthropic/claude-sonnet-4.5")!;
    expect(viaRouter.capabilities.cache).toBe("breakpoints");
    expect(viaRouter.weakModel).toBe("openrouter/anthropic/claude-haiku-4.5");
    expect(adapter.info("gemini-2.5-pro")!.editFormat).toBe("diff-fenced");
  });

  test("list() covers every provider's models with complete info", () => {
    const list = adapter.list!();
    expect(list.length).toBeGreaterThan(40);
    for (const info of list) {
      expect(info.name).toMatch(/^[a-z-]+\//);
      expect(info.contextWindow).toBeGreaterThan(0);
      expect(info.maxOutput).toBeGreaterThan(0);
      expect(adapter.matches(info.name)).toBe(true);
      // Weak and editor models must themselves be in the table.
      if (info.weakModel) expect(adapter.info(info.weakModel)).toBeDefined();
      if (info.editorModel) expect(adapter.info(info.editorModel)).toBeDefined();
    }
    const providers = new Set(list.map((i) => i.name.split("/")[0]));
    for (const p of ["openai", "anthropic", "gemini", "deepseek", "xai", "mistral", "groq", "together", "fireworks", "openrouter", "ollama", "lmstudio"]) expect(providers.has(p)).toBe(true);
  });

  test("the plugin registers one adapter named openai", async () => {
    const obj = await (plugin as (kit: never) => { apiVersion: number; name: string; models: { name: string }[] })({} as never);
    expect(obj.apiVersion).toBe(1);
    expect(obj.models.map((m) => m.name)).toEqual(["openai"]);
  });

  test("importing the plugin does not load the openai client", async () => {
    const script = `await import(${JSON.stringify(join(import.meta.dir, "index.ts"))});
      console.log(Object.keys(require.cache).some((k) => k.includes("node_modules/openai/")));`;
    const proc = Bun.spawnSync([process.execPath, "-e", script]);
    expect(proc.stdout.toString().trim()).toBe("false");
  });
});

describe("images, documents and speech", () => {
  test("the table says which models take images and PDFs, and how each family counts images", () => {
    const caps = (model: string) => adapter.info(model)!.capabilities;
    expect(caps("openai/gpt-4.1")).toMatchObject({ images: true, pdf: true });
    expect(caps("openai/gpt-3.5-turbo")).toMatchObject({ images: false, pdf: false });
    expect(caps("openai/o3-mini")).toMatchObject({ images: false });
    expect(caps("deepseek/deepseek-chat").images).toBeFalsy();
    // Anthropic's OpenAI-compatible endpoint takes images; PDFs only through its native API.
    expect(caps("anthropic/claude-sonnet-4-5")).toMatchObject({ images: true });
    expect(caps("anthropic/claude-sonnet-4-5").pdf).toBeFalsy();
    expect(adapter.info("anthropic/claude-sonnet-4-5")!.imageRules).toMatchObject({ tokens: "area", maxEdge: 1568 });
    expect(adapter.info("gemini/gemini-2.5-pro")!.imageRules).toMatchObject({ tokens: "gemini-tiles" });
    expect(adapter.info("openai/gpt-4.1")!.imageRules).toBeUndefined(); // the kernel's default: OpenAI's tiles
    // OpenRouter reads PDFs for every model.
    expect(caps("openrouter/anthropic/claude-sonnet-4.5")).toMatchObject({ images: true, pdf: true });
  });

  test("an image reaches the endpoint as an image_url part through the real client", async () => {
    await serve({ text: "a red square" });
    const image = { type: "image" as const, mediaType: "image/png" as const, data: "iVBORw0KGgo=", width: 1, height: 1, name: "dot.png" };
    const out = await collect(request({ messages: [{ role: "user", content: "what?", parts: [{ type: "text", text: "what?" }, image] }] }));
    expect(out.text).toBe("a red square");
    expect(server!.chatBodies()[0].messages[0].content).toEqual([
      { type: "text", text: "what?" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
    ]);
  });

  test("transcribe posts the audio as multipart to the provider's /audio/transcriptions with its speech model", async () => {
    await serve({ transcript: "add a docstring to main" });
    const audio = new Uint8Array(2048).fill(7);
    const text = await adapter.transcribe!({ model: "openai/gpt-4.1", audio, fileName: "recording.wav", language: "en", apiBase: server!.url, apiKey: KEY, env: {} }, new AbortController().signal);
    expect(text).toBe("add a docstring to main");
    const [fields] = server!.transcriptionBodies();
    expect(fields).toMatchObject({ model: "whisper-1", language: "en", file: { name: "recording.wav", size: 2048 } });
    expect(server!.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  test("a provider without speech-to-text falls back to OpenAI's, and says what is missing", async () => {
    const error = await failure(adapter.transcribe!({ model: "anthropic/claude-sonnet-4-5", audio: new Uint8Array(8), fileName: "r.wav", apiKey: KEY, env: {} }, new AbortController().signal));
    expect(error.message).toBe("anthropic has no speech-to-text endpoint, so /voice uses OpenAI's, and no API key for openai: set OPENAI_API_KEY (in the environment or the repository's .env), or pass --api-key");
    expect((error as { exitCode?: number }).exitCode).toBe(2);
    expect(error.message).not.toContain(KEY);
  });

  test("a failed transcription is one line naming the endpoint, without the key", async () => {
    await serve({ transcript: "", status: 401, errorMessage: "bad key" });
    const error = await failure(adapter.transcribe!({ model: "openai/gpt-4.1", audio: new Uint8Array(8), fileName: "r.wav", apiBase: server!.url, apiKey: KEY, env: {} }, new AbortController().signal));
    expect(error.message).toBe(`speech-to-text with openai/whisper-1 at ${server!.url} failed: 401 unauthorized: bad key (check OPENAI_API_KEY)`);
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain("\n");
  });
});
