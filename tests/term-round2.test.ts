// The terminal, round 2 (issue 25): the real dist/coder in a pseudo-terminal, its screen
// read through a headless xterm, against the fake server. The live input box while the
// model answers, Esc to stop, the guided first run, /help laid out to the width, /tokens as
// a table, /drop by substring, honest /lint counts, the banner and the exit line.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeServer } from "./support/fake-server.ts";
import { coderArgv, SCRIPT, type Screen, startScreen } from "./support/screen.ts";
import { BINARY, block, lastUser, mainRequests, makeRepo, removeRepos, type Repo, serverWith } from "./engine-harness.ts";

const servers: FakeServer[] = [];
const screens: Screen[] = [];
afterEach(async () => {
  for (const s of screens.splice(0)) s.proc.kill();
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

async function open(repo: Repo, steps: Parameters<typeof serverWith>[0], args: string[], extra: { env?: Record<string, string>; cols?: number } = {}) {
  const server = await serverWith(steps);
  servers.push(server);
  const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", ...args], env: extra.env, cols: extra.cols });
  screens.push(screen);
  await screen.waitFor("/help for commands");
  await screen.waitForPrompt();
  return { server, screen };
}

async function leave(screen: Screen): Promise<void> {
  screen.type("/exit");
  expect(await screen.exited).toBe(0);
}

const LONG = `The first part of a long answer. ${"More words follow here. ".repeat(16)}The end.\n`;
const slow = (text = LONG) => ({ model: "gpt-4.1", text, chunkDelayMs: 80, chunkChars: 6 });

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("the terminal, round 2 (dist/coder, screen read through xterm)", () => {
  test("1. /help QUESTION offers no URL from coder's own documentation", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: "Use /undo." }], ["a.py"]);
    screen.type("/help how do I undo a change?");
    await screen.waitFor("Use /undo.");
    await screen.waitForPrompt();
    expect(screen.text()).not.toContain("to the chat?");
    await leave(screen);
    expect(mainRequests(server)).toHaveLength(1);
    expect(lastUser(mainRequests(server)[0])).toContain("how do I undo a change?");
  });

  test("2. the path line above an echoed edit block is shown as a path, not Markdown", async () => {
    const repo = makeRepo({ "dotenv/__init__.py": "x = 1\n" });
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: `Here.\n\n${block("dotenv/__init__.py", "x = 1\n", "x = 2\n")}` }], ["--yes-always", "dotenv/__init__.py"]);
    screen.type("two");
    await screen.waitFor("Applied edit to dotenv/__init__.py");
    const lines = screen.lines();
    const echo = lines.findIndex((l) => l.trim() === "dotenv/__init__.py");
    expect(echo).toBeGreaterThanOrEqual(0);
    expect(screen.text()).not.toContain("dotenv/init.py");
    await leave(screen);
  });

  test("3. keys typed while a reply streams go to the box below it, never into the reply; Enter queues the message", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [slow(), { model: "gpt-4.1", text: "Queued one answered." }], ["a.py"]);
    screen.type("write a long answer");
    await screen.waitFor("The first part of a long answer.");
    screen.send("also fix the tests");
    await screen.waitFor("> also fix the tests");
    await screen.waitFor("esc to stop");
    screen.send("\r");
    await screen.waitFor("queued: also fix the tests");
    await screen.waitFor("Queued one answered.");
    await screen.waitForPrompt();
    // The reply's lines hold none of the typed keys.
    const reply = screen.lines().filter((l) => l.includes("More words follow here."));
    expect(reply.length).toBeGreaterThan(0);
    for (const line of reply) expect(line).not.toMatch(/also|fix|tests/);
    expect(screen.text()).not.toContain("queued:");
    await leave(screen);
    expect(mainRequests(server)).toHaveLength(2);
    expect(lastUser(mainRequests(server)[1])).toContain("also fix the tests");
  });

  test("4. Esc stops the reply with one line on what was kept; the spinner says esc to stop; ? lists the keys", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { screen } = await open(repo, [{ ...slow(), delayMs: 1500 }], ["a.py"]);
    screen.send("?");
    await screen.waitFor("Esc or Ctrl-C stops a reply");
    screen.type("write a long answer");
    await screen.waitFor(/Waiting for gpt-4\.1 · \d+ s · esc to stop/);
    await screen.waitFor("The first part of a long answer.");
    screen.send("\x1b");
    await screen.waitFor(/stopped: \d+ tokens kept; nothing applied/);
    await screen.waitForPrompt();
    expect(screen.text().match(/stopped/g)).toHaveLength(1);
    expect(screen.text()).not.toContain("Interrupted");
    await leave(screen);
  });

  for (const cols of [60, 120]) {
    test(`5. /help is laid out to ${cols} columns, wrapping between words; the /mcp row has its name`, async () => {
      const repo = makeRepo({ "a.py": "x = 1\n" });
      const { screen } = await open(repo, [], ["a.py"], { cols });
      screen.type("/help");
      await screen.waitFor("/help QUESTION asks");
      const lines = screen.lines();
      expect(lines.some((l) => l.startsWith("/mcp [list|add|drop]"))).toBe(true);
      const at = lines.findIndex((l) => l.startsWith("/architect"));
      // The description goes on under itself, indented, and no line is cut mid-word.
      expect(lines[at + 1]).toMatch(/^ {4,}\S/);
      const words = new Set(screen.text().split(/\s+/));
      expect(words.has("switch)")).toBe(true);
      for (const line of lines.slice(lines.findIndex((l) => l.startsWith("/! ")))) expect(line.length).toBeLessThan(cols);
      await leave(screen);
    });
  }

  test("7. /lint counts the files with problems, not the files checked", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "def f(:\n" });
    const { screen } = await open(repo, [], ["a.py", "b.py"]);
    screen.type("/lint");
    await screen.waitFor("Lint found problems in b.py (of 2 checked).");
    await screen.waitFor("Ask the model to fix them?");
    screen.send("n");
    await screen.waitForPrompt();
    await leave(screen);
  });

  test("8. /tokens is a table: a row per file with its /drop hint, tokens and cost", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "src/app.py": "print('hello')\n" });
    const { screen } = await open(repo, [], ["a.py", "src/app.py"]);
    screen.type("/tokens");
    await screen.waitFor("remaining of the");
    const text = screen.text();
    expect(text).toMatch(/tokens\s+cost\s+part/);
    expect(text).toMatch(/\d+\s+\$\d+\.\d{4}\s+a\.py\s+\/drop a\.py/);
    expect(text).toMatch(/src\/app\.py\s+\/drop src\/app\.py/);
    expect(text).toMatch(/\$\d+\.\d{4}\s+total/);
    await leave(screen);
  });

  test("9. /drop matches part of a path as Aider does, and asks when several files match", async () => {
    const repo = makeRepo({ "src/cli.py": "a = 1\n", "tests/test_cli.py": "b = 1\n", "app.py": "c = 1\n" });
    const { screen } = await open(repo, [], ["src/cli.py", "tests/test_cli.py", "app.py"]);
    screen.type("/drop app");
    await screen.waitFor("Dropped: app.py");
    await screen.waitForPrompt();
    screen.type("/drop cli.py");
    await screen.waitFor("cli.py matches 2 files in the chat: src/cli.py, tests/test_cli.py. Drop them all?");
    screen.send("y");
    await screen.waitFor("Dropped: src/cli.py, tests/test_cli.py");
    await screen.waitForPrompt();
    screen.type("/ls");
    await screen.waitFor("No files in the chat");
    await leave(screen);
  });

  test("10. Ctrl-C before anything arrived: no ^C, one line, no advice to say continue", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: "late", delayMs: 20_000 }], ["a.py"]);
    screen.type("think");
    await server.waitForChat(1);
    await screen.waitFor("Waiting for gpt-4.1");
    screen.send("\x03");
    await screen.waitFor("stopped before the reply began: nothing kept, nothing applied");
    await screen.waitForPrompt();
    expect(screen.text()).not.toContain("^C");
    expect(screen.text()).not.toContain("continue");
    expect(screen.text().match(/stopped/g)).toHaveLength(1);
    await leave(screen);
  });

  test("10. Ctrl-C in a one-shot run on a terminal: one line, no ^C in the text, no advice to say continue, exit 130", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([slow()]);
    servers.push(server);
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", "-m", "write a long answer", "a.py"] });
    screens.push(screen);
    await screen.waitFor("The first part of a long answer.");
    screen.send("\x03");
    expect(await screen.exited).toBe(130);
    await screen.waitFor(/stopped: \d+ tokens kept; nothing applied/);
    expect(screen.text()).not.toContain("^C");
    expect(screen.text()).not.toContain("continue");
  });

  test("11. a first run with no key: guided set-up through the endpoint's models, key saved with mode 600 outside the repository", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([{ model: "gpt-4.1", text: "Hello after set-up." }]);
    servers.push(server);
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, bare: true, args: ["--map-tokens", "0", "--weak-model", "openai/gpt-4.1", "a.py"], env: { OPENAI_BASE_URL: server.url } });
    screens.push(screen);
    await screen.waitFor("Which provider?");
    screen.send("\r"); // openai, the first
    await screen.waitFor("API key (OPENAI_API_KEY)");
    screen.send("sk-pasted-key-42");
    await screen.waitFor("••••");
    expect(screen.text()).not.toContain("sk-pasted-key-42");
    screen.send("\r");
    await screen.waitFor("Default model");
    await screen.waitFor("gpt-4.1");
    // The list is sorted: fake-model, gpt-4.1.
    screen.send("\x1b[B");
    screen.send("\r");
    await screen.waitFor("Write a .coder.json for this project");
    screen.send("n");
    await screen.waitFor("/help for commands");
    await screen.waitForPrompt();
    screen.type("hello");
    await screen.waitFor("Hello after set-up.");
    await leave(screen);
    const keys = join(repo.home, ".config", "coder", "keys.env");
    expect(readFileSync(keys, "utf8")).toBe("OPENAI_API_KEY=sk-pasted-key-42\n");
    expect(statSync(keys).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(repo.home, ".config", "coder", "config.json"), "utf8")).model).toBe("openai/gpt-4.1");
    expect(server.requests.some((r) => r.path.endsWith("/models") && r.headers.authorization === "Bearer sk-pasted-key-42")).toBe(true);
    expect(mainRequests(server)[0].model).toBe("gpt-4.1");
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("11. coder init: provider, key, model, then the project's .coder.json with commands guessed from pyproject.toml", async () => {
    const repo = makeRepo({ "pyproject.toml": "[project]\nname = 'x'\n\n[tool.ruff]\nline-length = 100\n" });
    const server = await serverWith([]);
    servers.push(server);
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, bare: true, args: ["init"], env: { OPENAI_BASE_URL: server.url } });
    screens.push(screen);
    await screen.waitFor("Which provider?");
    screen.send("\r");
    await screen.waitFor("API key (OPENAI_API_KEY)");
    screen.send("sk-init-key\r");
    await screen.waitFor("Default model");
    screen.send("\r"); // fake-model, the first listed
    await screen.waitFor("Write a .coder.json for this project");
    screen.send("y");
    await screen.waitFor("Commands guessed from pyproject.toml");
    await screen.waitFor("Edit format");
    screen.send("\r"); // the model's default
    await screen.waitFor("Lint command");
    await screen.waitFor("ruff check");
    screen.send("\r");
    await screen.waitFor("Test command");
    screen.send("\r");
    await screen.waitFor("Ready: openai/fake-model");
    expect(await screen.exited).toBe(0);
    expect(JSON.parse(repo.read(".coder.json"))).toEqual({ model: "openai/fake-model", lintCmd: "ruff check", testCmd: "pytest" });
    expect(readFileSync(join(repo.home, ".config", "coder", "keys.env"), "utf8")).toBe("OPENAI_API_KEY=sk-init-key\n");
    expect(repo.read(".coder.json")).not.toContain("sk-init-key");
  });

  test("11. without a terminal nothing is asked: exit 2 with the one line saying what to set", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([]);
    servers.push(server);
    const proc = Bun.spawn([BINARY, "--model", "openai/gpt-4.1", "--api-base", server.url, "-m", "hello", "a.py"], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config") }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(2);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr.trim().split("\n")).toEqual(["coder: no API key for openai/gpt-4.1: set OPENAI_API_KEY (in the environment or the repository's .env), pass --api-key, or run `coder init`"]);
    const init = Bun.spawn([BINARY, "init"], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    expect(await init.exited).toBe(2);
    expect(await new Response(init.stderr).text()).toContain("coder init asks its questions on a terminal");
  });

  test("12. NO_COLOR and --no-pretty keep the completion menu and Ctrl-R history search", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: "Noted." }], ["--no-pretty", "a.py"], { env: { NO_COLOR: "1" } });
    screen.type("remember the marker");
    await screen.waitFor("Noted.");
    await screen.waitForPrompt();
    screen.send("/he");
    await screen.waitFor("→ /help");
    screen.send("\x15"); // Ctrl-U: the line is cleared; then Esc closes the menu
    screen.send("\x1b");
    await screen.waitForPrompt();
    screen.send("\x12marker");
    await screen.waitFor("(reverse-i-search)`marker': remember the marker");
    screen.send("\r");
    await screen.waitFor("> remember the marker");
    screen.send("\x15");
    await screen.waitForPrompt();
    await leave(screen);
  });

  test("13. Ctrl-L clears the screen and keeps the typed text; Ctrl-Z does not end up in the message", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: "Got it." }], ["a.py"]);
    screen.send("half typed");
    await screen.waitFor("> half typed");
    screen.send("\x0c");
    for (let i = 0; i < 200 && screen.text().includes("/help for commands"); i++) await Bun.sleep(50);
    expect(screen.text()).not.toContain("/help for commands");
    await screen.waitFor("> half typed");
    screen.send("\x1a");
    screen.send(" and more\r");
    await screen.waitFor("Got it.");
    const firstNonEmpty = screen.lines().find((l) => l.trim());
    expect(firstNonEmpty).toBe("> half typed and more");
    await leave(screen);
  });

  test("13. Ctrl-Z suspends coder as a shell job; after fg the prompt is back with what was typed, and keys reach it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([{ model: "gpt-4.1", text: "Resumed fine." }]);
    servers.push(server);
    const bash = Bun.which("bash");
    if (!bash) return;
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: [], command: [bash, "--norc", "--noprofile", "-i"], env: { PS1: "shell$ " } });
    screens.push(screen);
    await screen.waitFor("shell$");
    const command = coderArgv({ server, args: ["--map-tokens", "0", "a.py"] }).map((a) => `'${a}'`).join(" ");
    screen.type(command);
    await screen.waitFor("/help for commands");
    await screen.waitForPrompt();
    screen.send("half typed");
    await screen.waitFor("> half typed");
    screen.send("\x1a");
    await screen.waitFor("Stopped");
    await screen.waitFor(/shell\$ $/m);
    screen.type("fg");
    await screen.waitFor(/^> half typed/m);
    screen.send(" and more\r");
    await screen.waitFor("Resumed fine.");
    expect(lastUser(mainRequests(server)[0])).toContain("half typed and more");
    await screen.waitForPrompt();
    screen.type("/exit");
    await screen.waitFor("pick it up again");
    screen.type("exit");
    expect(await screen.exited).toBe(0);
  });

  test("13. a resize redraws the multi-line input at the new width, with no ghost copies", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: "Sized." }], ["a.py"]);
    // Three lines a narrower window wraps.
    const first = `first ${"c".repeat(90)}`;
    const second = `second ${"a".repeat(90)}`;
    const third = `third ${"b".repeat(90)}`;
    screen.send(first);
    screen.send("\x1b\r");
    screen.send(second);
    screen.send("\x1b\r");
    screen.send(third);
    // Every key drawn before the window changes: a draw written for the old width that the terminal
    // reads after it has re-wrapped its lines lands on rows counted for the other width (a race
    // between the terminal and any program drawing below its output, not one this editor can win).
    await screen.waitFor(third);
    await screen.settle();
    screen.resize(60, 45);
    // Redrawn at 60 columns: the editor wraps each long word under its first word.
    await screen.waitFor(/^ {2}third$/m);
    screen.send("Z");
    await screen.waitFor(/b+Z/);
    expect(screen.lines().filter((l) => l.startsWith("> first"))).toHaveLength(1);
    expect(screen.text().match(/second/g)).toHaveLength(1);
    screen.send("\r");
    await screen.waitFor("Sized.");
    await leave(screen);
  });

  test("14 and 15. the banner names main and weak model, edit format, repository size and map budget; the exit line says how to resume", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 2\n" });
    const server = await serverWith([{ model: "gpt-4.1", text: "Hi." }]);
    servers.push(server);
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "2048", "a.py"] });
    screens.push(screen);
    await screen.waitFor("/help for commands");
    expect(screen.text()).toContain("Model: openai/gpt-4.1 with the diff edit format · weak model: openai/weak-model");
    expect(screen.text()).toContain("Git repository: 3 files · repo map: 2,048 tokens");
    await screen.waitForPrompt();
    screen.type("hello");
    await screen.waitFor("Hi.");
    await screen.waitForPrompt();
    await leave(screen);
    await screen.waitFor("pick it up again with: coder --restore-chat-history");
  });

  test("a plugin's kit.log line while a reply streams lands on a line of its own above the box, which stays whole", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const plugin = join(repo.home, "late-log.ts");
    writeFileSync(plugin, `export default (kit) => ({ apiVersion: 2, name: "late-log", onRequest: () => void setTimeout(() => kit.log.warn("late-log: a note from the plugin"), 700) });\n`);
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: LONG, chunkDelayMs: 60, chunkChars: 6 }], ["--plugin", plugin, "a.py"]);
    screen.type("write a long answer");
    await screen.waitFor("late-log: a note from the plugin");
    // The reply's end (its text wraps at the terminal's width wherever the warning split it): the usage line.
    await screen.waitFor(/Tokens: .* received/);
    await screen.waitForPrompt();
    const lines = screen.lines();
    const note = lines.filter((l) => l.includes("late-log: a note from the plugin"));
    expect(note).toEqual(["warning: late-log: a note from the plugin"]);
    // Nothing of the box was left behind in the scrollback: no stray rule or footer.
    expect(lines.filter((l) => l.includes("esc to stop"))).toEqual([]);
    expect(lines.filter((l) => /^─{10,}$/.test(l))).toEqual([]);
    await leave(screen);
  });

  test("Ctrl-D while a reply streams leaves once it is done: its edit is applied and committed first", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: `${LONG}\n${block("a.py", "x = 1\n", "x = 2\n")}`, chunkDelayMs: 60, chunkChars: 12 }], ["--yes-always", "a.py"]);
    screen.type("set x to 2");
    await screen.waitFor("The first part of a long answer.");
    screen.send("\x04");
    await screen.waitFor("coder leaves when the reply ends");
    expect(await screen.exited).toBe(0);
    expect(screen.text()).toContain("Applied edit to a.py");
    expect(screen.text()).toContain("pick it up again with: coder --restore-chat-history");
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(repo.git("status", "--porcelain")).toBe("");
    expect(mainRequests(server)).toHaveLength(1);
  });
});

