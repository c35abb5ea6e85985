// The session's MCP servers: each starts on first use (in parallel when several are
// needed), within its start-up timeout; a failure is said in one line and never stops the
// chat. Tool lists are kept in .coder/cache/mcp, keyed by the server's entry, so a request
// can offer a server's tools without starting it: it starts when a tool is called.
// A server that failed to start is remembered (.coder/cache/mcp/failures.json) for a while:
// the next runs skip it at once, saying so, instead of waiting its start-up timeout again;
// `/mcp`, `coder mcp list` and `coder doctor` try it again.
import { statSync } from "node:fs";
import { resolve } from "node:path";
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

/** How long a failed start is remembered: within it, later runs skip the server instead of waiting for it again. */
export const FAILURE_MEMORY_MS = 10 * 60 * 1000;

/** A remembered failed start: when, and what was said. */
interface Failure {
  at: number;
  problem: string;
}

interface Entry extends ServerState {
  connection: McpConnection | null;
  starting: Promise<McpConnection> | null;
  restarts: number;
  /** The tool list being fetched again after the server said it changed. */
  refreshing: Promise<void> | null;
  /** Start it even if it failed recently (`/mcp`, `coder mcp list`, `coder doctor` try again). */
  retry: boolean;
}

export class McpServers {
  private readonly entries = new Map<string, Entry>();
  /**
   * Whether a server that fails to start is also said on the log (stderr). `coder mcp list`
   * turns it off: its listing is where the failure is reported, once.
   */
  logFailures = true;
  /** Resource change notifications, for the resource context. */
  onResourceUpdated: ((server: string, uri: string) => void) | null = null;

  constructor(
    private readonly kit: Kit,
    configs: readonly ServerConfig[],
  ) {
    for (const config of configs) {
      this.entries.set(config.name, { config, status: config.disabled ? "disabled" : "not started", problem: null, offer: null, connection: null, starting: null, restarts: 0, refreshing: null, retry: false });
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
    if (entry.status === "not started" && !entry.retry && this.skipRemembered(entry)) throw new Error(entry.problem ?? `MCP server ${name} failed to start recently`);
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
      const connection = await McpConnection.start(entry.config, this.kit.start);
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
      // The list can change while the server runs: the session and the cache follow it.
      connection.onToolsChanged = () => {
        entry.refreshing = this.refreshTools(entry, connection);
      };
      const cached = this.cachedTools(entry.config);
      if (cached && JSON.stringify(cached) !== JSON.stringify(entry.offer.tools)) this.kit.log.info(`MCP server ${name} offers other tools than it did when they were cached; the cache now holds the new list`);
      this.saveTools(entry.config, entry.offer.tools);
      this.remember(entry.config, null);
      return connection;
    } catch (error) {
      entry.status = "failed";
      entry.problem = error instanceof Error ? error.message : String(error);
      this.remember(entry.config, entry.problem);
      if (this.logFailures) this.kit.log.warn(entry.problem);
      throw new Error(entry.problem);
    } finally {
      entry.starting = null;
    }
  }

