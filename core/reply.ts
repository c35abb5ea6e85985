// Applying one model reply, in the order contracts.md fixes: parse → gate each
// edit → apply to a staged workspace → dirty-commit → write → commit. Returns
// what happened; the turn loop turns failures into the reflection.
import { posix } from "node:path";
import { FormatError, PluginError } from "./errors.ts";
import type { WriteReport } from "./files.ts";
import type { ConfirmGroup, EditPermission } from "./gate.ts";
import type { Edit, EditFormat, EditOutcome, Fence, ModelReply, ParsedReply, Workspace } from "./plugin.ts";
import { guard, messageOf, type Registered } from "./registry.ts";

/** The staged workspace the file store hands out: a Workspace that can list its changes. */
export interface StagedWorkspace extends Workspace {
  /** Repository path → new content (null: delete). */
  changes(): Map<string, string | null>;
}

/** What the engine needs of core/files.ts `FileStore`. */
export interface FileStoreLike {
  check(rel: string): string | null;
  toRelative(pathAsTyped: string): string;
  read(rel: string): string | null;
  workspace(chatFiles: readonly string[]): StagedWorkspace;
  writeAll(changes: ReadonlyMap<string, string | null>, opts: { dryRun?: boolean }): Promise<WriteReport>;
}

/** What the engine needs of core/gate.ts `Gate`. */
export interface GateLike {
  editPermission(rel: string, ctx: { chatFiles: readonly string[]; readOnlyFiles: readonly string[]; existsInRepo: boolean; group?: ConfirmGroup }): Promise<EditPermission>;
  group(size: number): ConfirmGroup;
}

export interface ApplyInputs {
  format: Registered<EditFormat>;
  reply: ModelReply;
  fence: Fence;
  chatFiles: readonly string[];
  readOnlyFiles: readonly string[];
  resolvePath(raw: string): string;
  files: FileStoreLike;
  gate: GateLike;
}

export type ParseResult = { ok: true; parsed: ParsedReply } | { ok: false; error: string; pluginError: boolean };

/** Parse the reply; a FormatError's text is for the model, any other throw is the plugin's bug. */
export function parseReply(inputs: Pick<ApplyInputs, "format" | "reply" | "fence" | "chatFiles" | "resolvePath"> & { repoFiles?: readonly string[] }): ParseResult {
  const { format } = inputs;
  try {
    const parsed = format.item.parse(inputs.reply, { fence: inputs.fence, chatFiles: inputs.chatFiles, resolvePath: inputs.resolvePath, ...(inputs.repoFiles ? { repoFiles: inputs.repoFiles } : {}) });
    return { ok: true, parsed };
  } catch (error) {
    // kit.FormatError, or a plugin's own error class of that name: the text is for the model.
    if (error instanceof FormatError || (error instanceof Error && error.name === "FormatError")) {
      return { ok: false, error: error.message, pluginError: false };
    }
    return { ok: false, error: new PluginError(format.plugin, format.origin, `parse failed: ${messageOf(error)}`).message, pluginError: true };
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
}

const normalizePath = (p: string): string => posix.normalize(p.replaceAll("\\", "/"));

/** Every path an edit writes: `path`, then the others it declares (e.g. a rename's target). */
export function editTargets(edit: Edit): string[] {
  return [...new Set([edit.path, ...(edit.paths ?? [])].filter((p) => typeof p === "string" && p !== ""))];
}

/** Gate every path of every edit, then apply the allowed edits to one staged workspace. Writes nothing. */
export async function stageEdits(inputs: ApplyInputs, edits: Edit[]): Promise<AppliedReply> {
  const { files, gate, chatFiles, readOnlyFiles, format } = inputs;
  const outcomes: (EditOutcome | undefined)[] = new Array(edits.length);
  const allowed: { edit: Edit; index: number }[] = [];
  const outside = new Set<string>();
  // One question per file outside the chat, with All / Skip all when there are several.
  const group = gate.group(new Set(edits.flatMap(editTargets).filter((p) => !chatFiles.includes(p))).size);
  const decided = new Map<string, EditPermission>();
  /** The gate's answer for a path, asked once per reply. */
  const permissionFor = async (rel: string): Promise<EditPermission> => {
    const permission = decided.get(rel) ?? (await gate.editPermission(rel, { chatFiles, readOnlyFiles, existsInRepo: files.read(rel) !== null, group }));
    decided.set(rel, permission);
    return permission;
  };

  for (const [index, edit] of edits.entries()) {
    const targets = editTargets(edit);
    let refusal: string | null = null;
    for (const rel of targets) {
      const permission = await permissionFor(rel);
      if (!permission.ok) {
        refusal = permission.reason;
        break;
      }
    }
    if (refusal !== null) {
      outcomes[index] = { status: "failed", edit, path: edit.path, reason: "refused", detail: refusal };
      continue;
    }
    for (const rel of targets) if (!chatFiles.includes(rel)) outside.add(rel);
    allowed.push({ edit, index });
  }

  const ws = files.workspace([...chatFiles, ...outside]);
  const before = new Map<string, string | null>();
  const touched = new Set(allowed.flatMap((a) => editTargets(a.edit)));
  for (const path of touched) before.set(path, ws.read(path));

  let applied: EditOutcome[] = [];
  if (allowed.length) {
    try {
      applied = await guard(format, "apply", () => format.item.apply(allowed.map((a) => a.edit), ws));
    } catch (error) {
      const detail = error instanceof PluginError ? error.message : messageOf(error);
      applied = allowed.map(({ edit }) => ({ status: "failed", edit, path: edit.path, reason: "invalid", detail }));
    }
  }
  // Outcomes come back in edit order; map them to their edits' slots.
  applied.forEach((outcome, i) => {
    const slot = allowed[i];
    if (slot) outcomes[slot.index] = outcome;
  });
  let changes = ws.changes();
  for (const path of changes.keys()) if (!before.has(path)) before.set(path, files.read(path));

  const done = outcomes.map((o, i) => o ?? ({ status: "skipped", edit: edits[i] as Edit, path: (edits[i] as Edit).path, detail: "not applied" } as EditOutcome));

  // A format writes only what its edits declare (path, paths): any other write is gated now, and a
  // refusal drops the whole reply's changes (which edit wrote it is unknown), so nothing escapes the gate.
  const declared = new Set([...touched].map(normalizePath));
  for (const path of changes.keys()) {
    if (declared.has(normalizePath(path))) continue;
    const permission = await permissionFor(path);
    if (permission.ok) {
      if (!chatFiles.includes(path)) outside.add(path);
      continue;
    }
    const detail = `the reply also wrote ${path}, which its edits did not name, and that was refused: ${permission.reason} Nothing from this reply was written.`;
    done.forEach((o, i) => {
      if (o.status === "applied") done[i] = { status: "failed", edit: o.edit, path: o.path, reason: "refused", detail };
    });
    changes = new Map();
    break;
  }

  const landed = new Set(done.filter((o) => o.status === "applied").map((o) => o.path));
  return {
    outcomes: done,
    changes,
    before,
    joined: [...outside].filter((p) => landed.has(p)),
    failedOutside: [...outside].filter((p) => !landed.has(p) && done.some((o) => o.path === p && o.status === "failed")),
  };
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
