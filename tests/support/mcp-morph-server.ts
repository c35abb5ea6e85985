// A stdio MCP server whose tools change while it runs: it starts with one tool, `first`;
// calling it adds `second` and removes `first`, and the server says so
// (notifications/tools/list_changed). For the tool cache's tests.
//   bun tests/support/mcp-morph-server.ts
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "morph", version: "1.0.0" });
const first = server.registerTool("first", { description: "the tool the server starts with" }, async () => {
  first.remove();
  server.registerTool("second", { description: "the tool that replaces it" }, async () => ({ content: [{ type: "text", text: "second ran" }] }));
  return { content: [{ type: "text", text: "first ran; the tools changed" }] };
});
await server.connect(new StdioServerTransport());
