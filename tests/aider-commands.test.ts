// Aider's slash commands that coder adds, through the binary against the fake server.
// A one-shot message that starts with / runs that command; /load FILE chains several
// commands in one session, which is how the stateful ones are driven here.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { block, lastUser, mainRequests, makeRepo, type Repo, runCoder, serverPerTest } from "./engine-harness.ts";

const server = serverPerTest();
const APP = "def total(items):\n    return sum(items)\n";

/** Write a command file into the repository's home and return its path. */
function commandFile(repo: Repo, lines: string[]): string {
  const file = join(repo.home, "commands.txt");
  Bun.write(file, `${lines.join("\n")}\n`);
  return file;
}

function systemText(body: any): string {
  return (body.messages as any[]).filter((m) => m.role === "system").map((m) => String(m.content)).join("\n");
}

describe("/test and /lint", () => {
  test("/test runs --test-cmd, shows its output, and a failure goes to the model as a fix request", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "I see: the test expects 3." }]);
    const r = await runCoder(repo, s, ["--yes-always", "--test-cmd", "echo 'FAILED test_total: 6 != 3'; exit 3", "-m", "/test"]);
    expect(r.stdout).toContain("FAILED test_total: 6 != 3");
    expect(r.stderr).toContain("The tests fail (exit code 3).");
    const requests = mainRequests(s);
    expect(requests).toHaveLength(1);
    expect(lastUser(requests[0])).toContain("failed (exit code 3)");
    expect(lastUser(requests[0])).toContain("FAILED test_total: 6 != 3");
    expect(r.code).toBe(1);
  });

  test("/test COMMAND that passes says so and sends nothing", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([]);
    const r = await runCoder(repo, s, ["-m", "/test echo all good"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("all good");
    expect(r.stdout).toContain("Tests passed.");
    expect(mainRequests(s)).toHaveLength(0);
  });

  test("/test without a command names the setting to use", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, await server([]), ["-m", "/test"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("set --test-cmd");
  });

  test("/lint reports a syntax error with its line, and the fix goes to the model with the report", async () => {
    const repo = makeRepo({ "app.py": "def total(items)\n    return sum(items)\n" });
    const s = await server([{ text: block("app.py", "def total(items)\n", "def total(items):\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "/lint app.py"]);
    expect(r.stdout).toContain("app.py:1: syntax error");
    const requests = mainRequests(s);
    expect(requests).toHaveLength(1);
    expect(lastUser(requests[0])).toContain("app.py does not parse as python");
    expect(repo.read("app.py")).toBe(APP);
  });

  test("/lint on clean files says so and sends nothing", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([]);
    const r = await runCoder(repo, s, ["-m", "/lint app.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No problems in app.py.");
    expect(mainRequests(s)).toHaveLength(0);
  });
});

describe("/context and /ok", () => {
  test("/context: the files the model names are added to the chat", async () => {
    const repo = makeRepo({ "app.py": APP, "src/config.py": "RATE = 1\n", "src/other.py": "X = 1\n" });
    const s = await server([{ text: "- `src/config.py`: the rate lives there.\n- app.py uses it." }]);
    const file = commandFile(repo, ["/context make the rate configurable", "/ls"]);
    const r = await runCoder(repo, s, ["-m", `/load ${file}`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Added to the chat: app.py, src/config.py");
    expect(r.stdout).toMatch(/Files in the chat \(editable\):\n {2}app\.py\n {2}src\/config\.py/);
    expect(systemText(mainRequests(s)[0])).toContain("choosing which files of this repository must change");
  });

  test("/ok after /ask sends the go-ahead in the editing format, and the edit applies", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "Return 0 for an empty list." }, { text: block("app.py", "    return sum(items)\n", "    return sum(items) if items else 0\n") }]);
    const file = commandFile(repo, ["/ask what should total() do with no items?", "/ok"]);
    const r = await runCoder(repo, s, ["-m", `/load ${file}`, "app.py"]);
    expect(r.code).toBe(0);
    const [ask, ok] = mainRequests(s);
    expect(systemText(ask)).toContain("nothing you write is applied");
    expect(lastUser(ok)).toStartWith("Ok, please go ahead and make those changes.");
    expect(systemText(ok)).toContain("SEARCH");
    expect(repo.read("app.py")).toContain("if items else 0");
  });
});

describe("model commands", () => {
  test("/models FILTER lists the matching models and what reasoning settings each takes", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, await server([]), ["-m", "/models o3"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/openai\/o3 +200000 +diff +2\/8 +reasoning effort/);
    expect(r.stdout).not.toContain("gpt-4.1");
  });

  test("/weak-model switches the model that writes commit messages; without an argument it shows it", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ model: "other-weak", text: "fix: handle empty lists" }, { text: block("app.py", "    return sum(items)\n", "    return sum(items or [])\n") }]);
    const file = commandFile(repo, ["/weak-model", "/weak-model openai/other-weak", "/code handle None"]);
    const r = await runCoder(repo, s, ["-m", `/load ${file}`, "app.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Weak model: openai/weak-model.");
    expect(r.stdout).toContain("Weak model: openai/other-weak.");
    expect(s.chatBodies().map((b) => b.model)).toContain("other-weak");
    expect(repo.git("log", "-1", "--format=%s").trim()).toBe("fix: handle empty lists");
  });

  test("/editor-model switches architect's editor", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "Make total() return 0 for no items." }, { model: "editor-x", text: block("app.py", "    return sum(items)\n", "    return sum(items or [])\n") }]);
    const file = commandFile(repo, ["/editor-model openai/editor-x", "/architect handle None"]);
    const r = await runCoder(repo, s, ["--auto-accept-architect", "-m", `/load ${file}`, "app.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Editor model: openai/editor-x.");
    expect(s.chatBodies().map((b) => b.model)).toEqual(expect.arrayContaining(["gpt-4.1", "editor-x"]));
    expect(repo.read("app.py")).toContain("items or []");
  });

  test("/reasoning-effort is sent to a model that takes it, and refused politely for one that does not", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "fine" }, { text: "fine" }]);
    const file = commandFile(repo, ["/reasoning-effort high", "/ask hi", "/model openai/gpt-4.1", "/ask again"]);
    const r = await runCoder(repo, s, ["--model", "openai/o3", "-m", `/load ${file}`]);
    expect(r.stdout).toContain("Reasoning effort: high.");
    const [o3, gpt] = mainRequests(s);
    expect(o3.reasoning_effort).toBe("high");
    expect(gpt.reasoning_effort).toBeUndefined();
    expect(r.stderr).toContain("openai/gpt-4.1 does not take a reasoning effort");
  });

  test("/think-tokens takes 8k and sends Anthropic's thinking budget", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "fine" }]);
    const file = commandFile(repo, ["/think-tokens 8k", "/ask hi"]);
    const r = await runCoder(repo, s, ["--model", "anthropic/claude-sonnet-4-5", "-m", `/load ${file}`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Thinking budget: 8,192 tokens.");
    const [body] = mainRequests(s);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 8192 });
    expect(body.temperature).toBeUndefined();
  });

  test("/think-tokens with a bad value says what it takes", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, await server([]), ["-m", "/think-tokens lots"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('/think-tokens expects a number, got "lots"');
  });
});

