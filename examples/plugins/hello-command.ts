// A slash command: `/hello [NAME]` greets and says what is in the chat.
import type { Plugin } from "../../core/plugin.ts";

export default ((kit) => ({
  apiVersion: 1,
  name: "hello-command",
  commands: [
    {
      name: "hello",
      summary: "say hello and list the chat files",
      usage: "[NAME]",
      complete: () => ["world"],
      run(arg, session) {
        const files = session.chatFiles();
        session.print(`hello ${arg.trim() || "world"} from coder ${kit.version} (${session.model.name}, ${session.editFormat}); chat files: ${files.length ? files.join(", ") : "none"}`);
      },
    },
  ],
})) satisfies Plugin;
