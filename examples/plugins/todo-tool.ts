// A tool provider: the model may call `list_todos` to see the repository's TODO comments
// before it answers (a read-only tool without MCP). It runs without a question.
import type { Plugin } from "../../core/plugin.ts";

export default ((kit) => ({
  apiVersion: 1,
  name: "todo-tool",
  tools: [
    {
      name: "todos",
      tools: () => [
        {
          spec: {
            name: "list_todos",
            description: "List the TODO comments in the repository's tracked files, as path:line:text.",
            parameters: { type: "object", properties: { path: { type: "string", description: "only under this folder (optional)" } } },
          },
          origin: "plugin todo-tool",
          confirm: "auto",
          async call(args) {
            const under = typeof args.path === "string" && args.path ? ["--", args.path] : [];
            const r = await kit.run(["git", "grep", "-n", "-I", "-e", "TODO", ...under]);
            return r.code > 1 ? { text: r.stderr.trim() || "git grep failed", isError: true } : { text: r.stdout.trim() || "No TODO comments." };
          },
        },
      ],
    },
  ],
})) satisfies Plugin;
