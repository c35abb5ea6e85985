// The fake server speaks the protocol the real `openai` client expects, and its faults behave as scripted.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { startFakeServer, type FakeServer } from "./fake-server.ts";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const client = (url: string) => new OpenAI({ baseURL: url, apiKey: "sk-test", maxRetries: 0 });

test("streams text and usage in real SSE that the openai client parses", async () => {
  server = await startFakeServer([{ text: "Hello, world! How are you?", usage: { promptTokens: 100, completionTokens: 7, cachedTokens: 64 } }]);
  const stream = await client(server.url).chat.completions.create({
    model: "gpt-4.1",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish: string | null = null;
  let usage: any;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text).toBe("Hello, world! How are you?");
  expect(finish).toBe("stop");
  expect(usage.prompt_tokens).toBe(100);
  expect(usage.prompt_tokens_details.cached_tokens).toBe(64);
  expect(server.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-test");
});

test("tool calls stream as deltas and come whole in JSON replies", async () => {
  const call = { name: "edit_file", arguments: { path: "a.py", search: "", replace: "print(1)\n" } };
  server = await startFakeServer([{ toolCalls: [call] }, { toolCalls: [call] }]);
  const stream = await client(server.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true });
  let args = "";
  let name = "";
  let finish: string | null = null;
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta.tool_calls?.[0];
    if (d?.function?.name) name = d.function.name;
    args += d?.function?.arguments ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  expect(name).toBe("edit_file");
  expect(JSON.parse(args)).toEqual(call.arguments);
  expect(finish).toBe("tool_calls");

  const reply = await client(server.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(reply.choices[0]!.message.tool_calls?.[0]).toMatchObject({ id: "call_1", type: "function", function: { name: "edit_file" } });
});

test("error steps return their status and Retry-After, then the queue moves on", async () => {
  server = await startFakeServer([{ status: 429, retryAfter: 2 }, { text: "ok" }]);
  const first = await fetch(server.url + "/chat/completions", { method: "POST", body: JSON.stringify({ model: "m", messages: [] }) });
  expect(first.status).toBe(429);
  expect(first.headers.get("retry-after")).toBe("2");
  const second = await fetch(server.url + "/chat/completions", { method: "POST", body: JSON.stringify({ model: "m", messages: [] }) });
  expect(((await second.json()) as any).choices[0].message.content).toBe("ok");
});

test("a cut stream delivers its first chunks, then the connection drops", async () => {
  server = await startFakeServer([{ text: "a long reply that will be cut off midway", cutAfter: 3 }]);
  const stream = await client(server.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true });
  let finish: string | null = null;
  let text = "";
  let failed = false;
  try {
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
  } catch {
    failed = true;
  }
  expect(finish).toBeNull();
  expect(text).toBe("a long reply tha");
  expect(failed).toBe(true);
});

test("steps filtered by model and match; repeat steps stay; empty queue is a 400", async () => {
  server = await startFakeServer([
    { model: "weak", text: "commit msg", repeat: true },
    { match: "second", text: "two" },
    { text: "one" },
  ]);
  const c = client(server.url);
  const ask = async (model: string, content: string) =>
    (await c.chat.completions.create({ model, messages: [{ role: "user", content }] })).choices[0]!.message.content;
  expect(await ask("main", "first")).toBe("one");
  expect(await ask("openai/weak", "anything")).toBe("commit msg");
  expect(await ask("main", "the second")).toBe("two");
  expect(await ask("weak", "again")).toBe("commit msg");
  await expect(ask("main", "third")).rejects.toThrow(/no scripted reply left/);
  expect(server.chatBodies()).toHaveLength(5);
});

test("whenEmpty answers once the queue is used up; /v1/models lists models", async () => {
  server = await startFakeServer({ steps: [], whenEmpty: { text: "default" } });
  const reply = await client(server.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(reply.choices[0]!.message.content).toBe("default");
  const models = (await (await fetch(server.url + "/models")).json()) as any;
  expect(models.data[0].id).toBe("fake-model");
});

test("standalone: prints its URL first, serves the script, logs requests as JSON lines", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fake-server-"));
  const script = join(dir, "script.json");
  const log = join(dir, "requests.jsonl");
  writeFileSync(script, JSON.stringify([{ text: "from a file" }]));
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "fake-server.ts"), script, "--log", log], { stdout: "pipe" });
  try {
    const reader = proc.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    const url = out.split("\n")[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    await fetch(url.replace(/\/v1$/, "/__fake/push"), { method: "POST", body: JSON.stringify({ text: "pushed" }) });
    const reply = await client(url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
    expect(reply.choices[0]!.message.content).toBe("from a file");
    const again = await client(url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "y" }] });
    expect(again.choices[0]!.message.content).toBe("pushed");
    const lines = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.body.messages[0].content)).toEqual(["x", "y"]);
  } finally {
    proc.kill();
    await proc.exited;
  }
});

