// MCP servers in coder, through the existing plugin kinds: their tools as a tool provider
// (named server__tool, in the gathering step of core/chat/tool-calls.ts), their resources as a
// session context provider (`@server:uri`, `/mcp add`), their prompts as `/server:prompt`
// commands, and `/mcp` to see them. Nothing starts until it is used: this file loads no SDK.
import type { Kit, PluginObject, ProvidedTool, Session, TurnContext } from "../../core/plugin.ts";
import { completeMcp, renderServers, runPrompt, toolName } from "./commands.ts";
import { configuredServers, McpConfigError } from "./config.ts";
import { ResourceContext, resourceMentions } from "./resources.ts";
import { McpServers } from "./servers.ts";

type Options = Readonly<Record<string, unknown>>;

/** A tool's parameters as the Chat Completions protocol takes them: a JSON Schema object. */
function parametersOf(schema: Record<string, unknown>): Record<string, unknown> {
  return schema && schema.type === "object" ? schema : { type: "object", properties: {} };
}

export default function mcpPlugin(kit: Kit): PluginObject {
  let state: { servers: McpServers; resources: ResourceContext } | null = null;
  let configProblem: string | null = null;
  const timeoutMs = (options: Options) => (typeof options.timeout === "number" ? options.timeout : 600) * 1000;

  /** The session's servers, made from the options on first use; a bad entry is said once and leaves MCP off. */
  const session = (options: Options) => {
    if (state) return state;
    let configs: ReturnType<typeof configuredServers> = [];
    try {
      configs = configuredServers(options, process.env, kit.root, kit.cwd, kit.files.readBytes);
    } catch (error) {
      if (!(error instanceof McpConfigError)) throw error;
      configProblem = error.message;
      kit.log.warn(`${error.message}; no MCP server is used`);
    }
    const servers = new McpServers(kit, configs);
    state = { servers, resources: new ResourceContext(servers, () => timeoutMs(options)) };
    return state;
  };
  const configured = (options: Options) => Object.keys((options.mcpServers ?? {}) as object).length > 0 || typeof options.mcpConfig === "string";

  const offeredTools = async (turn: TurnContext): Promise<ProvidedTool[]> => {
    const mode = turn.options.mcpTools ?? "ask";
    if (mode === "off" || !configured(turn.options)) return [];
    const { servers } = session(turn.options);
    // Servers whose tools are not known yet (no cache) start now, together.
    const unknown = servers.enabled().filter((n) => servers.knownTools(n) === null);
    if (unknown.length) {
      kit.log.info(`starting MCP server${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")} to list ${unknown.length === 1 ? "its" : "their"} tools`);
      await servers.startAll(unknown);
    }
    return servers.enabled().flatMap((server) =>
      (servers.knownTools(server) ?? []).map((tool) => ({
        spec: { name: toolName(server, tool.name), description: tool.description || `${tool.name} (MCP server ${server})`, parameters: parametersOf(tool.inputSchema) },
        origin: `MCP server ${server}`,
        confirm: mode === "auto" ? ("auto" as const) : ("ask" as const),
        call: async (args: Record<string, unknown>, signal: AbortSignal) => {
          try {
            const connection = await servers.connect(server);
            return await connection.callTool(tool.name, args, signal, timeoutMs(turn.options));
          } catch (error) {
            const s = servers.state(server);
            const why = s?.status === "stopped" && s.problem ? s.problem : error instanceof Error ? error.message : String(error);
            return { text: `The call failed: ${why}`, isError: true };
          }
        },
      })),
    );
  };

  const mcpCommand = async (arg: string, s: Session) => {
    const { servers, resources } = session(s.options);
    const [verb = "list", ...rest] = arg.trim().split(/\s+/).filter(Boolean);
    if (verb === "list") return s.print(configProblem ?? (await renderServers(servers, resources, String(s.options.mcpTools ?? "ask"))));
    if (verb === "add") {
      const [server, ...uriWords] = rest;
      const uri = uriWords.join(" ");
      if (!server || !uri) return s.warn("usage: /mcp add SERVER URI (Tab completes the server's resources)");
      const chars = await resources.add(server, uri);
      return s.print(`Added MCP resource ${server}:${uri} (${chars} characters) to the chat, read-only.`);
    }
    if (verb === "drop") {
      const which = rest.join(" ");
      const n = resources.drop(which ? which.replace(/^@/, "") : null);
      return n ? s.print(`Dropped ${n} MCP resource${n === 1 ? "" : "s"}.`) : s.warn(which ? `No MCP resource ${which} in the chat (see /mcp).` : "No MCP resources in the chat.");
    }
    s.warn(`unknown /mcp command "${verb}": use /mcp, /mcp add SERVER URI, /mcp drop [SERVER:URI]`);
  };

  return {
    apiVersion: 1,
    name: "mcp",
    tools: [
      {
        name: "mcp",
        tools: offeredTools,
        // `coder doctor`: every enabled server must start and list what it offers.
        async check(options) {
          if (!configured(options)) return [];
          const { servers } = session(options);
          if (configProblem) return [{ name: "config", ok: false, detail: configProblem }];
          await servers.startAll();
          const rows = servers.states().map((s) => {
            const o = s.offer;
            if (s.status === "disabled") return { name: s.config.name, ok: true, detail: "disabled" };
            if (!o) return { name: s.config.name, ok: false, detail: s.problem ?? s.status };
            return { name: s.config.name, ok: true, detail: `starts (${o.version || s.config.transport}): ${o.tools.length} tools, ${o.prompts.length} prompts, ${o.resources.length} resources` };
          });
          await servers.closeAll();
          return rows;
        },
      },
    ],
    context: [
      {
        name: "mcp-resources",
        stability: "session",
        provide: () => (state ? state.resources.block(kit.log) : null),
        async onMessage(message, s) {
          if (!configured(s.options) || !message.includes("@")) return;
          const { servers, resources } = session(s.options);
          for (const { server, uri } of resourceMentions(message, servers.names())) {
            try {
              const chars = await resources.add(server, uri);
              s.print(`Added MCP resource ${server}:${uri} (${chars} characters) to the chat, read-only.`);
            } catch (error) {
              s.warn(`could not add MCP resource ${server}:${uri}: ${error instanceof Error ? error.message : String(error)}`);
            }
          }
        },
      },
    ],
    commands: [
      {
        name: "mcp",
        summary: "MCP servers: their status, tools, prompts and resources; /mcp add SERVER URI adds a resource",
        usage: "[list | add SERVER URI | drop [SERVER:URI]]",
        complete: (arg, s) => completeMcp(arg, session(s.options).servers),
        run: mcpCommand,
      },
      {
        name: "mcp-prompt",
        summary: "run an MCP server's prompt: /server:prompt arg… (see /mcp for the list)",
        usage: "SERVER:PROMPT [ARG…]",
        matches: (name, s) => {
          const colon = name.indexOf(":");
          return colon > 0 && configured(s.options) && session(s.options).servers.has(name.slice(0, colon));
        },
        run: (line, s) => (line.includes(":") ? runPrompt(line, s, session(s.options).servers, timeoutMs(s.options)) : s.warn("usage: /SERVER:PROMPT [ARG…] (see /mcp for each server's prompts)")),
      },
    ],
  };
}
