// The `architect` edit format: the main model writes a plan in prose; the
// engine hands it, as the request, to an editor coder (editor model + editor
// format) that makes the edits. This plugin only supplies the prompts.
import type { EditFormat, Plugin } from "../../core/plugin.ts";
import { ARCHITECT_OPTIONS } from "./options.ts";

const architect: EditFormat = {
  name: "architect",
  summary: "plan the change in prose; an editor model then writes the edits",
  mode: "editor",
  prompts: (ctx) => ({
    system: [
      "You are a senior software architect working with an editor engineer who will carry out your instructions.",
      "Study the request and the code you are shown, then explain exactly how the code must change.",
      "Name every file to change or create, and each function, class or block inside it.",
      "Be precise and complete, but show only the lines that change, not whole files: the editor engineer writes the actual edits.",
      "Do not write SEARCH/REPLACE blocks, diffs or other edit formats.",
      ctx.chatFiles.length
        ? "If a file you need is not in the chat, name it by its full path and ask for it to be added."
        : "No files are in the chat yet: if you need to see files, name them by their full paths and ask for them to be added.",
    ].join("\n"),
    examples: [],
    reminder: "Describe the changes for the editor engineer in prose; do not write edit blocks.",
  }),
  parse: () => ({ edits: [], shell: [] }),
  apply: () => [],
  report: () => "",
};

export default ((_kit) => ({ apiVersion: 2, name: "architect", formats: [architect], options: ARCHITECT_OPTIONS })) satisfies Plugin;
