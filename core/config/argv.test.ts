import { describe, expect, test } from "bun:test";
import { ConfigError, UsageError } from "../errors.ts";
import { flagValues, parseArgv, readEnvOptions } from "./argv.ts";
import { helpText } from "../cli/help.ts";
import { OPTIONS, type OptionSpec, envName, flagName, optionTable } from "./options.ts";

/** The kernel's table plus one plugin option, as a loaded plugin would declare it. */
const TABLE = optionTable([{ plugin: "test", options: [{ key: "mapTokens", type: "number", arg: "N", help: "repo-map token budget (a plugin's)" }] }]);


describe("flagValues", () => {
  test("every value typed for one option, in order, under any spelling (a repeated --model the settings keep only the last of)", () => {
    const argv = ["eval", "--model", "a", "--edit-format=diff,udiff", "--model=b", "--openai-api-key", "k", "--chat-mode", "tool", "-m", "x"];
    expect(flagValues(argv, TABLE, "model")).toEqual(["a", "b"]);
    expect(flagValues(argv, TABLE, "editFormat")).toEqual(["diff,udiff", "tool"]);
    expect(flagValues(argv, TABLE, "apiKey")).toEqual(["k"]);
    expect(flagValues(argv, TABLE, "message")).toEqual(["x"]);
    expect(flagValues(argv, TABLE, "testCmd")).toEqual([]);
    expect(parseArgv(argv, TABLE).values.model).toBe("b");
  });
});

describe("parseArgv", () => {
  test("long, short, alias, --no- and repeatable flags map onto option keys with their spelling", () => {
    const r = parseArgv(["-m", "hi", "--openai-api-key", "k", "--no-auto-commits", "--read", "A.md", "--read", "B.md", "--map-tokens", "512", "x.py"], TABLE);
    expect(r.values).toEqual({ message: "hi", apiKey: "k", autoCommits: false, read: ["A.md", "B.md"], mapTokens: 512 });
    expect(r.origin.apiKey).toBe("flag --openai-api-key");
    expect(r.origin.message).toBe("flag -m/--message");
    expect(r.positionals).toEqual(["x.py"]);
  });

  test("the last of --git / --no-git wins", () => {
    expect(parseArgv(["--no-git", "--git"], TABLE).values.git).toBe(true);
    expect(parseArgv(["--git", "--no-git"], TABLE).values.git).toBe(false);
  });

  test("unknown flags, bad numbers and bad enum values are UsageErrors", () => {
    expect(() => parseArgv(["--nope"], TABLE)).toThrow(UsageError);
    expect(() => parseArgv(["--timeout", "soon"], TABLE)).toThrow('--timeout expects a number, got "soon"');
    expect(() => parseArgv(["--attribution", "x"], TABLE)).toThrow("trailer, author, committer, none");
    expect(() => parseArgv(["--dry-run=yes"], TABLE)).toThrow(UsageError);
  });

  test("config-only keys are not flags", () => {
    expect(() => parseArgv(["--allow-shell"], TABLE)).toThrow(UsageError);
    expect(() => parseArgv(["--plugins", "x"], TABLE)).toThrow(UsageError);
  });
});

describe("readEnvOptions", () => {
  test("CODER_* values are coerced and named", () => {
    const r = readEnvOptions({ CODER_MAP_TOKENS: "2048", CODER_AUTO_COMMITS: "no", CODER_READ: "a.md, b.md", CODER_TRUST: "1", CODER_HELP: "1" }, TABLE.specs);
    expect(r.values).toEqual({ mapTokens: 2048, autoCommits: false, read: ["a.md", "b.md"], trust: true });
    expect(r.origin.mapTokens).toBe("env CODER_MAP_TOKENS");
  });

  test("a bad value is a ConfigError naming the variable", () => {
    expect(() => readEnvOptions({ CODER_STREAM: "perhaps" }, TABLE.specs)).toThrow(ConfigError);
    expect(() => readEnvOptions({ CODER_STREAM: "perhaps" }, TABLE.specs)).toThrow("CODER_STREAM");
  });
});

test("names derive from the key", () => {
  expect(flagName("mapMultiplierNoFiles")).toBe("map-multiplier-no-files");
  expect(envName("mapMultiplierNoFiles")).toBe("CODER_MAP_MULTIPLIER_NO_FILES");
});

test("help shows every flag, its short form and aliases", () => {
  const help = helpText("1.2.3", TABLE, [{ name: "map", usage: "[FILE ...]", summary: "a plugin's subcommand" }]);
  expect(help).toContain("coder 1.2.3");
  expect(help).toContain("-m, --message TEXT");
  expect(help).toContain("--[no-]auto-commits");
  expect(help).toContain("--openai-api-base");
  for (const spec of OPTIONS as readonly OptionSpec[]) if (!spec.configOnly) expect(help).toContain(flagName(spec.key));
  // A plugin's option and subcommand are listed like the kernel's.
  expect(help).toContain("--map-tokens N");
  expect(help).toContain("map [FILE ...]");
});

test("token budgets may be written 8k or 0.5M (k = 1024), as Aider takes them", () => {
  expect(parseArgv(["--thinking-tokens", "8k"], TABLE).values.thinkingTokens).toBe(8192);
  expect(parseArgv(["--map-tokens", "0.5M"], TABLE).values.mapTokens).toBe(524_288);
  expect(() => parseArgv(["--thinking-tokens", "8kb"], TABLE)).toThrow('--thinking-tokens expects a number, got "8kb"');
});

test("Aider's spellings: preset flags set a value, aliases of negatable flags take --no-", () => {
  expect(parseArgv(["--attribute-author"], TABLE).values.attribution).toBe("author");
  expect(parseArgv(["--no-attribute-committer"], TABLE).values.attribution).toBe("none");
  expect(parseArgv(["--no-git-commit-verify"], TABLE).values.verify).toBe(false);
  expect(parseArgv(["--lint-cmd", "python: ruff check", "--lint-cmd", "eslint"], TABLE).values.lintCmd).toEqual({ python: "ruff check", "*": "eslint" });
  expect(() => parseArgv(["--attribute-author=yes"], TABLE)).toThrow("option '--attribute-author' does not take an argument");
});
