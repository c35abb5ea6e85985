// The interactive loop: a message is a request, `/name` a command, `!cmd` runs cmd;
// Esc or Ctrl-C stops a request, Ctrl-D leaves. Loaded only in interactive mode, with the
// line editor (pi-tui) and, while the model answers, the live box below the reply, on any
// terminal that moves its cursor (colours or not); a plain readline prompt on TERM=dumb.
import { writeFileSync, readFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { App } from "../kernel.ts";
import { exitCodeFor, Interrupted } from "../errors.ts";
import type { SlashCommand } from "../plugin.ts";
import { messageOf } from "../plugins/registry.ts";
import { CoderSession } from "../chat/session.ts";
import { shareContextWindow } from "../chat/budget.ts";
import type { Coder } from "../chat/coder.ts";
import type { AiCommentWatch } from "../watch/index.ts";
import { CoderCompletions, identifiersIn } from "./completions.ts";
import type { Output } from "../chat/events.ts";
import { LineInput } from "./input.ts";
import { LineEditor } from "./line-editor.ts";
import { colourlessTheme, type Theme } from "./style.ts";
import type { LiveBox } from "./live-box.ts";
import { trace } from "../trace.ts";

export interface ReplOptions {
  app: App;
  coder: Coder;
  out: Output;
  /** The renderer itself: told when a turn begins, and asked to say that a request stopped. */
  front: { beginTurn(): void; stopped(): void } | null;
  screen: {
    /** The terminal's colours; null: none (NO_COLOR, --no-pretty). */
    theme: Theme | null;
    /** Waits until everything emitted is on the screen. */
    settled: () => Promise<void>;
    /** The line editor (completion menu, Ctrl-R) on a terminal that moves its cursor; else a plain line prompt. */
    lineEditor: boolean;
    /** The input box while the model answers. */
    live: LiveBox | null;
  };
  inputHistoryPath: string;
  /** --watch-files: AI comments in watched files end the prompt and run as the next request. */
  watch: AiCommentWatch | null;
  /** The exit code of a SIGTERM / SIGHUP that stopped the request, if one did: the session ends. */
  terminatedBy: () => number | null;
}

interface Prompt {
  read(prompt: string, opts?: { initial?: string; signal?: AbortSignal }): Promise<string | null>;
}

export async function runRepl(opts: ReplOptions): Promise<number> {
  const { app, coder, out } = opts;
  const session = new CoderSession(coder);
  const o = app.settings.options;
  const { live } = opts.screen;
  const editor = opts.screen.lineEditor
    ? new LineEditor({ historyPath: opts.inputHistoryPath, theme: opts.screen.theme ?? colourlessTheme(), vim: o.vim, multiline: o.multiline, completions: new CoderCompletions(completionSource(app, coder, session)) })
    : null;
  if (editor) live?.attach(editor);
  const input: Prompt = editor ?? new LineInput(opts.inputHistoryPath, plainCompleter(app, session));
  registerTerminalCommands(app, editor, out);

  out.print(await bannerText(app, coder));
  for (;;) {
    await opts.screen.settled();
    // The fallback format (the usual one) goes unnamed; any other is named before the prompt.
    const prompt = `${coder.format.item.name === app.registry.fallbackFormat() ? "" : `${coder.format.item.name} `}> `;
    trace("repl: prompt");
    // Watched files may ask for something while the prompt waits: that ends the prompt.
    const watching = new AbortController();
    void opts.watch?.next().then(() => watching.abort());
    // A message queued in the box while the model answered is sent now, as if typed; Ctrl-D pressed there leaves after the last.
    if (live?.leaveRequested && !live.queued.length) return farewell(coder, out);
    const queued = live?.queued.shift();
    if (queued !== undefined) {
      editor?.remember(queued);
      out.print(`${prompt}${queued}`);
    }
    const typed = queued ?? (await input.read(prompt, { initial: session.takeInput(), signal: watching.signal }));
    if (typed === null) return farewell(coder, out);
    if (opts.watch?.action) {
      await runWatched(opts.watch, out);
      continue;
    }
    if (!typed.trim()) continue;
    // `!cmd` is `/run cmd`, as in Aider.
    const line = typed.trimStart().startsWith("!") ? `/run ${typed.trimStart().slice(1)}` : typed;
    opts.front?.beginTurn();
    // While the model answers, keys go to the box below the reply; Esc or Ctrl-C there stops it.
    live?.arm({ stop: () => coder.interrupt() });
    try {
      if (line.trimStart().startsWith("/")) {
        coder.services.transcript.note(line.trim());
        await session.runCommand(line);
        if (session.exitRequested) return farewell(coder, out);
      } else {
        await coder.runOne(line);
      }
    } catch (error) {
      if (error instanceof Interrupted) {
        out.flush();
        if (opts.front) opts.front.stopped();
        else out.warn("Interrupted.");
        // SIGTERM / SIGHUP end the session once the request has stopped (its writes committed).
        const code = opts.terminatedBy();
        if (code !== null) return code;
        continue;
      }
      out.emit({ type: "error", message: messageOf(error), code: exitCodeFor(error) });
    } finally {
      live?.disarm();
    }
  }
}

/** The last line: how to pick the chat up again. */
function farewell(coder: Coder, out: Output): number {
  // Short enough for one line of a narrow terminal; /settings and the README say where the transcript is.
  if (coder.history.done.length) out.print("Chat saved; pick it up again with: coder --restore-chat-history");
  else out.print("Nothing was said this time; coder --restore-chat-history reloads the last chat.");
  return 0;
}

/** What the session starts with, as Aider says it: models, edit format, the repository's size, the map's budget. */
async function bannerText(app: App, coder: Coder): Promise<string> {
  const weak = coder.weakModel();
  const lines = [
    `coder ${app.version} · /help for commands · ? for keys · Ctrl-D to leave`,
    `Model: ${coder.model} with the ${coder.format.item.name} edit format${weak === coder.model ? "" : ` · weak model: ${weak}`}`,
  ];
  const context = { model: coder.modelInfo, options: app.settings.options as Readonly<Record<string, unknown>>, chatFiles: [...coder.chat.editable] };
  const entries = [...app.registry.context.values()];
  const budgets = shareContextWindow(entries.map((e) => e.item), coder.modelInfo, context.options);
  const notes = entries.map((c, i) => {
    try {
      return c.item.banner?.(context, budgets[i]!) ?? null;
    } catch {
      return null;
    }
  });
  const files = await coder.services.listFiles().catch(() => null);
  const where = coder.services.git ? `Git repository: ${files?.length ?? "?"} files` : `No git repository: ${files?.length ?? "?"} files`;
  lines.push([where, ...notes.filter(Boolean)].join(" · "));
  if (coder.chat.editable.length) lines.push(`Chat files: ${coder.chat.editable.join(", ")}`);
  return lines.join("\n");
}

/** The REPL's turn for the watched comments; Ctrl-C stops the request, not the session. */
async function runWatched(watch: AiCommentWatch, out: Output): Promise<void> {
  try {
    await watch.runPending();
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    out.flush();
    out.warn("Interrupted.");
  }
}

/** Slash commands that belong to the terminal: they change how the prompt reads. Registered when the REPL starts. */
export function terminalCommands(app: App, editor: LineEditor | null, out: Output): SlashCommand[] {
  return [
    {
      name: "multiline-mode",
      summary: "switch Enter and Alt-Enter: Enter inserts a newline, Alt-Enter sends (or back)",
      run: (_arg, s) => {
        if (!editor) return s.warn("/multiline-mode needs the line editor (not on a terminal without cursor movement, TERM=dumb); use { … } blocks.");
        editor.multiline = !editor.multiline;
        s.print(editor.multiline ? "Multiline mode: Enter inserts a newline, Alt-Enter sends." : "Multiline mode off: Enter sends, Alt-Enter inserts a newline.");
      },
    },
    ...["editor", "edit"].map(
      (name): SlashCommand => ({
        name,
        summary: "write the next message in $VISUAL / $EDITOR, else vi (text after the command starts it)",
        run: (arg, s) => {
          const text = composeInEditor(arg, app.env);
          if (text === null) return s.warn("No editor: $VISUAL and $EDITOR are unset and vi is not installed; set one (e.g. export EDITOR=nano).");
          if (!text.trim()) return s.print("The editor left the message empty; nothing to send.");
          if (editor) {
            editor.prefillNext(text.trimEnd());
            s.print("The message is in the prompt: Enter sends it.");
          } else out.print(text);
        },
      }),
    ),
  ];
}

function registerTerminalCommands(app: App, editor: LineEditor | null, out: Output): void {
  const commands = terminalCommands(app, editor, out);
  if (commands.some((c) => app.registry.commands.has(c.name))) return;
  app.registry.register({ apiVersion: 1, name: "terminal", commands }, "built-in (core/term)");
}

/** Run $VISUAL / $EDITOR (else vi, as git does) on a temporary file holding `initial`; its text, or null when there is no editor. */
function composeInEditor(initial: string, env: Record<string, string | undefined>): string | null {
  const editor = env.VISUAL || env.EDITOR || (Bun.which("vi", { PATH: env.PATH ?? "" }) ? "vi" : null);
  if (!editor) return null;
  const dir = mkdtempSync(join(tmpdir(), "coder-message-"));
  const file = join(dir, "message.md");
  try {
    writeFileSync(file, initial ? `${initial}\n` : "");
    Bun.spawnSync(["sh", "-c", `${editor} "$1"`, "sh", file], { stdin: "inherit", stdout: "inherit", stderr: "inherit" });
    return readFileSync(file, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The menu's entries: commands, their arguments, file names and identifiers. */
function completionSource(app: App, coder: Coder, session: CoderSession) {
  let files: string[] = [];
  void coder.services.listFiles().then(
    (all) => (files = all),
    () => {},
  );
  let seeded: { key: string; words: Set<string> } | null = null;
  const chatIdentifiers = (): Set<string> => {
    const paths = [...coder.chat.editable, ...coder.chat.readOnly.filter((p) => !isAbsolute(p))];
    const key = paths.join("\0");
    if (seeded?.key !== key) {
      const texts = paths.map((p) => {
        try {
          return coder.services.files.read(p) ?? "";
        } catch {
          return "";
        }
      });
      seeded = { key, words: identifiersIn(texts) };
    }
    return seeded.words;
  };
  return {
    commands: () => [...[...app.registry.commands.values()].map((c) => ({ name: c.item.name, summary: c.item.summary })), { name: "exit", summary: "leave coder" }, { name: "help", summary: "list the commands" }],
    argument: (command: string, arg: string) => {
      const entry = app.registry.commands.get(command)?.item;
      if (entry?.complete) return entry.complete(arg, session);
      // Commands that take a model name: the model table's names.
      if (/(^|-)model$/.test(command)) return app.registry.listModels().map((m) => m.name).filter((n) => n.startsWith(arg.trim()));
      return [];
    },
    *words() {
      yield* files;
      yield* files.map((f) => f.split("/").pop() ?? f);
      // Before the first request, the chat files' own identifiers (read once per set of files).
      if (!coder.lastPrompt.length) yield* chatIdentifiers();
      yield* identifiersIn(coder.lastPrompt.map((m) => (typeof m.content === "string" ? m.content : "")));
    },
  };
}

/** Tab completion for the plain prompt: commands (each once) and a command's arguments. */
function plainCompleter(app: App, session: CoderSession): (line: string) => string[] {
  return (line) => {
    if (!line.startsWith("/")) return [];
    const space = line.indexOf(" ");
    if (space < 0) {
      const names = new Set([...app.registry.commands.keys(), "exit", "help"].map((n) => `/${n}`));
      return [...names].filter((c) => c.startsWith(line)).map((c) => `${c} `);
    }
    const entry = app.registry.commands.get(line.slice(1, space));
    try {
      return entry?.item.complete?.(line.slice(space + 1), session).map((arg) => `${line.slice(0, space)} ${arg}`) ?? [];
    } catch {
      return [];
    }
  };
}
