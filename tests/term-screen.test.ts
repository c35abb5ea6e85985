// The interactive terminal as a person sees it: the real dist/coder in a pseudo-terminal,
// its screen read through a headless xterm, against the fake server. Pastes, the spinner,
// highlighted code, tables, diffs after edits, one-key confirmations, Ctrl-C keeping a
// partial answer, and NO_COLOR.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeServer } from "./support/fake-server.ts";
import { SCRIPT, type Screen, startScreen } from "./support/screen.ts";
import { BINARY, block, lastUser, mainRequests, makeRepo, removeRepos, type Repo, serverWith } from "./engine-harness.ts";

const servers: FakeServer[] = [];
const screens: Screen[] = [];
afterEach(async () => {
  for (const s of screens.splice(0)) s.proc.kill();
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

async function open(repo: Repo, steps: Parameters<typeof serverWith>[0], args: string[], env?: Record<string, string>) {
  const server = await serverWith(steps);
  servers.push(server);
  const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", ...args], env });
  screens.push(screen);
  await screen.waitFor("/help for commands");
  await screen.waitForPrompt();
  return { server, screen };
}

async function leave(screen: Screen): Promise<void> {
  screen.type("/exit");
  expect(await screen.exited).toBe(0);
}

const remembered = (repo: Repo) => (existsSync(join(repo.root, ".coder", "gate.json")) ? readFileSync(join(repo.root, ".coder", "gate.json"), "utf8") : "");

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("the terminal (dist/coder, screen read through xterm)", () => {
  test("a three-line bracketed paste is one message: exactly one request, with all three lines", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: "One request." }], ["a.py"]);
    screen.paste('Traceback (most recent call last):\n  File "a.py", line 1\nNameError: name "y" is not defined');
    await screen.waitFor('NameError: name "y" is not defined');
    screen.send("\r");
    await screen.waitFor("One request.");
    await leave(screen);
    expect(mainRequests(server).length).toBe(1);
    expect(lastUser(mainRequests(server)[0])).toContain('Traceback (most recent call last):\n  File "a.py", line 1\nNameError');
  });

  test("a long paste is folded on the prompt and sent whole", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: "Read it all." }], ["a.py"]);
    const lines = Array.from({ length: 42 }, (_, i) => `log line ${i + 1}`);
    screen.paste(lines.join("\n"));
    await screen.waitFor("[paste #1 +42 lines]");
    screen.send("\r");
    await screen.waitFor("Read it all.");
    await leave(screen);
    expect(lastUser(mainRequests(server)[0])).toContain(`log line 1\nlog line 2\n`);
    expect(lastUser(mainRequests(server)[0])).toContain("log line 42");
  });

  test("a spinner with the model's name and the seconds shows while the model has not answered", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: "Finally.", delayMs: 2500 }], ["a.py"]);
    screen.type("think hard");
    await screen.waitFor(/Waiting for gpt-4\.1 · [12] s/);
    await screen.waitFor("Finally.");
    // Erased once the reply came: the reply is never drawn over.
    expect(screen.text()).not.toContain("Waiting for");
    await leave(screen);
  });

  test("a reply renders as markdown: a Python block in several colours, a table as a table", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const reply = [
      "## The fix",
      "",
      "| file | change |",
      "|------|--------|",
      "| a.py | rate |",
      "",
      "```python",
      "def discount(price: float) -> float:",
      "    return round(price * 0.9, 2)",
      "```",
      "",
    ].join("\n");
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: reply }], ["a.py"]);
    screen.type("explain");
    await screen.waitFor("Tokens:");
    expect(screen.text()).toContain("│ a.py │ rate   │");
    expect(screen.text()).toContain("┌──────┬────────┐");
    expect(screen.text()).not.toContain("|------|");
    expect(screen.coloursOf("def discount").size).toBeGreaterThanOrEqual(3);
    expect(screen.coloursOf("return round").size).toBeGreaterThanOrEqual(2);
    await leave(screen);
  });

  test("an edit in the tool format shows its coloured diff after it is applied", async () => {
    const repo = makeRepo({ "shop/cart.py": "def total(items):\n    return sum(items)\n" });
    const edit = { name: "edit_file", arguments: { path: "shop/cart.py", search: "    return sum(items)\n", replace: "    return round(sum(items), 2)\n" } };
    const { screen } = await open(repo, [{ model: "gpt-4.1", toolCalls: [edit] }, { model: "gpt-4.1", text: "Done." }], ["--edit-format", "tool", "--yes-always", "shop/cart.py"]);
    screen.type("round the total");
    await screen.waitFor("Applied edit to shop/cart.py");
    await screen.waitFor("+    return round(sum(items), 2)");
    expect(screen.text()).toContain("-    return sum(items)");
    expect(screen.coloursOf("+    return round").has("default")).toBe(false);
    await leave(screen);
    expect(repo.read("shop/cart.py")).toContain("round(sum(items), 2)");
  });

  test("--no-show-diffs hides the diff", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") }], ["--no-show-diffs", "--yes-always", "a.py"]);
    screen.type("two");
    await screen.waitFor("Applied edit to a.py");
    await screen.waitFor(/Commit [0-9a-f]{7}/);
    expect(screen.text()).not.toContain("+x = 2");
    await leave(screen);
  });

  // Each answer by its key: y, n, a (the rest of the group too), s (skip the rest), d (remembered).
  const twoFiles = `${block("b.py", "b = 1\n", "b = 2\n")}\n${block("c.py", "c = 1\n", "c = 2\n")}`;
  for (const [key, expected] of [
    ["y", { b: "b = 2\n", c: "c = 2\n", asked: 2 }],
    ["n", { b: "b = 1\n", c: "c = 2\n", asked: 2 }],
    ["a", { b: "b = 2\n", c: "c = 2\n", asked: 1 }],
    ["s", { b: "b = 1\n", c: "c = 1\n", asked: 1 }],
    ["d", { b: "b = 1\n", c: "c = 2\n", asked: 2 }],
  ] as const) {
    test(`the confirmation takes one keystroke: "${key}"`, async () => {
      const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n" });
      const { screen } = await open(repo, [{ model: "gpt-4.1", text: twoFiles }, { model: "gpt-4.1", text: "Understood.", repeat: true }], ["a.py"]);
      screen.type("edit b and c");
      await screen.waitFor("Allow edits to b.py, which is not in the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: ");
      screen.send(key);
      if (expected.asked === 2) {
        await screen.waitFor("Allow edits to c.py, which is not in the chat?");
        screen.send("y");
      }
      await screen.waitFor(/Tokens:[^\n]*\n(.|\n)*>\s*$/);
      // A declined edit is skipped, not reflected: with nothing applied, the turn ends at the last "Skipped".
      await screen.waitFor(expected.b === "b = 2\n" || expected.c === "c = 2\n" ? /Commit [0-9a-f]{7}/ : "Skipped the edit to c.py");
      expect(screen.text().split("\n").filter((l) => l.includes("Allow edits to c.py")).length).toBe(expected.asked - 1);
      const label = { y: "Yes", n: "No", a: "All", s: "Skip all", d: "Don't ask again" }[key];
      expect(screen.text()).toContain(`[Yes]: ${label}`);
      await leave(screen);
      expect(repo.read("b.py")).toBe(expected.b);
      expect(repo.read("c.py")).toBe(expected.c);
      expect(remembered(repo).includes("edit:b.py")).toBe(key === "d");
      // The transcript records each answer as given.
      expect(readFileSync(join(repo.root, ".coder", "chat.history.md"), "utf8")).toContain(`> Allow edits to b.py, which is not in the chat? ${key === "y" || key === "a" ? "Yes" : "No"}`);
    });
  }

  test("keys typed before a confirmation do not answer it; Esc answers No", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "b = 1\n" });
    const slow = { model: "gpt-4.1", text: `Editing b.\n${block("b.py", "b = 1\n", "b = 2\n")}`, chunkDelayMs: 150, chunkChars: 4 };
    const { server, screen } = await open(repo, [slow, { model: "gpt-4.1", text: "Fine.", repeat: true }], ["a.py"]);
    screen.type("edit b");
    await server.waitForChat(1);
    await screen.waitFor("Editing b.");
    // "d⏎" would be Don't ask again, "/ls⏎" the old menu's type-ahead: typed while the reply streams.
    screen.send("d\r/ls\r");
    await screen.waitFor("(D)on't ask again [Yes]: ");
    await Bun.sleep(300);
    expect(screen.text()).not.toMatch(/\[Yes\]: \S/);
    screen.send("\x1b");
    await screen.waitFor("[Yes]: No");
    await screen.waitFor("Skipped the edit to b.py");
    await screen.waitForPrompt();
    await leave(screen);
    expect(repo.read("b.py")).toBe("b = 1\n");
    expect(remembered(repo)).not.toContain("edit:b.py");
    expect(readFileSync(join(repo.root, ".coder", "chat.history.md"), "utf8")).toContain("> Allow edits to b.py, which is not in the chat? No");
  });

  test("Ctrl-C mid-stream keeps the question and the partial answer: \"continue\" sends them", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const long = `The first part of a long answer. ${"More words follow here. ".repeat(60)}`;
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: long, chunkDelayMs: 100, chunkChars: 6 }, { model: "gpt-4.1", text: "Continuing." }], ["a.py"]);
    screen.type("write a long answer");
    await screen.waitFor("The first part of a long answer.");
    screen.send("\x03");
    await screen.waitFor(/stopped: \d+ tokens kept; nothing applied · say "continue" to resume/);
    screen.type("continue");
    await screen.waitFor("Continuing.");
    await leave(screen);
    const second = mainRequests(server)[1];
    const messages = second.messages as { role: string; content: string }[];
    const asked = messages.findIndex((m) => m.role === "user" && String(m.content).includes("write a long answer"));
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(messages[asked + 1]?.role).toBe("assistant");
    expect(messages[asked + 1]?.content).toContain("The first part of a long answer.");
    expect(messages[asked + 1]?.content).toContain("(interrupted by the user)");
    expect(lastUser(second)).toContain("continue");
  });

  test("NO_COLOR: a one-shot run on a terminal writes no escape sequence; the REPL no colour", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([{ model: "gpt-4.1", text: "# Plain\n\n**not bold** and `code`\n```python\ndef f(): pass\n```\n" }, { model: "gpt-4.1", text: "Again *plain*." }]);
    servers.push(server);
    const once = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", "-m", "hello", "a.py"], env: { NO_COLOR: "1" } });
    screens.push(once);
    expect(await once.exited).toBe(0);
    await once.waitFor("Tokens:");
    expect(once.raw).not.toContain("\x1b");
    const repl = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", "a.py"], env: { NO_COLOR: "1" } });
    screens.push(repl);
    await repl.waitFor("/help for commands");
    repl.type("again");
    await repl.waitFor("Again *plain*.");
    await leave(repl);
    // No colour: the line editor's cursor is drawn in reverse video (7), which is not a colour.
    expect(repl.raw).not.toMatch(/\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/);
  });

  test("Alt-Enter inserts a newline; a {tag … tag} block is one message; --multiline swaps Enter and Alt-Enter", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const steps = [{ model: "gpt-4.1", text: "First." }, { model: "gpt-4.1", text: "Second." }];
    const { server, screen } = await open(repo, steps, ["a.py"]);
    screen.send("line one\x1b\rline two\r");
    await screen.waitFor("First.");
    await screen.waitForPrompt();
    screen.type("{py");
    await screen.waitForPrompt();
    screen.type("a } inside");
    await screen.waitForPrompt();
    screen.type("py}");
    await screen.waitFor("Second.");
    await leave(screen);
    const [first, second] = mainRequests(server).map(lastUser);
    expect(first).toContain("line one\nline two");
    expect(second).toContain("a } inside");
    expect(second).not.toContain("py}");

    const again = await open(repo, [{ model: "gpt-4.1", text: "Third." }], ["--multiline", "a.py"]);
    again.screen.send("alpha\rbeta\x1b\r");
    await again.screen.waitFor("Third.");
    await again.screen.waitForPrompt();
    // Enter is a newline now: Alt-Enter sends /exit.
    again.screen.send("/exit\x1b\r");
    expect(await again.screen.exited).toBe(0);
    expect(lastUser(mainRequests(again.server)[0])).toContain("alpha\nbeta");
  });

  test("!cmd runs the command with its output live (stdin is the terminal's); Ctrl-R finds an earlier message", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const { server, screen } = await open(repo, [{ model: "gpt-4.1", text: "Noted.", repeat: true }], ["a.py"]);
    screen.type("!read name; echo hello-$name");
    await screen.waitFor("$ read name; echo hello-$name");
    screen.type("world");
    await screen.waitFor("hello-world");
    // The output offer: not this time.
    await screen.waitFor("Add the output to the chat?");
    screen.send("n");
    await screen.waitFor(/\[Yes\]: No\n>/);
    screen.type("remember the pricing rule");
    await screen.waitFor("Noted.");
    await screen.waitForPrompt();
    screen.send("\x12pricing");
    await screen.waitFor("(reverse-i-search)`pricing': remember the pricing rule");
    screen.send("\r\r");
    await screen.waitFor(/Noted\.(.|\n)*Noted\./);
    await leave(screen);
    expect(mainRequests(server).map(lastUser).filter((m) => m.includes("remember the pricing rule")).length).toBe(2);
    // The transcript holds the command, not only the conversation.
    expect(readFileSync(join(repo.root, ".coder", "chat.history.md"), "utf8")).toContain("> /run read name; echo hello-$name");
  });

  test("the trust question takes one key too, default No", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", ".coder.json": '{ "lintCmd": "true" }\n' });
    const server = await serverWith([]);
    servers.push(server);
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", "a.py"] });
    screens.push(screen);
    // The question shows the command that would run, not only the key's name.
    await screen.waitFor("(it runs code on this machine):");
    await screen.waitFor(/lintCmd: true\n?\s*Trust/);
    await screen.waitFor(/\? \(Y\)es\/\(N\)o \[No\n?\]: ?$/m);
    screen.send("y");
    await screen.waitForPrompt();
    expect(screen.text()).toMatch(/\[No\n?\]:\s*Yes/);
    await leave(screen);
    expect(readFileSync(join(repo.home, ".config", "coder", "trust.json"), "utf8")).toContain('"trusted": true');
  });

  test("/editor composes the message in $EDITOR and puts it in the prompt; --vim edits in normal mode", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const editor = join(repo.home, "fake-editor.sh");
    await Bun.write(editor, "#!/bin/sh\nprintf 'written in the editor\\nsecond line\\n' > \"$1\"\n");
    Bun.spawnSync(["chmod", "+x", editor]);
    const steps = [{ model: "gpt-4.1", text: "From the editor." }, { model: "gpt-4.1", text: "Vi done." }];
    const { server, screen } = await open(repo, steps, ["--vim", "a.py"], { EDITOR: editor });
    screen.type("/editor");
    await screen.waitFor("The message is in the prompt");
    await screen.waitFor("second line");
    screen.send("\r");
    await screen.waitFor("From the editor.");
    await screen.waitForPrompt();
    // vi: type, Esc, 0 (line start), x (delete a char), A (append), Enter.
    // Each key once the screen shows the last one's effect (a lone Esc is told from Alt+key by the pause after it).
    for (const [key, shown] of [
      ["Xfix it", /^> Xfix it/m],
      ["\x1b", /^: Xfix it/m],
      ["0", /^: Xfix it/m],
      ["x", /^: fix it/m],
      ["A", /^> fix it/m],
      [" now\r", "Vi done."],
    ] as const) {
      screen.send(key);
      await screen.waitFor(shown);
    }
    await screen.waitFor("Vi done.");
    await leave(screen);
    const [first, second] = mainRequests(server).map(lastUser);
    expect(first).toContain("written in the editor\nsecond line");
    expect(second).toContain("fix it now");
    expect(second).not.toContain("Xfix");
  });

  test("lint output shows live after a \"Linting…\" line, and is not printed twice", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const lint = `sh -c 'echo lint-says-hi; exit 0' --`;
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") }], ["--yes-always", "--lint-cmd", lint, "a.py"]);
    screen.type("two");
    await screen.waitFor("Lint passed.");
    expect(screen.text()).toContain("Linting… (sh -c 'echo lint-says-hi; exit 0' -- a.py)");
    expect(screen.text().split("lint-says-hi").length - 1).toBe(2);
    await leave(screen);
  });
});

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("what the terminal says about failures, retries and cost", () => {
  test("a SEARCH that does not match is said for a person, with the closest lines", async () => {
    const repo = makeRepo({ "a.py": "def total(items):\n    s = 0\n    return s\n" });
    const wrong = block("a.py", "def total(things):\n    return 0\n", "def total(items):\n    return 1\n");
    const { screen } = await open(repo, [{ model: "gpt-4.1", text: wrong }, { model: "gpt-4.1", text: "Sorry." }], ["--yes-always", "a.py"]);
    screen.type("change total");
    await screen.waitFor("Could not find the SEARCH text in a.py; closest lines 1–");
    await screen.waitFor("1 │ def total(items):");
    expect(screen.text()).not.toContain("failed: not-found");
    await screen.waitFor("Sorry.");
    await leave(screen);
  });

  test("a stream cut mid-reply and retried marks its discarded text", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const steps = [{ model: "gpt-4.1", text: "This first try is cut off halfway through", cutAfter: 4, chunkChars: 4 }, { model: "gpt-4.1", text: "The whole answer." }];
    const { screen } = await open(repo, steps, ["a.py"]);
    screen.type("hello");
    await screen.waitFor("The whole answer.");
    expect(screen.text()).toMatch(/This first t(.|\n)*— the connection dropped, retrying \(attempt \d\); the text above is void —\nThe whole answer\./);
    await leave(screen);
  });

  test("a model without prices says \"Cost unknown\", not $0.00", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const server = await serverWith([{ model: "my-local-model", text: "Free?" }]);
    servers.push(server);
    const screen = startScreen({ cwd: repo.root, home: repo.home, server, args: ["--map-tokens", "0", "--model", "openai/my-local-model", "a.py"] });
    screens.push(screen);
    await screen.waitForPrompt();
    screen.type("hi");
    await screen.waitFor("Cost unknown (no prices for this model)");
    expect(screen.text()).not.toContain("$0.00");
    await leave(screen);
  });
});

test.skipIf(!existsSync(BINARY))("coder --json … | head -1 ends quietly: no EPIPE error", async () => {
  const repo = makeRepo({ "a.py": "x = 1\n" });
  const server = await serverWith([{ model: "gpt-4.1", text: "Many words. ".repeat(400), chunkChars: 4 }]);
  servers.push(server);
  const command = `'${BINARY}' --model openai/gpt-4.1 --api-base ${server.url} --api-key sk-test --map-tokens 0 --json -m hi a.py | head -1`;
  // Not spawnSync: the fake server answers from this process.
  const proc = Bun.spawn(["bash", "-c", command], { cwd: repo.root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config") }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(JSON.parse(stdout.trim()).type).toBe("start");
  expect(stderr).toBe("");
});
