// Where a chat starts: `runCoder(app)` wires the file store, gate and git to a
// Coder (core/chat/coder.ts) and runs one of the modes of CLI.md: the interactive
// REPL, one-shot (`--message`, `--message-file`) or piped stdin.
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { App } from "../kernel.ts";
import { exitCodeFor, Interrupted, UsageError } from "../errors.ts";
import { FileStore, shapeOptions } from "../edit/files.ts";
import { Gate, type GateEvent } from "../gate/gate.ts";
import { GitRepo, type GitRepoOptions, gitProblem, listRepoFiles, offerRepository } from "../git/git.ts";
import type { IgnoreRules } from "../edit/ignore-rules.ts";
import { loadTranscript, Transcript } from "../chat/history.ts";
import { mediaTypeOfFile } from "../chat/parts.ts";
import { messageOf } from "../plugins/registry.ts";
import { askCommitMessage } from "../chat/reply/commit.ts";
import { recoverInterruptedWrite } from "../git/recover.ts";
import { CoderSession } from "../chat/session.ts";
import { runSteps, wantsStep } from "./steps.ts";
import { fileScope } from "../chat/subtree.ts";
import type { AiCommentWatch } from "../watch/index.ts";
import { NonInteractivePrompter, TerminalPrompter } from "../term/confirm.ts";
import { JsonOutput, type Output, type Totals } from "../chat/events.ts";
import { recordingOutput } from "../chat/record.ts";
import { PlainOutput } from "../term/render.ts";
import { wantsColour, type Theme } from "../term/style.ts";
import { setTracing, trace } from "../trace.ts";
import { ChatFiles, readOnlyPath } from "../chat/chat-files.ts";
import { Coder, type CoderServices } from "../chat/coder.ts";

/** Conventions files read (read-only) by default when present at the root. */
export const DEFAULT_READ_ONLY = ["AGENTS.md", "CONVENTIONS.md"];

/** The model when neither flags, config nor env name one. */
export const FALLBACK_MODEL = "openai/gpt-4.1";

const HANDLED_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
const SIGNAL_EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** Run a chat in the mode the settings ask for; returns the exit code. */
export async function runCoder(app: App): Promise<number> {
  const o = app.settings.options;
  setTracing(o.verbose);
  const screen = await chooseOutput(app);
  const out = screen.out;
  const totals: Totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
  if (out instanceof PlainOutput) out.setTotals(totals);
  let coder: Coder | null = null;
  let exitCode = 0;
  // SIGTERM (CI cancel, timeout, docker stop) and SIGHUP (a closed terminal) are handled like
  // Ctrl-C: the write batch under way is finished and committed, then coder exits 143 / 129.
  let terminatedBy: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT_CODES[signal] ?? 130;
    if (signal !== "SIGINT") terminatedBy ??= code;
    if (coder?.inFlight) return coder.interrupt();
    if (!app.interactive || signal !== "SIGINT") {
      out.flush();
      out.emit({ type: "end", exitCode: code, totals });
      process.exit(code);
    }
  };
  for (const signal of HANDLED_SIGNALS) process.on(signal, onSignal);
  try {
    const step = wantsStep(app);
    // --watch-files without a terminal: the watched comments are the requests, not stdin.
    const watchOnly = o.watchFiles && !app.interactive && o.message === undefined && o.messageFile === undefined;
    const message = step || watchOnly ? null : await oneShotMessage(app);
    // The REPL and its line editor load only now (one-shot and --json runs never pay for them),
    // while the coder is built.
    const replModule = message === null && !step && !watchOnly ? import("../term/repl.ts") : null;
    trace("runCoder: start");
    coder = await createCoder(app, out, totals, screen);
    trace("runCoder: coder ready");
    const files = [...coder.chat.editable];
    out.emit({ type: "start", version: app.version, model: coder.model, editFormat: coder.format.item.name, files });
    if (o.restoreChatHistory) await restoreHistory(app, coder, out);
    if (o.load !== undefined && !step) await new CoderSession(coder).runCommand(`/load ${o.load}`);

    if (step) {
      exitCode = await runSteps(app, coder, out);
    } else if (watchOnly) {
      await (await startWatch(app, coder, out)).runForever();
    } else if (message !== null && message.trimStart().startsWith("/")) {
      // CLI.md: a message that starts with / runs that slash command in every mode.
      exitCode = await new CoderSession(coder).runOneShotCommand(message);
    } else if (message !== null) {
      const result = await coder.runOne(message);
      exitCode = result.ok ? 0 : 1;
    } else {
      const { runRepl } = await (replModule ?? import("../term/repl.ts"));
      trace("runCoder: repl loaded");
      const watch = o.watchFiles ? await startWatch(app, coder, out) : null;
      exitCode = await runRepl({ app, coder, out: coder.services.out, theme: screen.theme, settled: screen.settled, inputHistoryPath: inputHistoryPath(app), watch, terminatedBy: () => terminatedBy });
    }
  } catch (error) {
    exitCode = error instanceof Interrupted ? (terminatedBy ?? 130) : exitCodeFor(error);
    if (!(error instanceof Interrupted)) {
      // Typed errors are the user's news; anything else is a bug, with its stack under --verbose.
      if (o.verbose && error instanceof Error && !("exitCode" in error) && error.stack) process.stderr.write(`${error.stack}\n`);
      out.emit({ type: "error", message: messageOf(error), code: exitCode });
    } else {
      out.warn("Interrupted.");
    }
  } finally {
    for (const signal of HANDLED_SIGNALS) process.off(signal, onSignal);
    coder?.cancelPings();
  }
  out.flush();
  out.emit({ type: "end", exitCode, totals });
  trace("runCoder: done");
  return exitCode;
}

