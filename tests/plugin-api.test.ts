// Plugin API version 2 end to end, through `dist/coder --plugin FILE`: a plugin's own option in
// --help, the config schema, `config show` and /settings with provenance; its subcommand; its
// onCommit trailer in git log (and a refused commit); its onEdit veto shown with nothing written;
// onRequest masking what is sent; setup and dispose at exit and on SIGTERM.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeServer, type FakeServer, type FakeStep } from "./support/fake-server.ts";
import { BIN, EXAMPLES, coder, committedSandbox, git, requireBinary, type Sandbox } from "./support/kernel.ts";

setDefaultTimeout(60_000);
beforeAll(requireBinary);

/** A sandbox with one committed file and the example plugins (and any others given) beside the repository. */
function setup(extra: Record<string, string> = {}): Sandbox & { plugin: (file: string) => string } {
  const examples = Object.fromEntries(["ticket-flag.ts", "commit-trailer.ts", "redact-secrets.ts"].map((file) => [file, readFileSync(join(EXAMPLES, file), "utf8")]));
  return committedSandbox({ "a.txt": "hello\n" }, { ...examples, ...extra });
}

const model = (server: FakeServer) => ["--model", "openai/gpt-4.1", "--api-base", server.url, "--api-key", "sk-test", "--map-tokens", "0", "--no-pretty", "--edit-format", "whole"];
const wholeReply = (text: string): FakeStep => ({ text: `a.txt\n\`\`\`\n${text}\n\`\`\`\n` });

