// The `context` format (Aider's /context): the model does not edit; it names the
// repository files a request needs changed, and the kernel adds those files to the chat.
import type { EditFormat, Plugin, PromptContext } from "../../core/plugin.ts";

function system(ctx: PromptContext): string {
  return `You are an expert software developer choosing which files of this repository must change to carry out the request.
Do not write the changes. Study the request, the repository map and any files you are shown, then list every file that must be edited or created, one per line, each by its full path from the repository root, with a few words on why.
List only files that need changing (not ones you merely read), and do not guess at paths that do not exist unless the request needs a new file.${ctx.chatFiles.length ? `\nAlready in the chat: ${ctx.chatFiles.join(", ")}.` : ""}`;
}

const plugin: Plugin = (kit) => {
  const context: EditFormat = {
    name: "context",
    summary: "names the files a request needs changed and adds them to the chat; never edits",
    mode: "files",
    prompts: (ctx) => ({
      system: system(ctx),
      examples: [
        { role: "user", content: "Make the retry delay configurable." },
        { role: "assistant", content: "- `client/retry.py`: `backoff()` hard-codes the 0.5 s base.\n- `client/config.py`: the new setting belongs with the others." },
      ],
      reminder: "Reminder: list the files to change, one per line with its full path; do not write edits.",
    }),
    parse: () => ({ edits: [], shell: [] }),
    apply: () => [],
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "context", formats: [context] };
};

export default plugin;
