// QA pass of non-interactive use (scripts, CI): end-to-end on dist/coder in temporary
// repositories, against the fake OpenAI-compatible server. Each test pins a bug found
// by hand: the message a user or a script gets must name what is wrong and how to fix it.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, block, makeRepo, removeRepos, runCoder, serverWith } from "./engine-harness.ts";
import type { FakeServer } from "./support/fake-server.ts";

let server: FakeServer;
beforeAll(async () => {
  server = await serverWith([]);
});
afterAll(() => server.stop());
afterEach(() => removeRepos());

const APP = 'def hello():\n    return "hi"\n';

function jsonLines(stdout: string): any[] {
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe("the run's last word names the problem it could not fix", () => {
  test("a malformed block with --max-reflections 0: the warning says what is malformed", async () => {
    const repo = makeRepo({ "app.py": APP });
    server.push({ text: 'app.py\n```python\n<<<<<<< SEARCH\n    return "hi"\n=======\n    return "hello"\n' });
    const r = await runCoder(repo, server, ["--json", "--max-reflections", "0", "-m", "edit", "app.py"]);
    expect(r.code).toBe(1);
    const warning = jsonLines(r.stdout).find((e) => e.type === "warning" && /Stopped after/.test(e.message));
    expect(warning?.message).toContain("malformed SEARCH/REPLACE block");
    expect(warning?.message).toContain(">>>>>>> REPLACE");
    expect(repo.read("app.py")).toBe(APP);
  });

  test("a SEARCH that matches twice: the plain-text warning names the file and the reason", async () => {
    const repo = makeRepo({ "dup.py": "x = 1\ny = 2\nx = 1\n" });
    server.push({ text: block("dup.py", "x = 1\n", "x = 3\n") });
    const r = await runCoder(repo, server, ["--max-reflections", "0", "-m", "edit", "dup.py"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Stopped after 0 reflections .*not fixed: 1 of 1 edit failed to apply\. Failed edit #1 in dup\.py \(ambiguous\)/);
  });
});

describe("one-shot message sources", () => {
  test("--message and --message-file together are a usage error, not a silent pick", async () => {
    const repo = makeRepo({ "app.py": APP });
    writeFileSync(join(repo.home, "msg.txt"), "from the file\n");
    const r = await runCoder(repo, server, ["--json", "-m", "from the flag", "-f", join(repo.home, "msg.txt")]);
    expect(r.code).toBe(2);
    const events = jsonLines(r.stdout);
    expect(events.map((e) => e.type)).toEqual(["error", "end"]);
    expect(events[0].message).toContain("--message and --message-file");
  });

  test("an empty --message-file is a usage error naming the file", async () => {
    const repo = makeRepo({ "app.py": APP });
    writeFileSync(join(repo.home, "empty.txt"), "\n  \n");
    const r = await runCoder(repo, server, ["-f", join(repo.home, "empty.txt")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("empty.txt is empty");
  });
});

describe("numbers and dashes on the command line", () => {
  test("a negative value is refused with the flag named", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, server, ["--max-reflections=-1", "-m", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('flag --max-reflections expects a number of 0 or more, got "-1"');
  });

  test("a value starting with a dash gets a hint to use --flag=VALUE", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, server, ["-m", "-fix the bug", "app.py"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('-m is followed by "-fix the bug"');
    expect(r.stderr).toContain("--message=-fix the bug");
    expect(r.stderr).not.toContain("ambiguous");
  });

  test("a negative number in a config file names the file, the line and what is expected", async () => {
    const repo = makeRepo({ "app.py": APP, ".coder.json": '{\n  "mapTokens": -5\n}\n' });
    const r = await runCoder(repo, server, ["config", "show"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".coder.json:2: mapTokens: expected a number of 0 or more, got number -5");
  });
});

describe("config mistakes name the file to fix", () => {
  test("invalid JSON says what is wrong in words, with line and column", async () => {
    const repo = makeRepo({ "app.py": APP, ".coder.json": '{\n  "mapTokens": 5\n  "editFormat": "whole"\n}\n' });
    const r = await runCoder(repo, server, ["-m", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.coder.json:3: invalid JSON at column 3: expected "," between entries');
    expect(r.stderr).not.toContain("CommaExpected");
  });

  test("an unknown editFormat from .coder.json names the file and line", async () => {
    const repo = makeRepo({ "app.py": APP, ".coder.json": '{\n  "editFormat": "bogus"\n}\n' });
    const r = await runCoder(repo, server, ["--json", "-m", "x", "app.py"]);
    expect(r.code).toBe(2);
    const error = jsonLines(r.stdout).find((e) => e.type === "error");
    expect(error.message).toContain('unknown edit format "bogus"');
    expect(error.message).toContain("editFormat is set in .coder.json:2");
  });

  test("an unknown provider from CODER_MODEL names the variable", async () => {
    const repo = makeRepo({ "app.py": APP });
    const proc = Bun.spawnSync([BINARY, "--api-key", "k", "-m", "x"], {
      cwd: repo.root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), CODER_MODEL: "nope/foo" },
    });
    expect(proc.exitCode).toBe(2);
    expect(proc.stderr.toString()).toContain("model is set in env CODER_MODEL");
  });
});

describe("--dry-run", () => {
  test("plain output says nothing was written", async () => {
    const repo = makeRepo({ "app.py": APP });
    server.push({ text: block("app.py", '    return "hi"\n', '    return "hello"\n') });
    const r = await runCoder(repo, server, ["--dry-run", "-m", "edit", "app.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Dry run (--dry-run): nothing was written or committed (1 file would change).");
    expect(r.stdout).toContain("Would apply edit to app.py");
    expect(r.stdout).not.toContain("Applied edit to");
    expect(repo.read("app.py")).toBe(APP);
  });

  test("--json keeps stdout pure JSON (the diff and the note go to stderr)", async () => {
    const repo = makeRepo({ "app.py": APP });
    server.push({ text: block("app.py", '    return "hi"\n', '    return "hello"\n') });
    const r = await runCoder(repo, server, ["--json", "--dry-run", "-m", "edit", "app.py"]);
    expect(r.code).toBe(0);
    const events = jsonLines(r.stdout);
    expect(events.find((e) => e.type === "edit")?.detail).toBe("dry run: not written");
    expect(events.find((e) => e.type === "edit")?.dryRun).toBe(true);
    expect(r.stderr).toContain("+    return \"hello\"");
    expect(repo.read("app.py")).toBe(APP);
  });
});

describe("coder plugin new", () => {
  test("a NAME in a folder that does not exist yet: the folder is made, no internal error", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "coder-qa-scaffold-")));
    try {
      const proc = Bun.spawnSync([BINARY, "plugin", "new", "tools/branch", "--kind", "context"], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir } });
      expect(proc.stderr.toString()).toBe("");
      expect(proc.exitCode).toBe(0);
      expect(existsSync(join(dir, "tools", "branch.ts"))).toBe(true);
      expect(readFileSync(join(dir, "tools", "coder-plugin.d.ts"), "utf8")).toContain("apiVersion");
      writeFileSync(join(dir, "file"), "");
      const blocked = Bun.spawnSync([BINARY, "plugin", "new", "file/x", "--kind", "command"], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir } });
      expect(blocked.exitCode).toBe(2);
      expect(blocked.stderr.toString()).toContain("is a file, not a folder");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("diff formats' failure reports speak the format's words", () => {
  test("patch: a chunk that matches nothing is explained without SEARCH/REPLACE", async () => {
    const repo = makeRepo({ "README.md": "# demo\n" });
    server.push({ text: "*** Begin Patch\n*** Update File: README.md\n@@\n-# nope\n+# yes\n*** End Patch\n" });
    const r = await runCoder(repo, server, ["--json", "--edit-format", "patch", "--max-reflections", "0", "-m", "edit", "README.md"]);
    expect(r.code).toBe(1);
    const edit = jsonLines(r.stdout).find((e) => e.type === "edit");
    expect(edit.detail).toContain("The chunk's context and removed lines do not match any lines of README.md.");
    expect(edit.detail).toContain("Rule: the chunk's context and removed lines must copy");
    expect(edit.detail).not.toContain("SEARCH");
  });

  test("udiff: a hunk that matches twice", async () => {
    const repo = makeRepo({ "dup.py": "x = 1\ny = 2\nx = 1\n" });
    server.push({ text: "```diff\n--- dup.py\n+++ dup.py\n@@ @@\n-x = 1\n+x = 3\n```\n" });
    const r = await runCoder(repo, server, ["--json", "--edit-format", "udiff", "--max-reflections", "0", "-m", "edit", "dup.py"]);
    expect(r.code).toBe(1);
    const edit = jsonLines(r.stdout).find((e) => e.type === "edit");
    expect(edit.detail).toContain("The hunk's kept and removed lines match 2 places in dup.py");
    expect(edit.detail).toContain("Rule: the hunk's kept and removed lines must match exactly one place");
    expect(edit.detail).not.toContain("SEARCH");
    expect(repo.read("dup.py")).toBe("x = 1\ny = 2\nx = 1\n");
  });
});

describe("plugins", () => {
  test("a plugin with a syntax error: the report gives the line, column and parser message", async () => {
    const repo = makeRepo({ "app.py": APP, "syn.ts": "syntax error here (\n" });
    const r = await runCoder(repo, server, ["--plugin", "./syn.ts", "plugins"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('syn.ts failed to load and was skipped: line 1, column 8: Expected ";" but found "error" (and 1 more error)');
    expect(r.stderr).not.toContain("errors building");
  });
});

describe("odd arguments", () => {
  test("'.' or an empty FILE names the repository root, not 'outside the repository'", async () => {
    const repo = makeRepo({ "app.py": APP });
    for (const arg of [".", ""]) {
      const r = await runCoder(repo, server, ["-m", "x", arg]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("names the repository root");
      expect(r.stderr).not.toContain("outside the repository");
    }
  });

  test("coder models with two filters is a usage error instead of ignoring the second", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, server, ["models", "gpt", "mini"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("coder models takes one FILTER, got 2");
  });

  test("coder map with --map-tokens 0 says the map is off", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, server, ["map", "--map-tokens", "0"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("the map is off: --map-tokens is 0");
  });
});

describe("edit details", () => {
  test("filling an existing empty file is reported as filled, not created (diff and udiff)", async () => {
    const repo = makeRepo({ "empty.py": "" });
    server.push({ text: block("empty.py", "", 'print("now full")\n') });
    const r = await runCoder(repo, server, ["--json", "-m", "fill", "empty.py"]);
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout).find((e) => e.type === "edit")?.detail).toBe("filled");
    expect(repo.read("empty.py")).toBe('print("now full")\n');

    const repo2 = makeRepo({ "empty.py": "" });
    server.push({ text: "```diff\n--- empty.py\n+++ empty.py\n@@ @@\n+X = 1\n```\n" });
    const r2 = await runCoder(repo2, server, ["--json", "--edit-format", "udiff", "-m", "fill", "empty.py"]);
    expect(r2.code).toBe(0);
    expect(jsonLines(r2.stdout).find((e) => e.type === "edit")?.detail).toBe("filled");
    expect(repo2.read("empty.py")).toBe("X = 1\n");
  });
});

describe("weak and editor settings are checked before the first request", () => {
  test("--editor-edit-format bogus is a usage error, not a silent fallback to diff after the plan", async () => {
    const repo = makeRepo({ "app.py": APP });
    const before = server.chatBodies().length;
    const r = await runCoder(repo, server, ["--architect", "--editor-edit-format", "bogus", "-m", "x", "app.py"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown edit format "bogus"');
    expect(r.stderr).toContain("--editor-edit-format");
    expect(server.chatBodies().length).toBe(before);
  });

  test("an unknown provider in --editor-model or CODER_WEAK_MODEL exits 2 before any request", async () => {
    const repo = makeRepo({ "app.py": APP });
    const before = server.chatBodies().length;
    const editor = await runCoder(repo, server, ["--architect", "--editor-model", "nope/x", "-m", "x", "app.py"]);
    expect(editor.code).toBe(2);
    expect(editor.stderr).toContain('no model adapter serves "nope/x"');
    const proc = Bun.spawnSync([BINARY, "--api-base", server.url, "--api-key", "k", "-m", "x", "app.py"], {
      cwd: repo.root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), CODER_WEAK_MODEL: "nope/x" },
    });
    expect(proc.exitCode).toBe(2);
    expect(proc.stderr.toString()).toContain("weakModel is set in env CODER_WEAK_MODEL");
    expect(server.chatBodies().length).toBe(before);
  });
});

test("--timeout 0 is a usage error, not a run that fails at once with exit 1", async () => {
  const repo = makeRepo({ "app.py": APP, ".coder.json": '{ "timeout": 0 }\n' });
  const flag = await runCoder(repo, server, ["--timeout", "0", "-m", "x"]);
  expect(flag.code).toBe(2);
  expect(flag.stderr).toContain('flag --timeout expects a number of seconds above 0, got "0"');
  const config = await runCoder(repo, server, ["-m", "x"]);
  expect(config.code).toBe(2);
  expect(config.stderr).toContain(".coder.json:1: timeout: expected a number of seconds above 0, got number 0");
});

test("an absolute --chat-history-file is written where it says, not re-rooted inside the repository", async () => {
  const repo = makeRepo({ "app.py": APP });
  const target = join(repo.home, "transcript.md");
  server.push({ text: "an answer" });
  const r = await runCoder(repo, server, ["--chat-history-file", target, "-m", "explain"]);
  expect(r.code).toBe(0);
  expect(readFileSync(target, "utf8")).toContain("an answer");
  expect(existsSync(join(repo.root, target.slice(1)))).toBe(false);
  expect(repo.git("status", "--porcelain")).toBe("");
});

test("a project config's read paths are relative to the repository root, also when coder starts in a subfolder", async () => {
  const repo = makeRepo({ "app.py": APP, "STYLE.md": "Always use tabs.\n", "src/m.py": "x = 1\n", ".coder.json": '{ "read": ["STYLE.md"] }\n' });
  server.push({ text: "ok" });
  const proc = Bun.spawn([BINARY, "--model", "openai/gpt-4.1", "--api-base", server.url, "--api-key", "k", "--json", "-m", "hi", "m.py"], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: join(repo.root, "src"),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config") },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(jsonLines(stdout).filter((e) => e.type === "warning")).toEqual([]);
  expect(JSON.stringify(server.chatBodies().at(-1).messages)).toContain("Always use tabs.");
});

test("--help lists the values an enum option takes (--map-refresh did not say which MODEs exist)", () => {
  const help = Bun.spawnSync([BINARY, "--help"]).stdout.toString();
  expect(help).toMatch(/--map-refresh MODE .*\(auto, always, files, manual\)/);
  expect(help).toMatch(/--kind KIND .*\(format, context, model, command, tool\)/);
});
