// Shell-command suggestions in replies, one rule for every format (kit.formats): a
// fence of three or more backticks tagged with a shell language, and nothing else, is
// read as a command. (The prompts teach a ```bash block: formats/shell.ts.)

const SHELL_TAGS = ["bash", "sh", "shell", "zsh", "fish", "ksh", "csh", "tcsh", "console", "terminal", "cmd", "bat", "batch", "powershell", "ps1", "pwsh"];

/** A fence opening line tagged with a shell language: its backtick run and the tag (```bash → { marker: "```", tag: "bash" }), else null. */
export function shellFence(line: string): { marker: string; tag: string } | null {
  const m = /^(`{3,})\s*([A-Za-z0-9]+)\s*$/.exec(line.trim());
  if (!m) return null;
  const tag = m[2]!.toLowerCase();
  return SHELL_TAGS.includes(tag) ? { marker: m[1]!, tag } : null;
}

/** The shell language a fence opening line is tagged with, or null (```bash → "bash", ````sh → "sh"). */
export const shellTag = (line: string): string | null => shellFence(line)?.tag ?? null;

/** Is `line` a fence opening tagged with a shell language? */
export const isShellFence = (line: string): boolean => shellFence(line) !== null;

/** Does `line` close a shell fence opened with `marker`: a bare run of at least as many backticks. */
const closesShell = (line: string, marker: string) => /^`+$/.test(line.trim()) && line.trim().length >= marker.length;

/** The command of the shell fence opening at `lines[at]`, and the index of the line after its closing fence. */
export function readShellBlock(lines: readonly string[], at: number): { command: string; next: number } {
  const marker = shellFence(lines[at]!)?.marker ?? "```";
  const body: string[] = [];
  let i = at + 1;
  for (; i < lines.length && !closesShell(lines[i]!, marker); i++) body.push(lines[i]!);
  return { command: body.join("\n").trim(), next: Math.min(i + 1, lines.length) };
}

/** The commands of every shell-tagged fence of `text` (trimmed, empty ones dropped). */
export function shellBlocks(text: string): string[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (!isShellFence(lines[i]!)) {
      i++;
      continue;
    }
    const { command, next } = readShellBlock(lines, i);
    if (command) out.push(command);
    i = next;
  }
  return out;
}
