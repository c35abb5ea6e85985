// The running chat as slash commands see it (plugin.ts `Session`): chat files,
// model and format switches, history, tokens, git and the shell, over one Coder.
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { readOnlyPath } from "./chat-files.ts";
import { expandAlias } from "../config/aliases.ts";
import { chooseEditor } from "./architect.ts";
import { missingKeyLine } from "./create.ts";
import { TEST_TIMEOUT_MS, runCheck, runLinters, syntaxCheck } from "./checks.ts";
import { blockMessages } from "./chunks.ts";
import { shareContextWindow } from "./budget.ts";
import { coerce } from "../config/argv.ts";
import { configShowRows } from "../config/config.ts";
import { UsageError } from "../errors.ts";
import { flagName } from "../config/options.ts";
import { fileMentions } from "./mentions.ts";
import { mediaTypeOfFile } from "./parts.ts";
import type { EditFormat, ModelInfo, PromptChunk, Session, SessionGit, SlashCommand } from "../plugin.ts";
import { guard, messageOf } from "../plugins/registry.ts";
import { runPermittedCommand, runShownCommand } from "./reply/offers.ts";
import { askAboutOutput } from "./shell-output.ts";
import type { Coder } from "./coder.ts";

export class CoderSession implements Session {
  private exiting = false;
  /** Text for the REPL's next input line (`setInput`). */
  private pendingInput = "";
  /** Warnings printed by the command running now (a one-shot command that warned exits 1). */
  private warnings = 0;

  constructor(private readonly coder: Coder) {}

  private get services() {
    return this.coder.services;
  }

  get root(): string {
    return this.services.app.root;
  }

  get cwd(): string {
    return this.services.app.cwd;
  }

  get options(): Readonly<Record<string, unknown>> {
    return this.services.app.settings.options as Readonly<Record<string, unknown>>;
  }

  get model(): ModelInfo {
    return this.coder.modelInfo;
  }

  get editFormat(): string {
    return this.coder.format.item.name;
  }

  get git(): SessionGit | null {
    return this.services.git;
  }

  get exitRequested(): boolean {
    return this.exiting;
  }

  chatFiles(): readonly string[] {
    return [...this.coder.chat.editable];
  }

  readOnlyFiles(): readonly string[] {
    return [...this.coder.chat.readOnly];
  }

  /** Paths as typed (relative to the working directory), or glob-free repository paths. */
  private async resolve(paths: string[], readOnly: boolean): Promise<string[]> {
    const { files, out } = this.services;
    const all = await this.services.listFiles();
    const done: string[] = [];
    for (const typed of paths) {
      let rel: string;
      try {
        rel = files.toRelative(typed);
      } catch (error) {
        // A read-only file may live outside the repository: it is sent, never written.
        const outside = readOnly ? readOnlyPath(files, typed) : null;
        if (outside && isAbsolute(outside) && files.readOutside(outside) !== null) done.push(outside);
        else out.warn(outside ? `Cannot add ${typed}: ${files.unreadable(outside)}` : messageOf(error));
        continue;
      }
      if (!all.includes(rel) && !existsSync(isAbsolute(typed) ? typed : resolve(this.services.app.cwd, typed))) {
        // A file named by basename only: pick it when it is unique in the repository.
        const guess = fileMentions(typed, all);
        if (guess.length === 1) rel = guess[0] as string;
      }
      const problem = readOnly ? null : files.check(rel);
      if (problem) {
        out.warn(`Cannot add ${typed}: ${problem}`);
        continue;
      }
      done.push(rel);
    }
    return done;
  }

  /**
   * Problems are printed here; the command reports what was added. A file the chat holds
   * read-only becomes editable: the user asked for it by name (the model still cannot
   * promote a read-only file on its own; that goes through the gate).
   */
  async addFiles(paths: string[]): Promise<string[]> {
    // Images and PDFs join the chat read-only: the model sees them and never edits them.
    const media = paths.filter((p) => this.isMedia(p));
    const added: string[] = media.length ? await this.addReadOnly(media) : [];
    for (const rel of added) this.print(`${rel} is ${this.isMedia(rel) === "application/pdf" ? "a PDF" : "an image"}: it joins the chat read-only (never edited).`);
    paths = paths.filter((p) => !media.includes(p));
    const chat = this.coder.chat;
    const readOnly = paths.map((p) => this.relativeOrSelf(p)).filter((rel) => chat.readOnly.includes(rel));
    // The file store refuses read-only files; take them out of the read-only list first.
    for (const rel of readOnly) chat.drop(rel);
    const resolved = await this.resolve(paths, false);
    for (const rel of readOnly) if (!resolved.includes(rel)) chat.addReadOnly(rel);
    for (const rel of resolved) {
      const wasReadOnly = readOnly.includes(rel);
      if (chat.add(rel)) {
        added.push(rel);
        if (wasReadOnly) this.print(`${rel} was read-only in the chat; it is editable now.`);
        // A typo would otherwise join the chat as an empty file without a word.
        else if (!existsSync(join(this.root, rel))) this.print(`${rel} does not exist yet: the model's first edit will create it.`);
      } else this.print(`${rel} is already in the chat.`);
    }
    return added;
  }

