// The session's MCP servers: each starts on first use (in parallel when several are
// needed), within its start-up timeout; a failure is said in one line and never stops the
// chat. Tool lists are kept in .coder/cache/mcp, keyed by the server's entry, so a request
// can offer a server's tools without starting it: it starts when a tool is called.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Kit } from "../../core/plugin.ts";
import { describeServer, type ServerConfig } from "./config.ts";
import type { McpConnection, ServerOffer, ToolInfo } from "./connection.ts";

export type ServerStatus = "disabled" | "not started" | "starting" | "running" | "failed" | "stopped";

export interface ServerState {
  config: ServerConfig;
  status: ServerStatus;
  /** Why it failed or stopped, in one line. */
  problem: string | null;
  /** What it offers, once started. */
  offer: ServerOffer | null;
}

/** A server that stopped on its own is started again on its next use, at most this many times a session. */
const MAX_RESTARTS = 2;

interface Entry extends ServerState {
  connection: McpConnection | null;
  starting: Promise<McpConnection> | null;
  restarts: number;
  /** Called with a resource URI the server says changed. */
}

export class McpServers {
  private readonly entries = new Map<string, Entry>();
  /** Resource change notifications, for the resource context. */
  onResourceUpdated: ((server: string, uri: string) => void) | null = null;

  constructor(
    private readonly kit: Kit,
    configs: readonly ServerConfig[],
  ) {
    for (const config of configs) {
      this.entries.set(config.name, { config, status: config.disabled ? "disabled" : "not started", problem: null, offer: null, connection: null, starting: null, restarts: 0 });
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  states(): readonly ServerState[] {
    return [...this.entries.values()];
  }

  state(name: string): ServerState | undefined {
    return this.entries.get(name);
  }

  enabled(): string[] {
    return [...this.entries.values()].filter((e) => !e.config.disabled).map((e) => e.config.name);
  }

  /** The running connection, starting the server if needed; throws a one-line Error when it cannot. */
  async connect(name: string): Promise<McpConnection> {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`no MCP server "${name}" (configured: ${this.names().join(", ") || "none"})`);
    if (entry.config.disabled) throw new Error(`MCP server ${name} is disabled ("disabled": true in ${entry.config.source})`);
    if (entry.connection) return entry.connection;
    if (entry.status === "failed") throw new Error(entry.problem ?? `MCP server ${name} failed to start`);
    if (entry.status === "stopped" && entry.restarts >= MAX_RESTARTS) throw new Error(`${entry.problem ?? `MCP server ${name} stopped`} (not restarted again this session)`);
    entry.starting ??= this.start(entry);
    return entry.starting;
  }

  private async start(entry: Entry): Promise<McpConnection> {
    const name = entry.config.name;
    if (entry.status === "stopped") entry.restarts++;
    entry.status = "starting";
    try {
      const { McpConnection } = await import("./connection.ts");
      const connection = await McpConnection.start(entry.config);
      entry.offer = await connection.offer();
      entry.connection = connection;
      entry.status = "running";
      entry.problem = null;
      connection.onClosed = (why) => {
        entry.connection = null;
        entry.status = "stopped";
        entry.problem = `MCP server ${name} (${describeServer(entry.config)}): ${why}`;
        this.kit.log.warn(entry.problem);
      };
      connection.onResourceUpdated = (uri) => this.onResourceUpdated?.(name, uri);
      this.saveTools(entry.config, entry.offer.tools);
      return connection;
    } catch (error) {
      entry.status = "failed";
      entry.problem = error instanceof Error ? error.message : String(error);
      this.kit.log.warn(entry.problem);
      throw new Error(entry.problem);
    } finally {
      entry.starting = null;
    }
  }

  /** Start these servers (default: every enabled one) in parallel; failures are reported, not thrown. */
  async startAll(names: readonly string[] = this.enabled()): Promise<void> {
    await Promise.all(names.map((n) => this.connect(n).catch(() => undefined)));
  }

  /** The server's tools: live when it runs, else from the cache (null when neither is known). */
  knownTools(name: string): ToolInfo[] | null {
    const entry = this.entries.get(name);
    if (!entry || entry.config.disabled) return null;
    if (entry.offer) return entry.offer.tools;
    if (entry.status === "failed") return [];
    return this.cachedTools(entry.config);
  }

  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map(async (e) => {
        const c = e.connection;
        e.connection = null;
        if (c) await c.close();
      }),
    );
  }

  // ─── The tool cache ──────────────────────────────────────────────────────

  private static readonly CACHE = "cache/mcp/tools.json";

  private cacheFile(): string {
    return join(this.kit.root, ".coder", McpServers.CACHE);
  }

  private cacheKey(config: ServerConfig): string {
    const { source: _source, ...entry } = config;
    return `${config.name}:${createHash("sha256").update(JSON.stringify(entry)).digest("hex").slice(0, 16)}`;
  }

  private readCache(): Record<string, ToolInfo[]> {
    try {
      return JSON.parse(readFileSync(this.cacheFile(), "utf8")) as Record<string, ToolInfo[]>;
    } catch {
      return {};
    }
  }

  private cachedTools(config: ServerConfig): ToolInfo[] | null {
    return this.readCache()[this.cacheKey(config)] ?? null;
  }

  private saveTools(config: ServerConfig, tools: ToolInfo[]): void {
    try {
      const cache = this.readCache();
      for (const key of Object.keys(cache)) if (key.startsWith(`${config.name}:`)) delete cache[key];
      cache[this.cacheKey(config)] = tools;
      // Through the kit's state writer: a tools.json a cloned repository linked elsewhere is refused, never written through.
      this.kit.state.write(McpServers.CACHE, JSON.stringify(cache));
    } catch (error) {
      this.kit.log.warn(`the MCP tool cache was not saved: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
