// MCP server entries as other tools write them (`mcpServers`: name → { command, args, env,
// cwd } or { url, headers }), checked field by field with errors naming where the entry
// came from, with `${VAR}` expanded from the environment. Entries come from the config files
// (the option `mcpServers`, trust already applied) and from `--mcp-config FILE`.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Kit } from "../../core/plugin.ts";

interface Common {
  name: string;
  /** Where the entry was written, for messages: a config file, or "--mcp-config FILE". */
  source: string;
  disabled: boolean;
  /** Start-up timeout in milliseconds. */
  timeoutMs: number;
}

export interface StdioServer extends Common {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface HttpServer extends Common {
  /** "http": Streamable HTTP, falling back to legacy SSE; "sse": legacy SSE only. */
  transport: "http" | "sse";
  url: string;
  headers: Record<string, string>;
}

export type ServerConfig = StdioServer | HttpServer;

/** How long a server may take to start and answer `initialize`, unless its entry says `"timeout"` (seconds). */
export const DEFAULT_STARTUP_MS = 30_000;

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
const KNOWN_KEYS = new Set(["command", "args", "env", "cwd", "url", "headers", "type", "transport", "disabled", "timeout"]);

/** A problem in a server entry, with the fix. */
export class McpConfigError extends Error {}

/** `${NAME}` (and `${NAME:-default}`) replaced from `env`; an unset variable without a default is an error. */
export function expandEnv(value: string, env: Readonly<Record<string, string | undefined>>, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined) return found;
    if (fallback !== undefined) return fallback;
    throw new McpConfigError(`${where}: \${${name}} is not set in the environment; set it, or write \${${name}:-default}`);
  });
}

/** Check one entry and expand its variables. Unknown keys other tools use (e.g. "autoApprove") are ignored. */
export function parseServer(name: string, raw: unknown, source: string, env: Readonly<Record<string, string | undefined>>, baseDir: string): ServerConfig {
  const at = `${source}: mcpServers.${name}`;
  if (!SERVER_NAME.test(name)) throw new McpConfigError(`${at}: a server name is letters, digits, _ and - (it prefixes its tools, e.g. ${name.replace(/[^A-Za-z0-9_-]/g, "_")}__tool)`);
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new McpConfigError(`${at}: expected an object with "command" (a local server) or "url" (a remote one)`);
  const entry = raw as Record<string, unknown>;
  const text = (key: string): string | undefined => {
    const v = entry[key];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || !v) throw new McpConfigError(`${at}.${key}: expected a non-empty string, got ${JSON.stringify(v)}`);
    return expandEnv(v, env, `${at}.${key}`);
  };
  const record = (key: string): Record<string, string> => {
    const v = entry[key];
    if (v === undefined) return {};
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new McpConfigError(`${at}.${key}: expected an object of names to strings`);
    const out: Record<string, string> = {};
    for (const [k, item] of Object.entries(v)) {
      if (typeof item !== "string") throw new McpConfigError(`${at}.${key}.${k}: expected a string, got ${JSON.stringify(item)}`);
      out[k] = expandEnv(item, env, `${at}.${key}.${k}`);
    }
    return out;
  };
  if (entry.disabled !== undefined && typeof entry.disabled !== "boolean") throw new McpConfigError(`${at}.disabled: expected true or false`);
  const timeout = entry.timeout;
  if (timeout !== undefined && (typeof timeout !== "number" || !(timeout > 0))) throw new McpConfigError(`${at}.timeout: expected the start-up timeout in seconds, a number above 0`);
  const common = { name, source, disabled: entry.disabled === true, timeoutMs: typeof timeout === "number" ? timeout * 1000 : DEFAULT_STARTUP_MS };
  const kind = text("type") ?? text("transport");
  if (entry.command !== undefined && entry.url !== undefined) throw new McpConfigError(`${at}: give "command" (a local server) or "url" (a remote one), not both`);
  if (entry.command !== undefined) {
    if (kind !== undefined && kind !== "stdio") throw new McpConfigError(`${at}.type: a server with "command" talks over stdio; leave "type" out or write "stdio"`);
    const args = entry.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) throw new McpConfigError(`${at}.args: expected a list of strings`);
    const cwd = text("cwd");
    return {
      ...common,
      transport: "stdio",
      command: text("command") as string,
      args: (args as string[]).map((a, i) => expandEnv(a, env, `${at}.args[${i}]`)),
      env: record("env"),
      ...(cwd ? { cwd: resolve(baseDir, cwd) } : {}),
    };
  }
  if (entry.url !== undefined) {
    const url = text("url") as string;
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http");
    } catch {
      throw new McpConfigError(`${at}.url: expected an http:// or https:// URL, got ${JSON.stringify(url)}`);
    }
    if (kind !== undefined && !["http", "streamable-http", "streamableHttp", "sse"].includes(kind)) {
      throw new McpConfigError(`${at}.type: expected "http" (Streamable HTTP) or "sse" (legacy SSE), got ${JSON.stringify(kind)}`);
    }
    return { ...common, transport: kind === "sse" ? "sse" : "http", url, headers: record("headers") };
  }
  const unknown = Object.keys(entry).filter((k) => !KNOWN_KEYS.has(k));
  throw new McpConfigError(`${at}: needs "command" (a local server) or "url" (a remote one)${unknown.length ? `; found only ${unknown.map((k) => `"${k}"`).join(", ")}` : ""}`);
}

