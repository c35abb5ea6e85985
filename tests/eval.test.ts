// `coder eval` end to end: dist/coder runs itself per task against the fake model server, on a
// fixture repository's history and on three small exercises; the run directory is read back.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RECORD_VERSION, type RunSpec, type TaskRecord } from "../plugins/eval/record.ts";
import { type Change, changesOf, formatOf, perfectModel, replyFor } from "./support/eval-models.ts";
import { type FakeServer, type FakeStep, startFakeServer } from "./support/fake-server.ts";
import { inTerminal, SCRIPT } from "./support/pty.ts";
import { BIN, coder, git, requireBinary, sandbox, type Sandbox, tempDir, writeFiles } from "./support/kernel.ts";

beforeAll(requireBinary);

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join("");

/** A history with five commits that qualify and five that do not (root, lock file, short subject, too large, merge). */
function fixtureRepo(s: Sandbox): void {
  const commit = (message: string, files: Record<string, string>) => {
    writeFiles(s.repo, files);
    git(s.repo, ["add", "-A"], s.env);
    git(s.repo, ["commit", "-q", "-m", message], s.env);
  };
  commit("initial commit of the project", {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "greet.js": 'export function greet(name) {\n  return "hi " + name;\n}\n',
    "util.ts": "export function helper(x: number): number {\n  return x * 2;\n}\n",
    "tests/test_calc.py": "import calc\n",
    "package-lock.json": "{}\n",
  });
  commit("add a multiplication function to calc", {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": "import calc\n\nassert calc.mul(2, 3) == 6\n",
  });
  commit("greet people with hello instead", { "greet.js": 'export function greet(name) {\n  return "hello " + name;\n}\n' });
  commit("bump lock", { "package-lock.json": '{ "v": 2 }\n' });
  commit("rename the helper in util module", { "util.ts": "export function double(x: number): number {\n  return x * 2;\n}\n" });
  commit("punctuation in greetings and docstrings", {
    "greet.js": 'export function greet(name, punct = "!") {\n  return "hello " + name + punct;\n}\n',
    "calc.py": 'def add(a, b):\n    """Sum of a and b."""\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
  });
  commit("a large rewrite of the util module", { "util.ts": lines(90, (i) => `export const c${i} = ${i};\n`) });
  git(s.repo, ["checkout", "-q", "-b", "side"], s.env);
  commit("side change to the calc module", { "calc.py": readFileSync(join(s.repo, "calc.py"), "utf8").replace("return a - b", "return a - b  # difference") });
  git(s.repo, ["checkout", "-q", "main"], s.env);
  git(s.repo, ["merge", "-q", "--no-ff", "-m", "merge the side branch into main", "side"], s.env);
}

/** A sandbox holding the fixture history. */
function fixture(): Sandbox {
  const s = sandbox();
  fixtureRepo(s);
  return s;
}

/** Run `body` against a fake server whose model is `respond`, stopped after. */
async function served(respond: (body: any) => FakeStep | undefined, body: (server: FakeServer) => Promise<void>): Promise<void> {
  const server = await startFakeServer([], { respond });
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

const QUALIFYING = ["side change to the calc module", "punctuation in greetings and docstrings", "rename the helper in util module", "greet people with hello instead", "add a multiplication function to calc"];

function readRun(dir: string): { spec: RunSpec; records: TaskRecord[] } {
  const spec = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as RunSpec;
  const text = existsSync(join(dir, "tasks.jsonl")) ? readFileSync(join(dir, "tasks.jsonl"), "utf8") : "";
  if (text && !text.endsWith("\n")) throw new Error("tasks.jsonl ends with a torn line");
  return { spec, records: text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as TaskRecord) };
}

/** What a user's repository looks like from outside: branches, HEAD, index and tree, worktrees, stashes. */
function userState(s: Sandbox): string {
  return ["branch -a -v --no-abbrev", "rev-parse HEAD", "status --porcelain --untracked-files=all --ignored", "worktree list --porcelain", "stash list", "for-each-ref"].map((cmd) => git(s.repo, cmd.split(" "), s.env)).join("\n--\n");
}

