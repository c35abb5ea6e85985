// The REPL as a person uses it, on the built binary in a pseudo-terminal (util-linux
// `script`): what the screen shows for slash commands, pasted lines, multi-line input and
// its history, and a model reply carrying terminal escape sequences.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeServer } from "./support/fake-server.ts";
import { BINARY, block, lastUser, mainRequests, makeRepo, removeRepos, type Repo, serverWith } from "./engine-harness.ts";

const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));
const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

/** A REPL in a pseudo-terminal: `output` without colour codes, `raw` exactly as written. */
function startRepl(repo: Repo, server: FakeServer, args: string[], term = "dumb") {
  const argv = [BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", server.url, "--api-key", "sk-test", ...args];
  const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  // A pseudo-terminal starts 0 columns wide: give it a size, as a terminal window has.
  const proc = Bun.spawn([SCRIPT as string, "-qfec", `stty cols 120 rows 40; exec ${command}`, "/dev/null"], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), TERM: term, GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let raw = "";
  let output = "";
  let seen = 0;
  const waiters: { text: string; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const at = output.indexOf(w.text, seen);
      if (at >= 0) {
        waiters.splice(waiters.indexOf(w), 1);
        seen = at + w.text.length;
        w.resolve();
      }
    }
  };
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      const text = decoder.decode(chunk);
      raw += text;
      output += text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
      check();
    }
  })();
  return {
    proc,
    /** Resolves when the terminal's output has been read to its end. */
    reading,
    get output() {
      return output;
    },
    get raw() {
      return raw;
    },
    /** Resolves when `text` appears after everything waited for so far. */
    waitFor(text: string): Promise<void> {
      return new Promise((resolve) => {
        waiters.push({ text, resolve });
        check();
      });
    },
    /** Everything in one write, as a paste or fast typing delivers it. */
    send(text: string) {
      proc.stdin.write(text);
      proc.stdin.flush();
    },
    type(line: string) {
      this.send(`${line}\r`);
    },
  };
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("REPL as a person uses it (dist/coder in a pseudo-terminal)", () => {
  test("a reply's escape sequences and carriage returns do not reach the terminal", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const evil = "Before\n\x1b[2J\x1b[H\x1b]0;PWNED\x07Cleared \x1b[31mred\nAfter\r\rOverwrite\n";
    const s = await serverWith([{ model: "gpt-4.1", text: evil }]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("hi");
    await repl.waitFor("Tokens:");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    // Clear screen, cursor home, a window title and a colour that never resets: shown, not obeyed.
    expect(repl.raw).not.toContain("\x1b[2J");
    expect(repl.raw).not.toContain("\x1b[H");
    expect(repl.raw).not.toContain("\x1b]0;");
    expect(repl.raw).not.toContain("\x1b[31mred");
    expect(repl.output).toContain("^[[2J^[[H^[]0;PWNED^GCleared ^[[31mred");
    // A carriage return would let "Overwrite" hide "After".
    expect(repl.output).toContain("AfterOverwrite");
  });

  test("/model, /edit-format, /ask, /clear say what they did once", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    for (const [line, done] of [
      ["/model openai/gpt-4o", "Model: openai/gpt-4o"],
      ["/edit-format whole", "Edit format: whole"],
      ["/ask", "Edit format: ask"],
      ["/clear", "cleared"],
      ["/model nosuch/xyz", 'no model adapter serves "nosuch/xyz"'],
    ] as const) {
      repl.type(line);
      await repl.waitFor(done);
      await repl.waitFor("> ");
    }
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(count(repl.output, "Model: openai/gpt-4o")).toBe(1);
    expect(count(repl.output, "Edit format: whole")).toBe(1);
    expect(count(repl.output, "Edit format: ask")).toBe(1);
    expect(count(repl.output, "istory cleared")).toBe(1);
    // A built-in command's error reads as the user's mistake, not as a plugin failure.
    expect(repl.output).not.toContain("plugin commands (built-in");
  });

  test("/read-only on a chat file makes it read-only, /add makes it editable again", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("/read-only a.py");
    await repl.waitFor("it is read-only now");
    await repl.waitFor("> ");
    repl.type("/ls");
    await repl.waitFor("Read-only files:\r\n  a.py");
    await repl.waitFor("> ");
    repl.type("/add a.py");
    await repl.waitFor("it is editable now");
    await repl.waitFor("> ");
    repl.type("/ls");
    await repl.waitFor("Files in the chat (editable):\r\n  a.py");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(repl.output).not.toContain("added with --read");
  });

  test("pasted lines all run, a pasted { } block is one request", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([{ model: "gpt-4.1", text: "Got the block." }]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.send("/model\r/edit-format\r");
    await repl.waitFor("Model: openai/gpt-4.1");
    await repl.waitFor("* diff");
    await repl.waitFor("> ");
    repl.send("{\rfirst line\rsecond line\r}\r");
    await repl.waitFor("Got the block.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(lastUser(mainRequests(s)[0])).toContain("first line\nsecond line");
  });

  test("a multi-line entry recalled with Up is sent with line breaks; a typed \\n comes back as typed", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([
      { model: "gpt-4.1", text: "One." },
      { model: "gpt-4.1", text: "Two." },
      { model: "gpt-4.1", text: "Three." },
    ]);
    servers.push(s);
    // A dumb terminal has no history keys: an xterm has.
    let repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"], "xterm");
    await repl.waitFor("> ");
    repl.type('print("a\\n")');
    await repl.waitFor("One.");
    await repl.waitFor("> ");
    repl.type("{");
    await repl.waitFor("... ");
    repl.type("alpha");
    await repl.waitFor("... ");
    repl.type("beta");
    await repl.waitFor("... ");
    repl.type("}");
    await repl.waitFor("Two.");
    await repl.waitFor("> ");
    repl.send("\x1b[A"); // Up: the block
    await repl.waitFor("beta");
    repl.send("\r");
    await repl.waitFor("Three.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    const sent = mainRequests(s).map(lastUser);
    expect(sent[1]).toContain("alpha\nbeta");
    expect(sent[2]).toContain("alpha\nbeta");
    expect(sent[2]).not.toContain("\r");

    // The next session recalls the typed backslash-n as typed, not as a line break.
    const history = readFileSync(join(repo.root, ".coder", "input.history"), "utf8");
    expect(history.split("\n")).toContain('print("a\\\\n")');
    repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"], "xterm");
    await repl.waitFor("> ");
    // Newest first: /exit, the block (Up moves through its two lines), then the print line.
    repl.send("\x1b[A\x1b[A\x1b[A\x1b[A");
    await repl.waitFor('print("a\\n")');
    repl.send("\x15/exit\r"); // Ctrl-U clears it
    expect(await repl.proc.exited).toBe(0);
  });

  test("Ctrl-C in a { } block drops the block and stays in coder", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([{ model: "gpt-4.1", text: "Answered." }]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("{");
    await repl.waitFor("... ");
    repl.type("do not send this");
    await repl.waitFor("... ");
    repl.send("\x03");
    await repl.waitFor("multi-line input dropped");
    await repl.waitFor("> ");
    repl.send("\x03"); // one Ctrl-C at an empty prompt only warns
    await repl.waitFor("Ctrl-C again");
    repl.type("a real question");
    await repl.waitFor("Answered.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(mainRequests(s).length).toBe(1);
    expect(lastUser(mainRequests(s)[0])).toContain("a real question");
    expect(JSON.stringify(mainRequests(s)[0].messages)).not.toContain("do not send this");
  });

  test("/diff after a committed reply: the commit line, one blank line, the diff", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([
      { model: "weak-model", text: "fix: set x to 2", repeat: true },
      { model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") },
    ]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("set x to 2");
    await repl.waitFor("Applied edit to a.py");
    await repl.waitFor("> ");
    repl.type("/diff");
    await repl.waitFor("+x = 2");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(repl.output).toMatch(/commit [0-9a-f]{7} fix: set x to 2\r\n\r\ndiff --git a\/a.py b\/a.py/);
  });

  test("Tab completes a file name on the first try, a name with spaces stays one file, a typo is pointed out", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "my notes.md": "notes\n" });
    const s = await serverWith([]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0"], "xterm");
    await repl.waitFor("> ");
    // The file list loads in the background at start; /ls lists the files itself (not for completion).
    repl.type("/ls");
    await repl.waitFor("Repository files not in the chat:");
    await repl.waitFor("> ");
    repl.send("/add my\t");
    await repl.waitFor("/add my\\ notes.md");
    repl.send("\r");
    await repl.waitFor("Added to the chat: my notes.md\r\n");
    await repl.waitFor("> ");
    repl.type("/add a.pyy");
    await repl.waitFor("a.pyy does not exist yet");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
  });

  test("Ctrl-D leaves with the prompt's line ended", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await serverWith([]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.send("\x04");
    expect(await repl.proc.exited).toBe(0);
    await repl.reading;
    // The prompt's line ends, then one line says where the chat is kept.
    expect(repl.output).toMatch(/> \r*\nNothing was said this time[^\n]*\r*\n$/);
  });

  test("Ctrl-C at an edit confirmation stops the request: nothing written, no reflection sent", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    const s = await serverWith([
      { model: "gpt-4.1", text: block("b.py", "y = 1\n", "y = 2\n") },
      { model: "gpt-4.1", text: "Next answer." },
    ]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("edit b");
    await repl.waitFor("which is not in the chat?");
    await repl.waitFor("(D)on't ask again [Yes]: ");
    repl.send("\x03");
    await repl.waitFor("stopped; nothing applied");
    await repl.waitFor("> ");
    repl.type("next");
    await repl.waitFor("Next answer.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(repo.read("b.py")).toBe("y = 1\n");
    const sent = mainRequests(s);
    expect(sent.length).toBe(2);
    expect(lastUser(sent[1])).toContain("next");
    expect(JSON.stringify(sent[1].messages)).not.toContain("did not allow");
  });

  test("/undo of a reply that created a file in new folders removes the folders it left empty", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "pkg/keep.py": "k = 1\n" });
    const s = await serverWith([
      { model: "weak-model", text: "feat: add helper", repeat: true },
      { model: "gpt-4.1", text: block("pkg/sub/deep/new.py", "", "def helper():\n    return 1\n") },
    ]);
    servers.push(s);
    const repl = startRepl(repo, s, ["--yes-always", "--map-tokens", "0", "a.py"]);
    await repl.waitFor("> ");
    repl.type("add a helper");
    await repl.waitFor("Applied edit to pkg/sub/deep/new.py");
    await repl.waitFor("> ");
    repl.type("/undo");
    await repl.waitFor("deleted pkg/sub/deep/new.py");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(existsSync(join(repo.root, "pkg", "sub"))).toBe(false);
    expect(readdirSync(join(repo.root, "pkg"))).toEqual(["keep.py"]);
  });
});