  /** Fetch the tools again (the server said they changed), for the rest of the session and the cache. */
  private async refreshTools(entry: Entry, connection: McpConnection): Promise<void> {
    try {
      const tools = await connection.listTools();
      if (entry.offer) entry.offer = { ...entry.offer, tools };
      this.saveTools(entry.config, tools);
      this.kit.log.info(`MCP server ${entry.config.name} changed its tools: ${tools.length} now (${tools.map((t) => t.name).join(", ")})`);
    } catch (error) {
      this.kit.log.warn(`MCP server ${entry.config.name} changed its tools, but they could not be listed again: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Resolves once the server's tool list is fetched again, when it said it changed (at once otherwise). */
  async toolsSettled(name: string): Promise<void> {
    await this.entries.get(name)?.refreshing;
  }

  /** Mark the servers that failed to start recently as failed (said once each), unless they are being tried again. */
  skipRecentFailures(): void {
    for (const entry of this.entries.values()) if (!entry.config.disabled && entry.status === "not started" && !entry.retry) this.skipRemembered(entry);
  }

  /**
   * Start these servers (default: every enabled one) in parallel; failures are reported, not
   * thrown. With `retry`, servers that failed (this session or recently) are tried again.
   */
  async startAll(names: readonly string[] = this.enabled(), retry = false): Promise<void> {
    if (retry) {
      for (const name of names) {
        const entry = this.entries.get(name);
        if (!entry || entry.config.disabled) continue;
        entry.retry = true;
        if (entry.status === "failed") {
          entry.status = "not started";
          entry.problem = null;
        }
      }
    }
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

  // ─── Remembered failures ─────────────────────────────────────────────────

  private static readonly FAILURES = "cache/mcp/failures.json";

  private readFailures(): Record<string, Failure> {
    try {
      const bytes = this.kit.state.read(McpServers.FAILURES);
      const data = bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as unknown) : null;
      return data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, Failure>) : {};
    } catch {
      return {};
    }
  }

  /**
   * A server whose start failed within FAILURE_MEMORY_MS (same entry, same script) is not
   * started again: it is failed at once, with a line saying why and how to try again.
   */
  private skipRemembered(entry: Entry): boolean {
    const failure = this.readFailures()[this.cacheKey(entry.config)];
    const age = failure && typeof failure.at === "number" ? Date.now() - failure.at : Number.NaN;
    if (!(age >= 0 && age < FAILURE_MEMORY_MS)) return false;
    const minutes = Math.floor(age / 60_000);
    const ago = minutes < 1 ? "less than a minute ago" : `${minutes} min ago`;
    const left = Math.max(1, Math.ceil((FAILURE_MEMORY_MS - age) / 60_000));
    entry.status = "failed";
    entry.problem = `MCP server ${entry.config.name} skipped, as it failed to start ${ago}: ${String(failure!.problem).replace(/\.$/, "")}. It is skipped for ${left} min more; /mcp or \`coder mcp list\` tries it again now`;
    if (this.logFailures) this.kit.log.warn(entry.problem);
    return true;
  }

  /** Remember a failed start (problem), or forget one after a start that worked (null); stale ones go. */
  private remember(config: ServerConfig, problem: string | null): void {
    const failures = this.readFailures();
    const key = this.cacheKey(config);
    const now = Date.now();
    let changed = false;
    for (const [k, f] of Object.entries(failures)) {
      if (k.startsWith(`${config.name}:`) || !(typeof f?.at === "number" && now - f.at < FAILURE_MEMORY_MS)) {
        delete failures[k];
        changed = true;
      }
    }
    if (problem !== null) {
      failures[key] = { at: now, problem };
      changed = true;
    }
    if (!changed) return;
    try {
      // Through the kit's state writer: never through a link a cloned repository planted.
      this.kit.state.write(McpServers.FAILURES, JSON.stringify(failures));
    } catch (error) {
      this.kit.log.warn(`the MCP start failure was not remembered: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // ─── The tool cache ──────────────────────────────────────────────────────

  private static readonly CACHE = "cache/mcp/tools.json";

  /** The entry and the files it runs (a changed server script lists its tools again). */
  private cacheKey(config: ServerConfig): string {
    const { source: _source, ...entry } = config;
    return `${config.name}:${new Bun.CryptoHasher("sha256").update(JSON.stringify(entry)).update(scriptStamp(config)).digest("hex").slice(0, 16)}`;
  }

  private readCache(): Record<string, ToolInfo[]> {
    try {
      const bytes = this.kit.state.read(McpServers.CACHE);
      return bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as Record<string, ToolInfo[]>) : {};
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

/** Size and time of each file a local server's command and arguments name (resolved against its cwd). */
function scriptStamp(config: ServerConfig): string {
  if (config.transport !== "stdio") return "";
  const cwd = config.cwd ?? process.cwd();
  const stamps: string[] = [];
  for (const word of [config.command, ...config.args]) {
    if (word === "" || word.startsWith("-")) continue;
    try {
      const stat = statSync(resolve(cwd, word));
      if (stat.isFile()) stamps.push(`${word}:${stat.size}:${stat.mtimeMs}`);
    } catch {
      // Not a file (a program on PATH, a flag's value): nothing to stamp.
    }
  }
  return stamps.join("\n");
}
