// One live connection to an MCP server through the official SDK client: stdio (in its own
// process group, stdio.ts), Streamable HTTP with a fall-back to legacy SSE, or SSE. This
// module (and the SDK) is imported only when a server starts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describeServer, type ServerConfig } from "./config.ts";
import { GroupStdioTransport } from "./stdio.ts";
import type { Kit } from "../../core/plugin.ts";

export interface ToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface PromptInfo {
  name: string;
  description: string;
  arguments: { name: string; description: string; required: boolean }[];
}

export interface ResourceInfo {
  uri: string;
  name: string;
  mimeType?: string;
}

/** What a started server offers. */
export interface ServerOffer {
  tools: ToolInfo[];
  prompts: PromptInfo[];
  resources: ResourceInfo[];
  /** The server can notify resource changes (`resources/subscribe`). */
  subscribe: boolean;
  /** The server's own name and version, from `initialize`. */
  version: string;
  /** The transport that connected: "stdio", "http" (Streamable HTTP) or "sse". */
  transport: string;
}

const CLIENT = { name: "coder", version: "1" };

/** A failure to start, said in one line: name, what it runs, why, and the stderr tail. */
export class StartFailure extends Error {}

export class McpConnection {
  /** Called when the connection ends on its own (the server exited or the link dropped). */
  onClosed: ((why: string) => void) | null = null;
  /** Called with a resource URI the server says changed. */
  onResourceUpdated: ((uri: string) => void) | null = null;
  /** Called when the server says its tool list changed (`notifications/tools/list_changed`). */
  onToolsChanged: (() => void) | null = null;
  private closing = false;

  private constructor(
    readonly server: ServerConfig,
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly kind: string,
  ) {}

  /** Connect and initialise within the server's start-up timeout. */
  static async start(server: ServerConfig, start: Kit["start"]): Promise<McpConnection> {
    const transports = server.transport === "stdio" ? ["stdio"] : server.transport === "sse" ? ["sse"] : ["http", "sse"];
    let lastError: unknown;
    let tail = "";
    for (const kind of transports) {
      const transport = makeTransport(server, kind, start);
      const client = new Client(CLIENT, { capabilities: {} });
      const connection = new McpConnection(server, client, transport, kind);
      try {
        await withTimeout(client.connect(transport, { timeout: server.timeoutMs }), server.timeoutMs, () => void transport.close().catch(() => {}));
        connection.listen();
        return connection;
      } catch (error) {
        lastError = error;
        await transport.close().catch(() => {});
        if (transport instanceof GroupStdioTransport) tail = transport.stderrTail();
      }
    }
    throw new StartFailure(startFailure(server, lastError, tail));
  }

