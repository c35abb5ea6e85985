// The example plugins against the binary copied alone into an empty folder (no
// node_modules anywhere up the tree): each is listed by `coder plugins`, and the
// echo model plus the toy "lines" format complete a one-shot request end to end.
// Also the runtime exit codes: 1 (edits not applied within the budget) and 130.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, EXAMPLES, coder, git, requireBinary, sandbox, writeFiles } from "./support/kernel.ts";

// The binary runs many times per test; slow CI machines need more than the 5 s default.
setDefaultTimeout(60_000);

beforeAll(requireBinary);

const EXAMPLE_FILES = ["toy-format.ts", "git-branch.ts", "echo-model.ts", "hello-command.ts", "ticket-flag.ts", "commit-trailer.ts", "redact-secrets.ts", "find-replace-format.ts", "pr-title.ts"];

/** dist/coder and the example plugins copied alone beside an empty git repository. */
function lone() {
  const s = sandbox();
  const dir = join(s.repo, "..");
  const bin = join(dir, "coder");
  copyFileSync(BIN, bin);
  chmodSync(bin, 0o755);
  for (const file of EXAMPLE_FILES) copyFileSync(join(EXAMPLES, file), join(dir, file));
  expect(existsSync(join(dir, "node_modules"))).toBe(false);
  return { ...s, dir, bin, plugin: (file: string) => join(dir, file) };
}

