// Applying one model reply, in the order contracts.md fixes: parse → gate each
// edit → apply to a staged workspace → dirty-commit → write → commit. Returns
// what happened; the turn loop turns failures into the reflection.
import { posix } from "node:path";
import { FormatError, PluginError } from "../../errors.ts";
import type { FileWrite, WriteOptions, WriteReport } from "../../edit/files.ts";
import type { ConfirmGroup, EditPermission } from "../../gate/gate.ts";
import type { Edit, EditFormat, EditOutcome, Fence, Matcher, ModelReply, ParsedReply, Workspace } from "../../plugin.ts";
import { SharedMatcher } from "../../edit/matcher.ts";
import type { CommittedFile } from "../../edit/uncommitted.ts";
import { guard, messageOf, type Registered } from "../../plugins/registry.ts";
import type { Hooks } from "../../plugins/hooks.ts";

/** The staged workspace the file store hands out: a Workspace that can list its changes. */
export interface StagedWorkspace extends Workspace {
  /** Repository path → new content (null: delete). */
  changes(): Map<string, string | null>;
}

/** What the engine needs of core/edit/files.ts `FileStore`. */
export interface FileStoreLike {
  check(rel: string): string | null;
  /** The repository path a write to `rel` lands on (symlinks inside the repository followed). */
  canonical(rel: string): string;
  toRelative(pathAsTyped: string): string;
  read(rel: string): string | null;
  /** A read-only file outside the repository, by absolute path (never written). */
  readOutside(abs: string): string | null;
  /** Why a file does not read into the chat (not a regular file, over --max-file-size, not found, not text). */
  unreadable(path: string): string;
  /** Why a file that is there cannot be read at all (not a regular file, a link loop, over --max-file-size); null when it reads (text or not) or is missing. */
  readProblem(path: string): string | null;
  workspace(chatFiles: readonly string[], shown?: ReadonlyMap<string, string | null>): StagedWorkspace;
  writeAll(changes: ReadonlyMap<string, string | null>, opts: WriteOptions): Promise<WriteReport>;
  /** The file as saved, when an editor holds an unsaved change to it (else null). */
  savedWhenUnsaved?(rel: string): string | null;
  /** Hear what each write batch wrote, until the returned function is called. */
  onWrite(listener: (written: readonly FileWrite[]) => void): () => void;
  /** Make reads of `rels` answer what is there now (an editor's buffers read again). */
  sync(rels: readonly string[]): Promise<void>;
}

/** What the engine needs of core/gate/gate.ts `Gate`. */
export interface GateLike {
  editPermission(rel: string, ctx: { chatFiles: readonly string[]; readOnlyFiles: readonly string[]; existsInRepo: boolean; group?: ConfirmGroup }): Promise<EditPermission>;
  group(size: number): ConfirmGroup;
  protectedChange(rel: string, detail: string): Promise<EditPermission>;
}

export interface ApplyInputs {
  format: Registered<EditFormat>;
  reply: ModelReply;
  fence: Fence;
  chatFiles: readonly string[];
  readOnlyFiles: readonly string[];
  resolvePath(raw: string): string;
  files: FileStoreLike;
  /** The files' texts as the model was shown them in the request this reply answers (null: not existing); none for a saved reply. */
  shown?: ReadonlyMap<string, string | null>;
  gate: GateLike;
  /** A unified diff of one file's change, shown when a change needs a person's yes. */
  diff(path: string, before: string, after: string): string;
  /** Plugins' onEdit hooks (none: every staged change stands). */
  hooks?: Pick<Hooks, "has" | "edit">;
  /** Shown every file the edits would change, before the gate asks anything (an editor's cards); optional. */
  preview?(changes: readonly { path: string; before: string | null; after: string | null }[]): void;
  /**
   * Tell the shared matcher which of `paths` hold uncommitted changes, while the edits are
   * applied (see `guardUncommitted`); returns the function that ends it.
   */
  guardUncommitted?(paths: readonly string[]): Promise<() => void>;
  /** More changes for a reply that changed something, in the same write and commit (see `ReplyAmendment`). */
  amend?: ReplyAmendment;
}

