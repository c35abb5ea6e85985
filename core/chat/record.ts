// The chat history file (.coder/chat.history.md) hears what the screen shows besides the
// conversation: applied edits, commits, failed edits, and the answers given at
// confirmations. It sits between the engine and the real output.
import type { CoderEvent, Output } from "./events.ts";

/** Where notes go: `> ` lines of the transcript (history.ts `Transcript.note`). */
export interface NoteSink {
  note(text: string): void;
}

/** An Output that also writes edits, commits and answers to the transcript. */
export function recordingOutput(out: Output, transcript: NoteSink): Output {
  return {
    emit(event: CoderEvent) {
      const note = noteFor(event);
      if (note) transcript.note(note);
      out.emit(event);
    },
    print: (text) => out.print(text),
    warn: (text) => out.warn(text),
    flush: () => out.flush(),
    ...(out.staged ? { staged: (changes) => out.staged?.(changes) } : {}),
    ...(out.writing ? { writing: (paths) => out.writing?.(paths) } : {}),
    ...(out.toolCall ? { toolCall: (call, phase) => out.toolCall?.(call, phase) } : {}),
    ...(out.waiting ? { waiting: (what) => out.waiting?.(what) } : {}),
  };
}

function noteFor(event: CoderEvent): string | null {
  switch (event.type) {
    case "edit":
      if (event.status === "applied") return `${event.dryRun ? "Would apply" : "Applied"} edit to ${event.path}${event.diff ? `\n\n\`\`\`diff\n${event.diff.replace(/^=+\n/, "").trimEnd()}\n\`\`\`` : ""}`;
      return event.summary ?? `Edit to ${event.path} ${event.status}`;
    case "commit":
      return `Commit ${event.hash.slice(0, 7)} ${event.message}`;
    case "command":
      return `Ran \`${event.command}\``;
    case "tool":
      return `Tool ${event.name} ${event.arguments}: ${event.status}, ${event.chars} characters`;
    default:
      return null;
  }
}
