// End to end on dist/coder: shell commands the model suggests in a `diff` reply. Once one
// ran (explicit yes, or --yes-always with a trusted allowShell), a failure's output can
// go back to the model as a fix request — a reflection, within --max-reflections — and a
// success's output can join the chat (asked; yes under --yes-always). /run shares the offer.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, block, lastUser, mainRequests, makeRepo, type Repo, runCoder, serverPerTest } from "./engine-harness.ts";
import { KEY, lastUser as lastUserOf, PtyRun } from "./safety-harness.ts";

const server = serverPerTest();

/** The repository's global config (trusted) lets --yes-always run suggested commands. */
function allowShell(repo: Repo): void {
  const dir = join(repo.home, ".config", "coder");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ allowShell: true }));
}

const bash = (command: string) => `\`\`\`bash\n${command}\n\`\`\`\n`;

describe.skipIf(!existsSync(BINARY))("shell suggestions: output to the chat, failures to the model", () => {
  test("--yes-always with a trusted allowShell: a failing command's output goes back as a fix request (a reflection)", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    allowShell(repo);
    const s = await server([
      { model: "gpt-4.1", text: `Set x, then check it.\n\n${block("a.py", "x = 1\n", "x = 2\n")}\n${bash("echo boom-42; exit 3")}` },
      { model: "gpt-4.1", text: "The check script is missing; nothing else to change." },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "set x to 2 and check", "a.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(r.stdout).toContain("$ echo boom-42; exit 3");
    expect(r.stdout).toContain("(exit 3)");
    const reqs = mainRequests(s);
    expect(reqs.length).toBe(2);
    const fix = lastUser(reqs[1]);
    expect(fix).toContain("I ran `echo boom-42; exit 3` and it failed (exit code 3)");
    expect(fix).toContain("boom-42");
    expect(fix).toContain("Fix the problem it reports.");
  });

  test("the fix requests count against --max-reflections", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    allowShell(repo);
    const s = await server([{ model: "gpt-4.1", text: `Run the check.\n\n${bash("echo still-failing; exit 1")}`, repeat: true }]);
    const r = await runCoder(repo, s, ["--yes-always", "--max-reflections", "1", "-m", "check it", "a.py"]);
    expect(mainRequests(s).length).toBe(2);
    expect(r.stderr).toContain("Stopped after 1 reflection (--max-reflections 1)");
    expect(r.code).toBe(1);
  });

  test("--yes-always with a trusted allowShell: a successful command's output joins the chat", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    allowShell(repo);
    // The edit fails, so a second request follows: it must carry the output before the repair report.
    const s = await server([
      { model: "gpt-4.1", text: `${bash("echo out-ok-77")}\n${block("a.py", "y = 5\n", "y = 6\n")}` },
      { model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "look, then set x", "a.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Added the output to the chat.");
    const messages = mainRequests(s)[1].messages as { role: string; content: string }[];
    const at = messages.findIndex((m) => m.role === "user" && m.content.startsWith("Output of `echo out-ok-77`"));
    expect(at).toBeGreaterThan(0);
    expect(messages[at]!.content).toContain("out-ok-77");
    expect(messages[at + 1]).toMatchObject({ role: "assistant", content: "Ok." });
    expect(messages.at(-1)!.content).toContain("y = 5");
    expect(repo.read("a.py")).toBe("x = 2\n");
  });

  test("without a terminal and without --yes-always nothing runs and nothing is offered", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: bash("touch ran-it; exit 2") }]);
    const r = await runCoder(repo, s, ["-m", "try it", "a.py"]);
    expect(existsSync(join(repo.root, "ran-it"))).toBe(false);
    expect(r.stderr).toContain("Run shell command: touch ran-it; exit 2 -> no");
    expect(r.stderr).not.toContain("Ask the model to fix");
    expect(mainRequests(s).length).toBe(1);
  });

  test("interactive: after an explicit yes the command runs, and its failure goes to the model on a second yes", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const env = { HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" };
    const run = await PtyRun.start(
      repo.root,
      ["a.py"],
      [
        { text: "feat: commit message", match: "The change:", repeat: true },
        { text: `Try this:\n\n${bash("echo boom-pty; exit 4")}` },
        { text: "I see what it reports; the fix is elsewhere." },
      ],
      env,
    );
    await run.pty.waitFor("> ");
    run.pty.type("run the check\r");
    // A shell command defaults to No (CLI.md): Enter would refuse it; "y" answers yes at once.
    let at = await run.pty.waitFor("Run shell command: echo boom-pty; exit 4 (Y)es/(N)o/(D)on't ask again [No]: ");
    run.pty.type("y");
    at = await run.pty.waitFor("Ask the model to fix what `echo boom-pty; exit 4` reports? (Y)es/(N)o/(D)on't ask again [Yes]: ", at);
    run.pty.type(KEY.enter);
    await run.pty.waitFor("the fix is elsewhere", at);
    const requests = (await run.finish()).filter((q) => !lastUserOf(q).includes("The change:"));
    expect(requests.length).toBe(2);
    expect(lastUserOf(requests[1])).toContain("boom-pty");
    expect(lastUserOf(requests[1])).toContain("exit code 4");
  });
});
