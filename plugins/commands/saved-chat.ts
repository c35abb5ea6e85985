// /save FILE and /load FILE: a chat's set-up as the slash commands that rebuild it
// (its files, read-only files, model, edit format and reasoning settings), written to a
// file the user names and replayed line by line.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Kit, Session, SlashCommand } from "../../core/plugin.ts";
import { escapeWord } from "./args.ts";

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
      const target = resolve(s.cwd, file);
      // Written whole or not at all: a temp file beside it, then a rename.
      const temp = `${target}.${process.pid}.tmp`;
      writeFileSync(temp, savedChat(s, kit.version));
      renameSync(temp, target);
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
      let text: string;
      try {
        text = readFileSync(resolve(s.cwd, file), "utf8");
      } catch (error) {
        return s.warn(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(error)}`);
      }
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
