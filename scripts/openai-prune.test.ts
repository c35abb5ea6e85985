// The build's pruning of the `openai` package (scripts/openai-prune.ts): the client it bundles still
// streams a chat completion over HTTP and has speech to text, the resources coder never calls are
// stand-ins, workload identity refuses, and a module that would call into a stand-in fails the build instead.
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openaiPrune, replaced, standIn } from "./openai-prune.ts";

const ROOT = join(import.meta.dir, "..");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A scratch folder inside the repository (so `openai` resolves from its node_modules). */
function scratch(): string {
  mkdirSync(join(ROOT, "dist"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, "dist", "openai-prune-test-"));
  dirs.push(dir);
  return dir;
}

test("which modules are replaced: every API resource but chat completions, speech and their shared types, and the stream()/runTools() helpers", () => {
  for (const kept of ["resources/chat/completions/completions.mjs", "resources/chat/chat.mjs", "resources/chat.mjs", "resources/audio/transcriptions.mjs", "resources/shared.mjs", "resources/index.mjs", "client.mjs", "core/streaming.mjs", "lib/chat-completions/streaming.mjs", "lib/parser.mjs"]) {
    expect(replaced(kept)).toBe(false);
  }
  for (const pruned of ["resources/batches.mjs", "resources/beta/assistants.mjs", "resources/responses/responses.mjs", "resources/fine-tuning/jobs/jobs.mjs", "resources/chatkit.mjs", "resources/audios.mjs", "lib/ChatCompletionStream.mjs", "lib/ChatCompletionRunner.mjs", "lib/ChatCompletionStreamingRunner.mjs", "lib/AbstractChatCompletionRunner.mjs", "lib/EventStream.mjs"]) {
    expect(replaced(pruned)).toBe(true);
  }
});

test("a stand-in has the module's exported names: classes as empty resources, the rest undefined", async () => {
  const source = 'import { APIResource } from "../core/resource.mjs";\nexport class Batches extends APIResource { create() { return this._client.post("/batches"); } }\nexport function helper() { return 1; }\nexport const LIMIT = 3;\n';
  const text = standIn(source);
  const file = join(scratch(), "stand-in.mjs");
  writeFileSync(file, text);
  const mod = await import(file);
  expect(Object.keys(mod).sort()).toEqual(["Batches", "LIMIT", "helper"]);
  const client = {};
  expect(new mod.Batches(client)._client).toBe(client);
  expect(new mod.Batches(client).create).toBeUndefined();
  expect(mod.helper).toBeUndefined();
  expect(text).not.toContain("/batches");
});

test("the pruned client streams a chat completion through the package's own code; other resources and the stream() helpers are stand-ins", async () => {
  const dir = scratch();
  const entry = join(dir, "entry.ts");
  writeFileSync(
    entry,
    `import OpenAI from "openai";
const chunk = (content, finish) => \`data: \${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: content ? { content } : {}, finish_reason: finish }] })}\\n\\n\`;
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(chunk("Hello", null) + chunk(" there", null) + chunk(null, "stop") + "data: [DONE]\\n\\n", { headers: { "content-type": "text/event-stream" } }) });
const client = new OpenAI({ apiKey: "sk-test", baseURL: \`http://127.0.0.1:\${server.port}/v1\`, maxRetries: 0 });
let text = "";
for await (const part of await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true })) text += part.choices[0]?.delta?.content ?? "";
server.stop(true);
let identity = "";
try {
  new OpenAI({ workloadIdentity: { type: "x509", certificate: "c", privateKey: "k" }, baseURL: "https://api.openai.com/v1" });
} catch (error) {
  identity = error.message;
}
console.log(JSON.stringify({ text, speech: typeof client.audio.transcriptions.create, batches: typeof client.batches.create, responses: typeof client.responses.create, identity }));
`,
  );
  const result = await Bun.build({ entrypoints: [entry], root: dir, outdir: join(dir, "out"), target: "bun", format: "esm", plugins: [openaiPrune()], throw: false });
  expect(result.logs.map(String).join("\n")).toBe("");
  expect(result.success).toBe(true);
  const bundle = await result.outputs[0]!.text();
  expect(bundle).not.toContain("/fine_tuning/jobs");
  // ChatCompletionStream's own code (chat.completions.stream()) is a stand-in too.
  expect(bundle).not.toContain("Chat completion stream exceeded its");
  // Workload identity's code is a stand-in that refuses (AUTH_STAND_INS).
  expect(bundle).not.toContain("X.509 workload identity type must be a plain data property");
  const run = Bun.spawnSync([process.execPath, result.outputs[0]!.path], { stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  expect(JSON.parse(run.stdout.toString())).toEqual({ text: "Hello there", speech: "function", batches: "undefined", responses: "undefined", identity: "workload identity is not part of coder's build of the openai client" });
});

test("a module the stand-ins do not cover that imports a replaced resource fails the build, naming both", async () => {
  const dir = scratch();
  const pkg = join(dir, "node_modules", "openai");
  mkdirSync(join(pkg, "lib"), { recursive: true });
  mkdirSync(join(pkg, "resources"), { recursive: true });
  writeFileSync(join(pkg, "resources", "batches.mjs"), "export class Batches { create() { return 1; } }\n");
  writeFileSync(join(pkg, "lib", "helper.mjs"), 'import { Batches } from "../resources/batches.mjs";\nexport const made = new Batches().create();\n');
  const entry = join(dir, "entry.ts");
  writeFileSync(entry, 'import { made } from "./node_modules/openai/lib/helper.mjs";\nconsole.log(made);\n');
  const result = await Bun.build({ entrypoints: [entry], root: dir, outdir: join(dir, "out"), target: "bun", format: "esm", plugins: [openaiPrune()], throw: false });
  expect(result.success).toBe(false);
  expect(result.logs.map(String).join("\n")).toContain("openai/lib/helper.mjs imports openai/resources/batches.mjs, which the build replaces by a stand-in");
});
