// `/mcp` (and `coder mcp list`): each server's status, tools, prompts and resources;
// `/mcp add SERVER URI` and `/mcp drop`; and each server prompt as `/server:prompt arg…`,
// whose text is sent as the user's message.
import type { Session } from "../../core/plugin.ts";
import { describeServer } from "./config.ts";
import type { PromptInfo } from "./connection.ts";
import type { ResourceContext } from "./resources.ts";
import type { McpServers } from "./servers.ts";

/** How many names of each list `/mcp` shows before "… and N more". */
const LISTED = 12;

export function toolName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

function names(items: readonly string[]): string {
  const shown = items.slice(0, LISTED).join(", ");
  return items.length > LISTED ? `${shown}, … and ${items.length - LISTED} more` : shown;
}

/** The `/mcp` listing: starts every enabled server first (in parallel), trying failed ones again. */
export async function renderServers(servers: McpServers, resources: ResourceContext, toolsMode: string): Promise<string> {
  if (!servers.names().length) return 'No MCP servers are configured. Add them under "mcpServers" in a config file, or pass --mcp-config FILE.';
  await servers.startAll(servers.enabled(), true);
  const lines = [`MCP servers (${servers.names().length}); tools: ${{ ask: "offered, asked before each call", auto: "offered, run without asking", off: "not offered (mcpTools off)" }[toolsMode] ?? toolsMode}`];
  for (const s of servers.states()) {
    const c = s.config;
    // A URL without "type" may have fallen back from Streamable HTTP to legacy SSE: say which one connected.
    const head = `  ${c.name}  ${s.status}  ${s.offer?.transport ?? c.transport}: ${describeServer(c)}  (${c.source})`;
    lines.push(head);
    if (s.problem && s.status !== "running") lines.push(`    ${s.problem}`);
    const offer = s.offer;
    if (!offer) continue;
    if (offer.version) lines.push(`    server: ${offer.version}`);
    lines.push(`    tools (${offer.tools.length}): ${names(offer.tools.map((t) => toolName(c.name, t.name))) || "none"}`);
    lines.push(`    prompts (${offer.prompts.length}): ${names(offer.prompts.map((p) => `/${c.name}:${p.name}`)) || "none"}`);
    lines.push(`    resources (${offer.resources.length}): ${names(offer.resources.map((r) => r.uri)) || "none"}`);
  }
  const added = resources.list();
  if (added.length) lines.push(`In the chat: ${added.map((a) => `@${a.server}:${a.uri} (${a.chars} characters)`).join(", ")}`);
  // A server's own text (its version, a problem it printed) may end in blanks: no line does here.
  return lines.map((line) => line.trimEnd()).join("\n");
}

/** `coder mcp list --json`: every server's state and offer, as one JSON document (absent values null). */
export async function serversJson(servers: McpServers, toolsMode: string) {
  await servers.startAll(servers.enabled(), true);
  return {
    tools: toolsMode,
    servers: servers.states().map((s) => ({
      name: s.config.name,
      status: s.status,
      transport: s.offer?.transport ?? s.config.transport,
      target: describeServer(s.config),
      source: s.config.source,
      problem: s.problem ?? null,
      version: s.offer?.version || null,
      tools: s.offer ? s.offer.tools.map((t) => toolName(s.config.name, t.name)) : null,
      prompts: s.offer ? s.offer.prompts.map((p) => p.name) : null,
      resources: s.offer ? s.offer.resources.map((r) => r.uri) : null,
    })),
  };
}

/** `/mcp add SERVER URI` completion: server names, then the server's resource URIs (of started servers). */
export function completeMcp(arg: string, servers: McpServers): string[] {
  const words = arg.split(/\s+/);
  if (words.length <= 1) return ["list", "add", "drop"].filter((w) => w.startsWith(words[0] ?? ""));
  if (words[0] === "add" && words.length === 2) return servers.enabled().filter((n) => n.startsWith(words[1] ?? "")).map((n) => `add ${n}`);
  if (words[0] === "add" && words.length === 3) {
    const server = words[1] ?? "";
    const state = servers.state(server);
    // Completion cannot wait: a server not started yet starts now, and the next Tab lists its resources.
    if (state && state.status === "not started") void servers.connect(server).catch(() => undefined);
    const uris = state?.offer?.resources.map((r) => r.uri) ?? [];
    return uris.filter((u) => u.startsWith(words[2] ?? "")).map((u) => `add ${server} ${u}`);
  }
  return [];
}

/**
 * `/server:prompt arg…`: positional words fill the prompt's arguments in order (the last takes
 * the rest of the line); `name=value` words fill an argument by name.
 */
export function promptArguments(prompt: PromptInfo, line: string): { args: Record<string, string> } | { error: string } {
  const args: Record<string, string> = {};
  const words = line.trim() ? line.trim().split(/\s+/) : [];
  const positional: string[] = [];
  for (const word of words) {
    const m = /^([A-Za-z0-9_-]+)=(.*)$/.exec(word);
    if (m && prompt.arguments.some((a) => a.name === m[1])) args[m[1]!] = m[2]!;
    else positional.push(word);
  }
  const open = prompt.arguments.filter((a) => !(a.name in args));
  open.forEach((a, i) => {
    if (i >= positional.length) return;
    args[a.name] = i === open.length - 1 ? positional.slice(i).join(" ") : positional[i]!;
  });
  if (positional.length && !open.length) return { error: `/${prompt.name} takes no more arguments (got "${positional.join(" ")}")` };
  const missing = prompt.arguments.filter((a) => a.required && !(a.name in args));
  if (missing.length) {
    const usage = prompt.arguments.map((a) => (a.required ? a.name.toUpperCase() : `[${a.name.toUpperCase()}]`)).join(" ");
    return { error: `missing ${missing.map((a) => a.name).join(", ")}: usage ${usage}${missing.some((a) => a.description) ? ` (${missing.map((a) => `${a.name}: ${a.description}`).join("; ")})` : ""}` };
  }
  return { args };
}

/** Run `/server:prompt arg…`: the prompt's text becomes the user's message. */
export async function runPrompt(line: string, session: Session, servers: McpServers, timeoutMs: number): Promise<void> {
  const typed = line.split(/\s+/)[0] ?? "";
  const colon = typed.indexOf(":");
  const server = typed.slice(0, colon);
  const name = typed.slice(colon + 1);
  const connection = await servers.connect(server);
  const prompt = servers.state(server)?.offer?.prompts.find((p) => p.name === name);
  if (!prompt) {
    const known = servers.state(server)?.offer?.prompts.map((p) => `/${server}:${p.name}`) ?? [];
    session.warn(`MCP server ${server} has no prompt "${name}"${known.length ? ` (it has ${names(known)})` : " (it offers no prompts)"}`);
    return;
  }
  const parsed = promptArguments(prompt, line.slice(typed.length));
  if ("error" in parsed) {
    session.warn(`/${typed}: ${parsed.error}`);
    return;
  }
  const text = await connection.getPrompt(name, parsed.args, timeoutMs);
  if (!text.trim()) {
    session.warn(`/${typed}: the prompt came back empty; nothing sent`);
    return;
  }
  await session.send(text);
}
