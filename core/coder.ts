// Where a chat starts: `runCoder(app)` wires the file store, gate and git to a
// Coder (core/turn.ts) and runs one of the modes of CLI.md: the interactive
// REPL, one-shot (`--message`, `--message-file`) or piped stdin.
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { App } from "./app.ts";
import { exitCodeFor, Interrupted, UsageError } from "./errors.ts";
import { FileStore, shapeOptions } from "./files.ts";
import { Gate, type GateEvent } from "./gate.ts";
import { GitRepo, type GitRepoOptions, gitProblem, listRepoFiles, offerRepository } from "./git.ts";
import type { IgnoreRules } from "./ignore-rules.ts";
import { loadTranscript, Transcript } from "./history.ts";
import { mediaTypeOfFile } from "./parts.ts";
import { messageOf } from "./registry.ts";
import { askCommitMessage } from "./reply-commit.ts";
import { recoverInterruptedWrite } from "./recover.ts";
import { CoderSession } from "./session.ts";
import { runSteps, wantsStep } from "./steps.ts";
import { fileScope } from "./subtree.ts";
import type { AiCommentWatch } from "./watch/index.ts";
import { ClackPrompter, NonInteractivePrompter } from "./term/confirm.ts";
import { JsonOutput, type Output, type Totals } from "./term/events.ts";
import { LineInput } from "./term/input.ts";
import { PlainOutput, TtyOutput } from "./term/render.ts";
import { setTracing, trace } from "./term/trace.ts";
import { ChatFiles, readOnlyPath } from "./chat-files.ts";
import { Coder, type CoderServices } from "./turn.ts";

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
  const out = chooseOutput(app);
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
    trace("runCoder: start");
    coder = await createCoder(app, out, totals);
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
      exitCode = await repl(app, coder, out, o.watchFiles ? await startWatch(app, coder, out) : null, () => terminatedBy);
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

function chooseOutput(app: App): Output {
  const o = app.settings.options;
  if (o.json) return new JsonOutput();
  const pretty = o.pretty ?? Boolean(process.stdout.isTTY);
  return pretty ? new TtyOutput() : new PlainOutput();
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
export async function createCoder(app: App, out: Output, totals: Totals): Promise<Coder> {
  const o = app.settings.options;
  const root = app.root;
  const model = chooseModel(app, (text) => out.warn(text));
  const chat = new ChatFiles();
  let git: GitRepo | null = null;
  // Without git (--no-git, or no repository) the .gitignore files still say what is never edited or sent.
  let rules: IgnoreRules | null = null;
  const isIgnored = (rel: string) => (git ? git.isIgnored(rel) : (rules as IgnoreRules).isIgnored(rel));
  const files = new FileStore(root, { isIgnored, readOnly: () => chat.readOnly, maxBytes: o.maxFileSize * 1024 * 1024, submoduleOf: (rel) => git?.submoduleOf(rel) ?? null, ...shapeOptions(o) });
  const prompter = app.interactive ? new ClackPrompter() : new NonInteractivePrompter((text) => out.warn(text));
  const gate = new Gate({
    root,
    yesAlways: o.yesAlways,
    allowShellTrusted: o.allowShell === true,
    prompter,
    events: (e) => reportGateEvent(e, out),
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
  if (!useGit) rules = new (await import("./ignore-rules.ts")).IgnoreRules(root);
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
    transcript: new Transcript(chatHistoryPath(app)),
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

function reportGateEvent(event: GateEvent, out: Output): void {
  switch (event.type) {
    case "notice":
      out.warn(event.text);
      return;
    case "refused":
    case "answer":
      return; // refusals reach the model and the edit events; answers were seen by the user
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

/** The interactive loop: a line is a request, `/name` a command; Ctrl-C aborts a request, Ctrl-D leaves. */
async function repl(app: App, coder: Coder, out: Output, watch: AiCommentWatch | null, terminatedBy: () => number | null): Promise<number> {
  const session = new CoderSession(coder);
  const commandNames = () => [...app.registry.commands.keys(), "exit", "help"].map((n) => `/${n}`);
  const input = new LineInput(inputHistoryPath(app), (line) => {
    if (!line.startsWith("/")) return [];
    const space = line.indexOf(" ");
    if (space < 0) return commandNames().filter((c) => c.startsWith(line)).map((c) => `${c} `);
    // A command's own completion of its argument (e.g. file names for /add).
    const entry = app.registry.commands.get(line.slice(1, space));
    if (!entry?.item.complete) return [];
    try {
      return entry.item.complete(line.slice(space + 1), session).map((arg) => `${line.slice(0, space)} ${arg}`);
    } catch {
      return [];
    }
  });
  out.print(`coder ${app.version} · ${coder.model} · ${coder.format.item.name} format · /help for commands, Ctrl-D to leave`);
  if (coder.chat.editable.length) out.print(`Chat files: ${coder.chat.editable.join(", ")}`);
  for (;;) {
    const prompt = `${coder.format.item.name === "diff" ? "" : `${coder.format.item.name} `}> `;
    // Watched files may ask for something while the prompt waits: that ends the prompt.
    const watching = new AbortController();
    void watch?.next().then(() => watching.abort());
    const line = await input.read(prompt, { initial: session.takeInput(), signal: watching.signal });
    if (line === null) return 0;
    if (watch?.action) {
      await runWatched(watch, out);
      continue;
    }
    if (!line.trim()) continue;
    try {
      if (line.trimStart().startsWith("/")) {
        await session.runCommand(line);
        if (session.exitRequested) return 0;
      } else {
        await coder.runOne(line);
      }
    } catch (error) {
      if (error instanceof Interrupted) {
        out.flush();
        out.warn("Interrupted.");
        // SIGTERM / SIGHUP end the session once the request has stopped (its writes committed).
        const code = terminatedBy();
        if (code !== null) return code;
        continue;
      }
      const code = exitCodeFor(error);
      out.emit({ type: "error", message: messageOf(error), code });
    }
  }
}

/** Start watching the repository for AI comments (--watch-files). */
async function startWatch(app: App, coder: Coder, out: Output): Promise<AiCommentWatch> {
  const { AiCommentWatch } = await import("./watch/index.ts");
  const watch = new AiCommentWatch(app, coder, out);
  await watch.start();
  return watch;
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