test("waitForChat resolves when the n-th chat request arrives", async () => {
  server = await startFakeServer([{ text: "a" }, { text: "b" }]);
  const second = server.waitForChat(2);
  const c = client(server.url);
  await c.chat.completions.create({ model: "m", messages: [{ role: "user", content: "one" }] });
  await c.chat.completions.create({ model: "m", messages: [{ role: "user", content: "two" }] });
  expect((await second).body.messages[0].content).toBe("two");
  expect((await server.waitForChat(1)).body.messages[0].content).toBe("one");
});

test("image and file parts are accepted as Chat Completions takes them; an unknown part is a 400", async () => {
  server = await startFakeServer([{ text: "seen", repeat: true }]);
  const ok = await client(server.url).chat.completions.create({
    model: "gpt-4.1",
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "file", file: { filename: "spec.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
        ],
      },
    ],
  });
  expect(ok.choices[0]!.message.content).toBe("seen");
  const bad = await client(server.url)
    .chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: [{ type: "image", source: "x" } as never] }] })
    .catch((e: Error) => e);
  expect(String(bad)).toContain('messages[0] part "image" is not a content part this server knows (text, image_url, file)');
  const noData = await client(server.url)
    .chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "shot.png" } }] }] })
    .catch((e: Error) => e);
  expect(String(noData)).toContain("needs a base64 data URL or an http(s) URL");
});

test("/audio/transcriptions takes a multipart upload through the real client and answers the scripted transcript", async () => {
  server = await startFakeServer([{ text: "a chat reply" }, { transcript: "hello there" }]);
  const { toFile } = await import("openai");
  const result = await client(server.url).audio.transcriptions.create({ file: await toFile(new Uint8Array(100), "voice.wav"), model: "whisper-1", language: "de" });
  expect(result.text).toBe("hello there");
  expect(server.transcriptionBodies()).toHaveLength(1);
  expect(server.transcriptionBodies()[0]).toMatchObject({ file: { name: "voice.wav", size: 100 }, model: "whisper-1", language: "de" });
  // The chat step is still queued: transcripts and replies are separate.
  expect(server.pending().map((s) => s.text)).toEqual(["a chat reply"]);
});

test("static pages are served by path, also to a request in a proxy's absolute form", async () => {
  server = await startFakeServer([], { pages: { "/docs": { body: "<p>docs</p>" }, "/old": { status: 301, location: "/docs" } } });
  const page = await fetch(`${server.origin}/docs`);
  expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(await page.text()).toBe("<p>docs</p>");
  const moved = await fetch(`${server.origin}/old`, { redirect: "manual" });
  expect([moved.status, moved.headers.get("location")]).toEqual([301, "/docs"]);
  const proc = Bun.spawn([process.execPath, "-e", "console.log(await (await fetch('http://docs.invalid/docs')).text())"], { env: { ...process.env, HTTP_PROXY: server.origin, NO_PROXY: "" }, stdout: "pipe" });
  expect((await new Response(proc.stdout).text()).trim()).toBe("<p>docs</p>");
  expect(server.requests.at(-1)!.headers.host).toBe("docs.invalid");
});
