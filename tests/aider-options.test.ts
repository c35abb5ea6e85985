// Aider's options that coder adds, and Aider's spellings of options coder already has,
// through the binary against the fake server.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeServer } from "./support/fake-server.ts";
import { BINARY, block, lastUser, mainRequests, makeRepo, type Repo, runCoder, serverPerTest, weakRequests } from "./engine-harness.ts";

const server = serverPerTest();
const APP = "def total(items):\n    return sum(items)\n";
const EDIT = block("app.py", "    return sum(items)\n", "    return sum(items or [])\n");

function systemText(body: any): string {
  return (body.messages as any[]).filter((m) => m.role === "system").map((m) => String(m.content)).join("\n");
}

function jsonEvents(stdout: string): any[] {
  return stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** The binary with no model flags at all, for the options that choose keys and endpoints. */
async function bare(repo: Repo, args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([BINARY, "--no-pretty", ...args], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe("one step, then exit: --apply, --lint, --test, --commit", () => {
  test("--apply FILE applies a saved reply in the current format with no model, and commits it", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([]);
    writeFileSync(join(repo.home, "reply.md"), `Here you go.\n\n${EDIT}`);
    const r = await runCoder(repo, s, ["--apply", join(repo.home, "reply.md"), "app.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("app.py")).toContain("items or []");
    expect(s.chatBodies()).toHaveLength(0);
    expect(repo.git("status", "--porcelain").trim()).toBe("");
  });

  test("--apply with an edit that does not match exits 1 and writes nothing", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([]);
    writeFileSync(join(repo.home, "reply.md"), block("app.py", "    return max(items)\n", "    return 0\n"));
    const r = await runCoder(repo, s, ["--apply", join(repo.home, "reply.md"), "app.py"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("app.py");
    expect(repo.read("app.py")).toBe(APP);
    expect(s.chatBodies()).toHaveLength(0);
  });

  test("--lint reports a broken file and exits 1 without asking a model (nobody can answer); clean files exit 0", async () => {
    const repo = makeRepo({ "app.py": "def total(items)\n    return 1\n", "ok.py": APP });
    const s = await server([]);
    const broken = await runCoder(repo, s, ["--lint", "app.py"]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain("app.py:1: syntax error");
    const clean = await runCoder(repo, s, ["--lint", "ok.py"]);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain("No problems in ok.py.");
    expect(s.chatBodies()).toHaveLength(0);
  });

  test("--lint --yes-always has the model fix the problems, checks again, and exits 0", async () => {
    const repo = makeRepo({ "app.py": "def total(items)\n    return sum(items)\n" });
    const s = await server([{ text: block("app.py", "def total(items)\n", "def total(items):\n") }]);
    const r = await runCoder(repo, s, ["--lint", "--yes-always", "app.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("app.py")).toBe(APP);
  });

  test("--lint without files lints the files with pending changes", async () => {
    const repo = makeRepo({ "app.py": APP, "ok.py": APP });
    repo.write("app.py", "def total(items)\n");
    const r = await runCoder(repo, await server([]), ["--lint"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("app.py:1: syntax error");
    expect(r.stdout).not.toContain("ok.py");
  });

  test("--test exits with the tests' status; it needs --test-cmd", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([]);
    expect((await runCoder(repo, s, ["--test", "--test-cmd", "true"])).code).toBe(0);
    const failing = await runCoder(repo, s, ["--test", "--test-cmd", "echo broken; exit 4"]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("broken");
    const none = await runCoder(repo, s, ["--test"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--test needs a test command");
  });

  test("--commit commits the pending changes with the weak model's message", async () => {
    const repo = makeRepo({ "app.py": APP });
    repo.write("app.py", `${APP}\n# done\n`);
    const s = await server([{ model: "weak-model", text: "docs: note that total is done" }]);
    const r = await runCoder(repo, s, ["--commit"]);
    expect(r.code).toBe(0);
    expect(repo.git("log", "-1", "--format=%s").trim()).toBe("docs: note that total is done");
    expect(repo.git("status", "--porcelain").trim()).toBe("");
    const clean = await runCoder(repo, s, ["--commit"]);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain("Nothing to commit");
  });

  test("a step with --message is a usage error", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await runCoder(repo, await server([]), ["--lint", "-m", "hi"]);
    expect(r.code).toBe(2);
  });
});

describe("architect asks before handing over", () => {
  const PLAN = "Make total() return 0 for an empty list.";
  test("without --auto-accept-architect nobody can say yes in one-shot mode: the plan stays a plan", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: PLAN }]);
    const r = await runCoder(repo, s, ["--architect", "--editor-model", "openai/editor-x", "-m", "handle empty lists", "app.py"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("The plan was not handed to the editor");
    expect(s.chatBodies().map((b) => b.model)).not.toContain("editor-x");
    expect(repo.read("app.py")).toBe(APP);
  });

  test("--auto-accept-architect hands the plan over without asking", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: PLAN }, { model: "editor-x", text: EDIT }]);
    const r = await runCoder(repo, s, ["--architect", "--auto-accept-architect", "--editor-model", "openai/editor-x", "-m", "handle empty lists", "app.py"]);
    expect(r.code).toBe(0);
    expect(lastUser(s.chatBodies().find((b) => b.model === "editor-x"))).toContain(PLAN);
    expect(repo.read("app.py")).toContain("items or []");
  });
});

describe("reasoning settings in each provider's wire form", () => {
  const cases: [string, string[], (body: any) => void][] = [
    ["openai/o3 --reasoning-effort high", ["--model", "openai/o3", "--reasoning-effort", "high"], (b) => expect(b.reasoning_effort).toBe("high")],
    ["anthropic --thinking-tokens", ["--model", "anthropic/claude-sonnet-4-5", "--thinking-tokens", "4000"], (b) => expect(b.thinking).toEqual({ type: "enabled", budget_tokens: 4000 })],
    ["gemini --thinking-tokens", ["--model", "gemini/gemini-2.5-flash", "--thinking-tokens", "1024"], (b) => expect(b.extra_body).toEqual({ google: { thinking_config: { thinking_budget: 1024 } } })],
    ["gemini --reasoning-effort", ["--model", "gemini/gemini-2.5-pro", "--reasoning-effort", "low"], (b) => expect(b.reasoning_effort).toBe("low")],
    ["openrouter --reasoning-effort", ["--model", "openrouter/anthropic/claude-sonnet-4.5", "--thinking-tokens", "2048"], (b) => expect(b.reasoning).toEqual({ max_tokens: 2048 })],
  ];
  for (const [name, args, check] of cases) {
    test(name, async () => {
      const repo = makeRepo({ "app.py": APP });
      const s = await server([{ text: "ok" }]);
      const r = await runCoder(repo, s, [...args, "-m", "/ask hi"]);
      expect(r.code).toBe(0);
      check(mainRequests(s)[0]);
      expect(r.stderr).not.toContain("does not take");
    });
  }

  test("a model the table says takes neither gets neither, with one notice each", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "ok" }]);
    const r = await runCoder(repo, s, ["--reasoning-effort", "high", "--thinking-tokens", "4000", "-m", "/ask hi"]);
    expect(r.code).toBe(0);
    const [body] = mainRequests(s);
    expect(body.reasoning_effort).toBeUndefined();
    expect(body.thinking).toBeUndefined();
    expect(r.stderr).toContain("openai/gpt-4.1 does not take a reasoning effort");
    expect(r.stderr).toContain("openai/gpt-4.1 does not take a thinking-token budget");
  });

  test("`coder models` says which models take which", async () => {
    const repo = makeRepo({ "app.py": APP });
    const r = await bare(repo, ["models", "claude-sonnet-4-5"]);
    expect(r.stdout).toMatch(/anthropic\/claude-sonnet-4-5 .* budget\n/);
    const o3 = await bare(repo, ["models", "openai/o3-mini"]);
    expect(o3.stdout).toMatch(/openai\/o3-mini .* effort\n/);
  });
});

describe("keys, endpoints, models", () => {
  test("--env-file is where API keys come from", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "ok" }]);
    writeFileSync(join(repo.home, "keys.env"), "OPENAI_API_KEY=sk-from-env-file\n");
    const r = await bare(repo, ["--model", "openai/gpt-4.1", "--api-base", s.url, "--env-file", join(repo.home, "keys.env"), "-m", "/ask hi"]);
    expect(r.code).toBe(0);
    expect(s.requests.find((q) => q.path.endsWith("/chat/completions"))?.headers.authorization).toBe("Bearer sk-from-env-file");
  });

  test("--alias NAME:MODEL (and `aliases` in config) name a model", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "ok" }, { text: "ok" }]);
    expect((await runCoder(repo, s, ["--alias", "quick:openai/quick-model", "--model", "quick", "-m", "/ask hi"])).code).toBe(0);
    writeFileSync(join(repo.home, "config.json"), JSON.stringify({ aliases: ["deep:openai/deep-model"] }));
    expect((await runCoder(repo, s, ["--config", join(repo.home, "config.json"), "--model", "deep", "-m", "/ask hi"])).code).toBe(0);
    expect(mainRequests(s).map((b) => b.model)).toEqual(["quick-model", "deep-model"]);
    const bad = await runCoder(repo, s, ["--alias", "nocolon", "-m", "/ask hi"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('alias "nocolon" should be NAME:MODEL');
  });

  test("--list-models (and --models) print the matching models and exit", async () => {
    const repo = makeRepo({ "app.py": APP });
    for (const flag of ["--list-models", "--models"]) {
      const r = await bare(repo, [flag, "haiku"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("anthropic/claude-haiku-4-5");
      expect(r.stdout).not.toContain("gpt-4.1");
    }
  });

  test("--no-verify-ssl reaches an endpoint with a self-signed certificate; without it the error says how", async () => {
    const dir = makeRepo({}).home;
    const cert = join(dir, "cert.pem");
    const key = join(dir, "key.pem");
    const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"]);
    if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
    const tls = await startFakeServer([{ model: "weak-model", text: "fix: handle empty lists securely", repeat: true }, { text: "secure hello" }, { text: EDIT }], { tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") } });
    try {
      const repo = makeRepo({ "app.py": APP });
      const refused = await bare(repo, ["--model", "openai/gpt-4.1", "--api-base", tls.url, "--api-key", "sk", "-m", "/ask hi"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("TLS certificate could not be verified");
      expect(refused.stderr).toContain("--no-verify-ssl");
      const accepted = await bare(repo, ["--model", "openai/gpt-4.1", "--api-base", tls.url, "--api-key", "sk", "--no-verify-ssl", "-m", "/ask hi"]);
      expect(accepted.code).toBe(0);
      expect(accepted.stdout).toContain("secure hello");
      // The weak model's commit message goes through the same endpoint, certificate accepted too.
      const edited = await bare(repo, ["--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", tls.url, "--api-key", "sk", "--no-verify-ssl", "-m", "x", "app.py"]);
      expect(edited.code).toBe(0);
      expect(repo.git("log", "-1", "--format=%s").trim()).toBe("fix: handle empty lists securely");
    } finally {
      await tls.stop();
    }
  });
});

describe("prompts and commit messages", () => {
  test("--chat-language asks the model to answer in that language", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "hola" }]);
    await runCoder(repo, s, ["--chat-language", "Spanish", "-m", "/ask hi"]);
    expect(systemText(mainRequests(s)[0])).toContain("Always reply to the user in Spanish.");
  });

  test("--commit-prompt replaces the commit-message instructions; --commit-language adds the language", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: EDIT }]);
    const r = await runCoder(repo, s, ["--commit-prompt", "Write a haiku about the change.", "--commit-language", "French", "-m", "handle empty lists", "app.py"]);
    expect(r.code).toBe(0);
    const [weak] = weakRequests(s);
    expect(systemText(weak)).toBe("Write a haiku about the change.\nWrite the commit message in French.");
  });

  test("--no-suggest-shell-commands: the prompt asks for none, and a command the model writes anyway is not offered", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: `${EDIT}\n\`\`\`bash\ntouch ran-it\n\`\`\`\n` }, { text: EDIT }]);
    const config = join(repo.home, "config.json");
    writeFileSync(config, JSON.stringify({ allowShell: true }));
    const off = await runCoder(repo, s, ["--config", config, "--yes-always", "--no-suggest-shell-commands", "-m", "x", "app.py"]);
    expect(off.code).toBe(0);
    expect(systemText(mainRequests(s)[0])).toContain("Do not suggest shell commands.");
    expect(existsSync(join(repo.root, "ran-it"))).toBe(false);
    repo.write("app.py", APP);
    repo.git("commit", "-qam", "back");
    await runCoder(repo, s, ["-m", "x", "app.py"]);
    expect(systemText(mainRequests(s)[1])).not.toContain("Do not suggest shell commands.");
  });

  test("--notifications-command runs when a reply is done", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "ok" }]);
    const log = join(repo.home, "notified.log");
    const r = await runCoder(repo, s, ["--notifications", "--notifications-command", `echo done >> '${log}'`, "-m", "/ask hi"]);
    expect(r.code).toBe(0);
    expect(readFileSync(log, "utf8")).toBe("done\n");
  });
});