  /** A file already in the chat as editable becomes read-only (the model may no longer edit it). */
  async addReadOnly(paths: string[]): Promise<string[]> {
    const added: string[] = [];
    const chat = this.coder.chat;
    for (const rel of await this.resolve(paths, true)) {
      if (chat.editable.includes(rel)) {
        chat.drop(rel);
        chat.addReadOnly(rel);
        added.push(rel);
        this.print(`${rel} was editable in the chat; it is read-only now.`);
      } else if (chat.addReadOnly(rel)) added.push(rel);
      else this.print(`${rel} is already in the chat (read-only).`);
    }
    return added;
  }

  /** The media type of a path as typed (from the working directory, else the root), or null. */
  private isMedia(typed: string) {
    const fromCwd = isAbsolute(typed) ? typed : resolve(this.services.app.cwd, typed);
    return mediaTypeOfFile(existsSync(fromCwd) ? fromCwd : join(this.root, typed));
  }

  private relativeOrSelf(typed: string): string {
    try {
      return this.services.files.toRelative(typed);
    } catch {
      return typed;
    }
  }

  dropFiles(paths: string[]): string[] {
    const chat = this.coder.chat;
    const targets = paths.length ? paths : [...chat.editable, ...chat.readOnly];
    const dropped: string[] = [];
    for (const p of targets) {
      const rel = this.relativeOrSelf(p);
      if (chat.drop(rel)) dropped.push(rel);
      else if (chat.drop(p)) dropped.push(p);
    }
    return dropped;
  }

  async send(message: string, editFormat?: string, options: { typed?: string } = {}): Promise<void> {
    const previous = this.coder.format;
    if (editFormat) this.coder.setEditFormat(editFormat);
    try {
      await this.coder.runOne(message, options);
    } finally {
      this.coder.format = previous;
    }
  }

  setModel(name: string): void {
    const model = expandAlias(name, this.services.app.settings.options.aliases);
    this.services.app.registry.adapterFor(model);
    this.coder.setModel(model);
    // Said now, not at the first request that would fail.
    const missing = missingKeyLine(this.services.app, model);
    if (missing) this.warn(missing);
  }

  modelFor(role: "main" | "weak" | "editor"): string {
    if (role === "main") return this.coder.model;
    if (role === "weak") return this.coder.weakModel();
    const { app } = this.services;
    return chooseEditor(app.settings.options, this.coder.model, this.coder.modelInfo, this.coder.format.item.name, app.registry).model;
  }

  /** A setting changed for this session: checked as its flag would be; model names through aliases and the adapters. */
  setOption(key: string, value: string | undefined, where = `--${flagName(key)}`): void {
    const spec = this.services.app.settings.table.byKey.get(key);
    if (!spec || spec.configOnly || spec.cliOnly) throw new UsageError(`${key} cannot be changed during a session`);
    const { settings, registry } = this.services.app;
    let typed = value === undefined ? undefined : coerce(spec, value, where, UsageError);
    if ((key === "weakModel" || key === "editorModel") && typeof typed === "string") {
      typed = expandAlias(typed, settings.options.aliases);
      registry.adapterFor(typed as string);
    }
    (settings.options as unknown as Record<string, unknown>)[key] = typed;
    settings.provenance[key] = "set in this session";
  }

  settings(): readonly { key: string; value: unknown; source: string }[] {
    return configShowRows(this.services.app.settings);
  }

  listModels() {
    return this.services.app.registry.listModels();
  }

