// /save FILE and /load FILE: a chat's set-up as the slash commands that rebuild it
// (its files, read-only files, model, edit format and reasoning settings), written to a
// file the user names and replayed line by line.
import { resolve } from "node:path";
import type { Kit, Session, SlashCommand } from "../../core/plugin.ts";
import { escapeWord } from "./args.ts";

/** The largest file /load reads (a saved chat is a few lines per chat file). */
const SAVED_CHAT_BYTES = 4 * 1024 * 1024;

/** The commands that rebuild this chat's set-up, one per line. */
export function savedChat(s: Session, version: string): string {
  const lines = [`# coder ${version}: this chat's files and settings; /load this file to rebuild them`, "/drop"];
  for (const path of s.chatFiles()) lines.push(`/add ${escapeWord(path)}`);
  for (const path of s.readOnlyFiles()) lines.push(`/read-only ${escapeWord(path)}`);
  lines.push(`/model ${s.modelFor("main")}`, `/edit-format ${s.editFormat}`);
  const set = (key: string) => s.settings().find((r) => r.key === key && r.source !== "default");
  if (set("weakModel")) lines.push(`/weak-model ${String(s.options.weakModel)}`);
  if (set("editorModel")) lines.push(`/editor-model ${String(s.options.editorModel)}`);
  if (s.options.reasoningEffort !== undefined) lines.push(`/reasoning-effort ${String(s.options.reasoningEffort)}`);
  if (s.options.thinkingTokens !== undefined) lines.push(`/think-tokens ${String(s.options.thinkingTokens)}`);
  return `${lines.join("\n")}\n`;
}

export function savedChatCommands(kit: Kit): SlashCommand[] {
  const save: SlashCommand = {
    name: "save",
    summary: "write the commands that rebuild this chat (files, read-only files, model, format) to FILE",
    usage: "/save FILE",
    run(arg, s) {
      const file = arg.trim();
      if (!file) return s.warn("Usage: /save FILE");
      // Written whole or not at all, never through a link: the kit's writer for a file the person named.
      try {
        kit.writeOutput(resolve(s.cwd, file), savedChat(s, kit.version));
      } catch (error) {
        return s.warn(`Cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`);
      }
      s.print(`Saved this chat's set-up to ${file}: /load ${file} rebuilds it.`);
    },
  };

  const load: SlashCommand = {
    name: "load",
    summary: "run the slash commands in FILE, one per line (e.g. as written by /save)",
    usage: "/load FILE",
    async run(arg, s) {
      const file = arg.trim();
      if (!file) return s.warn("Usage: /load FILE");
      // Through coder's capped reader: a FIFO or a link to /dev/zero is refused, not read forever.
      const read = kit.files.readBytes(resolve(s.cwd, file), { maxBytes: SAVED_CHAT_BYTES });
      if (!read.ok) return s.warn(`Cannot read ${file}: ${read.missing ? "no such file" : read.problem}`);
      const text = new TextDecoder().decode(read.bytes);
      for (const [i, raw] of text.split(/\r?\n/).entries()) {
        const line = raw.trim();
        if (!line || line.startsWith("#")) continue;
        const name = /^\/(\S+)/.exec(line)?.[1];
        if (!name) s.warn(`${file}:${i + 1}: skipped "${line}": not a slash command`);
        else if (name === "load") s.warn(`${file}:${i + 1}: skipped "${line}": a loaded file does not load others`);
        else await s.runCommand(line);
      }
    },
  };

  return [save, load];
}