describe("files: --encoding, --line-endings, --subtree-only, --aiderignore", () => {
  test("--encoding windows-1252: smart quotes reach the model as such and are written back as single bytes", async () => {
    const repo = makeRepo({});
    writeFileSync(join(repo.root, "old.txt"), Uint8Array.from([0x93, ...Buffer.from("hi"), 0x94, 0x0a]));
    repo.git("add", "old.txt");
    repo.git("commit", "-qm", "cp1252");
    const s = await server([{ text: block("old.txt", "\u201chi\u201d\n", "\u201chello\u201d\n") }]);
    const r = await runCoder(repo, s, ["--encoding", "windows-1252", "-m", "say hello", "old.txt"]);
    expect(r.code).toBe(0);
    expect(JSON.stringify(mainRequests(s)[0].messages)).toContain("\u201chi\u201d");
    expect([...readFileSync(join(repo.root, "old.txt"))]).toEqual([0x93, ...Buffer.from("hello"), 0x94, 0x0a]);
  });

  test("--encoding utf-16le and --line-endings crlf shape new files; existing files keep theirs", async () => {
    const repo = makeRepo({ "app.py": APP });
    const create = `new.txt\n\`\`\`\n<<<<<<< SEARCH\n=======\none\ntwo\n>>>>>>> REPLACE\n\`\`\`\n`;
    const s = await server([{ text: `${create}\n${EDIT}` }]);
    const r = await runCoder(repo, s, ["--encoding", "utf-16le", "--line-endings", "crlf", "-m", "x", "app.py", "new.txt"]);
    expect(r.code).toBe(0);
    const bytes = readFileSync(join(repo.root, "new.txt"));
    expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xfe]);
    expect(new TextDecoder("utf-16le").decode(bytes.subarray(2))).toBe("one\r\ntwo\r\n");
    expect(repo.read("app.py")).toBe(APP.replace("sum(items)", "sum(items or [])"));
  });

  test("--subtree-only keeps the repo map and /add globs to the current directory's subtree", async () => {
    const repo = makeRepo({ "src/shop.py": "def checkout():\n    return 1\n", "lib/tax.py": "def vat():\n    return 2\n" });
    const s = await server([]);
    const cwd = join(repo.root, "src");
    const all = await runCoder(repo, s, ["--show-repo-map", "--map-tokens", "1024"], { cwd });
    expect(all.stdout).toContain("lib/tax.py");
    const only = await runCoder(repo, s, ["--subtree-only", "--show-repo-map", "--map-tokens", "1024"], { cwd });
    expect(only.stdout).toContain("src/shop.py");
    expect(only.stdout).not.toContain("lib/tax.py");
    const added = await runCoder(repo, s, ["--subtree-only", "-m", "/add **/*.py"], { cwd });
    expect(added.stdout).toContain("Added to the chat: src/shop.py");
    expect(added.stdout).not.toContain("lib/tax.py");
  });

  test("--aiderignore FILE (--ignore-file) leaves the paths it lists out of the map", async () => {
    const repo = makeRepo({ "shop.py": "def checkout():\n    return 1\n", "secret.py": "def hidden():\n    return 2\n", ".aiderignore": "secret.py\n" });
    const s = await server([]);
    const plain = await runCoder(repo, s, ["--show-repo-map"]);
    expect(plain.stdout).toContain("secret.py");
    const ignored = await runCoder(repo, s, ["--aiderignore", ".aiderignore", "--show-repo-map"]);
    expect(ignored.stdout).toContain("shop.py");
    expect(ignored.stdout).not.toContain("secret.py");
  });
});

