import { describe, expect, test } from "bun:test";
import { ConfigError, UsageError } from "../errors.ts";
import { parseArgv, readEnvOptions } from "./argv.ts";
import { helpText } from "../cli/help.ts";
import { OPTIONS, type OptionSpec, envName, flagName } from "./options.ts";

describe("parseArgv", () => {
  test("long, short, alias, --no- and repeatable flags map onto option keys with their spelling", () => {
    const r = parseArgv(["-m", "hi", "--openai-api-key", "k", "--no-auto-commits", "--read", "A.md", "--read", "B.md", "--map-tokens", "512", "x.py"]);
    expect(r.values).toEqual({ message: "hi", apiKey: "k", autoCommits: false, read: ["A.md", "B.md"], mapTokens: 512 });
    expect(r.origin.apiKey).toBe("flag --openai-api-key");
    expect(r.origin.message).toBe("flag -m/--message");
    expect(r.positionals).toEqual(["x.py"]);
  });

  test("the last of --git / --no-git wins", () => {
    expect(parseArgv(["--no-git", "--git"]).values.git).toBe(true);
    expect(parseArgv(["--git", "--no-git"]).values.git).toBe(false);
  });

  test("unknown flags, bad numbers and bad enum values are UsageErrors", () => {
    expect(() => parseArgv(["--nope"])).toThrow(UsageError);
    expect(() => parseArgv(["--timeout", "soon"])).toThrow('--timeout expects a number, got "soon"');
    expect(() => parseArgv(["--attribution", "x"])).toThrow("trailer, author, committer, none");
    expect(() => parseArgv(["--dry-run=yes"])).toThrow(UsageError);
  });

  test("config-only keys are not flags", () => {
    expect(() => parseArgv(["--allow-shell"])).toThrow(UsageError);
    expect(() => parseArgv(["--plugins", "x"])).toThrow(UsageError);
  });
});

describe("readEnvOptions", () => {
  test("CODER_* values are coerced and named", () => {
    const r = readEnvOptions({ CODER_MAP_TOKENS: "2048", CODER_AUTO_COMMITS: "no", CODER_READ: "a.md, b.md", CODER_TRUST: "1", CODER_HELP: "1" });
    expect(r.values).toEqual({ mapTokens: 2048, autoCommits: false, read: ["a.md", "b.md"], trust: true });
    expect(r.origin.mapTokens).toBe("env CODER_MAP_TOKENS");
  });

  test("a bad value is a ConfigError naming the variable", () => {
    expect(() => readEnvOptions({ CODER_STREAM: "perhaps" })).toThrow(ConfigError);
    expect(() => readEnvOptions({ CODER_STREAM: "perhaps" })).toThrow("CODER_STREAM");
  });
});

test("names derive from the key", () => {
  expect(flagName("mapMultiplierNoFiles")).toBe("map-multiplier-no-files");
  expect(envName("mapMultiplierNoFiles")).toBe("CODER_MAP_MULTIPLIER_NO_FILES");
});

test("help shows every flag, its short form and aliases", () => {
  const help = helpText("1.2.3");
  expect(help).toContain("coder 1.2.3");
  expect(help).toContain("-m, --message TEXT");
  expect(help).toContain("--[no-]auto-commits");
  expect(help).toContain("--openai-api-base");
  for (const spec of OPTIONS as readonly OptionSpec[]) if (!spec.configOnly) expect(help).toContain(flagName(spec.key));
});

test("token budgets may be written 8k or 0.5M (k = 1024), as Aider takes them", () => {
  expect(parseArgv(["--thinking-tokens", "8k"]).values.thinkingTokens).toBe(8192);
  expect(parseArgv(["--map-tokens", "0.5M"]).values.mapTokens).toBe(524_288);
  expect(() => parseArgv(["--thinking-tokens", "8kb"])).toThrow('--thinking-tokens expects a number, got "8kb"');
});

test("Aider's spellings: preset flags set a value, aliases of negatable flags take --no-", () => {
  expect(parseArgv(["--attribute-author"]).values.attribution).toBe("author");
  expect(parseArgv(["--no-attribute-committer"]).values.attribution).toBe("none");
  expect(parseArgv(["--no-git-commit-verify"]).values.verify).toBe(false);
  expect(parseArgv(["--lint-cmd", "python: ruff check", "--lint-cmd", "eslint"]).values.lintCmd).toEqual({ python: "ruff check", "*": "eslint" });
  expect(() => parseArgv(["--attribute-author=yes"])).toThrow("option '--attribute-author' does not take an argument");
});