/** Where the engine's events go, and what the terminal needs to ask questions below them. */
export interface Screen {
  out: Output;
  /** The colours in use (the terminal renderer, the line editor, one-key prompts); null: plain text. */
  theme: Theme | null;
  /** Resolves once everything emitted is on the screen. */
  settled: () => Promise<void>;
}

/**
 * JSON events with --json; the terminal renderer (loaded only then) when stdout is a terminal
 * with colours on; plain text for pipes, files, --no-pretty and NO_COLOR.
 */
async function chooseOutput(app: App): Promise<Screen> {
  const o = app.settings.options;
  const settled = () => Promise.resolve();
  if (o.json) return { out: new JsonOutput(), theme: null, settled };
  const showDiffs = o.showDiffs ?? app.interactive;
  if (!wantsColour(app.env, o.pretty, Boolean(process.stdout.isTTY))) return { out: new PlainOutput(undefined, undefined, undefined, { showDiffs }), theme: null, settled };
  const { TtyOutput } = await import("../term/tty-output.ts");
  const tty = new TtyOutput({ showDiffs, light: o.lightMode && !o.darkMode, codeTheme: o.codeTheme });
  return { out: tty, theme: tty.theme, settled: () => tty.settled() };
}

/** The message of a one-shot run (`--message`, `--message-file`, or piped stdin); null for the REPL. */
async function oneShotMessage(app: App): Promise<string | null> {
  const o = app.settings.options;
  if (o.message !== undefined && o.messageFile !== undefined) {
    throw new UsageError("--message and --message-file both give the request; pass only one of them");
  }
  if (o.message !== undefined) {
    if (!o.message.trim()) throw new UsageError("--message is empty");
    return o.message;
  }
  if (o.messageFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.messageFile, "utf8");
    } catch (error) {
      throw new UsageError(`cannot read --message-file ${o.messageFile}: ${messageOf(error)}`);
    }
    if (!text.trim()) throw new UsageError(`--message-file ${o.messageFile} is empty`);
    return text;
  }
  if (app.interactive) return null;
  if (process.stdin.isTTY) throw new UsageError("no message: pass --message TEXT or --message-file FILE (or pipe the request on stdin)");
  const text = await new Response(Bun.stdin.stream()).text();
  if (!text.trim()) throw new UsageError("no message: stdin was empty");
  return text;
}

