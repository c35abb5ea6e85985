// The `ask` format: questions about the code, answered without editing anything.
import type { EditFormat, Plugin, PromptContext } from "../../core/plugin.ts";

function system(ctx: PromptContext): string {
  return `You are an expert software developer answering questions about the code in this chat.
Answer the question asked, precisely and briefly. Refer to files, functions and lines by name. When code helps, show short snippets in ${ctx.fence[0]} fences, but do not propose edits as SEARCH/REPLACE blocks, diffs or file listings: nothing you write is applied to the files.
If you need to see a file that is not in the chat, say which one.`;
}

const plugin: Plugin = (kit) => {
  const ask: EditFormat = {
    name: "ask",
    summary: "answers questions about the code; never edits",
    mode: "none",
    prompts: (ctx) => ({
      system: system(ctx),
      examples: [
        { role: "user", content: "Where is the retry delay computed?" },
        { role: "assistant", content: "In `client/retry.py`, `backoff(attempt)` doubles a 0.5 s base per attempt and caps it at 30 s; `send()` calls it after each failed request." },
        { role: "user", content: "Why does `parse_date` return None for '2024-02-30'?" },
        { role: "assistant", content: "It calls `datetime.strptime` inside a `try`; February 30th raises `ValueError`, which the `except` turns into `None`." },
      ],
      reminder: "Reminder: answer the question; do not write edits.",
    }),
    parse: () => ({ edits: [], shell: [] }),
    apply: () => [],
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "ask", formats: [ask] };
};

export default plugin;
