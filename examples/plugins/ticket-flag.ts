// A plugin with its own option: `--ticket-prefix PREFIX` (CODER_TICKET_PREFIX, config key
// "ticketPrefix"), shown in --help, `coder config schema`, `coder config show` and /settings,
// and `coder ticket [TEXT] [--json]`, which finds ticket ids in TEXT (or the last commit).
import type { Plugin, PluginOption } from "../../core/plugin.ts";

const PREFIX = { key: "ticketPrefix", type: "string", default: "JIRA", arg: "PREFIX", help: "prefix of ticket ids, e.g. JIRA for JIRA-123" } as const satisfies PluginOption;

export default ((kit) => ({
  apiVersion: 2,
  name: "ticket-flag",
  options: [PREFIX],
  subcommands: [
    {
      name: "ticket",
      usage: "[TEXT] [--json]",
      summary: "the ticket ids in TEXT (default: the last commit's message)",
      async run(args, cli) {
        const prefix = kit.options.get(PREFIX); // typed: string
        const text = args.length ? args.join(" ") : (await kit.run(["git", "log", "-1", "--format=%B"])).stdout;
        const ids = [...new Set(text.match(new RegExp(`\\b${prefix}-\\d+\\b`, "g")) ?? [])];
        if (cli.json) cli.printJson({ prefix, ids });
        else cli.print(ids.length ? ids.join("\n") : `no ${prefix}-NNN ticket id found`);
        return ids.length ? 0 : 1;
      },
    },
  ],
})) satisfies Plugin;
