// How the built-in text formats assemble their prompts: an introduction (one line for
// the editor of a planned change, else the model's role and the steps of a turn), the
// format's rules, worked examples and a reminder. Each format supplies all the text.
import type { ChatMessage, Fence, FormatPrompts, PromptContext } from "../core/plugin.ts";

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
1. Decide which files must change. New files need no asking. An existing file that is not in the chat must be added first: name it, ask the user to add it, and stop.
2. Explain the change in a few short sentences.
3. `;

/**
 * The rule on which files may be edited, as every edit format states it: `full` where no
 * steps precede the rules (they say when to ask); the editor of a planned change asks nothing.
 */
export function filesRule(ctx: Pick<PromptContext, "editorOnly">, full = false): string {
  if (ctx.editorOnly) return "Only edit files in the chat, and create the new files the plan calls for.";
  return full
    ? "Only edit files in the chat. Create new files without asking. To change an existing file that is not in the chat, name it, ask the user to add it, and stop."
    : "Only edit files in the chat, and create new files without asking.";
}

/** The reminder's clause naming the files that may be edited (or saying there are none yet). */
export function editableClause(ctx: Pick<PromptContext, "chatFiles" | "editorOnly">): string {
  const files = ctx.chatFiles;
  if (!files.length) return ctx.editorOnly ? "No files are in the chat: only create new files." : "No files are in the chat yet: create new files freely; ask the user to add any existing file you need to change.";
  const shown = files.length > 12 ? `${files.slice(0, 12).join(", ")} and ${files.length - 12} more` : files.join(", ");
  return `Edit only ${shown} (the files in the chat) and new files${ctx.editorOnly ? "" : "; ask for any other"}.`;
}

/** How a fence opens for code in `lang`: a backtick fence takes the language, a tag fence (<source>) does not. */
export const openFence = (fence: Fence, lang: string): string => (fence[0].startsWith("<") ? fence[0] : fence[0] + lang);

/** The reminder's clause naming the fence when it is not the usual three backticks, or "". */
export function fenceClause(ctx: Pick<PromptContext, "fence">): string {
  const [open, close] = ctx.fence;
  return open === "```" ? "" : ` Wrap file content in ${open} ... ${close}.`;
}

/** The rule for files holding escaped text, shared by the formats that copy file text. */
export const ESCAPED_TEXT = "Escaped text (a JSON string's \\n, XML's &amp;) is copied as the file has it.";

/** A format's system prompt, examples and reminder for this turn. */
export function formatPrompts(ctx: PromptContext, text: PromptText): FormatPrompts {
  const intro = ctx.editorOnly ? [text.editor] : [text.role, STEPS + text.lastStep, ...(text.afterSteps ? [text.afterSteps] : [])];
  return {
    system: [...intro, text.rules].join("\n\n"),
    examples: text.examples.flatMap((e): ChatMessage[] => [
      { role: "user", content: e.request },
      { role: "assistant", content: (ctx.editorOnly ? "" : e.explanation + "\n\n") + e.edits },
    ]),
    reminder: `${text.reminder}${fenceClause(ctx)} ${editableClause(ctx)}${ctx.editorOnly ? text.editorReminder : ""}`,
  };
}