test("--apply needs no model and warns about no missing key", async () => {
  if (!existsSync(BINARY)) return;
  const repo = makeRepo({ "a.py": "x = 1\n" });
  repo.write("reply.md", block("a.py", "x = 1\n", "x = 3\n"));
  const server = await serverWith([]);
  servers.push(server);
  const proc = Bun.spawn([BINARY, "--no-pretty", "--yes-always", "--apply", "reply.md", "a.py"], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config") }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  expect(await proc.exited).toBe(0);
  expect(await new Response(proc.stderr).text()).not.toContain("API key");
  expect(repo.read("a.py")).toBe("x = 3\n");
});

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("the smaller findings of issue 25 (dist/coder in a pseudo-terminal)", () => {
  test("an unknown command gets a suggestion; /chat-mode describes the formats; /model warns at once about a missing key; /report says where it goes", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([]);
    servers.push(server);
    // The key in the environment, not --api-key (which would serve any provider).
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, bare: true, args: ["--model", "openai/gpt-4.1", "--api-base", server.url, "--map-tokens", "0", "a.py"], env: { OPENAI_API_KEY: "sk-test" } });
    screens.push(screen);
    await screen.waitFor("/help for commands");
    await screen.waitForPrompt();
    screen.type("/comit");
    await screen.waitFor("Unknown command /comit. Did you mean /commit?");
    await screen.waitForPrompt();
    screen.type("/chat-mode");
    await screen.waitFor(/\* diff\s+\S+/);
    expect(screen.text()).toMatch(/ {2}whole\s+\S+/);
    await screen.waitForPrompt();
    screen.type("/model anthropic/claude-sonnet-4-5");
    await screen.waitFor("no API key for anthropic/claude-sonnet-4-5: set ANTHROPIC_API_KEY");
    await screen.waitForPrompt();
    screen.type("/report");
    await screen.waitFor("Paste this into a new issue on the issue tracker");
    await screen.waitForPrompt();
    await leave(screen);
  });

  test("a 30-line paste is folded as +30 lines; the chat files' identifiers complete before the first request", async () => {
    const repo = makeRepo({ "a.py": "def compute_invoice_total(items):\n    return sum(items)\n" });
    const { screen } = await open(repo, [], ["a.py"]);
    screen.paste(`${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")}\n`);
    await screen.waitFor("[paste #1 +30 lines]");
    screen.send("\x15");
    await screen.waitForPrompt();
    screen.send("fix compute_inv");
    await screen.waitFor("compute_invoice_total");
    screen.send("\x15");
    screen.send("\x1b");
    await screen.waitForPrompt();
    await leave(screen);
  });

  test("/editor without $VISUAL or $EDITOR uses vi", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const bin = join(repo.home, "bin");
    await Bun.write(join(bin, "vi"), "#!/bin/sh\nprintf 'written in vi\\n' > \"$1\"\n");
    Bun.spawnSync(["chmod", "+x", join(bin, "vi")]);
    const { screen } = await open(repo, [], ["a.py"], { env: { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` } });
    screen.type("/editor");
    await screen.waitFor("The message is in the prompt");
    await screen.waitFor("> written in vi");
    screen.send("\x15");
    await screen.waitForPrompt();
    await leave(screen);
  });

  test("/copy with no clipboard tool sends the reply to the terminal by OSC 52", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const bin = join(repo.home, "bin");
    for (const tool of ["git", "sh"]) {
      const found = Bun.which(tool);
      if (found) Bun.spawnSync(["sh", "-c", `mkdir -p '${bin}' && ln -s '${found}' '${join(bin, tool)}'`]);
    }
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: "Copy me." }], ["a.py"], { env: { PATH: bin } });
    screen.type("hello");
    await screen.waitFor("Copy me.");
    await screen.waitForPrompt();
    screen.type("/copy");
    await screen.waitFor("by OSC 52");
    expect(screen.raw).toContain(`\x1b]52;c;${Buffer.from("Copy me.").toString("base64")}\x07`);
    await leave(screen);
  });
});

test("--test on a pipe keeps a test runner's progress dots on one line, and prints its output once", async () => {
  if (!existsSync(BINARY)) return;
  const repo = makeRepo({ "a.py": "x = 1\n" });
  const server = await serverWith([]);
  servers.push(server);
  const proc = Bun.spawn([BINARY, "--model", "openai/gpt-4.1", "--api-key", "x", "--api-base", server.url, "--test", "--test-cmd", "printf .; sleep 0.1; printf .; sleep 0.1; printf .; echo ' 3 passed'"], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config") }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  expect(await proc.exited).toBe(0);
  const stdout = await new Response(proc.stdout).text();
  expect(stdout).toContain("\n... 3 passed\n");
  expect(stdout.match(/^\.\.\. 3 passed$/gm)).toHaveLength(1);
  expect(stdout).toContain("Tests passed.");
});
