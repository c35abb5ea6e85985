// --watch-files in the REPL (dist/coder in a pseudo-terminal): while the prompt waits, a
// comment ending in AI! ends the prompt, the change is made, and the prompt comes back.
import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { BINARY, block, makeRepo, removeRepos, serverWith } from "./engine-harness.ts";
import type { FakeServer } from "./support/fake-server.ts";
import { SCRIPT, startRepl } from "./support/repl.ts";

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("--watch-files in the REPL", () => {
  test("an AI! comment saved while the prompt waits is acted on, and the prompt returns", async () => {
    const repo = makeRepo({ "app.py": "def total(items):\n    return sum(items)\n" });
    const s = await serverWith([{ model: "gpt-4.1", text: block("app.py", "    return sum(items)\n# empty lists give 0 AI!\n", "    return sum(items) if items else 0\n") }]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--watch-files"]);
    await repl.waitFor("> ");
    appendFileSync(join(repo.root, "app.py"), "# empty lists give 0 AI!\n");
    await repl.waitFor("AI comments in app.py: asking for the change.");
    await repl.waitFor("Applied edit to app.py");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(repo.read("app.py")).toBe("def total(items):\n    return sum(items) if items else 0\n");
  });
});
