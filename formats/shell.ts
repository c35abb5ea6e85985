// Shell-command suggestions in replies: fences tagged with a shell language.
// Shared by the built-in formats (each still decides when a fence is a command).

const SHELL_TAGS = ["bash", "sh", "shell", "zsh", "fish", "ksh", "csh", "tcsh", "console", "terminal", "cmd", "bat", "batch", "powershell", "ps1", "pwsh"];

/** The shell language a fence opening line is tagged with, or null (```bash → "bash"). */
export function shellTag(line: string, fenceOpen = "```"): string | null {
  const t = line.trim();
  const open = [fenceOpen, "```"].find((f) => t.startsWith(f));
  if (!open) return null;
  const tag = t.slice(open.length).trim().toLowerCase();
  return SHELL_TAGS.includes(tag) ? tag : null;
}

/** Is `line` a fence opening tagged with a shell language? */
export const isShellFence = (line: string): boolean => shellTag(line) !== null;

/** The commands of every shell-tagged fence of `text` (trimmed, empty ones dropped). */
export function shellBlocks(text: string): string[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!isShellFence(lines[i]!)) continue;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trim().startsWith("```"); i++) body.push(lines[i]!);
    const command = body.join("\n").trim();
    if (command) out.push(command);
  }
  return out;
}