/** Build the services and the main coder: file store, git, gate, chat files, read-only files. */
export async function createCoder(app: App, screenOut: Output, totals: Totals, screen?: Screen): Promise<Coder> {
  const o = app.settings.options;
  const root = app.root;
  const chat = new ChatFiles();
  let git: GitRepo | null = null;
  // Without git (--no-git, or no repository) the .gitignore files still say what is never edited or sent.
  let rules: IgnoreRules | null = null;
  const isIgnored = (rel: string) => (git ? git.isIgnored(rel) : (rules as IgnoreRules).isIgnored(rel));
  const files = new FileStore(root, { isIgnored, readOnly: () => chat.readOnly, maxBytes: o.maxFileSize * 1024 * 1024, submoduleOf: (rel) => git?.submoduleOf(rel) ?? null, ...shapeOptions(o) });
  const transcript = new Transcript(chatHistoryPath(app));
  // The transcript hears edits, commits and answers too, not only the conversation.
  const out = recordingOutput(screenOut, transcript);
  const model = chooseModel(app, (text) => out.warn(text));
  const prompter = app.interactive
    ? new TerminalPrompter({ theme: screen?.theme ?? null, settled: screen?.settled, interrupted: (question) => transcript.note(`${question} No (Ctrl-C)`) })
    : new NonInteractivePrompter((text) => out.warn(text));
  const gate = new Gate({
    root,
    yesAlways: o.yesAlways,
    allowShellTrusted: o.allowShell === true,
    prompter,
    events: (e) => reportGateEvent(e, out, transcript),
    check: (rel) => files.check(rel),
    conflicted: (rel) => git?.unmergedFiles().has(files.canonical(rel)) ?? false,
  });
  const gitOptions: GitRepoOptions = {
    notify: (level, text) => (level === "warn" ? out.warn(text) : out.print(text)),
    verify: o.verify,
    commitTimeoutMs: o.commitTimeout * 1000,
    writeMessage: async (messages) => askCommitMessage(app.kit, weakModelOf(app, model), messages, o),
  };
  if (o.git) {
    if (app.gitRoot !== null) {
      // A repository git will not serve ("dubious ownership", no git on PATH) must not silently lose the safety net.
      const problem = await gitProblem(root);
      if (problem) throw new UsageError(`${root} is a git repository, but git cannot be used there: ${problem}. Fix that, or run with --no-git to work without commits`);
      git = await GitRepo.open(root, gitOptions);
    }
    // No repository: interactive mode offers to create one (CLI.md, issue 6).
    else if (app.interactive) git = await offerRepository(root, (q) => gate.confirm(q, { key: "git:init" }), gitOptions);
  }
  const useGit = git !== null;
  if (!useGit) rules = new (await import("../edit/ignore-rules.ts")).IgnoreRules(root);
  // An earlier run stopped between its writes and its commit: settle that first.
  await recoverInterruptedWrite({ root, git, files, gate, interactive: app.interactive, yesAlways: o.yesAlways, print: (t) => out.print(t), warn: (t) => out.warn(t) });

  const { ignoreFile } = fileScope(o, root, process.cwd());
  const listFiles = () => listRepoFiles(root, { git: useGit, ignoreFile });
  const services: CoderServices = {
    app,
    out,
    files,
    gate,
    git,
    transcript,
    totals,
    listFiles,
  };

  for (const typed of app.settings.positionals) {
    const rel = files.toRelative(typed);
    // Images and PDFs join the chat read-only: the model sees them and never edits them.
    if (mediaTypeOfFile(join(root, rel))) {
      chat.addReadOnly(rel);
      continue;
    }
    const problem = files.check(rel);
    if (problem) throw new UsageError(`cannot add ${typed} to the chat: ${problem}`);
    chat.add(rel);
  }
  addReadOnlyFiles(app, files, chat, isIgnored, out);

  namingSource(app, "model", () => app.registry.adapterFor(model)); // unknown provider: a usage error now, not at the first request
  const info = app.registry.modelInfo(model);
  const editFormat = o.editFormat ?? info.editFormat;
  namingSource(app, "editFormat", () => app.registry.formatEntry(editFormat));
  // The weak and editor settings are used later (a commit message, architect's hand-off); a typo in
  // them is a usage error now, before a request is paid for, not a silent fallback or a late exit 2.
  if (o.weakModel) namingSource(app, "weakModel", () => app.registry.adapterFor(o.weakModel!));
  if (o.editorModel) namingSource(app, "editorModel", () => app.registry.adapterFor(o.editorModel!));
  if (o.editorEditFormat) namingSource(app, "editorEditFormat", () => app.registry.formatEntry(o.editorEditFormat!));
  const coder = new Coder(services, { model, editFormat, editor: false, maxReflections: Math.max(0, o.maxReflections), chat });
  services.transcript.sessionStart();
  // CLI.md: asks in interactive mode, does it with --yes-always, and leaves .gitignore alone otherwise.
  if (git && !o.dryRun && (app.interactive || o.yesAlways)) {
    try {
      await git.ensureGitignore((question) => gate.confirm(question, { key: "gitignore:.coder" }));
    } catch (error) {
      out.warn(`Could not update .gitignore: ${messageOf(error)}`);
    }
  }
  return coder;
}

/**
 * `--read` / `read` files (inside or outside the repository) and the default conventions
 * files join the chat read-only. A file the repository ignores is never sent because the
 * repository's own config asks for it: only the user can name one (flag, env, global config).
 */
function addReadOnlyFiles(app: App, files: FileStore, chat: ChatFiles, isIgnored: (rel: string) => boolean, out: Output): void {
  const source = app.settings.provenance.read ?? "";
  const shown = source.startsWith("flag ") || source === "default" ? "--read" : `read (${source})`;
  const fromProject = app.settings.fromProject.includes("read");
  for (const typed of app.settings.options.read) {
    const path = readOnlyPath(files, typed);
    const readable = (p: string) => (isAbsolute(p) ? files.readOutside(p) : files.read(p)) !== null || mediaTypeOfFile(resolve(app.root, p)) !== null;
    if (path === null || !readable(path)) {
      out.warn(`${shown} ${typed}: not found, not a text file, or over the --max-file-size limit`);
      continue;
    }
    if (fromProject && !isAbsolute(path) && isIgnored(files.canonical(path))) {
      out.warn(`${shown} ${typed}: not sent, because the repository ignores it (.gitignore); name it with --read or /read-only to send it`);
      continue;
    }
    chat.addReadOnly(path);
  }
  for (const name of DEFAULT_READ_ONLY) {
    if (chat.editable.includes(name) || !existsSync(join(app.root, name)) || files.read(name) === null || isIgnored(files.canonical(name))) continue;
    chat.addReadOnly(name);
  }
}