describe("example plugins in the lone binary", () => {
  test("coder plugins lists each example's items", async () => {
    const s = lone();
    const expected: Record<string, RegExp> = {
      "toy-format.ts": /lines\s+toy-format/,
      "git-branch.ts": /git-branch\s+git-branch/,
      "echo-model.ts": /echo\s+echo-model/,
      "hello-command.ts": /\/hello\s+hello-command/,
      // API version 2: a subcommand, and plugins of hooks only (listed among the plugins).
      "ticket-flag.ts": /ticket\s+ticket-flag/,
      "commit-trailer.ts": /^\s+commit-trailer\s+\S+commit-trailer\.ts$/m,
      "redact-secrets.ts": /^\s+redact-secrets\s+\S+redact-secrets\.ts$/m,
      "find-replace-format.ts": /find-replace\s+find-replace-format/,
      "pr-title.ts": /\/pr-title\s+pr-title/,
    };
    for (const [file, pattern] of Object.entries(expected)) {
      const r = await coder(["--plugin", s.plugin(file), "plugins"], { cwd: s.repo, env: s.env, bin: s.bin });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(pattern);
    }
    const all = await coder([...EXAMPLE_FILES.flatMap((f) => ["--plugin", s.plugin(f)]), "models", "echo"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^echo\s+1000000/m);
  });

  test("echo model + toy format complete a one-shot request: the edit is applied and committed", async () => {
    const s = lone();
    writeFiles(s.repo, { "hello.txt": "old\n" });
    git(s.repo, ["add", "."], s.env);
    git(s.repo, ["commit", "-qm", "start"], s.env);
    const args = ["--plugin", s.plugin("echo-model.ts"), "--plugin", s.plugin("toy-format.ts"), "--plugin", s.plugin("git-branch.ts"), "--model", "echo", "--edit-format", "lines", "--yes-always"];
    const r = await coder([...args, "-m", "WRITE hello.txt: Hello from echo", "hello.txt"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(r.code).toBe(0);
    expect(readFileSync(join(s.repo, "hello.txt"), "utf8")).toBe("Hello from echo\n");
    expect(git(s.repo, ["status", "--porcelain", "hello.txt"], s.env)).toBe("");
    expect(git(s.repo, ["log", "--oneline"], s.env).trim().split("\n").length).toBe(2);
  });

  test("the find-replace example format applies a saved reply through kit.formats (--apply): a re-indented FIND lands, hints pick the place", async () => {
    const s = lone();
    const app = "class Cart:\n    def total(self):\n        return 0\n\nclass Wish:\n    def total(self):\n        return 0\n";
    writeFiles(s.repo, { "app.py": app });
    git(s.repo, ["add", "."], s.env);
    git(s.repo, ["commit", "-qm", "start"], s.env);
    // FIND is written without the file's indentation and matches both classes: the prose names `Wish`.
    const reply = "In class `Wish`, total sums the items.\n\nFILE app.py\nFIND\ndef total(self):\n    return 0\nWITH\ndef total(self):\n    return sum(self.items)\nEND\n";
    writeFileSync(join(s.dir, "reply.md"), reply);
    const r = await coder(["--plugin", s.plugin("find-replace-format.ts"), "--edit-format", "find-replace", "--apply", join(s.dir, "reply.md"), "app.py"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(r.stderr).not.toContain("Error");
    expect(r.code).toBe(0);
    expect(readFileSync(join(s.repo, "app.py"), "utf8")).toBe(app.replace(/return 0\n$/, "return sum(self.items)\n"));
    expect(git(s.repo, ["status", "--porcelain", "app.py"], s.env)).toBe("");
    expect(git(s.repo, ["log", "--oneline"], s.env).trim().split("\n").length).toBe(2);

    // A FIND that is nowhere in the file writes nothing and exits 1, the file named.
    writeFileSync(join(s.dir, "miss.md"), "FILE app.py\nFIND\nreturn 42\nWITH\nreturn 43\nEND\n");
    const miss = await coder(["--plugin", s.plugin("find-replace-format.ts"), "--edit-format", "find-replace", "--apply", join(s.dir, "miss.md"), "app.py"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(miss.code).toBe(1);
    expect(miss.stdout + miss.stderr).toContain("app.py");
    expect(readFileSync(join(s.repo, "app.py"), "utf8")).toBe(app.replace(/return 0\n$/, "return sum(self.items)\n"));
  });

  test("--json one-shot with the echo model emits start ... end events", async () => {
    const s = lone();
    const args = ["--plugin", s.plugin("echo-model.ts"), "--plugin", s.plugin("toy-format.ts"), "--model", "echo", "--edit-format", "lines", "--json", "--no-auto-commits"];
    const r = await coder([...args, "-m", "WRITE new.txt: created", "new.txt"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(r.code).toBe(0);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string });
    expect(events.some((e) => e.type === "start")).toBe(true);
    expect(events.at(-1)!.type).toBe("end");
    expect(readFileSync(join(s.repo, "new.txt"), "utf8")).toBe("created\n");
  });

  test("a plugin's background error is reported with its name and the request still completes", async () => {
    const s = lone();
    writeFiles(s.repo, {
      "bg.ts": `export default () => {
  setTimeout(() => { throw new Error("timer exploded"); }, 0);
  Promise.reject(new Error("rejected in background"));
  return { apiVersion: 1, name: "bg" };
};
`,
    });
    const args = ["--plugin", "bg.ts", "--plugin", s.plugin("echo-model.ts"), "--plugin", s.plugin("toy-format.ts"), "--model", "echo", "--edit-format", "lines", "--no-auto-commits"];
    const r = await coder([...args, "-m", "WRITE out.txt: done", "out.txt"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(r.code).toBe(0);
    expect(readFileSync(join(s.repo, "out.txt"), "utf8")).toBe("done\n");
    expect(r.stderr).toContain(`plugin bg (${join(s.repo, "bg.ts")}) failed in the background: rejected in background`);
    expect(r.stderr).toContain("timer exploded");
  });

  test("exit 1 when the edits cannot be applied within the repair budget", async () => {
    const s = lone();
    const args = ["--plugin", s.plugin("echo-model.ts"), "--plugin", s.plugin("toy-format.ts"), "--model", "echo", "--edit-format", "lines", "--no-auto-commits", "--max-reflections", "1"];
    // APPEND to a missing file fails; the echo model repeats the report, which repeats the failing line.
    const r = await coder([...args, "-m", "APPEND missing.txt: more", "missing.txt"], { cwd: s.repo, env: s.env, bin: s.bin });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});

describe("interrupt", () => {
  test("Ctrl-C (SIGINT) during a request exits 130", async () => {
    const s = sandbox();
    const marker = join(s.repo, "..", "streaming");
    writeFiles(s.repo, {
      "slow.ts": `import { writeFileSync } from "node:fs";
export default { apiVersion: 1, name: "slow", models: [{ name: "slow", matches: (m) => m === "slow", info: () => undefined,
  async *stream(_req, signal) {
    writeFileSync(${JSON.stringify(marker)}, "1");
    await new Promise((resolve) => { signal.addEventListener("abort", resolve); setTimeout(resolve, 60000); });
    yield { type: "finish", reason: "stop" };
  } }] };
`,
    });
    const proc = Bun.spawn([BIN, "--plugin", "slow.ts", "--model", "slow", "--edit-format", "whole", "--no-auto-commits", "-m", "hi"], { cwd: s.repo, env: s.env, stdout: "pipe", stderr: "pipe" });
    while (!existsSync(marker)) await Bun.sleep(20);
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
  });
});
