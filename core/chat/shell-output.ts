// What happens to a shell command's output once it ran: a failure can go back to
// the model as a fix request, a success's output can be added to the chat. One
// place for both callers: `/run` (through Session.offerOutput) and the commands
// the model suggests in a reply (core/chat/reply/offers.ts, through the reflection channel).

/** Output beyond this many characters is cut (its tail kept: errors come last). */
export const OUTPUT_LIMIT = 12_000;

/** The output, trimmed and cut to OUTPUT_LIMIT characters (the tail kept). */
export function clipOutput(output: string): string {
  const text = output.trimEnd();
  return text.length <= OUTPUT_LIMIT ? text : `... (${text.length - OUTPUT_LIMIT} characters cut)\n${text.slice(-OUTPUT_LIMIT)}`;
}

/** A fence longer than any backtick run in `text`, so the output cannot close it early. */
function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}

/** The request that sends a failed command's output to the model. */
export function fixRequest(command: string, code: number, output: string): string {
  return `I ran \`${command}\` and it failed (exit code ${code}):\n\n${fenced(clipOutput(output))}\n\nFix the problem it reports.`;
}

/** A command's output as a chat message. */
export function outputMessage(command: string, output: string): string {
  return `Output of \`${command}\`:\n\n${fenced(clipOutput(output))}`;
}

/** What the user chose to do with a command's output. */
export type OutputChoice = { kind: "fix"; message: string } | { kind: "add"; message: string } | null;

/**
 * Offer a finished command's output: when it failed, ask whether the model should fix what it
 * reports; when it succeeded, ask whether to add the output to the chat. Nothing is asked for a
 * command without output. `confirm` is the gate's (yes under --yes-always, no without a terminal).
 */
export async function askAboutOutput(
  command: string,
  result: { code: number; output: string },
  confirm: (question: string) => Promise<boolean>,
): Promise<OutputChoice> {
  if (!result.output.trim()) return null;
  if (result.code !== 0) {
    if (await confirm(`Ask the model to fix what \`${command}\` reports?`)) return { kind: "fix", message: fixRequest(command, result.code, result.output) };
    return null;
  }
  if (await confirm("Add the output to the chat?")) return { kind: "add", message: outputMessage(command, result.output) };
  return null;
}
