// --watch-files through the binary: a comment ending in AI! appended to a watched file
// becomes one request with the file in the chat, the change is applied and committed, and
// the comment is gone afterwards (removed by the model, or by coder when the model left it).
// AI? is answered in ask mode. Waits poll for the file or the request; nothing is timed.
import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, block, lastUser, mainRequests, makeRepo, type Repo, serverPerTest } from "./engine-harness.ts";
import type { FakeServer } from "./support/fake-server.ts";

const server = serverPerTest();
const APP = "def total(items):\n    return sum(items)\n";

/** `coder --watch-files` without a terminal, its output collected; stop() ends it. */
function watchRun(repo: Repo, s: FakeServer, args: string[] = []) {
  const proc = Bun.spawn([BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", s.url, "--api-key", "sk-test", "--no-pretty", "--watch-files", ...args], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of proc.stdout) stdout += new TextDecoder().decode(chunk);
  })();
  const readingErrors = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await Promise.all([reading, readingErrors]);
    },
  };
}

/** Wait until `check` holds (polling), or fail after a generous while with what was seen. */
async function until(what: string, check: () => boolean, seen: () => string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (check()) return;
    await Bun.sleep(50);
  }
  throw new Error(`waited for ${what}; saw:\n${seen()}`);
}

describe("--watch-files", () => {
  test("an AI! comment appended to a watched file is applied, and its marker removed (by the model)", async () => {
    const repo = makeRepo({ "app.py": APP, "other.py": "X = 1\n" });
    const s = await server([{ text: block("app.py", "    return sum(items)\n# return 0 for an empty list AI!\n", "    return sum(items) if items else 0\n") }]);
    const run = watchRun(repo, s);
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      appendFileSync(join(repo.root, "app.py"), "# return 0 for an empty list AI!\n");
      await until("the edit", () => repo.read("app.py").includes("if items else 0"), () => run.stdout);
      await until("the commit", () => repo.git("log", "--format=%s").split("\n").length >= 4, () => run.stdout);
    } finally {
      await run.stop();
    }
    expect(repo.read("app.py")).toBe("def total(items):\n    return sum(items) if items else 0\n");
    const [request] = mainRequests(s);
    const text = lastUser(request);
    expect(text).toContain("app.py:");
    expect(text).toContain("█3│# return 0 for an empty list AI!");
    expect(text).not.toContain("other.py:");
    // The file joined the chat: its content is in the request.
    expect(JSON.stringify(request.messages)).toContain("def total(items):");
    expect(repo.git("status", "--porcelain").trim()).toBe("");
  });

  test("a comment the model leaves in is removed by coder in the change's own commit: 2 commits, as Aider", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: block("app.py", "    return sum(items)\n", "    return sum(items) if items else 0\n") }]);
    const run = watchRun(repo, s);
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      appendFileSync(join(repo.root, "app.py"), "# return 0 for an empty list AI!\n");
      await until("the cleanup", () => run.stdout.includes("Removed the AI comments from app.py with the change, in its commit"), () => run.stdout);
    } finally {
      await run.stop();
    }
    expect(readFileSync(join(repo.root, "app.py"), "utf8")).toBe("def total(items):\n    return sum(items) if items else 0\n");
    expect(repo.git("status", "--porcelain").trim()).toBe("");
    // The comment's own dirty commit, then the change with the comment gone.
    expect(repo.git("log", "--format=%s").trim().split("\n")).toEqual(["feat: apply the requested change", "chore: save pending changes to app.py before coder edits", "initial"]);
    expect(repo.git("show", "HEAD", "--format=")).toContain("-# return 0 for an empty list AI!");
  });

  test("an AI? comment is answered in ask mode, edits nothing, and does not fire again", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "sum() of an empty list is 0 already." }]);
    const run = watchRun(repo, s);
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      appendFileSync(join(repo.root, "app.py"), "# what does this return for no items? AI?\n");
      await until("the answer", () => run.stdout.includes("sum() of an empty list is 0 already."), () => run.stdout);
      await until("the comment to go", () => repo.read("app.py") === APP, () => run.stdout);
    } finally {
      await run.stop();
    }
    const requests = mainRequests(s);
    expect(requests).toHaveLength(1);
    expect(JSON.stringify(requests[0].messages)).toContain("nothing you write is applied");
  });

  test("an ignored file is not watched: its AI! comment is never part of a request", async () => {
    const repo = makeRepo({ "app.py": APP });
    repo.write(".gitignore", ".coder/\nbuild/\nscratch.py\n");
    repo.write("build/out.py", "x = 1\n");
    repo.write("scratch.py", "y = 2\n");
    const s = await server([{ text: "Noted." }]);
    const run = watchRun(repo, s);
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      appendFileSync(join(repo.root, "build/out.py"), "# change this AI!\n");
      appendFileSync(join(repo.root, "scratch.py"), "# and this AI!\n");
      // A watched file's question afterwards: its request shows what the watcher had gathered by then.
      appendFileSync(join(repo.root, "app.py"), "# is this fine? AI?\n");
      await until("the request", () => s.chatBodies().length > 0, () => run.stdout);
    } finally {
      await run.stop();
    }
    const text = lastUser(mainRequests(s)[0]);
    expect(text).toContain("app.py:");
    expect(text).not.toContain("build/out.py");
    expect(text).not.toContain("change this AI!");
    expect(text).not.toContain("scratch.py");
  });
});