  private listen(): void {
    this.client.onclose = () => {
      if (this.closing) return;
      const t = this.transport instanceof GroupStdioTransport ? this.transport : null;
      const status = t?.exitStatus ? ` (${t.exitStatus})` : "";
      const tail = t?.stderrTail() ? `; stderr: ${t.stderrTail()}` : "";
      this.onClosed?.(`the server stopped${status}${tail}`);
    };
    this.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => this.onResourceUpdated?.(n.params.uri));
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onToolsChanged?.());
  }

  /** The server's tools, prompts and resources (each list empty when the server lacks the capability). */
  async offer(): Promise<ServerOffer> {
    const caps = this.client.getServerCapabilities() ?? {};
    const info = this.client.getServerVersion();
    const tools: ToolInfo[] = [];
    const prompts: PromptInfo[] = [];
    const resources: ResourceInfo[] = [];
    const timeout = { timeout: this.server.timeoutMs };
    await Promise.all([
      caps.tools && this.listTools().then((list) => tools.push(...list)),
      caps.prompts &&
        pages(async (cursor) => {
          const r = await this.client.listPrompts(cursor ? { cursor } : undefined, timeout);
          const items = r.prompts.map((p) => ({
            name: p.name,
            description: p.description ?? "",
            arguments: (p.arguments ?? []).map((a) => ({ name: a.name, description: a.description ?? "", required: a.required === true })),
          }));
          return { items, next: r.nextCursor };
        }, prompts),
      caps.resources &&
        pages(async (cursor) => {
          const r = await this.client.listResources(cursor ? { cursor } : undefined, timeout);
          return { items: r.resources.map((x) => ({ uri: x.uri, name: x.name, ...(x.mimeType ? { mimeType: x.mimeType } : {}) })), next: r.nextCursor };
        }, resources),
    ]);
    return { tools, prompts, resources, subscribe: caps.resources?.subscribe === true, version: info ? `${info.name} ${info.version}` : "", transport: this.kind };
  }

  /** The server's tools, as it lists them now. */
  async listTools(): Promise<ToolInfo[]> {
    const tools: ToolInfo[] = [];
    await pages(async (cursor) => {
      const r = await this.client.listTools(cursor ? { cursor } : undefined, { timeout: this.server.timeoutMs });
      return { items: r.tools.map((t) => ({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema as Record<string, unknown> })), next: r.nextCursor };
    }, tools);
    return tools;
  }

  /** Call a tool; its content as text (images and binary resources described, not inlined). */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<{ text: string; isError: boolean }> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs, resetTimeoutOnProgress: true });
    const content = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
    let text = content.map(contentText).join("\n");
    if (!text && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent, null, 2);
    if (!content.length && "toolResult" in result) text = JSON.stringify(result.toolResult, null, 2);
    return { text, isError: result.isError === true };
  }

  /** A resource's text (every text part; binary parts described). */
  async readResource(uri: string, timeoutMs: number): Promise<string> {
    const r = await this.client.readResource({ uri }, { timeout: timeoutMs });
    return r.contents.map((c) => ("text" in c && typeof c.text === "string" ? c.text : `[binary ${c.mimeType ?? "data"} resource ${c.uri}]`)).join("\n");
  }

  async subscribe(uri: string): Promise<void> {
    await this.client.subscribeResource({ uri });
  }

  /** A prompt's messages as one text, for the user's message. */
  async getPrompt(name: string, args: Record<string, string>, timeoutMs: number): Promise<string> {
    const r = await this.client.getPrompt({ name, arguments: args }, { timeout: timeoutMs });
    const parts = r.messages.map((m) => ({ role: m.role, text: contentText(m.content as ContentItem) }));
    if (parts.every((p) => p.role === "user")) return parts.map((p) => p.text).join("\n\n");
    return parts.map((p) => `${p.role}: ${p.text}`).join("\n\n");
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => {});
    await this.transport.close().catch(() => {});
  }
}

/** Every page of a paged list (at most 20), into `into`. */
async function pages<T>(fetch: (cursor?: string) => Promise<{ items: T[]; next?: string }>, into: T[]): Promise<void> {
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const r = await fetch(cursor);
    into.push(...r.items);
    if (!r.next) return;
    cursor = r.next;
  }
}

type ContentItem =
  | { type: "text"; text: string }
  | { type: "image" | "audio"; mimeType: string; data: string }
  | { type: "resource"; resource: { uri: string; text?: string; mimeType?: string } }
  | { type: "resource_link"; uri: string; name?: string }
  | { type: string };

function contentText(item: ContentItem): string {
  switch (item.type) {
    case "text":
      return (item as { text: string }).text;
    case "image":
    case "audio": {
      const media = item as { mimeType: string; data: string };
      return `[${item.type} ${media.mimeType}, ${Math.round((media.data.length * 3) / 4)} bytes, not shown]`;
    }
    case "resource": {
      const r = (item as { resource: { uri: string; text?: string; mimeType?: string } }).resource;
      return typeof r.text === "string" ? r.text : `[binary ${r.mimeType ?? "data"} resource ${r.uri}]`;
    }
    case "resource_link":
      return `[resource ${(item as { uri: string }).uri}]`;
    default:
      return `[${item.type} content]`;
  }
}

function makeTransport(server: ServerConfig, kind: string, start: Kit["start"]): Transport {
  if (server.transport === "stdio") return new GroupStdioTransport(server, start);
  const requestInit = { headers: server.headers };
  if (kind === "sse") return new SSEClientTransport(new URL(server.url), { requestInit, eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...server.headers } }) } });
  return new StreamableHTTPClientTransport(new URL(server.url), { requestInit });
}

function startFailure(server: ServerConfig, error: unknown, tail: string): string {
  const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return `MCP server ${server.name} (${describeServer(server)}) did not start: ${why}${tail ? `; stderr: ${tail}` : ""}`;
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`no answer to initialize within ${ms / 1000} s (raise "timeout" in its entry if it is slow to start)`));
    }, ms);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}
