// --watch-files in the REPL (dist/coder in a pseudo-terminal, util-linux `script`): while the
// prompt waits, a comment ending in AI! ends the prompt, the change is made, and the prompt
// comes back for the next line.
import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { BINARY, block, makeRepo, removeRepos, serverWith } from "./engine-harness.ts";
import type { FakeServer } from "./support/fake-server.ts";

const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));
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
    const argv = [BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", s.url, "--api-key", "sk-test", "--watch-files"];
    const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const proc = Bun.spawn([SCRIPT as string, "-qfec", `exec ${command}`, "/dev/null"], {
      cwd: repo.root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), TERM: "dumb", GIT_CONFIG_NOSYSTEM: "1" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let output = "";
    void (async () => {
      for await (const chunk of proc.stdout) output += new TextDecoder().decode(chunk).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
    })();
    const until = async (text: string, from = 0) => {
      for (let i = 0; i < 600 && output.indexOf(text, from) < 0; i++) await Bun.sleep(50);
      if (output.indexOf(text, from) < 0) throw new Error(`waited for ${JSON.stringify(text)}; saw:\n${output}`);
      return output.indexOf(text, from) + text.length;
    };
    let at = await until("> ");
    appendFileSync(join(repo.root, "app.py"), "# empty lists give 0 AI!\n");
    at = await until("AI comments in app.py: asking for the change.", at);
    at = await until("Applied edit to app.py", at);
    await until("> ", at);
    proc.stdin.write("/exit\r");
    proc.stdin.flush();
    expect(await proc.exited).toBe(0);
    expect(repo.read("app.py")).toBe("def total(items):\n    return sum(items) if items else 0\n");
  });
});
