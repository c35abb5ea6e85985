// Shell-command suggestions in replies, one rule for every built-in format: the prompt
// teaches a ```bash block (three backticks, whatever fence file listings use: a command
// never holds a ``` line); the parsers read them with kit.formats.shellBlocks.
import type { PromptContext } from "../core/plugin.ts";

/** The sentence every format's rules carry about shell commands (`where` says where the block goes, e.g. "outside the patch"). */
export function shellRule(ctx: Pick<PromptContext, "shellSuggestions">, where = "of its own"): string {
  if (!ctx.shellSuggestions) return "Do not suggest shell commands.";
  return `Shell commands the user may want to run go in a \`\`\`bash block ${where}, one command per line.`;
}
