// Building the engine for one chat: the file store, gate, git and transcript wired
// into CoderServices, the chat files from the settings, and the main Coder. Front
// ends (the CLI's chat modes, the ACP agent) call createCoder with what only they
// know: where events go, who answers the gate, and an editor's buffers.
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { App } from "../kernel.ts";
import type { ProviderSetup } from "../plugin.ts";
import { UsageError } from "../errors.ts";
import { chooseModel } from "./model-choice.ts";
import { type EditorFiles, FileStore, shapeOptions } from "../edit/files.ts";
import type { IgnoreRules } from "../edit/ignore-rules.ts";
import { Gate, type GateEvent } from "../gate/gate.ts";
import type { Prompter } from "../gate/prompter.ts";
import { GitRepo, type GitRepoOptions, gitProblem, listRepoFiles, offerRepository } from "../git/git.ts";
import { recoverInterruptedWrite } from "../git/recover.ts";
import { messageOf } from "../plugins/registry.ts";
import { ChatFiles, readOnlyPath } from "./chat-files.ts";
import { Coder } from "./coder.ts";
import type { Output, Totals } from "./events.ts";
import { Transcript } from "./history.ts";
import { mediaTypeOfFile } from "./parts.ts";
import { recordingOutput } from "./record.ts";
import { askCommitMessage } from "./reply/commit.ts";
import { CoderSession } from "./session.ts";
import { fileScope } from "../edit/subtree.ts";
import type { CoderServices, CommandRunner } from "./types.ts";

/** Conventions files read (read-only) by default when present at the root. */
export const DEFAULT_READ_ONLY = ["AGENTS.md", "CONVENTIONS.md"];

/** The model when neither flags, config nor env name one. */

/** What the front end hands the engine: where events go, who answers the gate, an editor's buffers. */
export interface FrontEnd {
  /** Where the engine's events go (the transcript hears them too). */
  out: Output;
  /** Usage and cost over the whole session, shared with the front end's status line. */
  totals: Totals;
  /** Who answers the gate's questions; given the transcript and the recorded output, to note and say answers there. */
  prompter: (seen: { transcript: Transcript; out: Output }) => Prompter;
  /** Rings the terminal bell (--notifications); none: nothing rings. */
  bell?: () => void;
  /** An editor's view of the files (ACP's fs methods): reads prefer its buffers, writes go through it. */
  editor?: EditorFiles;
  /** Where lint, tests and shell commands run (an editor's terminals); none: coder's own process group (`localRunner`). */
  runner?: CommandRunner;
  /** Inspect only (`coder prompts`): no transcript is written. */
  inspectOnly?: boolean;
}

/** Build the services and the main coder: file store, git, gate, chat files, read-only files. */
export async function createCoder(app: App, front: FrontEnd): Promise<Coder> {
  const o = app.settings.options;
  const root = app.root;
  const chat = new ChatFiles();
  let git: GitRepo | null = null;
  // Without git (--no-git, or no repository) the .gitignore files still say what is never edited or sent.
  let rules: IgnoreRules | null = null;
  const isIgnored = (rel: string) => (git ? git.isIgnored(rel) : (rules as IgnoreRules).isIgnored(rel));
  const files = new FileStore(root, { cwd: app.cwd, isIgnored, readOnly: () => chat.readOnly, maxBytes: o.maxFileSize * 1024 * 1024, submoduleOf: (rel) => git?.submoduleOf(rel) ?? null, ...shapeOptions(o), editor: front.editor, beforeWriting: () => git?.freezeIgnored() });
  const transcript = new Transcript(front.inspectOnly ? null : chatHistoryPath(app));
  // The transcript hears edits, commits and answers too, not only the conversation.
  const out = recordingOutput(front.out, transcript);
  const totals = front.totals;
  const prompter = front.prompter({ transcript, out });
  // --apply asks no model: a missing key is nothing to warn about.
  const model = chooseModel(app, (text) => (o.apply === undefined ? out.warn(text) : undefined));
  const gate = new Gate({
    root,
    yesAlways: o.yesAlways,
    allowShellTrusted: o.allowShell === true,
    prompter,
    events: (e) => reportGateEvent(e, out, transcript),
    check: (rel) => files.check(rel),
    conflicted: (rel) => git?.unmergedFiles().has(files.canonical(rel)) ?? false,
  });
  // Plugins' questions (kit.ui) go through this chat's gate and front end.
  app.ui.confirm = (question, options) => gate.confirm(question, options);
  app.ui.select = (question, choices, options) => gate.select(question, choices, options);
  app.ui.input = (question, options) => gate.input(question, options);
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

  const { ignoreFile } = fileScope(o, root, app.cwd);
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
    bell: front.bell ?? (() => {}),
    runShown: front.runner ?? localRunner(app),
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
  coder.openSession = (c) => new CoderSession(c);
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
      out.warn(`${shown} ${typed} is left out: ${path === null ? "not found" : files.unreadable(path)}`);
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

/** Shown commands in coder's own process group, through `kit.run` (a timeout or `signal` ends the group). */
export function localRunner(app: App): CommandRunner {
  return async ({ command, timeoutMs, signal, onOutput, inheritStdin }) => {
    const r = await app.kit.run(command, { timeoutMs, ...(signal ? { signal } : {}), ...(onOutput ? { onOutput } : {}), ...(inheritStdin ? { inheritStdin } : {}) });
    return signal?.aborted ? { ...r, stopped: true } : r;
  };
}

function weakModelOf(app: App, model: string): string {
  return app.settings.options.weakModel ?? app.registry.modelInfo(model).weakModel ?? model;
}

/**
 * `--model`, else the model the API keys present point at (the model adapters know which
 * key means which provider), else the first adapter's `fallbackModel` with a warning naming the keys to set.
 */
/** Every provider the model adapters offer for guided set-up (`coder init`). */
export function setupProviders(app: App): ProviderSetup[] {
  return [...app.registry.models.values()].flatMap((entry) => entry.item.providers?.() ?? []);
}

/**
 * The line to show when `model` cannot run for want of a key (the variable to set), or null
 * when it has one, needs none, or no adapter says how its keys are found.
 */
export function missingKeyLine(app: App, model: string): string | null {
  if (app.settings.options.apiKey) return null;
  const prefix = model.slice(0, Math.max(0, model.indexOf("/")));
  const provider = setupProviders(app).find((p) => p.name === prefix);
  if (!provider || provider.keyOptional || !provider.keyEnv.length) return null;
  if (provider.keyEnv.some((k) => app.env[k]?.trim())) return null;
  return `no API key for ${model}: set ${provider.keyEnv[0]} (in the environment or the repository's .env), pass --api-key, or run \`coder init\``;
}

export function chatHistoryPath(app: App): string {
  const o = app.settings.options;
  // resolve, not join: an absolute --chat-history-file is used as given, not re-rooted inside the repository.
  return o.chatHistoryFile ? resolve(app.root, o.chatHistoryFile) : join(app.root, ".coder", "chat.history.md");
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