function evalEnv(s: Sandbox, url: string): Record<string, string> {
  const tmp = join(s.home, "tmp");
  mkdirSync(tmp, { recursive: true });
  return { ...s.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: url, TMPDIR: tmp };
}

const subjectOf = (changes: Change[], task: string) => changes.find((c) => `history:${c.sha}` === task)?.message.split("\n")[0];

describe("coder eval on history", () => {
  test("a perfect model scores 100% exact on the sample in every edit format; merges, lock files, short subjects, big changes and the root are left out; the user's tree is untouched", async () => {
    const s = fixture();
    const changes = changesOf(s.repo);
    await served(perfectModel(changes), async (server) => {
      const before = userState(s);
      const out = join(tempDir(), "run");
      // A test command from the environment (as from a config file) is not the command line's: it never runs.
      const env = { ...evalEnv(s, server.url), CODER_TEST_CMD: "false" };
      const r = await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff,udiff,patch", "--edit-format", "tool", "--edit-format", "whole", "--sample", "10", "--jobs", "2", "--out", out], { cwd: s.repo, env });
      expect(r.stderr).not.toContain("Error");
      expect(r.code).toBe(0);
      const { spec, records } = readRun(out);
      expect(spec.tasks.map((t) => subjectOf(changes, t)).sort()).toEqual([...QUALIFYING].sort());
      expect(spec.formats).toEqual(["diff", "udiff", "patch", "tool", "whole"]);
      expect(records).toHaveLength(25);
      expect(records.map((r) => `${r.format} ${r.outcome}`).filter((o) => !o.endsWith(" exact"))).toEqual([]);
      expect(records.every((r) => r.passed && r.wellFormed && r.similarity === 1 && !r.silentWrong && r.edits.failed === 0)).toBe(true);
      expect(records.flatMap((r) => r.transcript).filter((e: any) => e.type === "eval-test")).toEqual([]);
      // The commit with a test file asks only for the source file.
      const mul = records.find((r) => subjectOf(changes, r.task) === "add a multiplication function to calc")!;
      expect(mul.files).toEqual(["calc.py"]);
      expect(r.stdout).toMatch(/openai\/perfect\s+udiff\s+5\s+100\.0%/);
      expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).pairs).toHaveLength(5);
      expect(userState(s)).toBe(before);
      expect(readdirSync(join(s.home, "tmp"))).toEqual([]);
    });
  }, 120_000);

  test("a model with known mistakes gets exactly the expected counts: wrong SEARCH text, a missing file, a no-op, a malformed reply", async () => {
    const s = fixture();
    const changes = changesOf(s.repo);
    const bySubject = (subject: string) => changes.find((c) => c.message === subject)!;
    const perfect = perfectModel(changes);
    const mistaken = (body: any): FakeStep | undefined => {
      const asked = (body.messages as any[]).filter((m) => m.role === "user").map((m) => String(m.content)).join("\n");
      const usage = { promptTokens: 500, completionTokens: 50 };
      if (asked.includes("side change to the calc module")) return { text: "calc.py\n```\n<<<<<<< SEARCH\ndef divide(a, b):\n=======\ndef mul(a, b):\n>>>>>>> REPLACE\n```\n", usage };
      if (asked.includes("punctuation in greetings")) {
        // One of the two files left out, and a stray new file the next task in this worktree must not see.
        const partial = replyFor(bySubject("punctuation in greetings and docstrings").files.filter((f) => f.path === "greet.js"), formatOf(body));
        return { text: `${partial.text}\nnotes.md\n\`\`\`\n<<<<<<< SEARCH\n=======\nstray\n>>>>>>> REPLACE\n\`\`\`\n`, usage };
      }
      if (asked.includes("greet people with hello")) return { text: 'greet.js\n```\n<<<<<<< SEARCH\n  return "hi " + name;\n=======\n  return "hi " + name;\n>>>>>>> REPLACE\n```\n', usage };
      if (asked.includes("rename the helper")) return { text: "util.ts\n```\n<<<<<<< SEARCH\nexport function helper(x: number): number {\n```\n", usage };
      return perfect(body);
    };
    await served(mistaken, async (server) => {
      const out = join(tempDir(), "run");
      const r = await coder(["eval", "--model", "openai/mistaken", "--edit-format", "diff", "--max-reflections", "1", "--jobs", "1", "--out", out], { cwd: s.repo, env: evalEnv(s, server.url) });
      expect(r.code).toBe(0);
      const { records } = readRun(out);
      const row = (subject: string) => {
        const rec = records.find((x) => subjectOf(changes, x.task) === subject)!;
        return { outcome: rec.outcome, passed: rec.passed, wellFormed: rec.wellFormed, edits: rec.edits, silentWrong: rec.silentWrong, reflections: rec.reflections };
      };
      expect(row("side change to the calc module")).toEqual({ outcome: "failed-edit", passed: false, wellFormed: true, edits: { applied: 0, failed: 2, refused: 0 }, silentWrong: false, reflections: 1 });
      expect(row("punctuation in greetings and docstrings")).toEqual({ outcome: "different", passed: false, wellFormed: true, edits: { applied: 2, failed: 0, refused: 0 }, silentWrong: true, reflections: 0 });
      expect(row("greet people with hello instead")).toEqual({ outcome: "failed-edit", passed: false, wellFormed: true, edits: { applied: 0, failed: 2, refused: 0 }, silentWrong: false, reflections: 1 });
      expect(row("rename the helper in util module")).toEqual({ outcome: "malformed", passed: false, wellFormed: false, edits: { applied: 0, failed: 0, refused: 0 }, silentWrong: false, reflections: 1 });
      // Last, in the worktree the tasks before it used: their changes and stray files are gone.
      expect(records.at(-1)!.title).toBe("add a multiplication function to calc");
      expect(row("add a multiplication function to calc")).toEqual({ outcome: "exact", passed: true, wellFormed: true, edits: { applied: 1, failed: 0, refused: 0 }, silentWrong: false, reflections: 0 });
      expect(existsSync(join(s.repo, "notes.md"))).toBe(false);
      const partial = records.find((x) => subjectOf(changes, x.task) === "punctuation in greetings and docstrings")!;
      expect(partial.similarity).toBeGreaterThan(0);
      expect(partial.similarity).toBeLessThan(1);
      expect(r.stdout).toMatch(/openai\/mistaken\s+diff\s+5\s+20\.0%/);
    });
  }, 120_000);
});

