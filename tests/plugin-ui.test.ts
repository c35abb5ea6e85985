// A plugin's kit.ui.select and kit.ui.input end to end, through `dist/coder --plugin FILE`:
// asked for real in the REPL (a pseudo-terminal, with colours and with --no-pretty) and
// answered by typing; under --yes-always and with nobody to ask (one-shot, --json), the
// declared default, said out loud unless --yes-always chose it.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeServer, type FakeServer } from "./support/fake-server.ts";
import { BIN, EXAMPLES, coder, committedSandbox, requireBinary } from "./support/kernel.ts";
import { inTerminal, SCRIPT } from "./support/pty.ts";

setDefaultTimeout(60_000);
beforeAll(requireBinary);

/** A committed repository and, beside it, the example plugin copied as a user would: /pr-title asks a select and an input. */
function setup() {
  const s = committedSandbox({ "a.txt": "hello\n" }, { "pr-title.ts": readFileSync(join(EXAMPLES, "pr-title.ts"), "utf8") });
  return { ...s, plugin: s.plugin("pr-title.ts") };
}

const model = (server: FakeServer) => ["--model", "openai/gpt-4.1", "--api-base", server.url, "--api-key", "sk-test", "--map-tokens", "0", "--edit-format", "ask"];

describe.skipIf(!SCRIPT)("kit.ui.select and kit.ui.input in the REPL (a pseudo-terminal)", () => {
  for (const pretty of [true, false]) {
    test(`the person picks a choice and types a line${pretty ? "" : " (--no-pretty)"}; Enter takes the default; Esc cancels`, async () => {
      const s = setup();
      const server = await startFakeServer([]);
      try {
        const args = [BIN, "--plugin", s.plugin, ...model(server), ...(pretty ? [] : ["--no-pretty"])];
        // Colours need NO_COLOR unset: then the one-key and raw-line prompts; without, plain lines.
        const { NO_COLOR: _, ...coloured } = s.env;
        const term = inTerminal(args, { cwd: s.repo, env: pretty ? { ...coloured, TERM: "xterm" } : { ...s.env, TERM: "dumb" } });
        await term.waitFor("> ");
        term.send("/pr-title\r");
        await term.waitFor("The Conventional Commits type.");
        await term.waitFor("Kind of change?");
        await term.waitFor("3. chore");
        await term.waitFor("Choose 1-3 [fix]: ");
        // Not a choice: said, and asked again; then the person answers with a number.
        term.send("9\r");
        await term.waitFor("is not one of the choices");
        await term.waitFor("Choose 1-3 [fix]: ");
        term.send("1\r");
        await term.waitFor("Summary? [update the docs] ");
        term.send("Fix the cart\r");
        await term.waitFor("Title: feat: Fix the cart");
        // Enter alone takes each default.
        await term.waitFor("> ");
        term.send("/pr-title\r");
        await term.waitFor("Choose 1-3 [fix]: ");
        term.send("\r");
        await term.waitFor("Summary? [update the docs] ");
        term.send("\r");
        await term.waitFor("Title: fix: update the docs");
        if (pretty) {
          // A name answers too, and Esc cancels a question: null.
          await term.waitFor("> ");
          term.send("/pr-title\r");
          await term.waitFor("Choose 1-3 [fix]: ");
          term.send("cho\r");
          await term.waitFor("Summary? [update the docs] ");
          term.send("\x1b");
          await term.waitFor("No title: cancelled.");
        }
        await term.waitFor("> ");
        term.send("/exit\r");
        expect(await term.proc.exited).toBe(0);
        // No question was answered for the person.
        expect(term.output).not.toContain("the default)");
      } finally {
        await server.stop();
      }
    });
  }
});

describe("kit.ui.select and kit.ui.input with nobody to ask", () => {
  test("--yes-always takes the declared defaults without asking or saying so", async () => {
    const s = setup();
    const server = await startFakeServer([]);
    try {
      const r = await coder(["--plugin", s.plugin, ...model(server), "--no-pretty", "--yes-always", "-m", "/pr-title"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Title: fix: update the docs");
      expect(r.stdout + r.stderr).not.toContain("Kind of change?");
    } finally {
      await server.stop();
    }
  });

  test("one-shot and --json take the defaults and say each question with the answer it got", async () => {
    const s = setup();
    const server = await startFakeServer([]);
    try {
      const r = await coder(["--plugin", s.plugin, ...model(server), "--no-pretty", "-m", "/pr-title"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Title: fix: update the docs");
      expect(r.stdout + r.stderr).toContain('Kind of change? -> "fix" (not interactive: nobody to ask; the default)');
      expect(r.stdout + r.stderr).toContain('Summary? -> "update the docs" (not interactive: nobody to ask; the default)');
      const json = await coder(["--plugin", s.plugin, ...model(server), "--json", "-m", "/pr-title"], { cwd: s.repo, env: s.env });
      expect(json.code).toBe(0);
      const events = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string; text?: string; message?: string });
      expect(events.filter((e) => e.type === "warning").map((e) => e.message)).toEqual([
        'Kind of change? -> "fix" (not interactive: nobody to ask; the default)',
        'Summary? -> "update the docs" (not interactive: nobody to ask; the default)',
      ]);
    } finally {
      await server.stop();
    }
  });
});
