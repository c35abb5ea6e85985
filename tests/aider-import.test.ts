// `coder config import-aider [FILE]` through the binary: Aider's YAML settings and the
// AIDER_* entries of .env become .coder.json keys (through the option table), what does
// not map is listed with why, an existing .coder.json keeps its other keys and comments,
// and the written file is a valid coder config.
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { BINARY, makeRepo, type Repo, removeRepos } from "./engine-harness.ts";
import { afterEach } from "bun:test";

afterEach(() => removeRepos());

async function coder(repo: Repo, args: string[]) {
  const proc = Bun.spawn([BINARY, ...args], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const AIDER_CONF = `# my aider settings
model: sonnet
weak-model: haiku
edit-format: diff
map-tokens: 2048
auto-commits: false
read:
  - CONVENTIONS.md
  - docs/style.md
lint-cmd:
  - "python: ruff check"
  - "javascript: eslint"
test-cmd: pytest -q
attribute-author: false
attribute-committer: false
attribute-co-authored-by: true
git-commit-verify: true
thinking-tokens: 8k
alias:
  - "fast:openai/gpt-4.1-mini"
openai-api-key: sk-do-not-copy
tool-output-color: "#00ff00"
analytics: true
chat-history-file: .aider.chat.history.md
`;

describe("coder config import-aider", () => {
  test(".aider.conf.yml and .env's AIDER_* become .coder.json; the rest is listed with why", async () => {
    const repo = makeRepo({});
    repo.write(".aider.conf.yml", AIDER_CONF);
    repo.write(".env", "OPENAI_API_KEY=sk-env\nAIDER_MAP_TOKENS=4096\nAIDER_SUBTREE_ONLY=true\n");
    const r = await coder(repo, ["config", "import-aider"]);
    expect(r.code).toBe(0);
    const written = JSON.parse(readFileSync(join(repo.root, ".coder.json"), "utf8"));
    expect(written).toEqual({
      model: "sonnet",
      weakModel: "haiku",
      editFormat: "diff",
      mapTokens: 4096,
      autoCommits: false,
      read: ["CONVENTIONS.md", "docs/style.md"],
      lintCmd: { python: "ruff check", javascript: "eslint" },
      testCmd: "pytest -q",
      attribution: "trailer",
      verify: true,
      thinkingTokens: 8192,
      aliases: ["fast:openai/gpt-4.1-mini"],
      subtreeOnly: true,
    });
    expect(readFileSync(join(repo.root, ".coder.json"), "utf8")).not.toContain("sk-");
    expect(r.stdout).toContain("lint-cmd → lintCmd");
    expect(r.stdout).toContain("not mapped:");
    expect(r.stdout).toContain("openai-api-key: API keys stay in the environment");
    expect(r.stdout).toContain("tool-output-color: coder's colours follow the terminal");
    expect(r.stdout).toContain("analytics: coder collects no analytics");
    expect(r.stdout).toContain("chat-history-file: a project config may not set the paths coder writes");
    expect(r.stdout).toContain("sets lintCmd, testCmd (they run code on this machine): coder asks whether to trust this repository");
    // The result is a config coder accepts.
    const shown = await coder(repo, ["--trust", "--json", "config", "show"]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).options.mapTokens).toEqual({ value: 4096, source: ".coder.json:6" });
  });

  test("an existing .coder.json keeps its comments and other keys; imported keys replace its values", async () => {
    const repo = makeRepo({});
    repo.write(".coder.json", '{\n  // pinned by the team\n  "coder": ">=0.1",\n  "mapTokens": 1024\n}\n');
    writeFileSync(join(repo.home, "team.yml"), "map-tokens: 3000\nyes-always: true\n");
    const r = await coder(repo, ["config", "import-aider", join(repo.home, "team.yml")]);
    expect(r.code).toBe(0);
    const text = readFileSync(join(repo.root, ".coder.json"), "utf8");
    expect(text).toContain("// pinned by the team");
    expect(parse(text)).toEqual({ coder: ">=0.1", mapTokens: 3000, yesAlways: true });
  });

  test("a value coder cannot take is listed, not written", async () => {
    const repo = makeRepo({});
    repo.write(".aider.conf.yml", "reasoning-effort: 7\nmap-refresh: sometimes\nstream: false\n");
    const r = await coder(repo, ["config", "import-aider"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(repo.root, ".coder.json"), "utf8"))).toEqual({ stream: false });
    expect(r.stdout).toMatch(/reasoning-effort: .*expects one of low, medium, high, got "7"/);
    expect(r.stdout).toMatch(/map-refresh: .*expects one of auto, always, files, manual/);
  });

  test("no Aider settings anywhere, a missing FILE, or YAML that is not a mapping: a clear error, nothing written", async () => {
    const repo = makeRepo({});
    const none = await coder(repo, ["config", "import-aider"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no Aider settings found");
    const missing = await coder(repo, ["config", "import-aider", "nope.yml"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read nope.yml");
    repo.write(".aider.conf.yml", "- just\n- a list\n");
    const list = await coder(repo, ["config", "import-aider"]);
    expect(list.code).toBe(2);
    expect(list.stderr).toContain('should hold settings as "key: value" lines');
    repo.write(".aider.conf.yml", "model: [unclosed\n");
    const broken = await coder(repo, ["config", "import-aider"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(".aider.conf.yml is not valid YAML");
    expect(() => readFileSync(join(repo.root, ".coder.json"))).toThrow();
  });
});