describe("coder eval options of history", () => {
  test("--test-cmd (typed) runs the tests on a matching result with the commit's own test files; --commits and --no-files choose the tasks and the chat", async () => {
    const s = fixture();
    const changes = changesOf(s.repo);
    await served(perfectModel(changes), async (server) => {
      const env = evalEnv(s, server.url);
      const out = join(tempDir(), "run");
      // tests/test_calc.py asserts calc.mul only from the commit that adds it: its version must be the commit's.
      const r = await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff", "--commits", "HEAD~7..HEAD~5", "--test-cmd", "PYTHONPATH=. python3 tests/test_calc.py && grep -q mul tests/test_calc.py", "--out", out], { cwd: s.repo, env });
      expect(r.code).toBe(0);
      const { spec, records } = readRun(out);
      expect(spec.tasks.map((t) => subjectOf(changes, t))).toEqual(["greet people with hello instead", "add a multiplication function to calc"]);
      expect(spec.testCmd).toBe("PYTHONPATH=. python3 tests/test_calc.py && grep -q mul tests/test_calc.py");
      expect(records.map((x) => x.outcome)).toEqual(["exact", "exact"]);
      expect(records.map((x) => x.transcript.filter((e: any) => e.type === "eval-test").map((e: any) => e.ok))).toEqual([[true], [true]]);

      const failing = join(tempDir(), "run");
      const f = await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff", "--commits", "HEAD~7..HEAD~5", "--test-cmd", "exit 3", "--out", failing], { cwd: s.repo, env });
      expect(f.code).toBe(0);
      expect(readRun(failing).records.map((x) => [x.outcome, x.passed])).toEqual([["tests-failed", false], ["tests-failed", false]]);

      const bare = join(tempDir(), "run");
      const n = await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff", "--no-files", "--commits", "HEAD~7..HEAD~5", "--out", bare], { cwd: s.repo, env });
      expect(n.code).toBe(0);
      const noFiles = readRun(bare);
      expect(noFiles.spec.noFiles).toBe(true);
      expect(noFiles.records.map((x) => x.outcome)).toEqual(["exact", "exact"]);
      expect(noFiles.records.map((x) => (x.transcript.find((e: any) => e.type === "start") as any).files)).toEqual([[], []]);
    });
  }, 120_000);

  test("an endpoint that fails is a model error in the record, not a crash of the run", async () => {
    const s = fixture();
    await served(() => ({ status: 401, errorMessage: "invalid api key" }), async (server) => {
      const out = join(tempDir(), "run");
      const r = await coder(["eval", "--model", "openai/broken", "--edit-format", "diff", "--sample", "2", "--out", out], { cwd: s.repo, env: evalEnv(s, server.url) });
      expect(r.code).toBe(0);
      const { records } = readRun(out);
      expect(records.map((x) => x.outcome)).toEqual(["model-error", "model-error"]);
      expect(records[0]!.error).toContain("invalid api key");
    });
  }, 120_000);
});

