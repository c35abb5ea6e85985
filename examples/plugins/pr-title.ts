// Asking the person from a command: `/pr-title` picks the kind of change (kit.ui.select) and
// asks for a one-line summary (kit.ui.input), then prints a pull-request title. In the REPL the
// questions are asked; under --yes-always, or with nobody to ask (-m, --json), each takes its
// default; in an editor (ACP) the kind is a permission request and the summary a form.
import type { Plugin } from "../../core/plugin.ts";

export default ((kit) => ({
  apiVersion: 2,
  name: "pr-title",
  commands: [
    {
      name: "pr-title",
      summary: "ask the kind and summary of a change, and print a pull-request title",
      async run(_arg, session) {
        const kind = await kit.ui.select("Kind of change?", ["feat", "fix", "chore"] as const, { default: "fix", detail: "The Conventional Commits type." });
        if (kind === null) return session.print("No title: cancelled.");
        const summary = await kit.ui.input("Summary?", { default: "update the docs", detail: "One line, in the imperative." });
        if (summary === null) return session.print("No title: cancelled.");
        session.print(`Title: ${kind}: ${summary}`);
      },
    },
  ],
})) satisfies Plugin;
