// The gate: every edit and every shell command the model proposes passes here
// before anything is written or run. It applies the permission rules of CLI.md
// (Gate) and asks the user through a Prompter, remembering "Don't ask again".

import { existsSync, lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { LOCAL_FILE, PROJECT_FILE } from "../config/config.ts";
import { replaceRecord } from "../edit/state.ts";
import type { Choice, Prompter } from "./prompter.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";

/** One remembered "Don't ask again" answer (always a no). */
export interface RememberedAnswer {
  /** What it is about: `edit:<path>`, `create:<path>`, `shell:<command>`, or a caller's key. */
  key: string;
  /** The question as it was asked. */
  question: string;
  answer: "no";
  /** ISO time of the choice. */
  time: string;
}

/** What the gate tells the rest of coder (the engine prints these, or emits them as JSON events). */
export type GateEvent =
  | { type: "answer"; question: string; answer: boolean; how: "asked" | "yes-always" | "remembered" | "group" | "not-interactive" }
  | { type: "refused"; path: string; reason: string }
  | { type: "notice"; text: string };

export interface GateOptions {
  /** Repository root (or the current directory without git). */
  root: string;
  /** Where `gate.json` lives; default `<root>/.coder`. */
  stateDir?: string;
  /** `--yes-always`: yes to every confirmation, except shell commands without `allowShellTrusted`. */
  yesAlways: boolean;
  /** A trusted config (global, or a trusted project's) sets `"allowShell": true`. */
  allowShellTrusted: boolean;
  prompter: Prompter;
  events?: (event: GateEvent) => void;
  /**
   * The file store's containment check (core/edit/files.ts `FileStore.check`): problem text for a
   * path that must never be written (outside the repository, `.git/`, symlink out, ignored), else null.
   * The gate also runs its own containment check, so a missing or lenient store cannot open a hole.
   */
  check?: (rel: string) => string | null;
  /** Does `rel` have unresolved merge conflicts (unmerged stages in git's index)? */
  conflicted?: (rel: string) => boolean;
}

/** Decisions shared by several questions asked together ("All" / "Skip all"). */
export class ConfirmGroup {
  /** Set once the user chose All (true) or Skip all (false). */
  decided: boolean | null = null;
  constructor(readonly size: number) {}
}

export interface ConfirmOptions {
  /** Key under which "Don't ask again" is remembered; default: the question. */
  key?: string;
  group?: ConfirmGroup;
  /** Extra text shown above the question (e.g. a diff or the command's purpose). */
  detail?: string;
  /** What Enter answers (default yes; a shell command defaults to no, CLI.md). */
  default?: Choice;
}

export interface EditContext {
  chatFiles: readonly string[];
  readOnlyFiles: readonly string[];
  /** Does the file exist in the repository now (false: the edit creates it)? */
  existsInRepo: boolean;
  group?: ConfirmGroup;
}

/**
 * `declined`: the user (or a non-interactive run) said no, which skips the edit without a
 * reflection; without it the refusal is a rule the model must learn (read-only, outside, `.git/`).
 */
export type EditPermission = { ok: true } | { ok: false; reason: string; declined?: boolean };

/**
 * coder's own config files: they decide what later runs may do (plugins, commands, what the
 * model sees), so a model's change to one is shown and needs an explicit yes, even under
 * --yes-always, and is never made without a person to ask.
 */
export const PROTECTED_FILES: readonly string[] = [PROJECT_FILE, LOCAL_FILE, ".coderignore"];

/**
 * Files at any depth that decide what git ignores, and so which files coder may edit and
 * commit: protected like coder's config (a model that un-ignores `.env` could then write it).
 */
const PROTECTED_NAMES: readonly string[] = [".gitignore"];

/** Is `rel` one of coder's config files at the repository root, or a `.gitignore` (any letter case, for case-insensitive disks)? */
export function isProtectedFile(rel: string): boolean {
  const norm = posix.normalize(rel.replaceAll("\\", "/")).toLowerCase();
  return PROTECTED_FILES.some((f) => f.toLowerCase() === norm) || PROTECTED_NAMES.includes(posix.basename(norm));
}

/** What a protected file is, for its question ("the reply changes X, <what>") and notice ("a change to <short>"). */
function protectedRole(rel: string): { what: string; short: string } {
  if (PROTECTED_NAMES.includes(posix.basename(rel.toLowerCase()))) {
    return { what: "which decides what git ignores (and so which files coder may edit and commit)", short: "what git ignores" };
  }
  return { what: "coder's own config for this repository", short: "coder's own config" };
}

const STATE_FILE = "gate.json";

/**
 * Confirmations and the edit/shell permission rules.
 *
 * @example
 * const gate = new Gate({ root, yesAlways: false, allowShellTrusted: false, prompter, check: (rel) => store.check(rel) });
 * const p = await gate.editPermission("src/util.ts", { chatFiles: ["src/app.ts"], readOnlyFiles: [], existsInRepo: true });
 * if (!p.ok) reportToModel(p.reason);
 */
export class Gate {
  private readonly stateDir: string;

  constructor(private readonly opts: GateOptions) {
    this.stateDir = opts.stateDir ?? join(opts.root, ".coder");
  }

  /** A group for several questions asked together; its size decides whether All / Skip all are offered. */
  group(size: number): ConfirmGroup {
    return new ConfirmGroup(size);
  }

  /**
   * May coder write `rel` (repository-relative)? Refused whatever the answers: paths outside the
   * repository, into `.git/`, symlinks leading out, ignored files (the file store's check) and
   * read-only files. Chat files are pre-authorised; any other file asks (yes under --yes-always).
   * A refusal's `reason` is written for the model.
   */
  async editPermission(rel: string, ctx: EditContext): Promise<EditPermission> {
    const problem = containmentProblem(this.opts.root, rel) ?? this.opts.check?.(rel) ?? null;
    if (problem) return this.refuse(rel, `Refused to edit ${rel}: ${problem}. coder only writes files inside the repository (never .git/ or ignored files); do not try this path again.`);
    const path = posix.normalize(rel.replaceAll("\\", "/"));
    if (ctx.readOnlyFiles.some((f) => posix.normalize(f) === path)) {
      return this.refuse(path, `${path} is read-only (added with --read or /read-only): coder never edits it. Do not edit it; if it needs a change, say what and ask the user to /add it as an editable file.`);
    }
    if (this.opts.conflicted?.(path)) return this.conflictPermission(path);
    if (ctx.chatFiles.some((f) => posix.normalize(f) === path)) return { ok: true };
    const question = ctx.existsInRepo ? `Allow edits to ${path}, which is not in the chat?` : `Create new file ${path}?`;
    const key = `${ctx.existsInRepo ? "edit" : "create"}:${path}`;
    if (await this.confirm(question, { key, group: ctx.group })) return { ok: true };
    return this.decline(path, ctx.existsInRepo ? `edits to ${path} (not in the chat) were not allowed` : `creating ${path} was not allowed`);
  }

  /**
   * A file with unresolved merge conflicts: the edit replaces the conflicted text in the work
   * tree, and coder does not commit while conflicts remain (git keeps its unmerged stages until
   * the user `git add`s it). Asked every time, --yes-always aside; declined without a person.
   */
  private async conflictPermission(path: string): Promise<EditPermission> {
    if (!this.opts.prompter.interactive) {
      this.notice(`Not editing ${path}: it has unresolved merge conflicts, and editing it needs an explicit yes in an interactive session.`);
      return this.decline(path, `${path} has unresolved merge conflicts`);
    }
    const question = `${path} has unresolved merge conflicts. Let the edit replace its conflicted text? coder will not commit it (git add it when it is resolved).`;
    const key = `conflict:${path}`;
    if (this.isRemembered(key)) return this.decline(path, `editing ${path}, which has unresolved merge conflicts, was not allowed (remembered answer)`);
    if (await this.ask(question, { key })) return { ok: true };
    return this.decline(path, `editing ${path}, which has unresolved merge conflicts, was not allowed`);
  }

  /**
   * A change the model's reply makes to one of coder's config files (`PROTECTED_FILES`):
   * shown (`detail`, the diff) and asked, with no All and no --yes-always; declined
   * without a person to ask. Other paths are allowed at once.
   */
  async protectedChange(rel: string, detail: string): Promise<EditPermission> {
    if (!isProtectedFile(rel)) return { ok: true };
    const question = `The reply changes ${rel}, ${protectedRole(rel).what}. Allow it?`;
    const key = `config:${rel}`;
    if (this.isRemembered(key)) return this.decline(rel, `changing ${rel} was not allowed (remembered answer)`);
    if (!this.opts.prompter.interactive) {
      this.notice(`Not changing ${rel}: a change to ${protectedRole(rel).short} needs an explicit yes in an interactive session (--yes-always does not cover it).`);
      return this.decline(rel, `changing ${rel} needs an explicit yes in an interactive session`);
    }
    if (await this.ask(question, { key, detail })) return { ok: true };
    return this.decline(rel, `changing ${rel} was not allowed`);
  }

  /**
   * May coder run this shell command the model suggested? Only after an explicit yes;
   * under --yes-always only when a trusted config sets `allowShell`.
   */
  async shellPermission(command: string, group?: ConfirmGroup): Promise<boolean> {
    const key = `shell:${command}`;
    const question = `Run shell command: ${command}`;
    if (this.isRemembered(key)) return this.answered(question, false, "remembered");
    if (this.opts.yesAlways) {
      if (this.opts.allowShellTrusted) return this.answered(question, true, "yes-always");
      this.notice(`Not running \`${command}\`: --yes-always runs shell commands only when a trusted config sets "allowShell": true.`);
      return this.answered(question, false, "yes-always");
    }
    // Running code is the one question whose Enter means No.
    return this.ask(question, { key, group, default: "no" });
  }

  /**
   * May coder run a tool call the model made (a tool whose provider asks)? Asked like any
   * question, but `--yes-always` does not answer it: a tool can change things outside the
   * repository (a filesystem server's `write_file`), so, as for shell commands, a run with
   * nobody to ask declines it. `runUnasked`: the provider's word on how to let its tools run unasked.
   */
  async toolPermission(question: string, key: string, runUnasked?: string): Promise<boolean> {
    if (this.isRemembered(key)) return this.answered(question, false, "remembered");
    if (this.opts.yesAlways && !this.opts.prompter.interactive) {
      const how = runUnasked ? ` (${runUnasked} to run these tools without asking)` : "";
      this.notice(`Not running tool ${key.replace(/^tool:/, "")}: --yes-always does not answer tool calls${how}.`);
      return this.answered(question, false, "yes-always");
    }
    return this.ask(question, { key });
  }

  /**
   * Ask a yes/no question with Yes / No / All / Skip all / Don't ask again
   * (All and Skip all only when `group` holds several questions).
   * `--yes-always` answers yes; without a terminal the answer is no, said out loud.
   * A remembered "Don't ask again" wins over `--yes-always`: it is the user's explicit,
   * standing answer (listed by `coder config show`, undone by `coder config forget`).
   */
  async confirm(question: string, options: ConfirmOptions | ConfirmGroup = {}): Promise<boolean> {
    const opts = options instanceof ConfirmGroup ? { group: options } : options;
    const key = opts.key ?? question;
    if (this.isRemembered(key)) return this.answered(question, false, "remembered");
    if (opts.group?.decided != null) return this.answered(question, opts.group.decided, "group");
    if (this.opts.yesAlways) return this.answered(question, true, "yes-always");
    return this.ask(question, { ...opts, key });
  }

  /**
   * One of `choices` (a plugin's `kit.ui.select`): the person's pick, or null when they cancel.
   * Under --yes-always, with nobody to ask, or a front end that cannot offer choices: the
   * declared default (null without one), not asked; said out loud unless --yes-always.
   */
  async select(question: string, choices: readonly string[], options: { default?: string; detail?: string } = {}): Promise<string | null> {
    const fallback = options.default ?? null;
    if (fallback !== null && !choices.includes(fallback)) throw new Error(`kit.ui.select("${question}"): the default "${fallback}" is not one of the choices (${choices.join(", ")})`);
    if (choices.length === 0) return null;
    const prompter = this.opts.prompter;
    if (this.opts.yesAlways || !prompter.interactive || !prompter.select) return this.unasked(question, fallback, prompter.interactive && !prompter.select);
    const answer = await prompter.select(question, choices, options.detail, fallback ?? undefined);
    return answer !== null && choices.includes(answer) ? answer : null;
  }

  /** A line of text (a plugin's `kit.ui.input`): as `select`, the default (or null) when it cannot be asked. */
  async input(question: string, options: { default?: string; detail?: string } = {}): Promise<string | null> {
    const fallback = options.default ?? null;
    const prompter = this.opts.prompter;
    if (this.opts.yesAlways || !prompter.interactive || !prompter.input) return this.unasked(question, fallback, prompter.interactive && !prompter.input);
    return prompter.input(question, options.detail, fallback ?? undefined);
  }

  /** The default of a question not asked; said (as an unanswerable confirmation is) unless --yes-always chose it. */
  private unasked(question: string, fallback: string | null, cannot: boolean): string | null {
    if (!this.opts.yesAlways) {
      const answer = fallback === null ? "no answer" : JSON.stringify(fallback);
      this.notice(`${question} -> ${answer} (${cannot ? "this front end cannot ask it" : "not interactive: nobody to ask"}; the default)`);
    }
    return fallback;
  }

  /** Every remembered "Don't ask again" of this repository. */
  remembered(): RememberedAnswer[] {
    return readState(this.stateDir);
  }

  /** Forget remembered answers: those whose key or question contains `match`, or all; returns how many. */
  forget(match?: string): number {
    return forgetAnswers(this.opts.root, match, this.stateDir);
  }

  /** The remembered answers of the repository at `root` (for `coder config show`). */
  static remembered(root: string): RememberedAnswer[] {
    return rememberedAnswers(root);
  }

  private async ask(question: string, opts: ConfirmOptions & { key: string }): Promise<boolean> {
    const choices: Choice[] = ["yes", "no"];
    if (opts.group && opts.group.size > 1) choices.push("all", "skip-all");
    choices.push("never");
    const choice = await this.opts.prompter.choose(question, choices, opts.detail, { key: opts.key, ...(opts.default ? { default: opts.default } : {}) });
    const how = this.opts.prompter.interactive ? "asked" : "not-interactive";
    switch (choice) {
      case "yes":
        return this.answered(question, true, how);
      case "all":
        if (opts.group) opts.group.decided = true;
        return this.answered(question, true, how);
      case "skip-all":
        if (opts.group) opts.group.decided = false;
        return this.answered(question, false, how);
      case "never":
        this.remember(opts.key, question);
        this.notice(`Remembered: "${question}" will not be asked again in this repository (coder config forget to undo).`);
        return this.answered(question, false, how);
      case "no":
        return this.answered(question, false, how);
    }
  }

  private isRemembered(key: string): boolean {
    return readState(this.stateDir).some((a) => a.key === key);
  }

  private remember(key: string, question: string): void {
    const all = readState(this.stateDir).filter((a) => a.key !== key);
    all.push({ key, question, answer: "no", time: new Date().toISOString() });
    writeState(this.stateDir, all);
  }

  private answered(question: string, answer: boolean, how: Extract<GateEvent, { type: "answer" }>["how"]): boolean {
    this.opts.events?.({ type: "answer", question, answer, how });
    return answer;
  }

  private refuse(path: string, reason: string): EditPermission {
    this.opts.events?.({ type: "refused", path, reason });
    return { ok: false, reason };
  }

  private decline(path: string, reason: string): EditPermission {
    this.opts.events?.({ type: "refused", path, reason });
    return { ok: false, reason, declined: true };
  }

  private notice(text: string): void {
    this.opts.events?.({ type: "notice", text });
  }
}

/** The remembered "Don't ask again" answers of the repository at `root`. */
export function rememberedAnswers(root: string, stateDir = join(root, ".coder")): RememberedAnswer[] {
  return readState(stateDir);
}

/** Forget remembered answers of the repository at `root` whose key or question contains `match` (all without it); returns how many. */
export function forgetAnswers(root: string, match?: string, stateDir = join(root, ".coder")): number {
  const all = readState(stateDir);
  const keep = match ? all.filter((a) => !a.key.includes(match) && !a.question.includes(match)) : [];
  if (keep.length !== all.length) writeState(stateDir, keep);
  return all.length - keep.length;
}

/**
 * The gate's own containment check (defence in depth beside the file store's):
 * absolute paths, `..` escapes, `.git/`, `.coder/`, and symlinks (of the file or any parent)
 * resolving outside the root. Returns problem text, or null when the path is inside.
 */
export function containmentProblem(root: string, rel: string): string | null {
  if (!rel || rel.includes("\0")) return "the path is empty or invalid";
  const slashed = rel.replaceAll("\\", "/");
  if (isAbsolute(rel) || slashed.startsWith("/") || /^[A-Za-z]:/.test(slashed)) return "it is an absolute path";
  const norm = posix.normalize(slashed);
  if (norm === ".." || norm.startsWith("../")) return "it resolves outside the repository";
  if (norm === "." || norm === "./") return "it names the repository folder itself, not a file";
  if (norm.split("/").some((part) => part.toLowerCase() === ".git")) return "it is inside .git/";
  // coder's own records (commits it may undo, remembered answers) are never the model's to edit.
  if (norm.split("/")[0]!.toLowerCase() === ".coder") return "it is inside .coder/, coder's own records";
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return "the repository root cannot be resolved";
  }
  // Resolve the deepest existing ancestor (or the file itself): a symlink anywhere on the way counts.
  let probe = resolve(root, norm);
  while (!existsSync(probe) && !isSymlink(probe)) {
    const up = dirname(probe);
    if (up === probe) break;
    probe = up;
  }
  let real: string;
  try {
    real = realpathSync(probe);
  } catch {
    return "it is a symlink whose target does not exist";
  }
  const inside = relative(realRoot, real);
  if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return "it resolves (through a symlink) outside the repository";
  if (inside.split(sep).some((part) => part.toLowerCase() === ".git")) return "it resolves (through a symlink) into .git/";
  if (inside.split(sep)[0]!.toLowerCase() === ".coder") return "it resolves (through a symlink) into .coder/";
  return null;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function readState(stateDir: string): RememberedAnswer[] {
  try {
    const data = JSON.parse(readCappedText(join(stateDir, STATE_FILE), { maxBytes: SMALL_FILE_BYTES }).text ?? "{}") as { remembered?: unknown };
    if (!Array.isArray(data.remembered)) return [];
    return data.remembered.filter(
      (a): a is RememberedAnswer => !!a && typeof a === "object" && typeof a.key === "string" && typeof a.question === "string",
    );
  } catch {
    return [];
  }
}

function writeState(stateDir: string, remembered: RememberedAnswer[]): void {
  replaceRecord(join(stateDir, STATE_FILE), `${JSON.stringify({ version: 1, remembered }, null, 2)}\n`);
}

/** Lines for `coder config show`: the remembered "Don't ask again" answers of `root`, and how to forget them. */
export function describeRemembered(root: string): string {
  const all = rememberedAnswers(root);
  if (all.length === 0) return "remembered answers (.coder/gate.json): none";
  const lines = all.map((a) => `  ${a.key}  -> ${a.answer} (since ${a.time.slice(0, 10)}): ${a.question}`);
  return [`remembered answers (.coder/gate.json), forget with \`coder config forget [TEXT]\`:`, ...lines].join("\n");
}
