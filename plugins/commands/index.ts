// The built-in slash commands (/add, /undo, /run, ...) as one plugin over the
// Session API: everything they do goes through `session` and `kit`, exactly as
// a user's command plugin would. /map and /map-refresh live in plugins/repomap.

import type { Kit, PluginObject, Session, SlashCommand } from "../../core/plugin.ts";
import { aboutCommands, helpRequest } from "./about.ts";
import { completePaths, dropMatches, expandPaths, isGlob, splitWords } from "./args.ts";
import { outputWidth, twoColumns, usageLabel, wrapWords } from "./layout.ts";
import { checkCommands } from "./checks.ts";
import { modelCommands } from "./models.ts";
import { savedChatCommands } from "./saved-chat.ts";

/** What /ok sends: the go-ahead after an /ask answer or an architect's plan. */
const GO_AHEAD = "Ok, please go ahead and make those changes.";
const LS_LIMIT = 200;

export default function commandsPlugin(kit: Kit): PluginObject {
  // Repository files for completion: loaded on first use, refreshed in the background.
  let fileCache: string[] = [];
  let loading: Promise<void> | null = null;
  const repoFiles = (): string[] => {
    loading ??= kit.files
      .list()
      .then((files) => {
        fileCache = files;
      })
      .catch(() => {})
      .finally(() => {
        loading = null;
      });
    return fileCache;
  };
  // Completion is synchronous: without a list loaded ahead, the first Tab after start completed nothing.
  if (process.stdin.isTTY) setTimeout(repoFiles, 0).unref?.();
  const completeChat = (arg: string, s: Session) => completePaths(arg, [...s.chatFiles(), ...s.readOnlyFiles()]);

  async function expand(arg: string, s: Session): Promise<string[]> {
    const words = splitWords(arg);
    if (words.length === 0) return [];
    const files = await kit.files.list();
    fileCache = files;
    const { paths, unmatched } = expandPaths(words, files, kit.files.matches);
    for (const pattern of unmatched) s.warn(`No repository file matches ${pattern}.`);
    return paths;
  }

  /** /add and /read-only: expand the files and globs typed, hand them to `add`, say which went in. */
  const adding = (name: string, summary: string, done: string, add: (s: Session, paths: string[]) => Promise<string[]>): SlashCommand => ({
    name,
    summary,
    usage: `/${name} FILE|GLOB ...`,
    // Files the chat already holds (either way) are not offered again.
    complete: (arg, s) => completePaths(arg, repoFiles().filter((f) => !s.chatFiles().includes(f) && !s.readOnlyFiles().includes(f))),
    async run(arg, s) {
      if (!arg.trim()) return s.warn(`Usage: /${name} FILE|GLOB ...`);
      const paths = await expand(arg, s);
      if (paths.length === 0) return;
      const added = await add(s, paths);
      if (added.length) s.print(`${done}: ${added.join(", ")}`);
    },
  });

  const noGit = (s: Session) => s.warn("Not in a git repository (or --no-git): there are no commits to work with.");

  /** The edit format /code uses: the configured one if it edits files, else the model's, else the fallback format. */
  const codeFormat = (s: Session): string => {
    const formats = s.formatSummaries();
    const editing = new Set(formats.filter((f) => f.mode === "edit").map((f) => f.name));
    const configured = typeof s.options.editFormat === "string" ? s.options.editFormat : "";
    const fallback = formats.find((f) => f.fallback && editing.has(f.name))?.name ?? [...editing][0];
    for (const name of [configured, s.model.editFormat, fallback]) if (name && editing.has(name)) return name;
    throw new Error("no registered edit format edits files");
  };

  const mode = (name: string, format: (s: Session) => string, summary: string): SlashCommand => ({
    name,
    summary,
    usage: `/${name} [request]`,
    async run(arg, s) {
      const fmt = format(s);
      if (arg.trim()) await s.send(arg.trim(), fmt);
      else {
        s.setEditFormat(fmt);
        s.print(`Edit format: ${fmt}.`);
      }
    },
  });

  const run: SlashCommand = {
    name: "run",
    summary: "run a shell command you type, and optionally add its output to the chat",
    usage: "/run COMMAND",
    async run(arg, s) {
      const command = arg.trim();
      if (!command) return s.warn("Usage: /run COMMAND");
      // The user typed it: no gate (the gate is for commands the model suggests).
      const { code, output } = await s.runUserCommand(command);
      if (code !== 0) s.print(`Exit code ${code}.`);
      // The same offer as for a command the model suggests: a fix request on failure, else the output for the chat.
      await s.offerOutput(command, { code, output });
    },
  };

  const editFormat: SlashCommand = {
    name: "edit-format",
    summary: "show the edit formats, or switch to one",
    usage: "/edit-format [NAME]",
    complete: (arg, s) => s.formats().filter((f) => f.startsWith(arg.trim())),
    run(arg, s) {
      const name = arg.trim();
      if (!name) {
        const summaries = new Map(s.formatSummaries().map((f) => [f.name, f.summary]));
        s.print(twoColumns(s.formats().map((f) => [`${f === s.editFormat ? "*" : " "} ${f}`, summaries.get(f) ?? ""] as const), outputWidth() - 1));
        return;
      }
      if (!s.formats().includes(name)) return s.warn(`Unknown edit format "${name}". Known: ${s.formats().join(", ")}.`);
      s.setEditFormat(name);
      s.print(`Edit format: ${name}.`);
    },
  };

  const quit: SlashCommand = { name: "exit", summary: "leave coder", run: (_arg, s) => s.exit() };

  const commands: SlashCommand[] = [
    adding("add", "add files to the chat so the model may edit them (globs allowed)", "Added to the chat", (s, paths) => s.addFiles(paths)),
    {
      name: "drop",
      summary: "remove files from the chat (all of them without arguments)",
      usage: "/drop [FILE|GLOB ...]",
      complete: completeChat,
      async run(arg, s) {
        const inChat = [...s.chatFiles(), ...s.readOnlyFiles()];
        const words = splitWords(arg);
        const paths = words.length ? [] : inChat;
        // As in Aider, a word names the chat files it is part of (`/drop cli.py`); several ask first.
        for (const word of words) {
          const matches = dropMatches(word, inChat, kit.files.matches);
          if (matches.length === 0) s.warn(`No file in the chat matches ${word}.`);
          else if (matches.length === 1 || isGlob(word)) paths.push(...matches);
          else if (await s.confirm(`${word} matches ${matches.length} files in the chat: ${matches.join(", ")}. Drop them all?`)) paths.push(...matches);
          else s.print(`Kept ${matches.join(", ")}: type more of the path to drop one.`);
        }
        if (!paths.length) return;
        const dropped = s.dropFiles([...new Set(paths)]);
        s.print(dropped.length ? `Dropped: ${dropped.join(", ")}` : "No such file in the chat.");
      },
    },
    adding("read-only", "add files as read-only references: the model sees them and never edits them", "Added read-only", (s, paths) => s.addReadOnly(paths)),
    {
      name: "ls",
      summary: "list the files in the chat, the read-only ones, and the other repository files",
      async run(_arg, s) {
        const chat = new Set(s.chatFiles());
        const ro = new Set(s.readOnlyFiles());
        const others = (await kit.files.list()).filter((f) => !chat.has(f) && !ro.has(f));
        const lines: string[] = [];
        if (others.length) {
          lines.push("Repository files not in the chat:", ...others.slice(0, LS_LIMIT).map((f) => `  ${f}`));
          if (others.length > LS_LIMIT) lines.push(`  ... and ${others.length - LS_LIMIT} more`);
        }
        lines.push(chat.size ? "Files in the chat (editable):" : "No files in the chat: /add some.", ...[...chat].map((f) => `  ${f}`));
        if (ro.size) lines.push("Read-only files:", ...[...ro].map((f) => `  ${f}`));
        s.print(lines.join("\n"));
      },
    },
    {
      name: "undo",
      summary: "undo coder's last commit, if it is safe (coder's own, not pushed, files unchanged since)",
      async run(_arg, s) {
        if (!s.git) return noGit(s);
        const res = await s.git.undo();
        if (!res.ok) return s.warn(res.message);
        s.print(res.message);
        // The model last saw its own edits applied; tell it they are gone.
        s.addToChat(`I undid your last change with /undo (${res.message}). The files are back to their content before it; do not assume that change exists.`);
      },
    },
    {
      name: "diff",
      summary: "show what the last reply changed",
      async run(_arg, s) {
        // The session knows the last reply even when it was not committed (--no-auto-commits).
        s.print(await s.lastDiff());
      },
    },
    {
      name: "commit",
      summary: "commit your pending changes to tracked files (message written for you unless given)",
      usage: "/commit [MESSAGE]",
      async run(arg, s) {
        if (!s.git) return noGit(s);
        const res = await s.git.commitPending(arg.trim() || undefined);
        if (res.ok) s.print(res.message);
        else s.warn(res.message);
      },
    },
    {
      name: "git",
      summary: "run a git command in the repository",
      usage: "/git ARGS",
      async run(arg, s) {
        if (!s.git) return noGit(s);
        const args = splitWords(arg);
        if (args.length === 0) return s.warn("Usage: /git ARGS (e.g. /git status)");
        const res = await s.git.run(args);
        if (res.output) s.print(res.output);
        if (res.code !== 0) s.warn(`git exited with code ${res.code}.`);
      },
    },
    run,
    { ...run, name: "!", summary: "same as /run", usage: "/! COMMAND" },
    {
      name: "tokens",
      summary: "show the tokens the next request will use, per part",
      async run(_arg, s) {
        s.print(await s.tokenReport());
      },
    },
    {
      name: "clear",
      summary: "forget the conversation history (files stay in the chat)",
      run(_arg, s) {
        s.clearHistory();
        s.print("History cleared.");
      },
    },
    {
      name: "reset",
      summary: "drop every file and forget the conversation history",
      run(_arg, s) {
        s.dropFiles([...s.chatFiles(), ...s.readOnlyFiles()]);
        s.clearHistory();
        s.print("Dropped all files and cleared the history.");
      },
    },
    {
      name: "model",
      summary: "show the model, or switch to another",
      usage: "/model [NAME]",
      run(arg, s) {
        const name = arg.trim();
        if (!name) return s.print(`Model: ${s.model.name} (edit format ${s.editFormat}).`);
        s.setModel(name);
        s.print(`Model: ${s.model.name}.`);
      },
    },
    editFormat,
    { ...editFormat, name: "chat-mode", summary: "same as /edit-format", usage: "/chat-mode [NAME]" },
    mode("ask", () => "ask", "ask a question without editing (with a request: this one only; without: switch)"),
    mode("code", codeFormat, "ask for code edits (with a request: this one only; without: switch)"),
    mode("architect", () => "architect", "plan with the main model, edit with the editor model (with a request: this one only; without: switch)"),
    mode("context", () => "context", "have the model name the files a request needs changed, and add them to the chat (with a request: this one only; without: switch)"),
    {
      name: "ok",
      summary: "go ahead: make the changes just discussed (after /ask or an architect's plan), in the editing format",
      usage: "/ok [MORE INSTRUCTIONS]",
      run: (arg, s) => s.send(arg.trim() ? `${GO_AHEAD}\n\n${arg.trim()}` : GO_AHEAD, codeFormat(s)),
    },
    ...checkCommands(kit, expand, codeFormat),
    ...modelCommands(),
    ...savedChatCommands(kit),
    ...aboutCommands(kit),
    {
      name: "help",
      summary: "list the commands, show one (/help add), or ask how to do something (/help how do I undo?)",
      usage: "/help [COMMAND|QUESTION]",
      async run(arg, s) {
        const wanted = arg.trim().replace(/^\//, "");
        const all = [...s.commands()].sort((a, b) => a.name.localeCompare(b.name));
        const shown = wanted ? all.filter((c) => c.name === wanted) : all;
        // Anything but a command's name is a question, answered from coder's documentation.
        // URL offers and other context read only the question, never the documentation around it.
        if (shown.length === 0) return s.send(await helpRequest(arg.trim(), all), "ask", { typed: arg.trim() });
        const rows = shown.map((c) => [usageLabel(c), c.summary] as const);
        const footer = wanted ? [] : ["", ...wrapWords("/help COMMAND shows one command; /help QUESTION asks how to do something (answered from coder's documentation). Type ? on an empty prompt for the keys.", outputWidth() - 1)];
        s.print([twoColumns(rows, outputWidth() - 1), ...footer].join("\n"));
      },
    },
    quit,
    { ...quit, name: "quit", summary: "same as /exit" },
  ];

  return { apiVersion: 1, name: "commands", commands };
}
