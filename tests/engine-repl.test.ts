// The interactive REPL on the built binary, driven through a pseudo-terminal
// (util-linux `script`): requests, slash commands, Ctrl-C, input history and
// background history summaries.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeServer } from "./support/fake-server.ts";
import { BINARY, block, lastUser, mainRequests, makeRepo, removeRepos, serverWith } from "./engine-harness.ts";
import { SCRIPT, startRepl } from "./support/repl.ts";

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("REPL (dist/coder in a pseudo-terminal)", () => {
  test("a request, a slash command, input history, /exit", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([{ model: "gpt-4.1", text: `Done.\n${block("a.py", "x = 1\n", "x = 2\n")}` }]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "a.py"]);
    await repl.waitFor("> ");
    repl.type("set x to 2");
    await repl.waitFor("Applied edit to a.py");
    await repl.waitFor("> ");
    repl.type("/tokens");
    await repl.waitFor("remaining of the");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(readFileSync(join(repo.root, ".coder", "input.history"), "utf8")).toBe("set x to 2\n/tokens\n/exit\n");
    expect(readFileSync(join(repo.root, ".coder", "chat.history.md"), "utf8")).toContain("#### set x to 2");
  });

  test("slash commands act on the session: /add puts a file in the next request, /ask answers without editing", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "MARKER_B = 1\n" });
    const s = await serverWith([
      { model: "gpt-4.1", text: "Seen both." },
      { model: "gpt-4.1", text: `An answer only.\n${block("a.py", "x = 1\n", "x = 9\n")}` },
    ]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("/add b.py");
    await repl.waitFor("> ");
    repl.type("look at both");
    await repl.waitFor("Seen both.");
    await repl.waitFor("> ");
    repl.type("/ask what would you change?");
    await repl.waitFor("An answer only.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    const [first, second] = mainRequests(s);
    expect(JSON.stringify(first.messages)).toContain("MARKER_B = 1");
    expect(JSON.stringify(second.messages[0])).not.toEqual(JSON.stringify(first.messages[0]));
    // /ask never edits, even when the reply contains an edit block.
    expect(repo.read("a.py")).toBe("x = 1\n");
  });

  test("Ctrl-C aborts the request in flight and returns to the prompt", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([
      { model: "gpt-4.1", text: "too late", delayMs: 30_000 },
      { model: "gpt-4.1", text: "Second answer." },
    ]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "a.py"]);
    await repl.waitFor("> ");
    repl.type("slow question");
    await s.waitForChat(1);
    repl.key("\x03");
    await repl.waitFor("stopped before the reply began");
    await repl.waitFor("> ");
    repl.type("next question");
    await repl.waitFor("Second answer.");
    await repl.waitFor("> ");
    repl.type("/exit");
    const code = await repl.proc.exited;
    if (code !== 0) console.log(repl.output, await new Response(repl.proc.stderr).text());
    expect(code).toBe(0);
    // The interrupted request left no dangling user message: roles still alternate.
    const roles = (mainRequests(s)[1].messages as any[]).map((m) => m.role).filter((r) => r !== "system");
    for (let i = 1; i < roles.length; i++) expect(`${roles[i - 1]}-${roles[i]}`).not.toBe("user-user");
    expect(lastUser(mainRequests(s)[1])).toContain("next question");
  });

  test("history over its budget is summarised in the background by the weak model", async () => {
    // A 16k-token window gives a 1,024-token history budget.
    const repo = makeRepo({ "a.py": "x = 1\n", ".coder.json": JSON.stringify({ models: { "openai/gpt-4.1": { contextWindow: 16_000 } } }) });
    const long = `Explain parse_config in settings.py ${"in great detail ".repeat(400)}`;
    const s = await serverWith([
      { model: "weak-model", match: "Explain parse_config", text: "I asked about parse_config in settings.py." },
      { model: "gpt-4.1", text: `A long answer. ${"words ".repeat(400)}` },
      { model: "gpt-4.1", text: "Short answer." },
    ]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type(long);
    await repl.waitFor("A long answer.");
    await s.waitForChat(2); // the summary request (weak model) after the turn
    await repl.waitFor("> ");
    repl.type("and now?");
    await repl.waitFor("Short answer.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    const second = JSON.stringify(mainRequests(s)[1].messages);
    expect(second).toContain("I asked about parse_config in settings.py.");
    expect(second).not.toContain("in great detail in great detail");
  });
});
