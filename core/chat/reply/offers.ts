// The offers after a reply: the shell commands it suggested (run once the gate allows)
// and the files it names in prose (added to the chat once the user agrees). Either can
// add to the turn's reflection.
import type { ChatFiles } from "../chat-files.ts";
import { blockMessages } from "../chunks.ts";
import type { ChatHistory } from "../history.ts";
import { fileMentions } from "../mentions.ts";
import { askAboutOutput } from "../shell-output.ts";
import type { CoderServices, SendResult } from "../types.ts";

/** Run a shell command of the chat once the gate allows it: its exit code and output (stdout, then stderr); null when refused. */
export async function runPermittedCommand(services: CoderServices, command: string): Promise<{ code: number; output: string } | null> {
  if (!(await services.gate.shellPermission(command))) return null;
  return runShownCommand(services, command);
}

/**
 * Run a command with its output shown as it arrives (a "Running…" line first); in the REPL it
 * reads the terminal itself. Its exit code and output (stdout, then stderr).
 */
export async function runShownCommand(services: CoderServices, command: string): Promise<{ code: number; output: string }> {
  const { out, app } = services;
  out.emit({ type: "command", command, purpose: "run" });
  const r = await services.runShown({ command, purpose: "run", timeoutMs: 600_000, inheritStdin: app.interactive, onOutput: (text) => out.emit({ type: "output", text }) });
  // An editor that would not run it says why, where the output would have been.
  if (r.refused !== undefined) out.emit({ type: "output", text: r.refused });
  out.flush();
  return { code: r.code, output: r.refused ?? `${r.stdout}${r.stderr}` };
}

/**
 * Run a command the model suggested, once the gate allows it. Its output may then join the
 * chat; a failure's output may go back to the model: the fix request is returned, for the
 * reflection (so it counts against --max-reflections).
 */
export async function runShellSuggestion(services: CoderServices, history: ChatHistory, command: string): Promise<string | null> {
  const { gate, app, out } = services;
  if (app.settings.options.dryRun) return null;
  const result = await runPermittedCommand(services, command);
  if (!result) return null;
  if (result.code) out.print(`(exit ${result.code})`);
  const choice = await askAboutOutput(command, result, (question) => gate.confirm(question));
  if (choice?.kind === "add") {
    // After the reply that suggested it, as finished conversation: the next request carries it.
    history.cur.push(...blockMessages(choice.message));
    services.transcript.note(choice.message);
    out.print("Added the output to the chat.");
  }
  return choice?.kind === "fix" ? choice.message : null;
}

/**
 * Files the reply names in prose (not its edit targets) are offered for the chat; added ones
 * trigger a reflection. `pending` is a repair already due (a suggested command's fix request).
 */
export async function offerMentions(
  services: CoderServices,
  chat: ChatFiles,
  repoFiles: () => Promise<string[]>,
  text: string,
  targets: readonly string[],
  pending: string | null,
): Promise<SendResult> {
  const failing = pending !== null;
  const all = await repoFiles();
  const addable = all.filter((f) => !chat.editable.includes(f) && !chat.readOnly.includes(f) && !targets.includes(f));
  const named = fileMentions(text, addable, chat.editable, chat.readOnly);
  if (!named.length) return { reflection: pending, failing };
  const added: string[] = [];
  const group = services.gate.group(named.length);
  for (const path of named) {
    if (await services.gate.confirm(`Add ${path} to the chat?`, { key: `add:${path}`, group })) {
      chat.add(path);
      added.push(path);
    }
  }
  if (!added.length) return { reflection: pending, failing };
  const note = `I added ${added.join(", ")} to the chat: ${added.length === 1 ? "its" : "their"} content is above now. Go on with my request; if you need other files, name them.`;
  return { reflection: pending ? `${pending}\n\n${note}` : note, failing };
}