describe("Aider's spellings of options coder has", () => {
  const shown = (stdout: string, key: string) => JSON.parse(stdout).options[key];
  const cases: [string[], string, unknown][] = [
    [["--git-commit-verify"], "verify", true],
    [["--no-git-commit-verify"], "verify", false],
    [["--attribute-author"], "attribution", "author"],
    [["--attribute-committer"], "attribution", "committer"],
    [["--attribute-co-authored-by"], "attribution", "trailer"],
    [["--no-attribute-author"], "attribution", "none"],
    [["--chat-mode", "ask"], "editFormat", "ask"],
    [["--aiderignore", ".aiderignore"], "ignoreFile", ".aiderignore"],
  ];
  for (const [args, key, value] of cases) {
    test(`${args.join(" ")} sets ${key}`, async () => {
      const repo = makeRepo({});
      const r = await bare(repo, [...args, "--json", "config", "show"]);
      expect(r.code).toBe(0);
      expect(shown(r.stdout, key)).toEqual({ value, source: `flag ${args[0]}` });
    });
  }

  test("--msg is --message", async () => {
    const repo = makeRepo({ "app.py": APP });
    const s = await server([{ text: "hello there" }]);
    const r = await runCoder(repo, s, ["--json", "--msg", "/ask hi"]);
    expect(r.code).toBe(0);
    expect(jsonEvents(r.stdout).find((e) => e.type === "reply")?.text).toBe("hello there");
  });
});

describe("--load FILE", () => {
  test("runs the file's slash commands before the request", async () => {
    const repo = makeRepo({ "app.py": APP, "NOTES.md": "Prefer early returns.\n" });
    const s = await server([{ text: "ok" }]);
    writeFileSync(join(repo.home, "setup.txt"), "/add app.py\n/read-only NOTES.md\n");
    const r = await runCoder(repo, s, ["--load", join(repo.home, "setup.txt"), "-m", "/ask what is in the chat?"]);
    expect(r.code).toBe(0);
    const text = JSON.stringify(mainRequests(s)[0].messages);
    expect(text).toContain("Prefer early returns.");
    expect(text).toContain("return sum(items)");
  });
});