/**
 * What a front end adds to a reply that changed files, written and committed with it: watch
 * mode removes the AI comments it acted on, so a comment costs one commit, not two. Gets the
 * reply's changes and a read of any file as the reply leaves it; returns chat files' new texts.
 */
export type ReplyAmendment = (changes: ReadonlyMap<string, string | null>, read: (path: string) => string | null) => Map<string, string>;

/** What `guardUncommitted` needs: the kit's matcher, git, and the file store's reads. */
export interface UncommittedSources {
  matcher: Matcher;
  git: { committedTexts(paths: readonly string[]): Promise<Map<string, string>> } | null;
  files: Pick<FileStoreLike, "read" | "savedWhenUnsaved" | "canonical">;
  /** The files' texts as the model was shown them in the request this reply answers. */
  shown?: ReadonlyMap<string, string | null>;
}

/**
 * The user's uncommitted changes to `paths`, made known to the shared matcher until the
 * returned function is called: a SEARCH quoting such a file as last committed then lands only
 * on an exact copy of the current lines, never approximately over the user's change. The same
 * holds for a file changed while the model answered: the text it was shown is older than the disk.
 */
export async function guardUncommitted(sources: UncommittedSources, paths: readonly string[]): Promise<() => void> {
  const { matcher, git, files } = sources;
  if (!(matcher instanceof SharedMatcher)) return () => {};
  const dirty: CommittedFile[] = [];
  const committed = git ? await git.committedTexts(paths) : new Map<string, string>();
  const shown = new Map([...(sources.shown ?? [])].map(([path, text]) => [files.canonical(path), text]));
  for (const path of paths) {
    // Older versions changed since: the text the model was shown (changed while it answered), the last commit, and the saved file under an editor's unsaved buffer.
    const olders = [
      { text: shown.get(path), was: "shown" as const },
      { text: committed.get(path), was: "committed" as const },
      { text: files.savedWhenUnsaved?.(path), was: "saved" as const },
    ].filter((o) => typeof o.text === "string");
    const now = olders.length ? files.read(path) : null;
    if (now === null) continue;
    for (const { text, was } of olders) if (text !== now) dirty.push({ path, head: text as string, disk: now, was });
  }
  return matcher.uncommitted.begin(dirty);
}

export type ParseResult = { ok: true; parsed: ParsedReply } | { ok: false; error: string; pluginError: boolean };

/** Parse the reply; a FormatError's text is for the model, any other throw is the plugin's bug. */
export function parseReply(inputs: Pick<ApplyInputs, "format" | "reply" | "fence" | "chatFiles" | "resolvePath"> & { repoFiles?: readonly string[] }): ParseResult {
  const { format } = inputs;
  try {
    const parsed = guard(format, "parse", () => format.item.parse(inputs.reply, { fence: inputs.fence, chatFiles: inputs.chatFiles, resolvePath: inputs.resolvePath, ...(inputs.repoFiles ? { repoFiles: inputs.repoFiles } : {}) }));
    return { ok: true, parsed };
  } catch (error) {
    // kit.FormatError, or a plugin's own error class of that name (the guard lets both through): the text is for the model.
    if (error instanceof FormatError || (error instanceof Error && error.name === "FormatError")) return { ok: false, error: error.message, pluginError: false };
    return { ok: false, error: messageOf(error), pluginError: true };
  }
}

export interface AppliedReply {
  outcomes: EditOutcome[];
  /** Staged changes of the edits that applied (path → content, null = delete). */
  changes: Map<string, string | null>;
  /** File contents before the reply (null: did not exist), for diffs and commit messages. */
  before: Map<string, string | null>;
  /** Files outside the chat that the gate allowed and an edit landed in (they join the chat). */
  joined: string[];
  /** Files outside the chat that the gate allowed but whose edits failed. */
  failedOutside: string[];
  /**
   * Apply the same edits again to the files as they are now, with the gate's answers of this
   * reply replayed (nobody is asked twice): for when another writer changed a file meanwhile.
   */
  restage(): Promise<AppliedReply>;
}

