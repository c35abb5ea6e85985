// The engine knows no process globals (issue 10): two chats on two repositories
// run at once in one process, each with its own settings, output, gate and git,
// against the fake model server over HTTP. Nothing here changes directory.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { BUILTINS, builtinTable } from "../builtins.ts";
import { createCoder } from "../core/chat/create.ts";
import type { CoderEvent, Output, Totals } from "../core/chat/events.ts";
import { loadSettings } from "../core/cli/settings.ts";
import { parseArgv } from "../core/config/argv.ts";
import { NonInteractivePrompter } from "../core/gate/prompter.ts";
import { assembleApp } from "../core/boot/assemble.ts";
import { block, makeRepo, type Repo } from "./engine-harness.ts";
import { startFakeServer } from "./support/fake-server.ts";

const servers: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** An Output that keeps every event and line, for one session. */
function recorder(): Output & { events: CoderEvent[]; lines: string[] } {
  const events: CoderEvent[] = [];
  const lines: string[] = [];
  return { events, lines, emit: (e) => events.push(e), print: (t) => lines.push(t), warn: (t) => lines.push(`warning: ${t}`), flush() {} };
}

async function openChat(repo: Repo, model: string, url: string) {
  const argv = ["--model", model, "--weak-model", "openai/weak-model", "--api-base", url, "--api-key", "sk-test", "--yes-always", "--map-tokens", "0", "a.py"];
  // Each session has its own environment: its own home, so its own global config and trust store.
  const env = { PATH: process.env.PATH, HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), XDG_CACHE_HOME: join(repo.home, ".cache") };
  const table = builtinTable();
  const args = parseArgv(argv, table);
  const loaded = await loadSettings({ version: "0.0.0-test", args, table, rest: args.positionals, builtins: async () => BUILTINS, cwd: repo.root, env });
  const app = await assembleApp(loaded, async () => BUILTINS);
  const out = recorder();
  const totals: Totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
  const coder = await createCoder(app, { out, totals, prompter: ({ out: said }) => new NonInteractivePrompter((t) => said.warn(t)) });
  return { coder, out, app };
}

test("two chats on two repositories in one process: each edits and commits its own files, events stay apart", async () => {
  const first = makeRepo({ "a.py": "x = 1\n" });
  const second = makeRepo({ "a.py": "y = 1\n" });
  // Slow, interleaved streams: both replies are in flight at the same time.
  const server = await startFakeServer([
    { model: "model-one", text: `One.\n${block("a.py", "x = 1\n", "x = 2\n")}`, chunkDelayMs: 5, chunkChars: 6 },
    { model: "model-two", text: `Two.\n${block("a.py", "y = 1\n", "y = 3\n")}`, chunkDelayMs: 5, chunkChars: 6 },
    { model: "weak-model", text: "feat: change the value", repeat: true },
  ]);
  servers.push(server);
  const cwd = process.cwd();
  const one = await openChat(first, "openai/model-one", server.url);
  const two = await openChat(second, "openai/model-two", server.url);
  expect(one.app.root).toBe(first.root);
  expect(two.app.root).toBe(second.root);

  const [r1, r2] = await Promise.all([one.coder.runOne("set x to 2"), two.coder.runOne("set y to 3")]);
  expect(r1.ok).toBe(true);
  expect(r2.ok).toBe(true);

  expect(first.read("a.py")).toBe("x = 2\n");
  expect(second.read("a.py")).toBe("y = 3\n");
  expect(first.git("log", "-1", "--format=%s").trim()).toBe("feat: change the value");
  expect(second.git("log", "-1", "--format=%s").trim()).toBe("feat: change the value");
  expect(first.git("status", "--porcelain", "a.py")).toBe("");
  expect(second.git("status", "--porcelain", "a.py")).toBe("");

  // Each session heard its own reply and edit, nothing of the other's.
  const replies = (o: ReturnType<typeof recorder>) => o.events.flatMap((e) => (e.type === "reply" ? [e.text] : []));
  expect(replies(one.out).join("")).toContain("x = 2");
  expect(replies(one.out).join("")).not.toContain("y = 3");
  expect(replies(two.out).join("")).toContain("y = 3");
  const edits = (o: ReturnType<typeof recorder>) => o.events.flatMap((e) => (e.type === "edit" ? [`${e.path}:${e.status}`] : []));
  expect(edits(one.out)).toEqual(["a.py:applied"]);
  expect(edits(two.out)).toEqual(["a.py:applied"]);
  // Both requests were made, one per model, and the process never changed directory.
  const models = server.chatBodies().map((b) => b.model).filter((m: string) => m !== "weak-model");
  expect(models.sort()).toEqual(["model-one", "model-two"]);
  expect(process.cwd()).toBe(cwd);
  // Each transcript is in its own repository.
  expect(await Bun.file(join(first.root, ".coder", "chat.history.md")).text()).toContain("set x to 2");
  expect(await Bun.file(join(second.root, ".coder", "chat.history.md")).text()).toContain("set y to 3");
  expect(await Bun.file(join(second.root, ".coder", "chat.history.md")).text()).not.toContain("set x to 2");
});
