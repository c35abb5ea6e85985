// End-to-end tests of the conversation engine on the built binary (dist/coder)
// against the fake OpenAI-compatible server: edits, repairs, the budget, faults,
// architect, chunk order and stability, summaries, --json.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, block, lastUser, mainRequests, makeRepo, runCoder, serverPerTest, weakRequests } from "./engine-harness.ts";

const server = serverPerTest();

const noBinary = !existsSync(BINARY);

describe.skipIf(noBinary)("engine e2e (dist/coder)", () => {
  test("a successful edit is applied and committed with the weak model's message", async () => {
    const repo = makeRepo({ "a.py": "x = 1\nprint(x)\n" });
    const s = await server([{ text: `Changing x.\n\n${block("a.py", "x = 1\n", "x = 2\n")}` }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "set x to 2", "a.py"]);
    expect(r.stderr).not.toContain("error");
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\nprint(x)\n");
    expect(mainRequests(s).length).toBe(1);
    expect(weakRequests(s).length).toBe(1);
    expect(repo.git("log", "-1", "--format=%s")).toContain("feat: apply the requested change");
    expect(repo.git("status", "--porcelain", "a.py")).toBe("");
  });

  test("a failed edit is repaired on the second request, which carries the repair report", async () => {
    const repo = makeRepo({ "a.py": "def f():\n    return 1\n" });
    const s = await server([
      { text: block("a.py", "def other(y):\n    pass\n", "def f():\n    return 2\n") },
      { text: block("a.py", "def f():\n    return 1\n", "def f():\n    return 2\n") },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "return 2", "a.py"]);
    expect(r.code).toBe(0);
    const reqs = mainRequests(s);
    expect(reqs.length).toBe(2);
    const report = lastUser(reqs[1]);
    expect(report).toContain("def other(y):");
    expect(report).not.toBe("return 2");
    // The second request carries the first reply and the report after the original request.
    const roles = (reqs[1].messages as any[]).slice(-3).map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "user"]);
    expect(repo.read("a.py")).toBe("def f():\n    return 2\n");
  });

  test("the repair budget runs out: warning and exit 1", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const bad = block("a.py", "y = 5\n", "y = 6\n");
    const s = await server([{ model: "gpt-4.1", text: bad, repeat: true }]);
    const r = await runCoder(repo, s, ["--yes-always", "--max-reflections", "2", "-m", "change y", "a.py"]);
    expect(r.code).toBe(1);
    expect(mainRequests(s).length).toBe(3);
    expect(r.stderr).toContain("max-reflections");
    expect(repo.read("a.py")).toBe("x = 1\n");
  });

  test("an edit to a repository file outside the chat goes through the gate and applies in one request", async () => {
    const repo = makeRepo({ "a.py": "import b\n", "b.py": "VALUE = 1\n" });
    const s = await server([{ text: block("b.py", "VALUE = 1\n", "VALUE = 2\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "bump VALUE", "a.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("b.py")).toBe("VALUE = 2\n");
    expect(mainRequests(s).length).toBe(1);
  });

  test("without --yes-always an edit outside the chat is declined: skipped, no repair request, exit 0", async () => {
    const repo = makeRepo({ "a.py": "import b\n", "b.py": "VALUE = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: block("b.py", "VALUE = 1\n", "VALUE = 2\n"), repeat: true }]);
    const r = await runCoder(repo, s, ["--max-reflections", "1", "-m", "bump VALUE", "a.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("b.py")).toBe("VALUE = 1\n");
    expect(mainRequests(s)).toHaveLength(1);
    expect(r.stdout).toContain("Skipped the edit to b.py");
  });

  test("a failed edit to a file outside the chat brings that file's real content into the next request", async () => {
    const repo = makeRepo({ "a.py": "import b\n", "b.py": "VALUE = 1  # the real line\n" });
    const s = await server([
      { model: "gpt-4.1", text: block("b.py", "VALUE = 100\n", "VALUE = 2\n") },
      { model: "gpt-4.1", text: block("b.py", "VALUE = 1  # the real line\n", "VALUE = 2\n") },
    ]);
    // No repo map, so b.py's text can only reach the model through the chat files.
    const r = await runCoder(repo, s, ["--yes-always", "--map-tokens", "0", "-m", "bump VALUE", "a.py"]);
    expect(r.code).toBe(0);
    const reqs = mainRequests(s);
    expect(JSON.stringify(reqs[0].messages)).not.toContain("# the real line");
    expect(JSON.stringify(reqs[1].messages)).toContain("# the real line");
    expect(lastUser(reqs[1])).toContain("b.py");
    expect(repo.read("b.py")).toBe("VALUE = 2\n");
  });

  test("a read-only file is never edited and the model is told why", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "CONVENTIONS.md": "Use tabs.\n" });
    const s = await server([{ model: "gpt-4.1", text: block("CONVENTIONS.md", "Use tabs.\n", "Use spaces.\n"), repeat: true }]);
    const r = await runCoder(repo, s, ["--yes-always", "--max-reflections", "1", "-m", "switch to spaces", "a.py"]);
    expect(r.code).toBe(1);
    expect(repo.read("CONVENTIONS.md")).toBe("Use tabs.\n");
    expect(lastUser(mainRequests(s)[1])).toContain("read-only");
  });

  test("failing tests (--test-cmd --auto-test) become the reflection", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const testCmd = "grep -q 'x = 3' a.py || { echo 'FAILED test_x: expected 3'; exit 1; }";
    const s = await server([{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") }, { model: "gpt-4.1", text: block("a.py", "x = 2\n", "x = 3\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--trust", "--test-cmd", testCmd, "--auto-test", "-m", "x=3", "a.py"]);
    expect(r.code).toBe(0);
    expect(lastUser(mainRequests(s)[1])).toContain("FAILED test_x: expected 3");
    expect(repo.read("a.py")).toBe("x = 3\n");
  });

  test("a file named in prose is offered, added under --yes-always, and the model gets a reflection with its content", async () => {
    const repo = makeRepo({ "a.py": "from helpers import tool\n", "helpers.py": "def tool():\n    return 41\n" });
    const s = await server([
      { text: "I need to see helpers.py before I can change this." },
      { text: block("helpers.py", "    return 41\n", "    return 42\n") },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "make tool return 42", "a.py"]);
    expect(r.code).toBe(0);
    const reqs = mainRequests(s);
    expect(reqs.length).toBe(2);
    expect(lastUser(reqs[1])).toContain("I added helpers.py");
    expect(JSON.stringify(reqs[1].messages)).toContain("return 41");
    expect(repo.read("helpers.py")).toBe("def tool():\n    return 42\n");
  });

  test("--dry-run shows the edit and writes nothing", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 2\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--dry-run", "-m", "x=2", "a.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("+x = 2");
    expect(repo.read("a.py")).toBe("x = 1\n");
    expect(repo.git("log", "--oneline").trim().split("\n").length).toBe(1);
  });

  test("a lint failure becomes the reflection, and the fix is linted again", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const lint = "sh -c 'if [ -f .coder/lint-ok ]; then exit 0; fi; mkdir -p .coder; touch .coder/lint-ok; echo \"a.py:1: E999 bad style\"; exit 1' lint";
    const s = await server([{ text: block("a.py", "x = 1\n", "x=2\n") }, { text: block("a.py", "x=2\n", "x = 2\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--trust", "--lint-cmd", lint, "-m", "x=2", "a.py"]);
    expect(r.code).toBe(0);
    const reqs = mainRequests(s);
    expect(reqs.length).toBe(2);
    expect(lastUser(reqs[1])).toContain("E999 bad style");
    expect(repo.read("a.py")).toBe("x = 2\n");
  });

  test("the weak model's commit message is asked for while lint runs, and lint's result does not wait for it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const signals = mkdtempSync(join(tmpdir(), "coder-lint-signals-"));
    const started = join(signals, "lint-started");
    const go = join(signals, "go");
    // The linter notes that it started, then finishes only once the test says go, which it does when the
    // commit-message request has arrived. The weak model answers only once the linter has started: a coder
    // that lints after committing never gets that answer (its message request gives up; git's summary is used).
    const lint = `sh -c 'touch "${started}"; n=0; while [ ! -f "${go}" ] && [ $n -lt 3000 ]; do sleep 0.02; n=$((n+1)); done' lint`;
    const whenExists = async (path: string) => {
      for (let n = 0; n < 2000 && !existsSync(path); n++) await Bun.sleep(20);
    };
    const s = await server([
      {
        model: "weak-model",
        text: "fix: set x to 2 while the linter ran",
        waitFor: async () => {
          writeFileSync(go, "");
          await whenExists(started);
        },
      },
      { text: block("a.py", "x = 1\n", "x = 2\n") },
    ]);
    try {
      const r = await runCoder(repo, s, ["--yes-always", "--trust", "--lint-cmd", lint, "--json", "-m", "x=2", "a.py"]);
      expect(r.code).toBe(0);
      expect(repo.read("a.py")).toBe("x = 2\n");
      expect(repo.git("log", "-1", "--format=%s").trim()).toBe("fix: set x to 2 while the linter ran");
      const events = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; ok?: boolean });
      expect(events.filter((e) => e.type === "lint").map((e) => e.ok)).toEqual([true]);
      expect(weakRequests(s).length).toBe(1);
    } finally {
      rmSync(signals, { recursive: true, force: true });
    }
  }, 120_000);

  test("piped stdin is the message", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: block("a.py", "x = 1\n", "x = 3\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "a.py"], { stdin: "set x to 3\n" });
    expect(r.code).toBe(0);
    expect(lastUser(mainRequests(s)[0])).toContain("set x to 3");
    expect(repo.read("a.py")).toBe("x = 3\n");
  });

  test("a prompt too big for the context window is never sent; the error says what takes the room", async () => {
    const big = Array.from({ length: 800 }, (_, i) => `value_${i} = compute(${i}, "some text to fill the file")`).join("\n");
    const repo = makeRepo({ "big.py": `${big}\n`, ".coder.json": JSON.stringify({ models: { "openai/gpt-4.1": { contextWindow: 4000, maxOutput: 500 } } }) });
    const s = await server([{ text: "never" }]);
    const r = await runCoder(repo, s, ["--yes-always", "--map-tokens", "0", "-m", "tidy", "big.py"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("context window of 4000");
    expect(r.stderr).toContain("chat files: big.py");
    expect(mainRequests(s).length).toBe(0);
  });

  test("a reply cut at the output limit is continued from an assistant prefill where the model allows it", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", ".coder.json": JSON.stringify({ models: { "openai/gpt-4.1": { capabilities: { prefill: true } } } }) });
    const s = await server([
      { model: "gpt-4.1", text: "a.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\n", finishReason: "length" },
      { model: "gpt-4.1", text: "x = 2\n>>>>>>> REPLACE\n```\n" },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "x=2", "a.py"]);
    expect(r.code).toBe(0);
    const reqs = mainRequests(s);
    expect(reqs.length).toBe(2);
    expect(reqs[1].messages.at(-1)).toMatchObject({ role: "assistant", content: "a.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\n" });
    expect(repo.read("a.py")).toBe("x = 2\n");
  });

  test("outside a repository (and with --no-git) edits apply without commits", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    rmSync(join(repo.root, ".git"), { recursive: true, force: true });
    const s = await server([{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "x=2", "a.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(weakRequests(s).length).toBe(0);
    expect(existsSync(join(repo.root, ".git"))).toBe(false);
  });

  test("a throwing plugin is reported by name and the request still goes out", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    repo.write(
      "broken-plugin.ts",
      `export default { apiVersion: 1, name: "broken-context", context: [{ name: "broken", stability: "turn", provide() { throw new Error("kaboom"); } }] };\n`,
    );
    const s = await server([{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 2\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--plugin", join(repo.root, "broken-plugin.ts"), "-m", "x=2", "a.py"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("broken-context");
    expect(r.stderr).toContain("kaboom");
    expect(repo.read("a.py")).toBe("x = 2\n");
  });

  test("--message-file with --no-stream", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    repo.write("request.txt", "please set x to 4\n");
    const s = await server([{ model: "gpt-4.1", text: block("a.py", "x = 1\n", "x = 4\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--no-stream", "-f", "request.txt", "a.py"]);
    expect(r.code).toBe(0);
    const req = mainRequests(s)[0];
    expect(req.stream).toBeFalsy();
    expect(lastUser(req)).toContain("please set x to 4");
    expect(r.stdout).toContain("<<<<<<< SEARCH");
    expect(repo.read("a.py")).toBe("x = 4\n");
  });

  test("a chat file that does not exist yet is created by the edit and committed", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: block("new_module.py", "", "def hello():\n    return 1\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "create it", "new_module.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("new_module.py")).toBe("def hello():\n    return 1\n");
    expect(repo.git("ls-files", "new_module.py").trim()).toBe("new_module.py");
  });

  for (const [format, reply] of [
    ["whole", "a.py\n```\nx = 7\n```\n"],
    ["udiff", "```diff\n--- a.py\n+++ a.py\n@@ ... @@\n-x = 1\n+x = 7\n```\n"],
    ["patch", "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 7\n*** End Patch\n"],
  ] as const) {
    test(`--edit-format ${format}: the reply is parsed and applied by that format`, async () => {
      const repo = makeRepo({ "a.py": "x = 1\n" });
      const s = await server([{ model: "gpt-4.1", text: reply }]);
      const r = await runCoder(repo, s, ["--yes-always", "--edit-format", format, "-m", "x=7", "a.py"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(repo.read("a.py")).toBe("x = 7\n");
    });
  }

  test("a path outside the repository is refused with exit 2", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([]);
    const r = await runCoder(repo, s, ["-m", "hi", "../outside.py"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("outside");
    expect(mainRequests(s).length).toBe(0);
  });
});

describe.skipIf(noBinary)("faults", () => {
  const ok = (path: string) => ({ text: block(path, "x = 1\n", "x = 2\n") });

  for (const [name, fault] of [
    ["429 with Retry-After", { status: 429, retryAfter: 0.01 }],
    ["500", { status: 500 }],
    ["a stream cut halfway", { text: block("a.py", "x = 1\n", "x = 9\n"), cutAfter: 2 }],
    ["a slow first byte", { ...ok("a.py"), delayMs: 300 }],
  ] as const) {
    test(`${name}: retried or waited for, then applied once`, async () => {
      const repo = makeRepo({ "a.py": "x = 1\n" });
      const steps = name === "a slow first byte" ? [fault] : [fault, ok("a.py")];
      const s = await server(steps as never);
      const r = await runCoder(repo, s, ["--yes-always", "-m", "x=2", "a.py"]);
      expect(r.code).toBe(0);
      expect(repo.read("a.py")).toBe("x = 2\n");
    });
  }

  test("an endpoint that keeps failing: exit 1 with one line, no stack trace", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ status: 401, errorMessage: "invalid api key", repeat: true }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "x=2", "a.py"]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain("sk-test");
    expect(repo.read("a.py")).toBe("x = 1\n");
  });

  test("a missing API key is a configuration error: exit 2 naming the variable, nothing sent", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const proc = Bun.spawn([BINARY, "--model", "anthropic/claude-sonnet-4", "--no-pretty", "-m", "x=2", "a.py"], {
      cwd: repo.root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(2);
    expect(stderr).toContain("ANTHROPIC_API_KEY");
    expect(stderr).not.toContain("not in the model table");
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(repo.read("a.py")).toBe("x = 1\n");
  });

  test("Ctrl-C while the weak model writes the commit message: the written edit is still committed", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ model: "weak-model", text: "feat: never used", delayMs: 20_000 }, { text: block("a.py", "x = 1\n", "x = 2\n") }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "set x to 2", "a.py"], {
      onStart: (proc) => {
        const poll = setInterval(() => {
          if (weakRequests(s).length > 0 && repo.read("a.py") === "x = 2\n") {
            clearInterval(poll);
            proc.kill("SIGINT");
          }
        }, 10);
      },
    });
    expect(r.code).toBe(130);
    expect(repo.read("a.py")).toBe("x = 2\n");
    expect(repo.git("status", "--porcelain", "--", "a.py")).toBe("");
    const subject = repo.git("log", "-1", "--format=%s").trim();
    expect(subject).not.toBe("initial");
    expect(subject).not.toContain("never used");
  });

  test("Ctrl-C during a request exits 130 at once", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ ...ok("a.py"), delayMs: 20_000 }]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "x=2", "a.py"], {
      onStart: (proc) => {
        const poll = setInterval(() => {
          if (mainRequests(s).length > 0) {
            clearInterval(poll);
            proc.kill("SIGINT");
          }
        }, 10);
      },
    });
    expect(r.code).toBe(130);
    expect(repo.read("a.py")).toBe("x = 1\n");
  });
});