describe("/settings, /save, /load, /report, /help", () => {
  test("/settings lists every setting with its source and the model of each role", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, await server([]), ["--map-tokens", "512", "-m", "/settings"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Models: main openai/gpt-4.1, weak openai/weak-model");
    expect(r.stdout).toMatch(/mapTokens +512 +\(flag --map-tokens\)/);
    expect(r.stdout).toMatch(/apiKey +\*+ +\(flag --api-key\)/);
    expect(r.stdout).not.toContain("sk-test");
  });

  test("/save writes the commands that rebuild the chat; /load replays them into the next request", async () => {
    const repo = makeRepo({ "app.py": APP, "NOTES.md": "Use tabs.\n" });
    const s = await server([{ text: "ok" }]);
    const saving = commandFile(repo, ["/add app.py", "/read-only NOTES.md", "/reasoning-effort low", `/save ${join(repo.home, "chat.txt")}`]);
    expect((await runCoder(repo, s, ["--model", "openai/o3", "-m", `/load ${saving}`])).code).toBe(0);
    const saved = readFileSync(join(repo.home, "chat.txt"), "utf8");
    expect(saved.split("\n").filter((l) => l.startsWith("/"))).toEqual(["/drop", "/add app.py", "/read-only NOTES.md", "/model openai/o3", "/edit-format diff", "/weak-model openai/weak-model", "/reasoning-effort low"]);

    const replay = commandFile(repo, [saved, "/ask what is in the chat?"]);
    const r = await runCoder(repo, s, ["-m", `/load ${replay}`]);
    expect(r.code).toBe(0);
    const [body] = mainRequests(s);
    expect(body.model).toBe("o3");
    expect(body.reasoning_effort).toBe("low");
    const text = JSON.stringify(body.messages);
    expect(text).toContain("Use tabs.");
    expect(text).toContain("return sum(items)");
  });

  test("/load of a missing file says so", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, await server([]), ["-m", "/load nowhere.txt"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Cannot read nowhere.txt: no such file");
  });

  test("/report prints a template with version, platform, model, format and the last error; nothing is sent", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ status: 400, errorMessage: "model overloaded with nonsense" }]);
    const file = commandFile(repo, ["/ask hi", "/report"]);
    const r = await runCoder(repo, s, ["-m", `/load ${file}`]);
    expect(r.stdout).toContain("## Bug report");
    expect(r.stdout).toMatch(/- coder: \d+\.\d+\.\d+/);
    expect(r.stdout).toContain(`- platform: ${process.platform}`);
    expect(r.stdout).toContain("- model: openai/gpt-4.1");
    expect(r.stdout).toContain("- edit format: diff");
    expect(r.stdout).toMatch(/- last error: .*model overloaded with nonsense/);
    expect(s.chatBodies()).toHaveLength(1);
  });

  test("/help QUESTION is answered in ask mode from the embedded documentation; /help NAME shows that command", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "Use /undo." }]);
    const r = await runCoder(repo, s, ["-m", "/help how do I take back the last change?"]);
    expect(r.code).toBe(0);
    const [body] = mainRequests(s);
    const question = lastUser(body);
    expect(question).toContain("My question: how do I take back the last change?");
    expect(question).toContain("## Quick start");
    expect(question).toContain("/undo");
    expect(systemText(body)).toContain("nothing you write is applied");
    const usage = await runCoder(repo, s, ["-m", "/help save"]);
    expect(usage.stdout.trim()).toMatch(/^\/save FILE +write the commands that rebuild this chat/);
  });
});