/** The gate's answers within one reply, by path: replayed when the reply is staged again. */
interface GateAnswers {
  edit: Map<string, EditPermission>;
  config: Map<string, EditPermission>;
}

/** A gate that asks each path's question once per reply, and replays the answer after that. */
function answeringOnce(gate: GateLike, answers: GateAnswers): GateLike {
  const once = async (memo: Map<string, EditPermission>, rel: string, ask: () => Promise<EditPermission>) => {
    const known = memo.get(rel);
    if (known) return known;
    const answer = await ask();
    memo.set(rel, answer);
    return answer;
  };
  return {
    group: (size) => gate.group(size),
    editPermission: (rel, ctx) => once(answers.edit, rel, () => gate.editPermission(rel, ctx)),
    protectedChange: (rel, detail) => once(answers.config, rel, () => gate.protectedChange(rel, detail)),
  };
}

const normalizePath = (p: string): string => posix.normalize(p.replaceAll("\\", "/"));

/** Every path an edit writes: `path`, then the others it declares (e.g. a rename's target). */
export function editTargets(edit: Edit): string[] {
  return [...new Set([edit.path, ...(edit.paths ?? [])].filter((p) => typeof p === "string" && p !== ""))];
}

/** Gate every path of every edit, then apply the allowed edits to one staged workspace. Writes nothing. */
export async function stageEdits(inputs: ApplyInputs, edits: Edit[], answers: GateAnswers = { edit: new Map(), config: new Map() }): Promise<AppliedReply> {
  const { files, chatFiles, readOnlyFiles, format } = inputs;
  if (inputs.preview) await previewEdits(inputs, edits);
  const gate = answeringOnce(inputs.gate, answers);
  const outcomes: (EditOutcome | undefined)[] = new Array(edits.length);
  const allowed: { edit: Edit; index: number }[] = [];
  const outside = new Set<string>();
  // One question per file outside the chat, with All / Skip all when there are several.
  const group = gate.group(new Set(edits.flatMap(editTargets).filter((p) => !chatFiles.includes(p))).size);
  const permissionFor = (rel: string): Promise<EditPermission> => gate.editPermission(rel, { chatFiles, readOnlyFiles, existsInRepo: files.read(rel) !== null, group });

  for (const [index, edit] of edits.entries()) {
    const targets = editTargets(edit);
    let refusal: Extract<EditPermission, { ok: false }> | null = null;
    for (const rel of targets) {
      const permission = await permissionFor(rel);
      if (!permission.ok) {
        refusal = permission;
        break;
      }
    }
    if (refusal !== null) {
      outcomes[index] = refusal.declined
        ? { status: "skipped", edit, path: edit.path, detail: refusal.reason }
        : { status: "failed", edit, path: edit.path, reason: "refused", detail: refusal.reason };
      continue;
    }
    for (const rel of targets) if (!chatFiles.includes(rel)) outside.add(rel);
    allowed.push({ edit, index });
  }

  const ws = files.workspace([...chatFiles, ...outside], inputs.shown);
  const before = new Map<string, string | null>();
  const touched = new Set(allowed.flatMap((a) => editTargets(a.edit)));
  for (const path of touched) before.set(path, ws.read(path));

  let applied: EditOutcome[] = [];
  if (allowed.length) {
    // A format may also land a block in another chat file: those are guarded too.
    const guarded = [...new Set([...chatFiles, ...outside, ...touched].map((p) => files.canonical(p)))];
    const endGuard = (await inputs.guardUncommitted?.(guarded)) ?? (() => {});
    try {
      applied = await guard(format, "apply", () => format.item.apply(allowed.map((a) => a.edit), ws));
    } catch (error) {
      const detail = error instanceof PluginError ? error.message : messageOf(error);
      applied = allowed.map(({ edit }) => ({ status: "failed", edit, path: edit.path, reason: "invalid", detail }));
    } finally {
      endGuard();
    }
  }
  // Outcomes come back in edit order; map them to their edits' slots.
  applied.forEach((outcome, i) => {
    const slot = allowed[i];
    if (slot) outcomes[slot.index] = outcome;
  });
  let changes = ws.changes();
  for (const path of changes.keys()) if (!before.has(path)) before.set(path, files.read(path));

  const done = outcomes.map(
    (o, i): EditOutcome => o ?? { status: "failed", edit: edits[i] as Edit, path: (edits[i] as Edit).path, reason: "invalid", detail: `the ${format.item.name} format reported nothing for this edit` },
  );

  // A format writes only what its edits declare (path, paths): any other write is gated now, and a
  // refusal drops the whole reply's changes (which edit wrote it is unknown), so nothing escapes the gate.
  const declared = new Set([...touched].flatMap((p) => [normalizePath(p), files.canonical(p)]));
  for (const path of changes.keys()) {
    if (declared.has(normalizePath(path))) continue;
    const permission = await permissionFor(path);
    if (permission.ok) {
      if (!chatFiles.includes(path)) outside.add(path);
      continue;
    }
    const detail = `the reply also wrote ${path}, which its edits did not name, and that was refused: ${permission.reason.replace(/\.?$/, ".")} Nothing from this reply was written.`;
    done.forEach((o, i) => {
      if (o.status !== "applied") return;
      done[i] = permission.declined ? { status: "skipped", edit: o.edit, path: o.path, detail } : { status: "failed", edit: o.edit, path: o.path, reason: "refused", detail };
    });
    changes = new Map();
    break;
  }

  changes = await confirmProtectedChanges({ ...inputs, gate }, changes, before, done);
  if (changes.size && inputs.amend) {
    const staged = changes;
    const read = (path: string) => (staged.has(path) ? staged.get(path)! : ws.read(path));
    // Only chat files the store may write: an amendment never widens what a reply may touch.
    for (const [path, text] of inputs.amend(staged, read)) {
      if (!chatFiles.includes(path) || files.check(path) !== null) continue;
      if (!before.has(path)) before.set(path, files.read(path));
      staged.set(path, text);
    }
  }
  if (inputs.hooks?.has("onEdit")) changes = await pluginVerdicts(inputs, inputs.hooks, changes, before, done);

  const landed = new Set(done.filter((o) => o.status === "applied").map((o) => o.path));
  return {
    outcomes: done,
    changes,
    before,
    joined: [...outside].filter((p) => landed.has(p)),
    failedOutside: [...outside].filter((p) => !landed.has(p) && done.some((o) => o.path === p && o.status === "failed")),
    restage: () => stageEdits(inputs, edits, answers),
  };
}