describe("coder eval on exercises", () => {
  test("three exercises (node --test, unittest): one passes at once, one on the second try, one never", async () => {
    const s = sandbox();
    writeFiles(s.repo, { "README.md": "# x\n" });
    git(s.repo, ["add", "-A"], s.env);
    git(s.repo, ["commit", "-q", "-m", "start"], s.env);
    const set = tempDir();
    const exercise = (lang: string, name: string, docs: string, solution: Record<string, string>, tests: Record<string, string>) => {
      const dir = join(set, lang, "exercises", "practice", name);
      writeFiles(dir, { ".docs/instructions.md": docs, ".meta/config.json": JSON.stringify({ files: { solution: Object.keys(solution), test: Object.keys(tests), example: [".meta/example"] } }), ".meta/example": "the answer", ...solution, ...tests });
    };
    exercise("javascript", "hello", "Write hello(): it returns the greeting HELLO-JS.\n", { "hello.js": "export function hello() {}\n" }, {
      "hello.test.js": 'import { test } from "node:test";\nimport assert from "node:assert";\nimport { hello } from "./hello.js";\ntest("hello", () => assert.equal(hello(), "Hello"));\n',
    });
    exercise("python", "double", "Write double(n): twice n. DOUBLE-PY\n", { "double.py": "def double(n):\n    pass\n" }, {
      "double_test.py": "import unittest\nfrom double import double\n\nclass T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(4), 8)\n",
    });
    exercise("python", "never", "Write answer(): 42. NEVER-PY\n", { "never.py": "def answer():\n    pass\n" }, {
      "never_test.py": "import unittest\nfrom never import answer\n\nclass T(unittest.TestCase):\n    def test_answer(self):\n        self.assertEqual(answer(), 42)\n",
    });
    const whole = (path: string, body: string): FakeStep => ({ text: `${path}\n\`\`\`\n${body}\`\`\`\n`, usage: { promptTokens: 300, completionTokens: 30 } });
    const model = (body: any): FakeStep | undefined => {
      const msgs = body.messages as any[];
      const asked = msgs.filter((m) => m.role === "user").map((m) => String(m.content)).join("\n");
      const second = String(msgs[msgs.length - 1]?.content).includes("The tests above failed");
      if (asked.includes("HELLO-JS")) return whole("hello.js", 'export function hello() {\n  return "Hello";\n}\n');
      if (second && asked.includes("double")) return whole("double.py", "def double(n):\n    return n * 2\n");
      if (asked.includes("DOUBLE-PY")) return whole("double.py", "def double(n):\n    return n + 2\n");
      if (second && asked.includes("answer")) return whole("never.py", "def answer():\n    return 41\n");
      if (asked.includes("NEVER-PY")) return whole("never.py", "def answer():\n    return 0\n");
      return undefined;
    };
    await served(model, async (server) => {
      const out = join(tempDir(), "run");
      const r = await coder(["eval", "--exercises", set, "--model", "openai/ex", "--edit-format", "whole", "--out", out], { cwd: s.repo, env: evalEnv(s, server.url) });
      expect(r.code).toBe(0);
      const { spec, records } = readRun(out);
      expect(spec.tasks).toEqual(["exercise:javascript/hello", "exercise:python/double", "exercise:python/never"]);
      const by = (id: string) => records.find((x) => x.task === id)!;
      expect([by("exercise:javascript/hello").passedFirst, by("exercise:javascript/hello").passed, by("exercise:javascript/hello").outcome]).toEqual([true, true, "tests-passed"]);
      expect([by("exercise:python/double").passedFirst, by("exercise:python/double").passed, by("exercise:python/double").outcome]).toEqual([false, true, "tests-passed"]);
      expect([by("exercise:python/never").passedFirst, by("exercise:python/never").passed, by("exercise:python/never").outcome]).toEqual([false, false, "tests-failed"]);
      // The test output went back once: the second request carries the failing assertion.
      const seconds = server.chatBodies().filter((b) => String(b.messages.at(-1).content).includes("The tests above failed"));
      expect(seconds).toHaveLength(2);
      expect(seconds.map((b) => String(b.messages.at(-1).content)).join("\n")).toContain("AssertionError");
      // The example solution in .meta/ never reached the model.
      expect(JSON.stringify(server.chatBodies())).not.toContain("the answer");
      expect(r.stdout).toMatch(/openai\/ex\s+whole\s+3\s+66\.7%/);
      // The exercises themselves are as they were.
      expect(readFileSync(join(set, "python", "exercises", "practice", "double", "double.py"), "utf8")).toBe("def double(n):\n    pass\n");
    });
  }, 120_000);
});

