// How the built-in text formats assemble their prompts: an introduction (one line for
// the editor of a planned change, else the model's role and the steps of a turn), the
// format's rules, worked examples and a reminder. Each format supplies all the text.
import type { ChatMessage, FormatPrompts, PromptContext } from "../core/plugin.ts";

export interface PromptText {
  /** The whole introduction when the model edits a change already planned (PromptContext.editorOnly). */
  editor: string;
  /** Who the model is and how it follows a request. */
  role: string;
  /** The last step of a turn: how this format writes the change. */
  lastStep: string;
  /** A paragraph after the steps, when the format has more to say before its rules. */
  afterSteps?: string;
  /** The format's rules: its `# How to write edits` section and whatever follows it. */
  rules: string;
  examples: ExampleExchange[];
  reminder: string;
  /** Appended to the reminder for the editor, e.g. " Diffs only.". */
  editorReminder: string;
}

/** One worked example: the user's request and the model's reply. */
export interface ExampleExchange {
  request: string;
  /** The reply's opening explanation (left out for the editor, which only edits). */
  explanation: string;
  /** The reply's edits, written as the format writes them. */
  edits: string;
}

const STEPS = `Once you understand the request:
1. Decide whether you need files that are not in the chat yet. If so, name them, ask the user to add them, and stop.
2. Explain the change in a few short sentences.
3. `;

/** A format's system prompt, examples and reminder for this turn. */
export function formatPrompts(ctx: PromptContext, text: PromptText): FormatPrompts {
  const intro = ctx.editorOnly ? [text.editor] : [text.role, STEPS + text.lastStep, ...(text.afterSteps ? [text.afterSteps] : [])];
  return {
    system: [...intro, text.rules].join("\n\n"),
    examples: text.examples.flatMap((e): ChatMessage[] => [
      { role: "user", content: e.request },
      { role: "assistant", content: (ctx.editorOnly ? "" : e.explanation + "\n\n") + e.edits },
    ]),
    reminder: text.reminder + (ctx.editorOnly ? text.editorReminder : ""),
  };
}