/**
 * Every edit applied to a scratch workspace, ungated, to show what each file would become
 * before anyone is asked; nothing of it is kept or written (the gated staging follows).
 */
async function previewEdits(inputs: ApplyInputs, edits: Edit[]): Promise<void> {
  const { files, chatFiles, format } = inputs;
  const paths = [...new Set([...chatFiles, ...edits.flatMap(editTargets)])];
  const ws = files.workspace(paths, inputs.shown);
  let endGuard = () => {};
  try {
    // Under the same guard of the user's uncommitted changes as the real staging, so the card shows what it will do.
    endGuard = (await inputs.guardUncommitted?.([...new Set(paths.map((p) => files.canonical(p)))])) ?? endGuard;
    await guard(format, "apply", () => format.item.apply(edits, ws));
  } catch {
    return; // a bad path or the format's failure: the real staging reports it
  } finally {
    endGuard();
  }
  const changes = [...ws.changes()].map(([path, after]) => ({ path, before: files.read(path), after }));
  if (changes.length) inputs.preview?.(changes);
}

/** Has a file the reply read or writes changed on disk since it was staged? */
export function isStale(staged: AppliedReply, files: Pick<FileStoreLike, "read">): boolean {
  return [...staged.before].some(([path, text]) => files.read(path) !== text);
}