describe("coder eval operations", () => {
  test("bad requests are usage errors naming what to type instead (exit 2), and write nothing", async () => {
    const s = fixture();
    const plain = tempDir();
    const run = join(tempDir(), "run");
    mkdirSync(run);
    writeFiles(run, { "run.json": "{}" });
    const cases: [string[], string, string][] = [
      [["eval", "--model", "a/b"], plain, "run it in a git repository, or give --exercises DIR"],
      [["eval"], s.repo, "coder eval needs a model: --model NAME"],
      [["eval", "--model", "a/b", "--exercises", join(plain, "none")], s.repo, "no such directory"],
      [["eval", "--model", "a/b", "--exercises", plain, "--commits", "HEAD~2..HEAD"], s.repo, "give one"],
      [["eval", "--model", "a/b", "--resume", plain], s.repo, "is not a coder eval run directory"],
      [["eval", "--model", "a/b", "--out", run], s.repo, `continue it with --resume ${run}`],
      [["eval", "--model", "a/b", "--commits", "HEAD~2..HEAD~1"], s.repo, "qualifies as a task"],
      [["eval", "extra", "--model", "a/b"], s.repo, "coder eval takes no arguments"],
    ];
    for (const [args, cwd, message] of cases) {
      const r = await coder(args, { cwd, env: s.env });
      expect([args.join(" "), r.code, r.stderr]).toEqual([args.join(" "), 2, expect.stringContaining(message)]);
      expect(r.stderr).not.toContain("    at ");
    }
    expect(existsSync(join(s.repo, ".coder", "eval"))).toBe(false);
  });

  test("--resume checks the run as the report does: a bad line in tasks.jsonl is a usage error naming it, nothing run or written", async () => {
    const s = fixture();
    const run = join(tempDir(), "run");
    mkdirSync(run);
    const spec = { v: RECORD_VERSION, coder: "0", source: "history", commits: null, exercises: null, sample: 0, seed: 1, models: ["openai/x"], formats: ["diff"], noFiles: false, testCmd: null, shard: null, tasks: [], started: new Date().toISOString() };
    writeFiles(run, { "run.json": JSON.stringify(spec), "tasks.jsonl": 'not a record\n{"v":1}\n' });
    const r = await coder(["eval", "--resume", run], { cwd: s.repo, env: s.env });
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(`${join(run, "tasks.jsonl")}:1: not valid JSON`)]);
    expect(r.stderr).not.toContain("    at ");
    expect(readFileSync(join(run, "tasks.jsonl"), "utf8")).toBe('not a record\n{"v":1}\n');
    expect(existsSync(join(run, "summary.json"))).toBe(false);
  });

  test("--resume of a run directory whose tasks.jsonl is a link is refused (exit 2), the link's target neither cut nor appended to", async () => {
    const s = fixture();
    const run = join(tempDir(), "run");
    mkdirSync(run);
    const spec = { v: RECORD_VERSION, coder: "0", source: "history", commits: null, exercises: null, sample: 0, seed: 1, models: ["openai/x"], formats: ["diff"], noFiles: false, testCmd: null, shard: null, tasks: [], started: new Date().toISOString() };
    writeFiles(run, { "run.json": JSON.stringify(spec) });
    // A file with no final newline: read through the link, its "torn last line" would be cut off.
    const victim = join(tempDir(), "victim.txt");
    writeFileSync(victim, "the user's notes, no newline");
    symlinkSync(victim, join(run, "tasks.jsonl"));
    const r = await coder(["eval", "--resume", run], { cwd: s.repo, env: s.env });
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(`${join(run, "tasks.jsonl")} is a symlink`)]);
    expect(r.stderr).not.toContain("    at ");
    expect(readFileSync(victim, "utf8")).toBe("the user's notes, no newline");
    expect(lstatSync(join(run, "tasks.jsonl")).isSymbolicLink()).toBe(true);
    expect(existsSync(join(run, "summary.json"))).toBe(false);
  });

  test("coder eval --help: its usage, what it does, and its own options", async () => {
    const s = sandbox();
    const r = await coder(["eval", "--help"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("Usage: coder eval [options]");
    for (const flag of ["--commits RANGE", "--sample N", "--seed S", "--no-files", "--exercises DIR", "--jobs N", "--shard I/N", "--resume DIR", "--max-cost DOLLARS", "--out DIR", "pass@1"]) expect(r.stdout).toContain(flag);
    expect(r.stdout).not.toContain("--weak-model");
  });

  test("Ctrl-C keeps what is done and leaves the user's tree untouched; --resume finishes, losing nothing and repeating nothing", async () => {
    const s = fixture();
    const changes = changesOf(s.repo);
    const perfect = perfectModel(changes);
    await served((body) => ({ ...perfect(body), delayMs: 700 }), async (server) => {
      const before = userState(s);
      const out = join(tempDir(), "run");
      const env = evalEnv(s, server.url);
      const proc = Bun.spawn([BIN, "eval", "--model", "openai/perfect", "--edit-format", "diff", "--out", out], { cwd: s.repo, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 90_000 });
      const tasksFile = join(out, "tasks.jsonl");
      for (let i = 0; i < 600; i++) {
        if (existsSync(tasksFile) && readFileSync(tasksFile, "utf8").split("\n").filter(Boolean).length >= 2) break;
        await Bun.sleep(50);
      }
      // Into the third task's request, then Ctrl-C.
      await server.waitForChat(3);
      proc.kill("SIGINT");
      const code = await proc.exited;
      const stderr = await new Response(proc.stderr).text();
      expect(code).toBe(130);
      expect(stderr).toContain("--resume");
      const first = readRun(out).records;
      expect(first.length).toBeGreaterThanOrEqual(2);
      expect(first.length).toBeLessThan(5);
      expect(userState(s)).toBe(before);
      expect(readdirSync(join(s.home, "tmp"))).toEqual([]);

      const r = await coder(["eval", "--resume", out], { cwd: s.repo, env });
      expect(r.code).toBe(0);
      const { records } = readRun(out);
      expect(records).toHaveLength(5);
      expect(records.slice(0, first.length)).toEqual(first);
      expect(new Set(records.map((x) => x.task)).size).toBe(5);
      // A task finished before the kill was never asked again.
      for (const done of first) {
        const subject = subjectOf(changes, done.task)!;
        expect(server.chatBodies().filter((b) => b.messages.some((m: any) => m.role === "user" && String(m.content).includes(subject)))).toHaveLength(1);
      }
      expect(userState(s)).toBe(before);
    });
  }, 120_000);

  test("a run killed outright (SIGKILL) leaves a worktree; the next run removes it, and finishes the work", async () => {
    const s = fixture();
    const changes = changesOf(s.repo);
    const perfect = perfectModel(changes);
    await served((body) => ({ ...perfect(body), delayMs: 300 }), async (server) => {
      const before = userState(s);
      const out = join(tempDir(), "run");
      const env = evalEnv(s, server.url);
      const proc = Bun.spawn([BIN, "eval", "--model", "openai/perfect", "--edit-format", "diff", "--sample", "2", "--out", out], { cwd: s.repo, env, stdin: "ignore", stdout: "ignore", stderr: "ignore", timeout: 90_000 });
      await server.waitForChat(1);
      proc.kill("SIGKILL");
      await proc.exited;
      // The task's own coder finishes its request alone; its worktree stays registered.
      await Bun.sleep(2000);
      expect(git(s.repo, ["worktree", "list", "--porcelain"], s.env).match(/^worktree /gm)).toHaveLength(2);

      const r = await coder(["eval", "--resume", out], { cwd: s.repo, env });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("removed 1 temporary worktree a killed run left behind");
      expect(readRun(out).records.map((x) => x.outcome)).toEqual(["exact", "exact"]);
      expect(userState(s)).toBe(before);
      expect(readdirSync(join(s.home, "tmp"))).toEqual([]);
    });
  }, 120_000);

  test("--max-cost starts no new task once the run has cost that much", async () => {
    const s = fixture();
    writeFiles(s.configDir, { "config.json": '{ "models": { "openai/priced": { "prices": { "input": 1, "output": 2 } } } }' });
    await served(perfectModel(changesOf(s.repo)), async (server) => {
      const out = join(tempDir(), "run");
      const r = await coder(["eval", "--model", "openai/priced", "--edit-format", "diff", "--max-cost", "0.002", "--out", out], { cwd: s.repo, env: evalEnv(s, server.url) });
      expect(r.code).toBe(0);
      const { records } = readRun(out);
      // $0.0012 a task (1000 tokens in at $1/M, 100 out at $2/M): the second crosses $0.002.
      expect(records.map((x) => x.cost)).toEqual([0.0012, 0.0012]);
      expect(r.stderr).toContain("--max-cost $0.002 reached");
      expect(r.stderr).toContain("3 tasks not run");
      expect(r.stdout).toContain("Cost: $0.0024 for 2 tasks.");
      expect(server.chatBodies()).toHaveLength(2);
    });
  }, 120_000);

  test("by default the run goes to .coder/eval/<time>/, which git does not see; --json prints the summary", async () => {
    const s = fixture();
    await served(perfectModel(changesOf(s.repo)), async (server) => {
      const r = await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff", "--sample", "1", "--json"], { cwd: s.repo, env: evalEnv(s, server.url) });
      expect(r.code).toBe(0);
      const summary = JSON.parse(r.stdout);
      expect(summary.pairs.map((p: any) => [p.model, p.format, p.tasks, p.passed])).toEqual([["openai/perfect", "diff", 1, 1]]);
      const runs = readdirSync(join(s.repo, ".coder", "eval"));
      expect(runs).toHaveLength(1);
      expect(readRun(join(s.repo, ".coder", "eval", runs[0]!)).records.map((x) => x.outcome)).toEqual(["exact"]);
      expect(summary.runs).toEqual([join(s.repo, ".coder", "eval", runs[0]!)]);
      expect(git(s.repo, ["status", "--porcelain", "--untracked-files=all"], s.env)).toBe("");
    });
  }, 120_000);

  test.skipIf(!SCRIPT)("on a terminal, a progress bar: tasks done, pass rate, cost, time left", async () => {
    const s = fixture();
    writeFiles(s.configDir, { "config.json": '{ "models": { "openai/priced": { "prices": { "input": 1, "output": 2 } } } }' });
    await served(perfectModel(changesOf(s.repo)), async (server) => {
      const out = join(tempDir(), "run");
      const term = inTerminal([BIN, "eval", "--model", "openai/priced", "--edit-format", "diff", "--sample", "2", "--out", out], { cwd: s.repo, env: { ...evalEnv(s, server.url), TERM: "xterm" } });
      await term.waitFor("0/2 · pass - · $0.0000 · time left unknown");
      await term.waitFor("1/2 · pass 100% · $0.0012 · ");
      await term.waitFor("2/2 · pass 100% · $0.0024 · ");
      expect(await term.proc.exited).toBe(0);
      expect(term.output).toMatch(/1\/2 · pass 100% · \$0\.0012 · (~\d+ (s|min) left|done soon)/);
      expect(term.output).toContain("[########################] 2/2");
      expect(term.output).not.toContain("eval 1/2");
    });
  }, 120_000);

  test("--shard slices partition the tasks, and coder eval report merges them to the unsharded figures", async () => {
    const s = fixture();
    await served(perfectModel(changesOf(s.repo)), async (server) => {
      const env = evalEnv(s, server.url);
      const dirs = [1, 2, 3].map((i) => join(tempDir(), `shard${i}`));
      for (const [i, dir] of dirs.entries()) {
        const r = await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff", "--shard", `${i + 1}/3`, "--out", dir], { cwd: s.repo, env });
        expect(r.code).toBe(0);
      }
      const runs = dirs.map(readRun);
      const all = runs.flatMap((x) => x.spec.tasks);
      expect(all).toHaveLength(5);
      expect(new Set(all).size).toBe(5);
      expect(runs.map((x) => x.records.length)).toEqual(runs.map((x) => x.spec.tasks.length));
      expect(runs.map((x) => x.spec.shard)).toEqual([[1, 3], [2, 3], [3, 3]]);
      // `coder eval report` merges the slices to the unsharded run's figures (seconds aside: wall time).
      const whole = join(tempDir(), "whole");
      expect((await coder(["eval", "--model", "openai/perfect", "--edit-format", "diff", "--out", whole], { cwd: s.repo, env })).code).toBe(0);
      const report = async (args: string[]) => {
        const r = await coder(["eval", "report", "--json", ...args], { cwd: s.repo, env });
        expect(r.code).toBe(0);
        const summary = JSON.parse(r.stdout) as { pairs: Record<string, unknown>[]; duplicates: number };
        return { ...summary, generated: null, runs: null, pairs: summary.pairs.map(({ secondsPerTask: _, ...p }) => p) };
      };
      const merged = await report(dirs);
      expect(merged).toEqual(await report([whole]));
      expect(merged.pairs).toMatchObject([{ tasks: 5, passed: 5 }]);
      const bad = await coder(["eval", "--model", "openai/perfect", "--shard", "4/3"], { cwd: s.repo, env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--shard 4/3");
    });
  }, 120_000);
});
