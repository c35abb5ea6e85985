// The MCP plugin's pure parts: server entries (checks, ${VAR} expansion, --mcp-config),
// tool names, prompt arguments and `@server:uri` mentions.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { completeMcp, promptArguments, toolName } from "./commands.ts";
import { configuredServers, DEFAULT_STARTUP_MS, expandEnv, McpConfigError, parseServer } from "./config.ts";
import { resourceMentions } from "./resources.ts";

const env = { HOME: "/home/me", TOKEN: "t0k" };

describe("server entries", () => {
  test("a stdio entry: variables expanded in command, args and env; cwd resolved; defaults", () => {
    const s = parseServer("docs", { command: "${HOME}/bin/docs", args: ["--token", "${TOKEN}"], env: { KEY: "${TOKEN}" }, cwd: "tools" }, "config", env, "/repo");
    expect(s).toEqual({ name: "docs", source: "config", disabled: false, timeoutMs: DEFAULT_STARTUP_MS, transport: "stdio", command: "/home/me/bin/docs", args: ["--token", "t0k"], env: { KEY: "t0k" }, cwd: "/repo/tools" });
  });

  test("a remote entry: Streamable HTTP unless it says sse; headers expanded; keys other tools use are ignored", () => {
    const s = parseServer("api", { url: "https://x.example/mcp", headers: { Authorization: "Bearer ${TOKEN}" }, autoApprove: [], timeout: 5 }, "config", env, "/repo");
    expect(s).toMatchObject({ transport: "http", url: "https://x.example/mcp", headers: { Authorization: "Bearer t0k" }, timeoutMs: 5000 });
    expect(parseServer("old", { url: "http://127.0.0.1:1/sse", type: "sse" }, "config", env, "/").transport).toBe("sse");
    expect(parseServer("off", { command: "x", disabled: true }, "config", env, "/").disabled).toBe(true);
  });

  test("bad entries name the key and the fix", () => {
    const bad = (raw: unknown, message: string) => expect(() => parseServer("s", raw, "f.json", env, "/")).toThrow(message);
    bad({ args: [] }, 'f.json: mcpServers.s: needs "command" (a local server) or "url" (a remote one)');
    bad({ command: "a", url: "http://x" }, 'give "command" (a local server) or "url" (a remote one), not both');
    bad({ command: "a", args: "b" }, "mcpServers.s.args: expected a list of strings");
    bad({ url: "ftp://x" }, 'mcpServers.s.url: expected an http:// or https:// URL, got "ftp://x"');
    bad({ command: "a", timeout: 0 }, "mcpServers.s.timeout: expected the start-up timeout in seconds");
    bad({ command: "a", env: { K: 1 } }, "mcpServers.s.env.K: expected a string, got 1");
    bad({ url: "http://x", type: "ws" }, 'expected "http" (Streamable HTTP) or "sse" (legacy SSE), got "ws"');
    expect(() => parseServer("a b", { command: "x" }, "f", env, "/")).toThrow(McpConfigError);
  });

  test("${VAR:-default}, and an unset variable without one is an error naming it", () => {
    expect(expandEnv("${MISSING:-none} ${TOKEN}", env, "here")).toBe("none t0k");
    expect(() => expandEnv("${MISSING}", env, "f: mcpServers.s.args[0]")).toThrow("f: mcpServers.s.args[0]: ${MISSING} is not set in the environment");
  });

  test("--mcp-config adds servers and wins a name clash with the config files", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-config-"));
    writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { docs: { command: "new-docs" }, extra: { url: "http://127.0.0.1:9/mcp" } } }));
    const servers = configuredServers({ mcpServers: { docs: { command: "old-docs" }, mine: { command: "mine" } }, mcpConfig: "mcp.json" }, env, "/repo", dir);
    expect(servers.map((s) => [s.name, s.source])).toEqual([
      ["docs", "--mcp-config mcp.json"],
      ["mine", "config"],
      ["extra", "--mcp-config mcp.json"],
    ]);
    expect(servers[0]).toMatchObject({ command: "new-docs" });
    writeFileSync(join(dir, "bad.json"), "{ nope");
    expect(() => configuredServers({ mcpConfig: "bad.json" }, env, "/repo", dir)).toThrow("--mcp-config bad.json: not valid JSON");
    writeFileSync(join(dir, "shape.json"), JSON.stringify({ servers: {} }));
    expect(() => configuredServers({ mcpConfig: "shape.json" }, env, "/repo", dir)).toThrow('--mcp-config shape.json: expected an object with "mcpServers"');
    expect(() => configuredServers({ mcpConfig: "missing.json" }, env, "/repo", dir)).toThrow("cannot read --mcp-config missing.json");
  });
});

describe("names and arguments", () => {
  test("tools are named server__tool, in the characters and length the protocol takes", () => {
    expect(toolName("docs", "search")).toBe("docs__search");
    expect(toolName("gh", "issues.list/all")).toBe("gh__issues_list_all");
    expect(toolName("s", "x".repeat(80))).toHaveLength(64);
  });

  const prompt = { name: "review", description: "", arguments: [{ name: "file", description: "the file", required: true }, { name: "focus", description: "", required: false }] };

  test("prompt arguments: positional in order (the last takes the rest), or name=value", () => {
    expect(promptArguments(prompt, "a.py look at errors")).toEqual({ args: { file: "a.py", focus: "look at errors" } });
    expect(promptArguments(prompt, "focus=speed a.py")).toEqual({ args: { focus: "speed", file: "a.py" } });
    expect(promptArguments(prompt, "")).toEqual({ error: "missing file: usage FILE [FOCUS] (file: the file)" });
    expect(promptArguments({ ...prompt, arguments: [] }, "extra")).toEqual({ error: '/review takes no more arguments (got "extra")' });
  });

  test("/mcp completion: verbs, then configured servers, then a started server's resource URIs", async () => {
    const { McpServers } = await import("./servers.ts");
    const kit = { log: { debug() {}, info() {}, warn() {}, error() {} } } as unknown as import("../../core/plugin.ts").Kit;
    const servers = new McpServers(kit, [parseServer("docs", { command: "x" }, "config", env, "/"), parseServer("off", { command: "y", disabled: true }, "config", env, "/")]);
    expect(completeMcp("a", servers)).toEqual(["add"]);
    expect(completeMcp("add d", servers)).toEqual(["add docs"]);
    expect(completeMcp("add o", servers)).toEqual([]);
  });

  test("@server:uri mentions of configured servers only, trailing punctuation left out", () => {
    const text = "See @docs:file:///a/b.md, and @nobody:x, also (@docs:demo://r/1). Mail me@docs:z";
    expect(resourceMentions(text, ["docs"])).toEqual([
      { server: "docs", uri: "file:///a/b.md" },
      { server: "docs", uri: "demo://r/1" },
    ]);
  });
});