/**
 * A change to one of coder's protected files (its config, a `.gitignore`) needs the user's
 * explicit yes (gate.protectedChange). A declined one is dropped with every edit that wrote it,
 * and with everything else those edits wrote: an edit is one unit, so a move whose destination
 * is declined keeps its source (and any file those edits share goes back to what it was).
 */
async function confirmProtectedChanges(inputs: ApplyInputs, changes: Map<string, string | null>, before: Map<string, string | null>, outcomes: EditOutcome[]): Promise<Map<string, string | null>> {
  const kept = new Map(changes);
  const declined: { path: string; reason: string }[] = [];
  for (const [path, after] of changes) {
    const permission = await inputs.gate.protectedChange(path, inputs.diff(path, before.get(path) ?? "", after ?? ""));
    if (!permission.ok) declined.push({ path, reason: permission.reason });
  }
  // Until nothing changes: a dropped path skips the edits that wrote it, whose other paths drop too.
  const dropped = new Map(declined.map((d) => [normalizePath(d.path), d.reason]));
  const targetsOf = (o: EditOutcome) => editTargets(o.edit).flatMap((p) => [normalizePath(p), normalizePath(inputs.files.canonical(p))]);
  for (let grew = dropped.size > 0; grew; ) {
    grew = false;
    outcomes.forEach((o, i) => {
      if (o.status !== "applied") return;
      const targets = targetsOf(o);
      const hit = targets.find((t) => dropped.has(t));
      if (hit === undefined) return;
      const reason = dropped.get(hit)!;
      const direct = declined.some((d) => normalizePath(d.path) === hit);
      outcomes[i] = { status: "skipped", edit: o.edit, path: o.path, detail: direct ? reason : `${reason}, so this edit (which also writes ${hit}) was not made either` };
      for (const t of targets) {
        if (dropped.has(t)) continue;
        dropped.set(t, reason);
        grew = true;
      }
    });
  }
  for (const path of changes.keys()) if (dropped.has(normalizePath(path))) kept.delete(path);
  return kept;
}

/**
 * Plugins' onEdit: each staged file in turn, its new content changed or refused. A refused file
 * is not written, and the edits that wrote it fail as "refused" with the plugin's reason (the user
 * sees it with the outcome, the model in the repair report).
 */
async function pluginVerdicts(inputs: ApplyInputs, hooks: Pick<Hooks, "edit">, changes: Map<string, string | null>, before: Map<string, string | null>, outcomes: EditOutcome[]): Promise<Map<string, string | null>> {
  const kept = new Map<string, string | null>();
  for (const [path, after] of changes) {
    const verdict = await hooks.edit({ path, before: before.get(path) ?? null, after, format: inputs.format.item.name });
    if ("after" in verdict) {
      kept.set(path, verdict.after);
      continue;
    }
    const detail = `plugin ${verdict.plugin} refused the change to ${path}: ${verdict.veto}`;
    outcomes.forEach((o, i) => {
      if (o.status === "applied" && editTargets(o.edit).map(normalizePath).includes(normalizePath(path))) outcomes[i] = { status: "failed", edit: o.edit, path: o.path, reason: "refused", detail };
    });
  }
  return kept;
}

/** A short per-edit note for `--json` and the terminal. */
export function outcomeDetail(outcome: EditOutcome): string {
  switch (outcome.status) {
    case "applied":
      return outcome.note ?? (outcome.rung && outcome.rung !== "exact" ? `matched (${outcome.rung})` : "applied");
    case "failed":
      return `${outcome.reason}: ${outcome.detail}`;
    case "skipped":
      return outcome.detail;
  }
}

/** Count of added and removed lines between two texts (for diffstats and summaries). */
export function lineDelta(before: string | null, after: string | null): { added: number; removed: number } {
  const a = before === null ? [] : before.split("\n");
  const b = after === null ? [] : after.split("\n");
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of b) {
    const n = counts.get(line) ?? 0;
    if (n > 0) {
      common++;
      counts.set(line, n - 1);
    }
  }
  return { added: b.length - common, removed: a.length - common };
}