describe("a plugin's own option", () => {
  test("is a flag in --help, a key of the config schema, and shows in config show and /settings with where it came from", async () => {
    const s = setup();
    const p = ["--plugin", s.plugin("ticket-flag.ts")];
    const help = await coder([...p, "--help"], { cwd: s.repo, env: s.env });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--ticket-prefix PREFIX\s+prefix of ticket ids, e\.g\. JIRA for JIRA-123 \[default: JIRA\]/);
    expect(help.stdout).toMatch(/ticket \[TEXT\] \[--json\]\s+the ticket ids in TEXT/);
    // Without the plugin, neither exists.
    expect((await coder(["--help"], { cwd: s.repo, env: s.env })).stdout).not.toContain("ticket-prefix");

    const schema = JSON.parse((await coder([...p, "config", "schema"], { cwd: s.repo, env: s.env })).stdout) as { properties: Record<string, { type?: string; description?: string }> };
    expect(schema.properties.ticketPrefix).toEqual(expect.objectContaining({ type: "string", description: "prefix of ticket ids, e.g. JIRA for JIRA-123" }));

    writeFileSync(join(s.repo, ".coder.json"), '{\n  "ticketPrefix": "CFG"\n}\n');
    const shown = await coder([...p, "config", "show"], { cwd: s.repo, env: s.env });
    expect(shown.stdout).toMatch(/ticketPrefix\s+"CFG"\s+\.coder\.json:2/);
    const json = JSON.parse((await coder([...p, "--json", "config", "show"], { cwd: s.repo, env: { ...s.env, CODER_TICKET_PREFIX: "ENV" } })).stdout);
    expect(json.options.ticketPrefix).toEqual({ value: "ENV", source: "env CODER_TICKET_PREFIX" });

    const server = await startFakeServer([]);
    try {
      const settings = await coder([...p, ...model(server), "--ticket-prefix", "FLAG", "-m", "/settings"], { cwd: s.repo, env: s.env });
      expect(settings.code).toBe(0);
      expect(settings.stdout).toMatch(/ticketPrefix\s+FLAG\s+\(flag --ticket-prefix\)/);
    } finally {
      await server.stop();
    }
  });

  test("a typo of it is the usual usage or config error, its suggestion drawn from every plugin's keys", async () => {
    const s = setup();
    const p = ["--plugin", s.plugin("ticket-flag.ts")];
    const flag = await coder([...p, "--ticket-prefx", "X", "ticket"], { cwd: s.repo, env: s.env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--ticket-prefx'");
    writeFileSync(join(s.repo, ".coder.json"), '{ "ticketPrefx": "X" }\n');
    const key = await coder([...p, "ticket", "JIRA-1"], { cwd: s.repo, env: s.env });
    expect(key.code).toBe(2);
    expect(key.stderr).toContain('.coder.json:1: unknown key "ticketPrefx" (did you mean "ticketPrefix"?)');
  });

  test("its subcommand runs with its own arguments, exit code and --json document", async () => {
    const s = setup();
    const p = ["--plugin", s.plugin("ticket-flag.ts")];
    const found = await coder([...p, "--ticket-prefix", "ABC", "ticket", "fix", "ABC-7", "and", "ABC-9", "--json"], { cwd: s.repo, env: s.env });
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toEqual({ prefix: "ABC", ids: ["ABC-7", "ABC-9"] });
    const none = await coder([...p, "ticket", "nothing here"], { cwd: s.repo, env: s.env });
    expect(none.code).toBe(1);
    expect(none.stdout).toBe("no JIRA-NNN ticket id found\n");
  });
});

describe("hooks", () => {
  test("onCommit adds its trailer to coder's commit, or refuses the commit and says why", async () => {
    const s = setup();
    git(s.repo, ["checkout", "-q", "-b", "feature/JIRA-12-login"], s.env);
    const server = await startFakeServer([wholeReply("hello world"), { text: "feat: greet the world" }]);
    try {
      const r = await coder(["--plugin", s.plugin("commit-trailer.ts"), ...model(server), "-m", "greet the world", "a.txt"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      const message = git(s.repo, ["log", "-1", "--format=%B"], s.env);
      expect(message).toContain("feat: greet the world");
      // One trailer block, as git parses it: the plugin's trailer joined to coder's attribution.
      expect(message).toMatch(/\n\nRefs: JIRA-12\nCo-authored-by: coder \(openai\/gpt-4\.1\)/);
    } finally {
      await server.stop();
    }

    git(s.repo, ["checkout", "-q", "-b", "no-ticket"], s.env);
    const again = await startFakeServer([wholeReply("hello again"), { text: "feat: again" }]);
    try {
      const head = git(s.repo, ["rev-parse", "HEAD"], s.env);
      const r = await coder(["--plugin", s.plugin("commit-trailer.ts"), ...model(again), "--require-ticket", "-m", "again", "a.txt"], { cwd: s.repo, env: s.env });
      expect(r.stdout + r.stderr).toContain('plugin commit-trailer refused the commit: branch "no-ticket" names no ticket');
      expect(readFileSync(join(s.repo, "a.txt"), "utf8")).toBe("hello again\n");
      expect(git(s.repo, ["rev-parse", "HEAD"], s.env)).toBe(head);
      // Refused, not failed: nothing is left to recover at the next start.
      expect(existsSync(join(s.repo, ".coder", "journal.json"))).toBe(false);
    } finally {
      await again.stop();
    }
  });

  test("onEdit's veto is shown with its plugin and reason, and nothing is written", async () => {
    const veto = `export default { apiVersion: 2, name: "freeze", onEdit: ({ path }) => (path.endsWith(".txt") ? { veto: "text files are frozen" } : undefined) };\n`;
    const s = setup({ "freeze.ts": veto });
    const server = await startFakeServer([wholeReply("changed")]);
    try {
      const r = await coder(["--plugin", s.plugin("freeze.ts"), ...model(server), "--max-reflections", "0", "-m", "change it", "a.txt"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toContain("plugin freeze refused the change to a.txt: text files are frozen");
      expect(readFileSync(join(s.repo, "a.txt"), "utf8")).toBe("hello\n");
      expect(git(s.repo, ["diff", "--name-only"], s.env)).toBe("");
      expect(git(s.repo, ["log", "--oneline"], s.env).trim().split("\n")).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  test("onRequest masks secrets in what is sent", async () => {
    const s = setup();
    const server = await startFakeServer([{ text: "Noted." }]);
    try {
      const secret = "sk-abcdefghijklmnopqrstuvwxyz012345";
      const r = await coder(["--plugin", s.plugin("redact-secrets.ts"), ...model(server), "--edit-format", "ask", "-m", `my key is ${secret}, keep it`], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      const sent = JSON.stringify(server.chatBodies()[0].messages);
      expect(sent).toContain("my key is [REDACTED], keep it");
      expect(sent).not.toContain(secret);
    } finally {
      await server.stop();
    }
  });

  test("a throwing hook is reported with its plugin and hook, and the session goes on", async () => {
    const broken = `export default { apiVersion: 2, name: "broken", onReply() { throw new Error("boom"); } };\n`;
    const s = setup({ "broken.ts": broken });
    const server = await startFakeServer([{ text: "Hello." }]);
    try {
      const r = await coder(["--plugin", s.plugin("broken.ts"), ...model(server), "--edit-format", "ask", "-m", "hi"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`plugin broken (${s.plugin("broken.ts")}): onReply failed: boom`);
      expect(r.stdout).toContain("Hello.");
    } finally {
      await server.stop();
    }
  });
});

describe("typed tool parameters", () => {
  test("a zod declaration is the JSON Schema sent, a mismatch goes back to the model naming the field, and call gets the parsed value", async () => {
    const s = setup();
    writeFileSync(join(s.repo, "a.txt"), "one\ntwo\nthree\n");
    git(s.repo, ["commit", "-qam", "three lines"], s.env);
    const server = await startFakeServer([
      { toolCalls: [{ id: "call_bad", name: "read_lines", arguments: { path: 7 } }] },
      { toolCalls: [{ id: "call_ok", name: "read_lines", arguments: { path: "a.txt", from: 2 } }] },
      { text: "It has three lines." },
    ]);
    try {
      // Loaded from examples/, where zod resolves through the repository's node_modules.
      const r = await coder(["--plugin", join(EXAMPLES, "typed-tool.ts"), ...model(server), "--edit-format", "ask", "-m", "how long is a.txt?"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      const bodies = server.chatBodies();
      const tool = bodies[0].tools.find((t: { function: { name: string } }) => t.function.name === "read_lines").function;
      expect(tool.parameters).toEqual({
        type: "object",
        properties: {
          path: { type: "string", description: "repository-relative path of a text file" },
          from: expect.objectContaining({ type: "integer", minimum: 1, default: 1, description: "first line to show (1-based)" }),
          count: expect.objectContaining({ type: "integer", minimum: 1, maximum: 200, default: 20 }),
        },
        required: ["path"],
      });
      const answer = (body: { messages: { role: string; tool_call_id?: string; content: string }[] }, id: string) => body.messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content;
      expect(answer(bodies[1], "call_bad")).toBe("Not run: the arguments do not match the tool's parameters: path: Invalid input: expected string, received number.");
      // `count` took its declared default: every line from the second.
      expect(answer(bodies[2], "call_ok")).toBe("2: two\n3: three\n4: ");
      expect(r.stdout).toContain("It has three lines.");
    } finally {
      await server.stop();
    }
  });
});

describe("setup and dispose", () => {
  const lifecycle = (log: string) =>
    `import { appendFileSync } from "node:fs";\n` +
    `const log = (what) => appendFileSync(${JSON.stringify(log)}, what + "\\n");\n` +
    `export default { apiVersion: 2, name: "lifecycle", setup: () => log("setup"), dispose: async () => { await new Promise((r) => setTimeout(r, 50)); log("dispose"); } };\n`;

  test("setup runs before the first request and dispose at exit", async () => {
    const s = setup();
    const log = join(s.home, "lifecycle.log");
    writeFileSync(join(s.repo, "..", "plugins", "lifecycle.ts"), lifecycle(log));
    const server = await startFakeServer([{ text: "Hello." }]);
    try {
      const r = await coder(["--plugin", join(s.repo, "..", "plugins", "lifecycle.ts"), ...model(server), "--edit-format", "ask", "-m", "hi"], { cwd: s.repo, env: s.env });
      expect(r.code).toBe(0);
      expect(readFileSync(log, "utf8")).toBe("setup\ndispose\n");
    } finally {
      await server.stop();
    }
  });

  test("dispose runs on SIGTERM, and coder exits 143", async () => {
    const s = setup();
    const log = join(s.home, "lifecycle.log");
    const file = join(s.repo, "..", "plugins", "lifecycle.ts");
    writeFileSync(file, lifecycle(log));
    const server = await startFakeServer([{ text: "Slow.", delayMs: 30_000 }]);
    try {
      const proc = Bun.spawn([BIN, "--plugin", file, ...model(server), "--edit-format", "ask", "-m", "hi"], { cwd: s.repo, env: s.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      await server.waitForChat(1);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(143);
      expect(readFileSync(log, "utf8")).toBe("setup\ndispose\n");
    } finally {
      await server.stop();
    }
  });
});

describe("kit.state", () => {
  test("a plugin's write to a .coder/web page the repository planted as a link is refused: the outside file is untouched, the user hears why", async () => {
    const saver = `export default (kit) => ({ apiVersion: 2, name: "saver", commands: [{ name: "save-page", summary: "save a page", run: (_arg, s) => { try { kit.state.write("web/page.md", "# fetched\\n"); s.print("saved"); } catch (error) { s.warn(error.message); } } }] });\n`;
    const s = setup({ "saver.ts": saver });
    const outside = join(s.home, "authorized_keys");
    writeFileSync(outside, "ssh-ed25519 AAAA mine\n");
    mkdirSync(join(s.repo, ".coder", "web"), { recursive: true });
    symlinkSync(outside, join(s.repo, ".coder", "web", "page.md"));
    const server = await startFakeServer([]);
    try {
      const r = await coder(["--plugin", s.plugin("saver.ts"), ...model(server), "-m", "/save-page"], { cwd: s.repo, env: s.env });
      expect(r.stdout + r.stderr).toContain(".coder/web/page.md is a symlink; coder never writes its records through a link (delete it)");
      expect(r.stdout).not.toContain("saved");
      expect(readFileSync(outside, "utf8")).toBe("ssh-ed25519 AAAA mine\n");
      expect(lstatSync(join(s.repo, ".coder", "web", "page.md")).isSymbolicLink()).toBe(true);
    } finally {
      await server.stop();
    }
  });
});

describe("kit.ui", () => {
  const asking = `export default (kit) => ({ apiVersion: 2, name: "asker", onRequest: async () => { kit.log.warn("answer: " + (await kit.ui.confirm("Send it?", { key: "asker" }))); } });\n`;

  test("confirm is answered by the gate: yes under --yes-always, no when nobody can answer", async () => {
    const s = setup({ "asker.ts": asking });
    const server = await startFakeServer({ steps: [], whenEmpty: { text: "Hello." } });
    try {
      const yes = await coder(["--plugin", s.plugin("asker.ts"), ...model(server), "--edit-format", "ask", "--yes-always", "-m", "hi"], { cwd: s.repo, env: s.env });
      expect(yes.stderr).toContain("answer: true");
      const no = await coder(["--plugin", s.plugin("asker.ts"), ...model(server), "--edit-format", "ask", "-m", "hi"], { cwd: s.repo, env: s.env });
      expect(no.stderr).toContain("answer: false");
      // The question itself was said, as every unanswerable question is.
      expect(no.stdout + no.stderr).toContain("Send it?");
    } finally {
      await server.stop();
    }
  });

  test("select and input answer the declared default (or null) under --yes-always and when nobody can answer", async () => {
    const picking = `export default (kit) => ({ apiVersion: 2, name: "picker", onRequest: async () => {
  const depth = await kit.ui.select("Depth?", ["quick", "thorough"], { default: "thorough" });
  const none = await kit.ui.select("Colour?", ["red", "blue"]);
  const title = await kit.ui.input("Title?", { default: "Update" });
  const free = await kit.ui.input("Anything else?");
  kit.log.warn("answers: " + JSON.stringify([depth, none, title, free]));
} });\n`;
    const s = setup({ "picker.ts": picking });
    const server = await startFakeServer({ steps: [], whenEmpty: { text: "Hello." } });
    try {
      const yes = await coder(["--plugin", s.plugin("picker.ts"), ...model(server), "--edit-format", "ask", "--yes-always", "-m", "hi"], { cwd: s.repo, env: s.env });
      expect(yes.stderr).toContain('answers: ["thorough",null,"Update",null]');
      expect(yes.stdout + yes.stderr).not.toContain("Depth? ->");
      const nobody = await coder(["--plugin", s.plugin("picker.ts"), ...model(server), "--edit-format", "ask", "-m", "hi"], { cwd: s.repo, env: s.env });
      expect(nobody.code).toBe(0);
      expect(nobody.stderr).toContain('answers: ["thorough",null,"Update",null]');
      // Each unanswerable question is said with the answer it got.
      expect(nobody.stdout + nobody.stderr).toContain('Depth? -> "thorough" (not interactive: nobody to ask; the default)');
      expect(nobody.stdout + nobody.stderr).toContain("Anything else? -> no answer");
    } finally {
      await server.stop();
    }
  });
});