/** The servers of `--mcp-config FILE`: a JSON file whose "mcpServers" object holds the entries (as .mcp.json files do). */
export function readServerFile(file: string, cwd: string, readBytes?: Kit["files"]["readBytes"]): { entries: Record<string, unknown>; source: string; baseDir: string } {
  const path = resolve(cwd, file);
  const source = `--mcp-config ${file}`;
  let text: string;
  if (readBytes) {
    // The kit's capped reader: a regular file of at most 1 MB (not a link to /dev/zero or a pipe).
    const read = readBytes(path, { maxBytes: 1024 * 1024 });
    if (!read.ok) throw new McpConfigError(`cannot read ${source}: ${read.missing ? "no such file" : read.problem}`);
    text = new TextDecoder().decode(read.bytes);
  } else {
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new McpConfigError(`cannot read ${source}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`${source}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const servers = value && typeof value === "object" && !Array.isArray(value) ? (value as { mcpServers?: unknown }).mcpServers : undefined;
  if (!servers || typeof servers !== "object" || Array.isArray(servers)) throw new McpConfigError(`${source}: expected an object with "mcpServers": { "name": { "command": … } }`);
  return { entries: servers as Record<string, unknown>, source, baseDir: resolve(path, "..") };
}

/**
 * Every configured server: the config files' (already merged by name, trust applied by the
 * kernel) then `--mcp-config`'s, which win a name clash for this run.
 */
export function configuredServers(
  options: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  root: string,
  cwd: string,
  readBytes?: Kit["files"]["readBytes"],
): ServerConfig[] {
  const found = new Map<string, ServerConfig>();
  const fromConfig = (options.mcpServers ?? {}) as Record<string, unknown>;
  for (const [name, raw] of Object.entries(fromConfig)) found.set(name, parseServer(name, raw, "config", env, root));
  if (typeof options.mcpConfig === "string") {
    const file = readServerFile(options.mcpConfig, cwd, readBytes);
    for (const [name, raw] of Object.entries(file.entries)) found.set(name, parseServer(name, raw, file.source, env, file.baseDir));
  }
  return [...found.values()];
}

/** What a server runs, for messages: the command line, or the URL. */
export function describeServer(server: ServerConfig): string {
  return server.transport === "stdio" ? [server.command, ...server.args].join(" ") : server.url;
}
