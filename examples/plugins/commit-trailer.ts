// onCommit: every commit coder makes gets a "Refs: <ticket>" trailer, the ticket taken from
// the branch name (feature/JIRA-12-login → JIRA-12); `--require-ticket` refuses to commit on a
// branch without one (the edits stay written, uncommitted, and the user is told why).
import type { Plugin, PluginOption } from "../../core/plugin.ts";

const REQUIRE = { key: "requireTicket", type: "boolean", default: false, help: "refuse coder's commits on a branch whose name holds no ticket id" } as const satisfies PluginOption;

export default ((kit) => ({
  apiVersion: 2,
  name: "commit-trailer",
  options: [REQUIRE],
  onCommit: {
    order: "post",
    async handler() {
      const branch = (await kit.run(["git", "branch", "--show-current"])).stdout.trim();
      const ticket = /[A-Z][A-Z0-9]+-\d+/.exec(branch)?.[0];
      if (ticket) return { trailers: [`Refs: ${ticket}`] };
      if (kit.options.get(REQUIRE)) return { veto: `branch "${branch}" names no ticket (e.g. feature/JIRA-12-login)` };
      return undefined;
    },
  },
})) satisfies Plugin;