  /** `/lint`: whole files, so every syntax problem counts; then the lint command(s). */
  async lint(paths: string[], onOutput?: (text: string) => void): Promise<{ ok: boolean; output: string; failed: string[]; stopped?: boolean }> {
    const { files, app, out } = this.services;
    const texts = paths.map((path) => ({ path, before: null, after: files.read(path) }));
    const failed: string[] = [];
    const syntax = await syntaxCheck(texts, false, failed);
    if (syntax) onOutput?.(`${syntax}\n`);
    const lint = await runLinters(this.services.runShown, out, app.settings.options.lintCmd, texts.filter((t) => t.after !== null).map((t) => t.path), onOutput, undefined, failed);
    return { ok: !syntax && lint.ok, output: [syntax, lint.output].filter(Boolean).join("\n\n"), failed: [...new Set(failed)], ...(lint.stopped ? { stopped: true } : {}) };
  }


  lastError(): string | null {
    return this.services.lastError ?? null;
  }

  setEditFormat(name: string): void {
    const before = this.coder.format.item.name;
    this.coder.setEditFormat(name);
    // The commands say what changed (/model, /edit-format, /ask ...); printing here too doubled every line.
    // The model imitates what it sees: summarise history written in the old format.
    if (before !== name) this.coder.summariseForFormatSwitch();
  }

  clearHistory(): void {
    this.coder.history.clear();
  }

  tokenReport(): Promise<string> {
    return this.coder.tokenReport();
  }

  async refreshContext(name?: string): Promise<string> {
    const turn = await this.coder.turnContext("", new AbortController().signal);
    const parts: string[] = [];
    const entries = [...this.services.app.registry.context.values()];
    // Outside a request: the window is shared as if the prompt held nothing else.
    const budgets = shareContextWindow(entries.map((e) => e.item), turn.model, turn.options);
    for (const [i, entry] of entries.entries()) {
      if (name && entry.item.name !== name) continue;
      const budget = budgets[i]!;
      if (budget.tokens <= 0) continue;
      try {
        const block = await guard(entry, "provide", () => entry.item.provide(turn, budget));
        if (block?.text) parts.push(block.text);
      } catch (error) {
        this.warn(messageOf(error));
      }
    }
    if (name && !this.services.app.registry.context.has(name)) throw new UsageError(`no context provider named ${name}`);
    return parts.join("\n\n");
  }

  async runShell(command: string): Promise<{ code: number; output: string }> {
    const result = await runPermittedCommand(this.services, command);
    return result ?? { code: -1, output: "" };
  }

  /** `/test`: the test command run as after an edit, shown as it runs; `stopped` when a cancel ended it or the editor refused to run it (its card says why). */
  async runTests(command: string): Promise<{ code: number; output: string; stopped?: boolean }> {
    const r = await runCheck(this.services.runShown, this.services.out, "test", command, TEST_TIMEOUT_MS);
    return { code: r.code, output: r.output, ...(r.stopped || r.refused !== undefined ? { stopped: true } : {}) };
  }

  /** `/run`: the user's own command, shown live (core/chat/reply/offers.ts). */
  runUserCommand(command: string): Promise<{ code: number; output: string }> {
    return runShownCommand(this.services, command);
  }

  print(text: string): void {
    this.services.out.print(text);
  }

  warn(text: string): void {
    this.warnings++;
    this.services.out.warn(text);
  }

  commands(): readonly SlashCommand[] {
    return [...this.services.app.registry.commands.values()].map((c) => c.item);
  }

  formats(): readonly string[] {
    return [...this.services.app.registry.formats.keys()];
  }

  formatSummaries(): readonly { name: string; summary: string; mode: NonNullable<EditFormat["mode"]>; fallback: boolean }[] {
    const { registry } = this.services.app;
    const fallback = registry.fallbackFormat();
    return [...registry.formats.values()].map((f) => ({ name: f.item.name, summary: f.item.summary, mode: f.item.mode ?? "edit", fallback: f.item.name === fallback }));
  }

  exit(): void {
    this.exiting = true;
  }

  /** A yes/no question through the gate (remembered answers, --yes-always, non-interactive "no"). */
  confirm(question: string, options: { key?: string } = {}): Promise<boolean> {
    return this.services.gate.confirm(question, options.key ? { key: options.key } : {});
  }

  /** Text the next request carries as finished conversation (a user message and a short acknowledgement). */
  addToChat(text: string): void {
    this.coder.history.done.push(...blockMessages(text));
    this.services.transcript.note(text);
  }

  /** `/diff`: the last reply's changes, committed or not. */
  lastDiff(): Promise<string> {
    return this.coder.lastDiff();
  }

