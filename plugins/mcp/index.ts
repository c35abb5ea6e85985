// MCP servers in coder, through the existing plugin kinds: their tools as a tool provider
// (named server__tool, in the gathering step of core/chat/tool-calls.ts), their resources as a
// session context provider (`@server:uri`, `/mcp add`), their prompts as `/server:prompt`
// commands, and `/mcp` to see them. Nothing starts until it is used: this file loads no SDK.
import type { Kit, PluginObject, ProvidedTool, Session, SubcommandContext, TurnContext } from "../../core/plugin.ts";
import { completeMcp, renderServers, runPrompt, serversJson, toolName } from "./commands.ts";
import { MCP_CONFIG, MCP_OPTIONS, MCP_SERVERS, MCP_SUBCOMMAND, MCP_TOOLS } from "./options.ts";
import { configuredServers, McpConfigError } from "./config.ts";
import { ResourceContext, resourceMentions } from "./resources.ts";
import { McpServers } from "./servers.ts";

type Options = Readonly<Record<string, unknown>>;

/** A tool's parameters as the Chat Completions protocol takes them: a JSON Schema object. */
function parametersOf(schema: Record<string, unknown>): Record<string, unknown> {
  return schema && schema.type === "object" ? schema : { type: "object", properties: {} };
}

export default function mcpPlugin(kit: Kit): PluginObject {
  /**
   * The servers of each set of options (one for a terminal run; in `coder acp`, sessions whose
   * editor passed servers of its own have theirs), made on first use; a bad entry is said once
   * and leaves MCP off for that set.
   */
  const states = new Map<string, { servers: McpServers; resources: ResourceContext; problem: string | null }>();
  /**
   * The server entries of one set of options: the settled options' (kit.options), unless the
   * session's own options carry others (an editor's servers, added by `coder acp` to its session).
   */
  const entriesOf = (options: Options) => ({
    mcpServers: (options[MCP_SERVERS.key] as Record<string, unknown> | undefined) ?? kit.options.get(MCP_SERVERS),
    mcpConfig: (options[MCP_CONFIG.key] as string | undefined) ?? kit.options.get(MCP_CONFIG),
  });
  const keyOf = (options: Options) => {
    const { mcpServers, mcpConfig } = entriesOf(options);
    return JSON.stringify([mcpServers ?? null, mcpConfig ?? null]);
  };
  const timeoutMs = (options: Options) => (typeof options.timeout === "number" ? options.timeout : 600) * 1000;

  const session = (options: Options) => {
    const known = states.get(keyOf(options));
    if (known) return known;
    let configs: ReturnType<typeof configuredServers> = [];
    let problem: string | null = null;
    try {
      configs = configuredServers(entriesOf(options), process.env, kit.root, kit.cwd, kit.files.readBytes);
    } catch (error) {
      if (!(error instanceof McpConfigError)) throw error;
      problem = error.message;
      kit.log.warn(`${error.message}; no MCP server is used`);
    }
    const servers = new McpServers(kit, configs);
    const state = { servers, resources: new ResourceContext(servers, () => timeoutMs(options)), problem };
    states.set(keyOf(options), state);
    return state;
  };
  const configured = (options: Options) => {
    const { mcpServers, mcpConfig } = entriesOf(options);
    return Object.keys(mcpServers ?? {}).length > 0 || mcpConfig !== undefined;
  };

  const offeredTools = async (turn: TurnContext): Promise<ProvidedTool[]> => {
    const mode = kit.options.get(MCP_TOOLS);
    if (mode === "off" || !configured(turn.options)) return [];
    const { servers } = session(turn.options);
    // Servers that failed to start recently are skipped (said once); those whose tools are not known yet (no cache) start now, together.
    servers.skipRecentFailures();
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
            const result = await connection.callTool(tool.name, args, signal, timeoutMs(turn.options));
            // A call may change the server's tools (it says so before it answers): the cache follows first.
            await servers.toolsSettled(server);
            return result;
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
    const { servers, resources, problem } = session(s.options);
    const [verb = "list", ...rest] = arg.trim().split(/\s+/).filter(Boolean);
    if (verb === "list") return s.print(problem ?? (await renderServers(servers, resources, kit.options.get(MCP_TOOLS))));
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

  /**
   * `coder mcp list [--json]`: the servers started, listed, and closed again. A server that
   * failed is reported in the listing only (not again on stderr), and the exit code is 1.
   */
  const listCommand = async (args: readonly string[], cli: SubcommandContext): Promise<number> => {
    if (args.length !== 1 || args[0] !== "list") cli.usage(`unknown command "coder mcp ${args.join(" ")}" (use \`coder mcp list\` or \`coder mcp list --json\`)`);
    const { servers, resources, problem } = session(cli.options);
    try {
      if (problem) {
        cli.warn(problem);
        return 1;
      }
      servers.logFailures = false;
      if (cli.json) cli.printJson(await serversJson(servers, kit.options.get(MCP_TOOLS)));
      else cli.print(await renderServers(servers, resources, kit.options.get(MCP_TOOLS)));
      return servers.states().some((s) => s.status === "failed") ? 1 : 0;
    } finally {
      await servers.closeAll();
    }
  };

  return {
    apiVersion: 2,
    name: "mcp",
    options: MCP_OPTIONS,
    subcommands: [{ ...MCP_SUBCOMMAND, run: listCommand }],
    // At exit (and on SIGTERM): the servers started this session close, their process groups with them.
    dispose: async () => {
      await Promise.all([...states.values()].map((state) => state.servers.closeAll()));
    },
    tools: [
      {
        name: "mcp",
        tools: offeredTools,
        runUnasked: 'set "mcpTools": "auto"',
        // `coder doctor`: every enabled server must start and list what it offers.
        async check(options) {
          if (!configured(options)) return [];
          const { servers, problem } = session(options);
          if (problem) return [{ name: "config", ok: false, detail: problem }];
          await servers.startAll(servers.enabled(), true);
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
        provide: (turn) => states.get(keyOf(turn.options))?.resources.block(kit.log) ?? null,
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
        usage: "/mcp [list|add|drop]",
        complete: (arg, s) => completeMcp(arg, session(s.options).servers),
        run: mcpCommand,
      },
      {
        name: "mcp-prompt",
        summary: "run an MCP server's prompt: /server:prompt arg… (see /mcp for the list)",
        usage: "/SERVER:PROMPT [ARG…]",
        matches: (name, s) => {
          const colon = name.indexOf(":");
          return colon > 0 && configured(s.options) && session(s.options).servers.has(name.slice(0, colon));
        },
        run: (line, s) => (line.includes(":") ? runPrompt(line, s, session(s.options).servers, timeoutMs(s.options)) : s.warn("usage: /SERVER:PROMPT [ARG…] (see /mcp for each server's prompts)")),
      },
    ],
  };
}
