// A context provider: tells the model which git branch is checked out, once per
// session (stability "session" keeps it in the cacheable prefix).
import type { Plugin } from "../../core/plugin.ts";

export default ((kit) => ({
  apiVersion: 1,
  name: "git-branch",
  context: [
    {
      name: "git-branch",
      stability: "session",
      async provide() {
        const result = await kit.run(["git", "branch", "--show-current"]);
        const branch = result.code === 0 ? result.stdout.trim() : "";
        return branch ? { text: `The current git branch is ${branch}.`, label: "git branch" } : null;
      },
    },
  ],
})) satisfies Plugin;
