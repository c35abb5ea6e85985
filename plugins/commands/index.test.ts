// The built-in slash commands against a recording Session whose `git` is a real
// GitRepo in a temp repository (the engine's session is tested with the engine).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { GitRepo, listRepoFiles } from "../../core/git/git.ts";
import type { Kit, ModelInfo, Session, SlashCommand } from "../../core/plugin.ts";
import { askAboutOutput } from "../../core/chat/shell-output.ts";
import { head, isolateGitEnv, log, makeRepo, write } from "../../tests/git-helpers.ts";
import { completePaths, expandPaths, splitWords } from "./args.ts";
import commandsPlugin from "./index.ts";
import { globMatches } from "../../core/edit/glob.ts";

const savedEnv = { ...process.env };
beforeAll(() => isolateGitEnv());
afterAll(() => {
  process.env = savedEnv;
});

interface Recorder {
  session: Session;
  out: string[];
  warnings: string[];
  sent: [string, string | undefined][];
  shell: string[];
  asked: string[];
  answers: boolean[];
  added: string[];
  state: { chat: string[]; ro: string[]; format: string; model: string; cleared: number; exited: boolean };
}

function makeSession(root: string, git: GitRepo | null, commands: () => SlashCommand[], runUser: Session["runUserCommand"] = async () => ({ code: 0, output: "" })): Recorder {
  const out: string[] = [];
  const warnings: string[] = [];
  const sent: [string, string | undefined][] = [];
  const shell: string[] = [];
  const asked: string[] = [];
  const answers: boolean[] = [];
  const added: string[] = [];
  const state = { chat: [] as string[], ro: [] as string[], format: "diff", model: "openai/gpt-4.1", cleared: 0, exited: false };
  const model = (): ModelInfo => ({ name: state.model, contextWindow: 1000, maxOutput: 100, prices: { input: 0, output: 0 }, editFormat: "diff", capabilities: { tools: true, systemPrompt: true, temperature: true, reasoningEffort: false, prefill: false, cache: "none" } });
  const session: Session = {
    root,
    cwd: root,
    // A plugin's format that does not edit, configured: /code must not pick it.
    options: { editFormat: "review" },
    get model() {
      return model();
    },
    get editFormat() {
      return state.format;
    },
    chatFiles: () => state.chat,
    readOnlyFiles: () => state.ro,
    addFiles: async (paths) => ((state.chat = [...new Set([...state.chat, ...paths])]), paths),
    addReadOnly: async (paths) => ((state.ro = [...new Set([...state.ro, ...paths])]), paths),
    dropFiles: (paths) => {
      const gone = paths.filter((p) => state.chat.includes(p) || state.ro.includes(p));
      state.chat = state.chat.filter((p) => !paths.includes(p));
      state.ro = state.ro.filter((p) => !paths.includes(p));
      return gone;
    },
    send: async (message, editFormat) => void sent.push([message, editFormat]),
    setModel: (name) => void (state.model = name),
    setEditFormat: (name) => void (state.format = name),
    clearHistory: () => void state.cleared++,
    tokenReport: async () => "tokens: 42",
    refreshContext: async () => "",
    git: git,
    runShell: async () => {
      throw new Error("/run must not go through the gate: the user typed the command");
    },
    confirm: async (question) => (asked.push(question), answers.shift() ?? false),
    addToChat: (text) => void added.push(text),
    // As the engine's session does: the shared offer of core/chat/shell-output.ts.
    offerOutput: async (command, result) => {
      const choice = await askAboutOutput(command, result, session.confirm!);
      if (choice?.kind === "fix") await session.send(choice.message);
      else if (choice?.kind === "add") session.addToChat!(choice.message);
    },
    print: (t) => void out.push(t),
    warn: (t) => void warnings.push(t),
    commands,
    formats: () => ["diff", "whole", "ask", "architect", "review"],
    formatSummaries: () => [
      { name: "diff", summary: "", mode: "edit", fallback: true },
      { name: "whole", summary: "", mode: "edit", fallback: false },
      { name: "ask", summary: "", mode: "none", fallback: false },
      { name: "architect", summary: "", mode: "editor", fallback: false },
      { name: "review", summary: "", mode: "none", fallback: false },
    ],
    exit: () => void (state.exited = true),
    lastDiff: async () => (git ? git.lastDiff() : "No reply has changed files yet."),
    interactive: false,
    setInput: (text) => void out.push(text),
    lastReply: () => null,
    promptChunks: async () => [],
    runCommand: async () => {},
    modelFor: () => state.model,
    setOption: () => {},
    settings: () => [],
    listModels: () => [],
    lint: async () => ({ ok: true, output: "" }),
    lastError: () => null,
    runUserCommand: runUser,
    runTests: async (command) => runUser(command),
  };
  return { session, out, warnings, sent, shell, state, asked, answers, added };
}

