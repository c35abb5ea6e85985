// MCP resources as read-only context: `/mcp add SERVER URI` and `@server:uri` in a message
// add one; the block sits in the session slot (cache-stable between changes) and a resource
// is read again after its server's `resources/updated` notification.
import type { ContextBlock } from "../../core/plugin.ts";
import type { McpServers } from "./servers.ts";

/** The most characters of one resource put in the context. */
export const RESOURCE_CAP = 100_000;

interface Added {
  server: string;
  uri: string;
  text: string;
  /** The server said it changed: read it again before the next request. */
  stale: boolean;
}

/** `@server:uri` mentions of configured servers in a message (trailing punctuation left out). */
export function resourceMentions(message: string, servers: readonly string[]): { server: string; uri: string }[] {
  const found: { server: string; uri: string }[] = [];
  for (const m of message.matchAll(/(?:^|[\s(])@([A-Za-z0-9_-]+):(\S+)/g)) {
    const [, server = "", raw = ""] = m;
    const uri = raw.replace(/[.,;:!?'")\]]+$/, "");
    if (servers.includes(server) && uri && !found.some((f) => f.server === server && f.uri === uri)) found.push({ server, uri });
  }
  return found;
}

export class ResourceContext {
  private readonly added = new Map<string, Added>();

  constructor(
    private readonly servers: McpServers,
    private readonly timeoutMs: () => number,
  ) {
    servers.onResourceUpdated = (server, uri) => {
      const item = this.added.get(keyOf(server, uri));
      if (item) item.stale = true;
    };
  }

  list(): readonly { server: string; uri: string; chars: number }[] {
    return [...this.added.values()].map((a) => ({ server: a.server, uri: a.uri, chars: a.text.length }));
  }

  /** Read the resource and keep it in the context (subscribing to its changes when the server can). */
  async add(server: string, uri: string): Promise<number> {
    const connection = await this.servers.connect(server);
    const text = await connection.readResource(uri, this.timeoutMs());
    this.added.set(keyOf(server, uri), { server, uri, text, stale: false });
    if (this.servers.state(server)?.offer?.subscribe) await connection.subscribe(uri).catch(() => undefined);
    return text.length;
  }

  /** Drop one (`server:uri`) or every resource; how many went. */
  drop(which: string | null): number {
    if (which === null) {
      const n = this.added.size;
      this.added.clear();
      return n;
    }
    return this.added.delete(which) ? 1 : 0;
  }

  /** The context block: every added resource, re-read first when its server said it changed. */
  async block(say: { info(text: string): void; warn(text: string): void }): Promise<ContextBlock | null> {
    if (!this.added.size) return null;
    for (const item of this.added.values()) {
      if (!item.stale) continue;
      item.stale = false;
      try {
        const connection = await this.servers.connect(item.server);
        item.text = await connection.readResource(item.uri, this.timeoutMs());
        say.info(`MCP resource ${item.server}:${item.uri} changed; read it again (${item.text.length} characters).`);
      } catch (error) {
        say.warn(`could not read MCP resource ${item.server}:${item.uri} again (keeping the earlier text): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const parts = [...this.added.values()].map((a) => {
      const text = a.text.length > RESOURCE_CAP ? `${a.text.slice(0, RESOURCE_CAP)}\n[cut: ${a.text.length} characters, the first ${RESOURCE_CAP} shown]` : a.text;
      const fence = "`".repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((r) => r.length + 1)));
      return `MCP resource ${a.server}:${a.uri}\n${fence}\n${text}\n${fence}`;
    });
    return {
      text: `Here are resources from MCP servers, as read-only context. Do not try to edit them.\n\n${parts.join("\n\n")}`,
      label: `MCP resources (${this.added.size})`,
    };
  }
}

function keyOf(server: string, uri: string): string {
  return `${server}:${uri}`;
}
