// End to end on dist/coder (issue 22): what each edit format teaches is what its parser
// does. Replies a real model plausibly sends go through the fake OpenAI-compatible server;
// `coder prompts` shows exactly what a request would carry.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, mainRequests, makeRepo, type Repo, runCoder, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(60_000);
const server = serverPerTest();

/** `coder prompts ARGS` in `repo` (no server: nothing is sent). */
async function prompts(repo: Repo, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([BINARY, "prompts", ...args], {
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
    killSignal: "SIGKILL",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const UTIL = "def slugify(s):\n    s = s.strip().lower()\n    return s.replace(' ', '-')\n\n\ndef title(s):\n    return s.title()\n";
const STRINGS = "export const pad = (s) => s.padStart(4);\nexport const trim = (s) => s.trim();\nexport const upper = (s) => s.toUpperCase();\n";
const log = (repo: Repo) => repo.git("log", "--format=%s").trim().split("\n");

describe.skipIf(!existsSync(BINARY))("issue 22: prompts and parsers agree, end to end", () => {
  test("item 1 (whole): a snippet in a question overwrites no chat file and commits nothing", async () => {
    const repo = makeRepo({ "util.py": UTIL, "lib/strings.js": STRINGS });
    const reply = "I could rename it in `lib/strings.js` too:\n\n```python\ndef make_slug(s):\n    return slugify(s)\n```\n\nShould I rename both?";
    const s = await server([{ model: "gpt-4.1", text: reply }]);
    const r = await runCoder(repo, s, ["--edit-format", "whole", "--yes-always", "-m", "rename slugify", "util.py", "lib/strings.js"]);
    expect(r.code).toBe(0);
    expect(repo.read("util.py")).toBe(UTIL);
    expect(repo.read("lib/strings.js")).toBe(STRINGS);
    expect(log(repo)).toEqual(["initial"]);
    expect(mainRequests(s).length).toBe(1);
  });

  test("item 1 (whole, tool): a listing labelled with a file outside the chat is not written blind over it; a new file still is", async () => {
    const B = "import os\n\n\ndef b():\n    return os.getcwd()\n\n\ndef c():\n    return 3\n";
    const repo = makeRepo({ "a.py": "def a():\n    return 1\n", "b.py": B });
    const s = await server([
      { model: "gpt-4.1", text: "You can call it like this:\n\nb.py\n```python\nprint(b())\n```\n\nnew.py\n```python\nprint(1)\n```\n" },
      { model: "gpt-4.1", text: "Please add b.py to the chat." },
      { model: "gpt-4.1", toolCalls: [{ name: "create_file", arguments: { path: "b.py", content: "print(b())\n" } }] },
      { model: "gpt-4.1", text: "Done." },
    ]);
    const r = await runCoder(repo, s, ["--edit-format", "whole", "--yes-always", "-m", "how do I call b?", "a.py"]);
    expect(repo.read("b.py")).toBe(B);
    expect(repo.read("new.py")).toBe("print(1)\n");
    expect(r.stdout + r.stderr).toContain("b.py already exists, but it is not in the chat, so you have not seen its content");
    expect(JSON.stringify(mainRequests(s)[1].messages)).toContain("To change b.py, ask the user to add it to the chat.");
    const t = await runCoder(repo, s, ["--edit-format", "tool", "--yes-always", "-m", "show b", "a.py"]);
    expect(repo.read("b.py")).toBe(B);
    expect(t.stdout + t.stderr).toContain("b.py already exists");
  });

  test("item 3 (whole): a ``` listing under the ```` fence (a chat file holds a ``` line) is applied, not dropped", async () => {
    const repo = makeRepo({ "README.md": "Run:\n\n```\nmake\n```\n", "notes.md": "# Notes\n" });
    const s = await server([{ model: "gpt-4.1", text: "notes.md\n```markdown\n# Notes\n\n- ship it\n```\n" }]);
    const r = await runCoder(repo, s, ["--edit-format", "whole", "--yes-always", "-m", "add a note", "README.md", "notes.md"]);
    expect(r.code).toBe(0);
    // The request taught the four-backtick fence, and the reminder said so.
    expect(JSON.stringify(mainRequests(s)[0].messages)).toContain("Wrap file content in ```` ... ````");
    expect(repo.read("notes.md")).toBe("# Notes\n\n- ship it\n");
  });

  test("item 4 (tool): create_file content wrapped in a fence is written without the fence", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", toolCalls: [{ name: "create_file", arguments: { path: "b.py", content: "```python\ny = 2\n```\n" } }] }, { model: "gpt-4.1", text: "Done." }]);
    const r = await runCoder(repo, s, ["--edit-format", "tool", "--yes-always", "-m", "add b.py", "a.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("b.py")).toBe("y = 2\n");
    expect(JSON.stringify(mainRequests(s)[0].messages)).not.toContain("use the same fence when you write file content");
  });

  test("item 11 (tool): a bash block in a tool reply's text is offered as a shell command", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: "Then run it:\n\n```bash\npython a.py\n```\n", toolCalls: [{ name: "edit_file", arguments: { path: "a.py", search: "x = 1\n", replace: "x = 2\n" } }] }, { model: "gpt-4.1", text: "Done." }]);
    const r = await runCoder(repo, s, ["--edit-format", "tool", "-m", "set x", "a.py"]);
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(r.stderr).toContain("Run shell command: python a.py -> no");
  });

  test("item 6 (architect): the editor step sees the read-only files (CONVENTIONS.md)", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "CONVENTIONS.md": "Name constants in UPPER_CASE.\n" });
    const s = await server([
      { model: "gpt-4.1", text: "Plan: in a.py change x from 1 to 2." },
      { model: "editor-model", text: "a.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n" },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--architect", "--editor-model", "openai/editor-model", "--editor-edit-format", "diff", "-m", "x should be 2", "a.py"]);
    expect(r.code).toBe(0);
    const editor = mainRequests(s).find((b) => String(b.model) === "editor-model");
    expect(JSON.stringify(editor.messages)).toContain("Name constants in UPPER_CASE.");
    expect(repo.read("a.py")).toBe("x = 2\n");
  });

  test("item 9 (diff-fenced): the repair message for a block without a path teaches the path after the fence", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "b.py": "y = 1\n" });
    const s = await server([
      { model: "gpt-4.1", text: "```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n" },
      { model: "gpt-4.1", text: "```python\na.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n" },
    ]);
    const r = await runCoder(repo, s, ["--edit-format", "diff-fenced", "--yes-always", "-m", "x is 2", "a.py", "b.py"]);
    expect(r.code).toBe(0);
    const repair = JSON.stringify(mainRequests(s)[1].messages.at(-1));
    expect(repair).toContain("alone on the line after the opening fence");
    expect(repair).not.toContain("alone on the line before the opening fence");
    expect(repo.read("a.py")).toBe("x = 2\n");
  });

  test("item 10 (context): a file named only to say it needs no change is not added", async () => {
    const repo = makeRepo({ "client/retry.py": "BASE = 0.5\n", "README.md": "# client\n" });
    const s = await server([{ model: "gpt-4.1", text: "- `client/retry.py`: the base delay is hard-coded.\n\nNo need to touch `README.md`." }]);
    const r = await runCoder(repo, s, ["--edit-format", "context", "-m", "make the delay configurable"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Added to the chat: client\/retry\.py$/m);
  });

  test("item 8 (diff): an empty-SEARCH 'create' of an existing file the model never saw does not append to it", async () => {
    const repo = makeRepo({ "notes.txt": "keep me\n" });
    const s = await server([
      { model: "gpt-4.1", text: "notes.txt\n```\n<<<<<<< SEARCH\n=======\nnew notes\n>>>>>>> REPLACE\n```\n" },
      { model: "gpt-4.1", text: "notes.txt\n```\n<<<<<<< SEARCH\nkeep me\n=======\nkeep me\nnew notes\n>>>>>>> REPLACE\n```\n" },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "write notes"]);
    expect(r.code).toBe(0);
    const repair = JSON.stringify(mainRequests(s)[1].messages);
    expect(repair).toContain("it was not in the chat, so you have not seen its content");
    // The file joined the chat, so the second request shows its content; the second reply built on it.
    expect(repair).toContain("keep me");
    expect(repo.read("notes.txt")).toBe("keep me\nnew notes\n");
  });

  test("items 2, 8, 12: with no chat files the request says so, and that new files need no asking", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const r = await prompts(repo, ["--model", "openai/gpt-4.1", "--edit-format", "diff", "-m", "add a CLI"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No files are in the chat yet, so you have not seen the content of any file.");
    expect(r.stdout).toContain("New files need no asking.");
    expect(r.stdout).toContain("Only edit files in the chat, and create new files without asking.");
    expect(r.stdout).toContain("add a CLI\n\nReminder:");
    expect(r.stdout).toMatch(/Tokens:\n(\s+\d+ {2}.+\n)+\s+\d+ {2}total/);
    // Nothing is sent, and nothing is written: no transcript, no commit.
    expect(existsSync(join(repo.root, ".coder", "chat.history.md"))).toBe(false);
    expect(log(repo)).toEqual(["initial"]);
  });

  test("per-model settings: the table's system reminder and addendum, and a project's pin in .coder.json", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const gpt4o = await prompts(repo, ["--model", "openai/gpt-4o", "a.py"]);
    expect(gpt4o.stdout).toMatch(/──── system · current request · \d+ tokens\nReminder:/);
    const sonnet = await prompts(repo, ["--model", "anthropic/claude-sonnet-4-5", "a.py"]);
    expect(sonnet.stdout).toContain("Change only what the request asks for.");
    writeFileSync(join(repo.root, ".coder.json"), JSON.stringify({ models: { "openai/gpt-4o": { prompting: { reminder: "user", addendum: "lazy" } } } }));
    const pinned = await prompts(repo, ["--model", "openai/gpt-4o", "a.py"]);
    expect(pinned.code).toBe(0);
    expect(pinned.stdout).not.toMatch(/──── system · current request/);
    expect(pinned.stdout).toContain("(your request)\n\nReminder:");
    expect(pinned.stdout).toContain("Write every change in full.");
  });

  test("coder prompts shows the tool format's tools with their token count, and --help lists the subcommand", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const r = await prompts(repo, ["--model", "openai/gpt-4.1", "--edit-format", "tool", "a.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/──── tools · edit_file, create_file · \d+ tokens/);
    expect(r.stdout).toMatch(/\d+ {2}tools \(2\)/);
    const help = Bun.spawnSync([BINARY, "--help"]).stdout.toString();
    expect(help).toContain("prompts [FILE ...]");
  });
});
