// MCP tools in the REPL of dist/coder (a pseudo-terminal): the gate asks before a call,
// the result shows folded, "Don't ask again" holds for that tool only, and /tokens
// counts the tools offered. The server is the reference `everything` server over stdio.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, mainRequests, serverPerTest } from "./engine-harness.ts";
import { SCRIPT, startRepl } from "./support/repl.ts";

setDefaultTimeout(90_000);
const server = serverPerTest();
const EVERYTHING = join(import.meta.dir, "..", "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const NODE = Bun.which("node") ?? process.execPath;

describe.skipIf(!SCRIPT)("MCP tools in the REPL", () => {
  test("asked, folded, Don't ask again per tool, counted in /tokens", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } }));
    const fake = await server([
      { toolCalls: [{ name: "everything__echo", arguments: { message: "line one\nline two\nline three\nline four\nline five" } }] },
      { match: "line five", text: "Echoed." },
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: 1, b: 2 } }] },
      { match: "declined", text: "Skipped the sum." },
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: 3, b: 4 } }, { id: "call_2", name: "everything__echo", arguments: { message: "still asked" } }] },
      { match: "still asked", text: "Echo still runs." },
    ]);
    const repl = startRepl(repo, fake, ["--no-pretty", "--map-tokens", "0", "--mcp-config", config]);
    await repl.waitFor("> ");
    repl.type("echo five lines");
    await repl.waitFor('Run tool everything__echo (MCP server everything) with {"message":"line one\\nline two');
    repl.type("y");
    await repl.waitFor("Tool everything__echo");
    await repl.waitFor("(MCP server everything): 5 lines");
    await repl.waitFor("│ Echo: line one");
    await repl.waitFor("│ line three");
    await repl.waitFor("│ … 2 more lines");
    await repl.waitFor("Echoed.");
    await repl.waitFor("> ");

    repl.type("add 1 and 2");
    await repl.waitFor("Run tool everything__get-sum (MCP server everything)");
    repl.type("d");
    await repl.waitFor("not run: declined");
    await repl.waitFor("Skipped the sum.");
    await repl.waitFor("> ");

    // get-sum is not asked again (declined at once); echo, another tool, still is.
    repl.type("add 3 and 4, and echo");
    await repl.waitFor("Run tool everything__echo (MCP server everything)");
    repl.type("y");
    await repl.waitFor("Echo still runs.");
    await repl.waitFor("> ");
    expect(repl.output).not.toContain('Run tool everything__get-sum (MCP server everything) with {"a":3');

    repl.type("/tokens");
    await repl.waitFor("tools offered (13)");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);

    const requests = mainRequests(fake);
    expect(requests).toHaveLength(6);
    const last = requests[5].messages.filter((m: any) => m.role === "tool");
    // The history keeps the earlier calls and results too (the REPL is one conversation).
    expect(last.map((m: any) => m.content).slice(-2)).toEqual([expect.stringContaining("Not run: the user declined this call"), "Echo: still asked"]);
  });

  test("a resource added with @server:uri is read again after the server's resources/updated", async () => {
    const repo = makeRepo({ "a.txt": "a\n" });
    const config = join(repo.root, "..", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } }));
    const uri = "demo://resource/dynamic/text/7";
    const fake = await server([
      // The server's toggle tool sends resources/updated for every subscribed resource at once.
      { toolCalls: [{ name: "everything__toggle-subscriber-updates", arguments: {} }] },
      { text: "Updates are on." },
      { text: "Seen." },
    ]);
    const repl = startRepl(repo, fake, ["--no-pretty", "--map-tokens", "0", "--mcp-tools", "auto", "--mcp-config", config]);
    await repl.waitFor("> ");
    repl.type(`watch @everything:${uri} please`);
    await repl.waitFor(`Added MCP resource everything:${uri}`);
    await repl.waitFor("Updates are on.");
    await repl.waitFor("> ");
    repl.type("and now?");
    await repl.waitFor(`MCP resource everything:${uri} changed; read it again`);
    await repl.waitFor("Seen.");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    const [first, , third] = mainRequests(fake);
    const block = (body: any) => body.messages.find((m: any) => typeof m.content === "string" && m.content.includes(`MCP resource everything:${uri}`))?.content;
    expect(block(first)).toContain("Resource 7: This is a plaintext resource created at");
    expect(block(third)).toContain("Resource 7: This is a plaintext resource created at");
  });
});