describe("--watch-files under a model that writes AI comments, and a user who saves meanwhile (issue 21 G)", () => {
  test("one AI! comment is one request and 2 commits, even when the change writes new AI! comments", async () => {
    const repo = makeRepo({ "app.py": APP, "other.py": "X = 1\n" });
    // The reply keeps the user's comment and adds one of its own: coder's own write never asks again.
    const change = block("app.py", "    return sum(items)\n# return 0 for an empty list AI!\n", "    return sum(items) if items else 0\n# return 0 for an empty list AI!\n# also handle None AI!\n");
    const s = await server([
      { text: change, match: "return 0 for an empty list AI!" },
      { text: "X is one.", match: "what is X? AI?" },
      { text: "Noted.", repeat: true },
    ]);
    const run = watchRun(repo, s);
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      appendFileSync(join(repo.root, "app.py"), "# return 0 for an empty list AI!\n");
      await until("the change, committed", () => !repo.read("app.py").includes("empty list AI!") && repo.git("status", "--porcelain") === "", () => run.stdout);
      // The next request is the user's next comment, not one the model wrote.
      appendFileSync(join(repo.root, "other.py"), "# what is X? AI?\n");
      await until("the answer", () => run.stdout.includes("X is one."), () => run.stdout);
    } finally {
      await run.stop();
    }
    const requests = mainRequests(s).map(lastUser);
    expect(requests).toHaveLength(2);
    expect(requests[0]).toContain("return 0 for an empty list AI!");
    expect(requests[1]).toContain("what is X? AI?");
    expect(requests[1]).not.toContain("also handle None");
    expect(repo.read("app.py")).toBe("def total(items):\n    return sum(items) if items else 0\n# also handle None AI!\n");
    expect(repo.git("log", "--format=%s").trim().split("\n")).toEqual(["feat: apply the requested change", "chore: save pending changes to app.py before coder edits", "initial"]);
  });

  test("an AI! comment saved while a request runs is acted on once it is done", async () => {
    const repo = makeRepo({ "app.py": APP, "other.py": "X = 1\n" });
    const s = await server([
      { text: block("app.py", "    return sum(items)\n", "    return sum(items) if items else 0\n"), match: "return 0 for an empty list AI!", delayMs: 1500 },
      { text: block("other.py", "X = 1\n", "Y = 1\n"), match: "rename X to Y AI!" },
      { text: "Noted.", repeat: true },
    ]);
    const run = watchRun(repo, s);
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      appendFileSync(join(repo.root, "app.py"), "# return 0 for an empty list AI!\n");
      await until("the first request to be in flight", () => mainRequests(s).length === 1, () => run.stdout);
      appendFileSync(join(repo.root, "other.py"), "# rename X to Y AI!\n");
      await until("the second change", () => repo.read("other.py") === "Y = 1\n", () => run.stdout);
    } finally {
      await run.stop();
    }
    expect(repo.read("app.py")).toBe("def total(items):\n    return sum(items) if items else 0\n");
    expect(mainRequests(s).map(lastUser)[1]).toContain("rename X to Y AI!");
  });

  test("the same AI! comment put back again and again is sent at most 3 times in a row, and coder says so", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "Noted.", repeat: true }]);
    const run = watchRun(repo, s);
    const comment = "# return 0 for an empty list AI!";
    const capped = () => run.stderr.includes("Not asking again about the AI comments in app.py");
    try {
      await until("the watcher to start", () => run.stdout.includes("Watching"), () => run.stdout);
      // A tool (a sync, an editor's restore) puts the comment back each time coder removes it.
      for (let round = 0; round < 6 && !capped(); round++) {
        appendFileSync(join(repo.root, "app.py"), `${comment}\n`);
        await until("the comment removed, or the cap", () => capped() || !repo.read("app.py").includes(comment), () => run.stdout + run.stderr);
      }
    } finally {
      await run.stop();
    }
    expect(run.stderr).toContain("coder sent them 3 times in a row already");
    expect(mainRequests(s)).toHaveLength(3);
  });
});
