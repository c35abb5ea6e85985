// A stdio MCP server that dies in the middle of a tool call: it runs a real server (the
// command after its own arguments), passes messages both ways, and exits with code 3
// (taking the server with it) as soon as a `tools/call` request arrives, before any answer.
//   bun tests/support/mcp-crash-proxy.ts node server.js stdio
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: mcp-crash-proxy COMMAND [ARG...]\n");
  process.exit(2);
}
const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
server.stdout.pipe(process.stdout);
let pending = "";
process.stdin.on("data", (chunk: Buffer) => {
  pending += chunk.toString("utf8");
  let newline = pending.indexOf("\n");
  while (newline >= 0) {
    const line = pending.slice(0, newline + 1);
    pending = pending.slice(newline + 1);
    if (line.includes('"tools/call"')) {
      process.stderr.write("crash-proxy: dying mid-call\n");
      server.kill("SIGKILL");
      process.exit(3);
    }
    server.stdin.write(line);
    newline = pending.indexOf("\n");
  }
});
process.stdin.on("end", () => server.stdin.end());
server.on("exit", (code) => process.exit(code ?? 1));