async function setup(files: Record<string, string> = { "src/a.ts": "a\n", "src/b.ts": "b\n", "docs/x.md": "x\n" }) {
  const root = makeRepo(files);
  const repo = await GitRepo.open(root);
  const ran: string[] = [];
  const kit = {
    files: { list: () => listRepoFiles(root), matches: globMatches },
    run: async (command: string) => {
      ran.push(command);
      return { code: command.startsWith("false") ? 1 : 0, stdout: command.includes("quiet") ? "" : `output of ${command}\n`, stderr: "" };
    },
  } as unknown as Kit;
  const plugin = commandsPlugin(kit);
  const cmds = plugin.commands!;
  // As the engine's session does: the command's output is shown as it runs.
  const runUser = async (command: string) => {
    const r = await (kit.run as (c: string) => Promise<{ code: number; stdout: string; stderr: string }>)(command);
    const output = `${r.stdout}${r.stderr}`;
    if (output.trim()) rec.session.print(output.trimEnd());
    return { code: r.code, output };
  };
  const rec = makeSession(root, repo, () => cmds, runUser);
  rec.shell = ran;
  const run = async (line: string) => {
    const [name, ...rest] = line.replace(/^\//, "").split(" ");
    const cmd = cmds.find((c) => c.name === name);
    if (!cmd) throw new Error(`no /${name}`);
    await cmd.run(rest.join(" "), rec.session);
  };
  return { root, repo: repo!, cmds, run, ...rec };
}

describe("commands plugin", () => {
  test("registers every built-in command and alias, and nothing of the repo map's", async () => {
    const { cmds } = await setup();
    const names = cmds.map((c) => c.name).sort();
    expect(names).toEqual(
      [
        ...["!", "add", "architect", "ask", "chat-mode", "clear", "code", "commit", "diff", "drop", "edit-format", "exit", "git", "help", "ls", "model", "quit", "read-only", "reset", "run", "tokens", "undo"],
        ...["context", "editor-model", "lint", "load", "models", "ok", "reasoning-effort", "report", "save", "settings", "test", "think-tokens", "weak-model"],
      ].sort(),
    );
    for (const c of cmds) expect(c.summary.length).toBeGreaterThan(5);
  });

  test("/add with globs and directories, /read-only, /ls, /drop, /reset", async () => {
    const t = await setup();
    await t.run("/add src/*.ts");
    expect(t.state.chat).toEqual(["src/a.ts", "src/b.ts"]);
    await t.run("/read-only docs");
    expect(t.state.ro).toEqual(["docs/x.md"]);
    await t.run("/add nothing/*.py");
    expect(t.warnings.at(-1)).toContain("No repository file matches nothing/*.py");
    await t.run("/ls");
    expect(t.out.at(-1)).toContain("Files in the chat (editable):\n  src/a.ts\n  src/b.ts\nRead-only files:\n  docs/x.md");
    await t.run("/drop src/a.ts");
    expect(t.state.chat).toEqual(["src/b.ts"]);
    await t.run("/reset");
    expect(t.state.chat).toEqual([]);
    expect(t.state.ro).toEqual([]);
    expect(t.state.cleared).toBe(1);
  });

  test("/ask /code /architect send one request in that mode, or switch without one", async () => {
    const t = await setup();
    await t.run("/ask why is a here?");
    await t.run("/code make it b");
    await t.run("/architect plan a refactor");
    expect(t.sent).toEqual([
      ["why is a here?", "ask"],
      ["make it b", "diff"],
      ["plan a refactor", "architect"],
    ]);
    await t.run("/ask");
    expect(t.state.format).toBe("ask");
    await t.run("/code");
    expect(t.state.format).toBe("diff");
    await t.run("/chat-mode whole");
    expect(t.state.format).toBe("whole");
    await t.run("/edit-format nope");
    expect(t.warnings.at(-1)).toContain('Unknown edit format "nope"');
  });

  test("/undo, /diff, /commit, /git through the real repository", async () => {
    const t = await setup({ "app.py": "v = 1\n" });
    await t.run("/undo");
    expect(t.warnings.at(-1)).toContain("not made by coder");
    write(t.root, "app.py", "v = 2\n");
    write(t.root, "new.py", "n = 1\n");
    await t.repo.commitEdits(["app.py", "new.py"], { message: "feat: bump v", model: "m" });
    await t.run("/diff");
    expect(t.out.at(-1)).toContain("+v = 2");
    await t.run("/undo");
    expect(t.out.at(-1)).toContain("Undid");
    expect(t.added.at(-1)).toContain("I undid your last change");
    expect(existsSync(join(t.root, "new.py"))).toBe(false);
    expect(readFileSync(join(t.root, "app.py"), "utf8")).toBe("v = 1\n");
    write(t.root, "app.py", "v = 3\n");
    const before = head(t.root);
    await t.run('/commit "docs: my own change"');
    expect(log(t.root)[0]).toBe('"docs: my own change"');
    expect(head(t.root)).not.toBe(before);
    await t.run("/git log --format=%s -n 1");
    expect(t.out.at(-1)).toBe('"docs: my own change"');
    await t.run("/git frobnicate");
    expect(t.warnings.at(-1)).toContain("git exited with code");
  });

  test("without git the git commands say so", async () => {
    const t = await setup();
    const rec = makeSession(t.root, null, () => t.cmds);
    for (const name of ["undo", "commit", "git"]) await t.cmds.find((c) => c.name === name)!.run("status", rec.session);
    expect(rec.warnings.length).toBe(3);
    expect(rec.warnings[0]).toContain("Not in a git repository");
  });

  test("/diff shows what the session says the last reply changed (committed or not), with or without git", async () => {
    const t = await setup();
    for (const git of [t.repo, null]) {
      const rec = makeSession(t.root, git, () => t.cmds);
      rec.session.lastDiff = async () => "the last reply's diff";
      await t.cmds.find((c) => c.name === "diff")!.run("", rec.session);
      expect(rec.out).toEqual(["the last reply's diff"]);
      expect(rec.warnings).toEqual([]);
    }
  });

  test("/run (no gate: the user typed it): a failing command offers a fix, output can join the chat", async () => {
    const t = await setup();
    t.answers.push(true, true);
    await t.run("/run false && x");
    expect(t.out).toContain("Exit code 1.");
    expect(t.asked[0]).toContain("fix");
    expect(t.sent[0]![0]).toContain("I ran `false && x` and it failed (exit code 1)");
    expect(t.sent[0]![0]).toContain("output of false && x");
    await t.run("/! echo hi");
    expect(t.asked[1]).toBe("Add the output to the chat?");
    expect(t.added[0]).toContain("output of echo hi");
    t.answers.push(false);
    await t.run("/run ls no");
    await t.run("/run quiet");
    expect(t.asked.length).toBe(3);
    expect(t.added.length).toBe(1);
    expect(t.shell).toEqual(["false && x", "echo hi", "ls no", "quiet"]);
    expect(t.out.filter((o) => o.startsWith("Exit code"))).toEqual(["Exit code 1."]);
    expect(t.out).toContain("output of echo hi");
  });

  test("/tokens /clear /model /help /exit", async () => {
    const t = await setup();
    await t.run("/tokens");
    expect(t.out.at(-1)).toBe("tokens: 42");
    await t.run("/clear");
    expect(t.state.cleared).toBe(1);
    await t.run("/model openai/gpt-4.1-mini");
    expect(t.state.model).toBe("openai/gpt-4.1-mini");
    await t.run("/help");
    expect(t.out.at(-1)).toContain("/undo");
    expect(t.out.at(-1)).toContain("/add FILE|GLOB ...");
    await t.run("/help undo");
    // One command, its description wrapped between words at the width (80 when not a terminal).
    expect(t.out.at(-1)).toMatch(/^\/undo\s+undo coder's last commit/);
    for (const line of t.out.at(-1)!.split("\n")) expect(line.length).toBeLessThan(80);
    expect(t.out.at(-1)).not.toContain("/add");
    await t.run("/quit");
    expect(t.state.exited).toBe(true);
  });
});

describe("argument helpers", () => {
  test("splitWords", () => {
    expect(splitWords(`commit -m "two words" 'it''s' a\\ b`)).toEqual(["commit", "-m", "two words", "its", "a b"]);
    expect(splitWords('  "" x ')).toEqual(["", "x"]);
  });
  test("expandPaths", () => {
    const files = ["src/a.ts", "src/b.ts", "src/sub/c.ts", "README.md"];
    expect(expandPaths(["src/**/*.ts"], files, globMatches).paths).toEqual(["src/a.ts", "src/b.ts", "src/sub/c.ts"]);
    expect(expandPaths(["src/"], files, globMatches).paths).toEqual(["src/a.ts", "src/b.ts", "src/sub/c.ts"]);
    expect(expandPaths(["new.ts", "*.md"], files, globMatches)).toEqual({ paths: ["new.ts", "README.md"], unmatched: [] });
    expect(expandPaths(["*.py"], files, globMatches).unmatched).toEqual(["*.py"]);
  });
  test("completePaths", () => {
    const files = ["src/app.ts", "src/api.ts", "lib/apx.ts"];
    expect(completePaths("src/ap", files)).toEqual(["src/app.ts", "src/api.ts"]);
    expect(completePaths("x.ts ap", files)).toEqual(["x.ts src/app.ts", "x.ts src/api.ts", "x.ts lib/apx.ts"]);
  });
  test("completePaths keeps a name with spaces one word", () => {
    const files = ["my notes.md", "src/a b/c.ts"];
    expect(completePaths("my", files)).toEqual(["my\\ notes.md"]);
    expect(completePaths("x.ts my\\ no", files)).toEqual(["x.ts my\\ notes.md"]);
    expect(completePaths('"my no', files)).toEqual(['"my notes.md']);
    for (const line of [...completePaths("src/a", files), ...completePaths("my", files), ...completePaths('"my', files)]) expect(splitWords(line).length).toBe(1);
    expect(splitWords(completePaths("my", files)[0]!)).toEqual(["my notes.md"]);
  });
});