  get interactive(): boolean {
    return this.services.app.interactive;
  }

  /** The REPL shows `text` in its next input line; without a REPL it is printed. */
  setInput(text: string): void {
    if (this.interactive) this.pendingInput = text;
    else this.print(text);
  }

  /** The text `setInput` left for the next input line, once. */
  takeInput(): string {
    const text = this.pendingInput;
    this.pendingInput = "";
    return text;
  }

  lastReply(): string | null {
    return this.services.lastReplyText ?? null;
  }

  promptChunks(): Promise<PromptChunk[]> {
    return this.coder.promptChunks();
  }

  /** `/run`'s output: a failure may go to the model as a fix request (a new request), a success may join the chat. */
  async offerOutput(command: string, result: { code: number; output: string }): Promise<void> {
    const choice = await askAboutOutput(command, result, (question) => this.confirm(question));
    if (choice?.kind === "fix") await this.send(choice.message);
    else if (choice?.kind === "add") {
      this.addToChat(choice.message);
      this.print("Added the output to the chat.");
    }
  }

  /**
   * Run `/name arg`: an exact command name, or an unambiguous prefix. Errors in
   * the command are reported with its plugin's name; the session goes on.
   */
  async runCommand(line: string): Promise<void> {
    const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
    if (!match) return;
    const [, typed = "", arg = ""] = match;
    const commands = this.services.app.registry.commands;
    if (typed === "exit" || typed === "quit") {
      if (!commands.has(typed)) return this.exit();
    }
    let entry = commands.get(typed);
    if (!entry) {
      const candidates = [...commands.keys()].filter((n) => n.startsWith(typed));
      if (candidates.length === 1) entry = commands.get(candidates[0] as string);
      else if (candidates.length > 1) return this.warn(`/${typed} is ambiguous: ${candidates.map((c) => `/${c}`).join(", ")}`);
    }
    // A command may claim names of its own (the MCP plugin's `/server:prompt`); it gets "NAME arg".
    let given = arg;
    if (!entry) {
      entry = [...commands.values()].find((c) => c.item.matches?.(typed, this));
      if (entry) given = `${typed} ${arg}`;
    }
    if (!entry) {
      if (typed === "help") return this.print(this.help());
      const near = nearestNames(typed, [...commands.keys(), "exit"]);
      return this.warn(`Unknown command /${typed}.${near.length ? ` Did you mean ${near.map((n) => `/${n}`).join(" or ")}?` : ""} Type /help for the list.`);
    }
    const found = entry;
    try {
      // A built-in command's error is the user's news ("no model adapter serves x"), not a plugin failure.
      if (found.origin.startsWith("built-in")) await found.item.run(given.trim(), this);
      else await guard(found, `/${found.item.name}`, () => found.item.run(given.trim(), this));
    } catch (error) {
      if (error instanceof Error && error.name === "Interrupted") throw error;
      this.services.lastError = messageOf(error);
      this.warn(messageOf(error));
    }
  }

  /** A slash command given as the one-shot message: exit 1 when it warned (it could not do what was asked), else 0. */
  async runOneShotCommand(line: string): Promise<number> {
    this.warnings = 0;
    await this.runCommand(line);
    return this.warnings ? 1 : 0;
  }

  help(): string {
    const rows = this.commands().map((c) => `/${c.name.padEnd(14)} ${c.summary}`);
    if (!this.services.app.registry.commands.has("exit")) rows.push(`${"/exit".padEnd(15)} leave coder`);
    return rows.sort().join("\n");
  }
}

/** The names closest to a mistyped one (at most two edits away, or a third of its length), nearest first. */
export function nearestNames(typed: string, names: readonly string[]): string[] {
  const limit = Math.max(2, Math.floor(typed.length / 3));
  const scored = [...new Set(names)].map((name) => ({ name, d: editDistance(typed.toLowerCase(), name.toLowerCase()) })).filter((x) => x.d <= limit);
  const best = Math.min(...scored.map((x) => x.d));
  return scored.filter((x) => x.d === best).map((x) => x.name).sort().slice(0, 3);
}

/** Levenshtein distance, with a swap of two neighbours counting as one edit (`/comit`, `/dorp`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((d[i - 1] as number[])[j]! + 1, row[j - 1]! + 1, (d[i - 1] as number[])[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, (d[i - 2] as number[])[j - 2]! + 1);
    }
  }
  return (d[a.length] as number[])[b.length]!;
}