describe.skipIf(noBinary)("tool format", () => {
  test("the next request answers every call id with a tool message, then the repair report", async () => {
    const repo = makeRepo({ "a.py": "x = 1\ny = 1\n" });
    const s = await server([
      {
        model: "gpt-4.1",
        toolCalls: [
          { id: "call_a", name: "edit_file", arguments: { path: "a.py", search: "x = 1\n", replace: "x = 2\n" } },
          { id: "call_b", name: "edit_file", arguments: { path: "a.py", search: "zzz = 9\n", replace: "y = 2\n" } },
        ],
      },
      { model: "gpt-4.1", toolCalls: [{ id: "call_c", name: "edit_file", arguments: { path: "a.py", search: "y = 1\n", replace: "y = 2\n" } }] },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--edit-format", "tool", "-m", "set both to 2", "a.py"]);
    expect(r.code).toBe(0);
    const reqs = mainRequests(s);
    expect(reqs.length).toBe(2);
    expect(reqs[0].tools.map((t: any) => t.function?.name ?? t.name)).toContain("edit_file");
    const msgs = reqs[1].messages as any[];
    const assistant = msgs.findLastIndex((m) => m.role === "assistant" && m.tool_calls);
    expect(assistant).toBeGreaterThan(0);
    expect(msgs[assistant].tool_calls.map((c: any) => c.id)).toEqual(["call_a", "call_b"]);
    expect(msgs[assistant + 1]).toMatchObject({ role: "tool", tool_call_id: "call_a" });
    expect(msgs[assistant + 2]).toMatchObject({ role: "tool", tool_call_id: "call_b" });
    expect(msgs[assistant + 3].role).toBe("user");
    expect(String(msgs[assistant + 3].content)).toContain("zzz = 9");
    expect(repo.read("a.py")).toBe("x = 2\ny = 2\n");
  });
});

describe.skipIf(noBinary)("architect", () => {
  test("the plan goes to the editor model as its request; both usages are counted", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([
      { model: "gpt-4.1", text: "Plan: in a.py change x from 1 to 2.", usage: { promptTokens: 1000, completionTokens: 10 } },
      { model: "editor-model", text: block("a.py", "x = 1\n", "x = 2\n"), usage: { promptTokens: 500, completionTokens: 20 } },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--architect", "--editor-model", "openai/editor-model", "--editor-edit-format", "diff", "--json", "-m", "x should be 2", "a.py"]);
    expect(r.code).toBe(0);
    const bodies = s.chatBodies().filter((b) => !String(b.model).endsWith("weak-model"));
    expect(bodies.map((b) => String(b.model))).toEqual(["gpt-4.1", "editor-model"]);
    expect(lastUser(bodies[1])).toContain("Plan: in a.py change x from 1 to 2.");
    // The editor gets a fresh history: the architect's request is not in it.
    expect(JSON.stringify(bodies[1].messages)).not.toContain("x should be 2");
    expect(repo.read("a.py")).toBe("x = 2\n");
    const end = r.stdout.trim().split("\n").map((l) => JSON.parse(l)).at(-1);
    expect(end.type).toBe("end");
    expect(end.totals.promptTokens).toBeGreaterThanOrEqual(1500);
    expect(end.totals.completionTokens).toBeGreaterThanOrEqual(30);
  });
});

describe.skipIf(noBinary)("prompt assembly", () => {
  test("chunks go most-stable first and stay byte-identical across two turns", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n", "CONVENTIONS.md": "Use four spaces.\n" });
    const s = await server([{ model: "gpt-4.1", text: "Nothing to change.", repeat: true }]);
    expect((await runCoder(repo, s, ["--yes-always", "-m", "first question", "a.py"])).code).toBe(0);
    expect((await runCoder(repo, s, ["--yes-always", "-m", "second question", "a.py"])).code).toBe(0);
    const [one, two] = mainRequests(s);
    const m1 = one.messages as any[];
    const m2 = two.messages as any[];
    expect(m1[0].role).toBe("system");
    const text = (m: any) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
    const idx = (ms: any[], needle: string) => ms.findIndex((m) => text(m).includes(needle));
    const conv = idx(m1, "Use four spaces.");
    const files = idx(m1, "x = 1");
    const current = idx(m1, "first question");
    expect(conv).toBeGreaterThan(0);
    expect(files).toBeGreaterThan(conv);
    expect(current).toBe(m1.length - 1);
    // Everything before the current request is byte-identical.
    expect(JSON.stringify(m2.slice(0, -1))).toBe(JSON.stringify(m1.slice(0, -1)));
  });

  test("a restored history over budget is summarised by the weak model before the request", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const turns = Array.from({ length: 40 }, (_, i) => `#### question ${i} about parse_config in settings.py ${"word ".repeat(150)}\n\nanswer ${i} ${"text ".repeat(150)}\n`).join("\n");
    repo.write(".coder/chat.history.md", `# coder chat started at 2026-01-01 00:00:00\n\n${turns}`);
    const s = await server([
      { model: "weak-model", match: "question 0", text: "I asked about parse_config in settings.py many times." },
      { model: "gpt-4.1", text: "Ok, nothing to change." },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--restore-chat-history", "-m", "what did we discuss?", "a.py"]);
    expect(r.code).toBe(0);
    const bodies = s.chatBodies();
    const summaryIndex = bodies.findIndex((b) => String(b.model).endsWith("weak-model") && JSON.stringify(b.messages).includes("question 0"));
    const mainIndex = bodies.findIndex((b) => String(b.model).endsWith("gpt-4.1"));
    expect(summaryIndex).toBeGreaterThanOrEqual(0);
    expect(summaryIndex).toBeLessThan(mainIndex);
    const main = JSON.stringify(bodies[mainIndex].messages);
    expect(main).toContain("I asked about parse_config in settings.py many times.");
    expect(main).not.toContain("question 0 about");
    expect(main).toContain("question 39 about");
  });
});

describe.skipIf(noBinary)("--json", () => {
  test("one JSON event per line, nothing else on stdout, in the documented order", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ text: `Sure.\n${block("a.py", "x = 1\n", "x = 2\n")}`, usage: { promptTokens: 1234, completionTokens: 56, cachedTokens: 1000 } }]);
    const r = await runCoder(repo, s, ["--yes-always", "--json", "-m", "x=2", "a.py"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    const events = lines.map((l) => JSON.parse(l));
    for (const e of events) {
      expect(typeof e.type).toBe("string");
      expect(typeof e.time).toBe("string");
    }
    const types = events.map((e) => e.type).filter((t) => t !== "delta" && t !== "warning");
    expect(types).toEqual(["start", "request", "reply", "edit", "commit", "end"]);
    expect(events.some((e) => e.type === "delta")).toBe(true);
    const start = events[0];
    expect(start).toMatchObject({ model: "openai/gpt-4.1", editFormat: "diff", files: ["a.py"] });
    const reply = events.find((e) => e.type === "reply");
    expect(reply.usage).toEqual({ promptTokens: 1234, completionTokens: 56, cachedTokens: 1000 });
    expect(events.find((e) => e.type === "edit")).toMatchObject({ path: "a.py", status: "applied" });
    expect(events.find((e) => e.type === "commit").hash).toMatch(/^[0-9a-f]{7,40}$/);
    expect(events.at(-1)).toMatchObject({ type: "end", exitCode: 0 });
    expect(r.stdout).not.toContain("sk-test");
  });

  test("a failed run ends with error and end events carrying the exit code", async () => {
    const repo = makeRepo({ "a.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: block("a.py", "nope\n", "x\n"), repeat: true }]);
    const r = await runCoder(repo, s, ["--yes-always", "--json", "--max-reflections", "1", "-m", "x", "a.py"]);
    expect(r.code).toBe(1);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === "reflection").map((e) => e.n)).toEqual([1]);
    expect(events.filter((e) => e.type === "edit").every((e) => e.status === "failed")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "end", exitCode: 1 });
  });
});