function weakModelOf(app: App, model: string): string {
  return app.settings.options.weakModel ?? app.registry.modelInfo(model).weakModel ?? model;
}

/**
 * `--model`, else the model the API keys present point at (the model adapters know which
 * key means which provider), else FALLBACK_MODEL with a warning naming the keys to set.
 */
export function chooseModel(app: App, warn: (text: string) => void): string {
  const o = app.settings.options;
  if (o.model) return o.model;
  const adapters = [...app.registry.models.values()].map((entry) => entry.item);
  for (const adapter of adapters) {
    const model = adapter.defaultModel?.(app.env);
    if (model) return model;
  }
  if (!o.apiKey) {
    const keys = [...new Set(adapters.flatMap((a) => a.defaultModelKeys ?? []))];
    if (keys.length) warn(`no API key found: set ${keys.join(", ")} (in the environment or the repository's .env), or choose a model with --model (e.g. ollama/qwen2.5-coder)`);
  }
  return FALLBACK_MODEL;
}

function chatHistoryPath(app: App): string {
  const o = app.settings.options;
  // resolve, not join: an absolute --chat-history-file is used as given, not re-rooted inside the repository.
  return o.chatHistoryFile ? resolve(app.root, o.chatHistoryFile) : join(app.root, ".coder", "chat.history.md");
}

function inputHistoryPath(app: App): string {
  const o = app.settings.options;
  return o.inputHistoryFile ? resolve(app.root, o.inputHistoryFile) : join(app.root, ".coder", "input.history");
}

function reportGateEvent(event: GateEvent, out: Output, transcript: Transcript): void {
  switch (event.type) {
    case "notice":
      out.warn(event.text);
      return;
    case "answer":
      // Seen by the user already; the transcript keeps what was answered (Esc and Ctrl-C are No).
      if (event.how === "asked") transcript.note(`${event.question} ${event.answer ? "Yes" : "No"}`);
      return;
    case "refused":
      return; // refusals reach the model and the edit events
  }
}

/** `--restore-chat-history`: the previous transcript becomes the done history, summarised if it is too long. */
async function restoreHistory(app: App, coder: Coder, out: Output): Promise<void> {
  const all = loadTranscript(chatHistoryPath(app));
  // A transcript grows over every session: only its newest part (about a quarter of the
  // window, at ~4 characters a token) is worth summarising, and fits the summariser.
  const room = Math.min(coder.modelInfo.contextWindow / 4, 50_000) * 4;
  let start = all.length;
  for (let used = 0; start > 0 && used + (all[start - 1]?.content.length ?? 0) <= room; start--) used += all[start - 1]?.content.length ?? 0;
  while (start < all.length && all[start]?.role !== "user") start++;
  const messages = all.slice(start);
  if (!messages.length) return;
  coder.history.done = messages;
  try {
    if (await coder.summariseNow()) out.print(`Restored the chat history (${messages.length} messages, summarised).`);
    else out.print(`Restored the chat history (${messages.length} messages).`);
  } catch (error) {
    out.warn(`Could not summarise the restored history: ${messageOf(error)}; keeping its last messages.`);
    coder.history.done = messages.slice(-8);
  }
}

/** Start watching the repository for AI comments (--watch-files). */
async function startWatch(app: App, coder: Coder, out: Output): Promise<AiCommentWatch> {
  const { AiCommentWatch } = await import("../watch/index.ts");
  const watch = new AiCommentWatch(app, coder, out);
  await watch.start();
  return watch;
}

/**
 * Run a lookup of the setting `key`; when it fails, say where the value came from
 * (a config file's line, an env var), so the user knows which file to fix.
 */
function namingSource(app: App, key: "model" | "editFormat" | "weakModel" | "editorModel" | "editorEditFormat", lookup: () => unknown): void {
  try {
    lookup();
  } catch (error) {
    const source = app.settings.provenance[key];
    if (!(error instanceof UsageError) || !source || source === "default") throw error;
    if (source.startsWith("flag ")) {
      if (key === "model" || key === "editFormat") throw error;
      throw new UsageError(`${error.message} (${source})`);
    }
    throw new UsageError(`${error.message}; ${key} is set in ${source}`);
  }
}
