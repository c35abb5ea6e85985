// The file store: the one place that reads and writes repository files. It refuses
// unsafe paths, keeps each file's encoding, BOM, line endings and mode, stages a
// reply's edits in a workspace, and writes them atomically after validating all.
import {
  accessSync,
  chmodSync,
  constants,
  fchownSync,
  fstatSync,
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { canHold, decodeBytes, type Encoding, encodeText, type FileShape, SNIFF_BYTES } from "./encoding.ts";
import { UsageError } from "../errors.ts";
import { normalizeRel } from "./paths.ts";
import { type CappedRead, readCapped, readHead } from "./read.ts";
import type { Workspace } from "../plugin.ts";

export type { Encoding, FileShape } from "./encoding.ts";
export { chooseFence } from "./fence.ts";
export { resolveModelPath } from "./paths.ts";

export interface FileWrite {
  path: string;
  action: "create" | "update" | "delete";
  before: string | null;
  after: string | null;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** Each file's text when the edits were computed (null: it did not exist); a file that differs now is not written. */
  expected?: ReadonlyMap<string, string | null>;
  /** Called once with the whole batch (bytes before, bytes after; null: absent) before the first write. */
  beforeWrite?: (batch: { path: string; before: Uint8Array | null; after: Uint8Array | null }[]) => void;
  /**
   * Paths written all or not at all (one edit's paths: a move's destination and its source's
   * deletion). When one of a group is refused, the others are not written either.
   */
  together?: readonly (readonly string[])[];
}

interface PlannedWrite {
  write: FileWrite;
  /** The bytes on disk when the write was planned (null: absent). */
  old: Uint8Array | null;
  /** What to write (null: delete). */
  bytes: Uint8Array | null;
  /** What to write as text, line endings restored (for an editor's write; "" for a delete). */
  text: string;
  mode: number | null;
}

function changedOnDisk(rel: string): string {
  return `${rel} changed on disk while this reply was being applied (another coder session, an editor or a tool wrote it); it was not written, so that change is kept`;
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

export interface WriteReport {
  dryRun: boolean;
  /** Written (or, in a dry run, that would be written). */
  written: FileWrite[];
  /** Not written, with the reason (unsafe path, unencodable text, I/O error). */
  /** `declined`: the editor's user refused the write (an `EditorFiles` write threw `WriteDeclined`). */
  refused: { path: string; reason: string; declined?: boolean }[];
  /** Staged but identical to the disk. */
  unchanged: string[];
}

export interface FileStoreOptions {
  /** Where paths the user types are relative to (default: the root). */
  cwd?: string;
  /** True when git ignores the (repository-relative) path. */
  isIgnored?: (rel: string) => boolean;
  /** Files added read-only (`--read`): never written. */
  readOnly?: () => readonly string[];
  /** fsync each temp file before the rename (default true; tests that write thousands of files may turn it off). */
  fsync?: boolean;
  /** Files larger than this are neither read into a chat nor edited (default 10 MB). */
  maxBytes?: number;
  /** The submodule holding a repository path, if any: coder edits no file inside one. */
  submoduleOf?: (rel: string) => string | null;
  /** How new files are written (`--encoding`, `--line-endings`); default UTF-8 with LF. */
  newFile?: { encoding: Encoding; eol: "lf" | "crlf" };
  /** How a file that is not valid UTF-8 (and has no BOM) is read (`--encoding`); default latin-1. */
  fallbackEncoding?: "latin-1" | "windows-1252";
  /** An editor's buffers (`coder acp`): what it holds is read instead of the disk, and writes go through it. */
  editor?: EditorFiles;
  /** Called before each batch is written (git freezes what it ignores before coder's first write). */
  beforeWriting?: () => void;
}

/**
 * The files an editor has open, as the ACP agent reaches them. The store's checks (paths,
 * read-only, ignored, changed on disk) run as for the disk; only the read and the write differ.
 */
export interface EditorFiles {
  /** The editor's text of a repository file (an unsaved buffer), or undefined to read the disk. */
  text(rel: string): string | undefined;
  /**
   * Write through the editor instead of the disk; absent or false: the store writes the disk.
   * Throws `WriteDeclined` when the editor's user refused the write.
   */
  write?(rel: string, text: string): Promise<boolean>;
  /** The store deleted the file: the editor's text of it is no longer what is there. */
  removed?(rel: string): void;
  /** Read the editor's texts of `rels` again (the user may have typed since they were read). */
  refresh?(rels: readonly string[]): Promise<void>;
}

/** An editor refused a write (its user said no): the message is the editor's reason. */
export class WriteDeclined extends Error {
  override name = "WriteDeclined";
}

/** The default cap on the size of a file coder reads into a chat or edits. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** "12.5 MB". */
function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const NEW_FILE: FileShape = { encoding: "utf-8", bom: false, eol: "lf", mode: null };

/** The store's `newFile` and `fallbackEncoding` from `--encoding` and `--line-endings`. */
export function shapeOptions(o: { encoding: Encoding; lineEndings: "platform" | "lf" | "crlf" }, platform: string = process.platform): Pick<FileStoreOptions, "newFile" | "fallbackEncoding"> {
  const eol = o.lineEndings === "platform" ? (platform === "win32" ? "crlf" : "lf") : o.lineEndings;
  return { newFile: { encoding: o.encoding, eol }, fallbackEncoding: o.encoding === "windows-1252" ? "windows-1252" : "latin-1" };
}

/** The shape of a new file: UTF-16 gets its BOM (readers cannot tell it otherwise). */
function newFileShape(opts: FileStoreOptions): FileShape {
  if (!opts.newFile) return NEW_FILE;
  const { encoding, eol } = opts.newFile;
  return { encoding, eol, bom: encoding === "utf-16le" || encoding === "utf-16be", mode: null };
}

/** Why `text` cannot be written into a file of this shape (NUL, broken Unicode, characters its encoding lacks). */
function textProblem(rel: string, text: string, shape: FileShape): string {
  if (text.includes("\0")) return `the new text of ${rel} contains a NUL character, which would turn it into a binary file`;
  const why = text.isWellFormed() ? `has characters ${shape.encoding} cannot hold` : "has broken Unicode (a lone surrogate)";
  return `${rel} is a ${shape.encoding} file and the new text ${why}`;
}

/** A path that looks absolute on any platform (`/x`, `C:\x`, `\\server`). */
const looksAbsolute = (p: string) => isAbsolute(p) || /^[a-zA-Z]:[\\/]/.test(p) || p.startsWith("\\\\");

/** A `path.relative` result that leaves the folder it is relative to. */
const leavesFolder = (rel: string) => rel === ".." || rel.startsWith(".." + sep) || isAbsolute(rel);

/** A repository path inside `.git/` (any letter case: case-insensitive disks). */
const isGitPath = (norm: string) => norm.split("/")[0]!.toLowerCase() === ".git";

/** A normalised repository path that names no file inside the repository (the root itself, or above it). */
const notInside = (norm: string) => norm === "" || norm === ".." || norm.startsWith("../");

/** The repository's files: safe paths, faithful reads, atomic writes. */
export class FileStore {
  readonly root: string;
  private readonly realRoot: string;
  private readonly shapes = new Map<string, FileShape>();
  /** Files whose lines end in both LF and CRLF: their LF-folded text and each line's ending. */
  private readonly mixedEndings = new Map<string, { folded: string; endings: string[] }>();
  /** Who hears of each batch the store wrote (watch mode tells its own writes from the user's). */
  private readonly writeListeners = new Set<(written: readonly FileWrite[]) => void>();

  constructor(
    root: string,
    private readonly opts: FileStoreOptions = {},
  ) {
    this.root = resolve(root);
    this.realRoot = existsSync(this.root) ? realpathSync(this.root) : this.root;
  }

  /**
   * Why `rel` may not be written (outside the repository, `.git/`, symlink out, binary, too
   * large, ignored, read-only), or null. A path through a symlink inside the repository is
   * judged by where it lands: a link to an ignored or read-only file is refused like the file.
   */
  check(rel: string): string | null {
    if (rel.trim() === "") return "an empty path";
    if (rel.includes("\0")) return `${JSON.stringify(rel)} contains a NUL character`;
    if (looksAbsolute(rel)) return `${rel} is an absolute path; use a path relative to the repository root`;
    const norm = normalizeRel(rel);
    if (notInside(norm)) return `${rel} is outside the repository`;
    if (isGitPath(norm)) return `${rel} is inside .git/, which coder never writes`;
    const escape = this.symlinkEscape(norm);
    if (escape) return escape;
    const real = this.canonical(norm);
    const shown = real === norm ? rel : `${rel} (a symlink to ${real})`;
    if (isGitPath(real)) return `${shown} is inside .git/, which coder never writes`;
    const submodule = this.opts.submoduleOf?.(real);
    if (submodule) return `${shown} is inside the git submodule ${submodule}, which coder does not edit (run coder inside ${submodule} to change it)`;
    const abs = join(this.root, real);
    let stat: ReturnType<typeof statSync> | null = null;
    try {
      stat = statSync(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOTDIR") return `${shown} cannot be created: ${this.fileOnTheWay(real)} is a file, not a folder`;
      stat = null;
    }
    if (stat?.isDirectory()) return `${shown} is a directory`;
    if (stat && !stat.isFile()) return `${shown} is not a regular file`;
    if (stat && stat.size > this.maxBytes) return `${shown} is ${megabytes(stat.size)}, over the ${megabytes(this.maxBytes)} limit for files coder edits (--max-file-size)`;
    if (stat && this.looksBinary(abs)) return `${shown} is a binary file`;
    if (stat) {
      const denied = writeDenied(abs, stat);
      if (denied) return `${shown} cannot be written: permission denied (${denied})`;
    }
    const readOnly = this.opts.readOnly?.() ?? [];
    if (readOnly.includes(norm) || (real !== norm && readOnly.some((f) => !looksAbsolute(f) && this.canonical(normalizeRel(f)) === real))) {
      return `${shown} is read-only in this chat (added with --read or /read-only)`;
    }
    if (this.opts.isIgnored?.(norm) || (real !== norm && this.opts.isIgnored?.(real))) return `${shown} is ignored by git (.gitignore); coder does not edit ignored files`;
    return null;
  }

  /** The first folder of `rel` (a repository path) that exists as something other than a folder. */
  private fileOnTheWay(rel: string): string {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      try {
        if (!statSync(join(this.root, prefix)).isDirectory()) return prefix;
      } catch {
        break;
      }
    }
    return dirname(rel);
  }

  /**
   * The repository path a write to `rel` lands on: symlinks inside the repository followed
   * (to their target's path), so rules and commits name the real file. A path that does not
   * resolve inside the repository comes back as it is (check() refuses it).
   */
  canonical(rel: string): string {
    const norm = normalizeRel(rel);
    if (looksAbsolute(rel) || notInside(norm)) return norm;
    // The deepest existing part of the path decides; the rest is new.
    const parts = norm.split("/");
    for (let n = parts.length; n > 0; n--) {
      const head = join(this.root, ...parts.slice(0, n));
      let real: string;
      try {
        real = realpathSync(head);
      } catch {
        continue;
      }
      const inside = relative(this.realRoot, real);
      if (inside === "" || leavesFolder(inside)) return norm;
      return [inside.split(sep).join("/"), ...parts.slice(n)].join("/");
    }
    return norm;
  }

  private get maxBytes(): number {
    return this.opts.maxBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** A path typed by the user (relative to `cwd`, by default the store's) as a repository-relative path; UsageError when outside. */
  toRelative(pathAsTyped: string, cwd: string = this.opts.cwd ?? this.root): string {
    const abs = resolve(cwd, pathAsTyped);
    let rel = relative(this.root, abs);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      // The root may be spelled through a symlink (e.g. /tmp on macOS).
      const realAbs = existsSync(abs) ? realpathSync(abs) : resolve(realpathOrSelf(dirname(abs)), basename(abs));
      rel = relative(this.realRoot, realAbs);
    }
    if (rel === "") {
      // `coder -m x .` or an empty argument: the root is a folder, not a file to chat about.
      throw new UsageError(`${pathAsTyped === "" ? 'an empty path ("")' : pathAsTyped} names the repository root (${this.root}), not a file; give file paths`);
    }
    if (leavesFolder(rel)) {
      throw new UsageError(`${pathAsTyped} is outside the repository (${this.root})`);
    }
    const norm = rel.split(sep).join("/");
    const escape = this.symlinkEscape(norm);
    if (escape) throw new UsageError(escape);
    return norm;
  }

  /** Text of a repository file (CRLF folded to LF when the file is all CRLF), or null when missing, binary or unsafe. */
  read(rel: string): string | null {
    const norm = normalizeRel(rel);
    if (looksAbsolute(rel) || notInside(norm) || this.symlinkEscape(norm)) return null;
    return this.opts.editor?.text(norm) ?? this.decode(norm)?.text ?? null;
  }

  /**
   * What `read` would give were there no editor: the file as saved. Null when it is the same
   * as `read` (no editor, or no unsaved change there) or the file is unreadable.
   */
  savedWhenUnsaved(rel: string): string | null {
    const norm = normalizeRel(rel);
    const buffer = this.opts.editor?.text(norm);
    if (buffer === undefined || looksAbsolute(rel) || notInside(norm) || this.symlinkEscape(norm)) return null;
    const saved = this.decode(norm)?.text ?? null;
    return saved === buffer ? null : saved;
  }

  /**
   * A read-only file outside the repository (`--read ~/CONVENTIONS.md`): its text, or null when
   * it is missing, not a regular file, binary or over the size cap. Nothing is ever written there.
   */
  readOutside(abs: string): string | null {
    const file = readCapped(abs, { maxBytes: this.maxBytes, name: abs, capName: "--max-file-size" });
    if (!file.ok) return null;
    const decoded = decodeBytes(file.bytes);
    return decoded ? decoded.text.replace(/\r\n/g, "\n") : null;
  }

  /**
   * Why a file to be read into the chat (repository-relative, or absolute for a read-only file
   * outside) does not read: the capped reader's reason (not a regular file, over `--max-file-size`),
   * "not found", or "not a text file".
   */
  unreadable(path: string): string {
    const r = this.readAsChatFile(path);
    if (!r.ok) return r.reason === "missing" ? `${path}: not found` : r.message;
    return `${path} is not a text file`;
  }

  /**
   * Why a file that is there cannot be read at all (not a regular file, a link loop, over the
   * cap), or null when it reads (as text or not: an image) or nothing is there: a chat file that
   * became a folder, a pipe or a link loop.
   */
  readProblem(path: string): string | null {
    const r = this.readAsChatFile(path);
    return !r.ok && r.reason !== "missing" ? r.message : null;
  }

  private readAsChatFile(path: string): CappedRead {
    const abs = looksAbsolute(path) ? path : join(this.root, normalizeRel(path));
    return readCapped(abs, { maxBytes: this.maxBytes, name: path, capName: "--max-file-size" });
  }

  /** How the file is stored (encoding, BOM, EOL, mode); defaults for a new file. */
  shape(rel: string): FileShape {
    const norm = normalizeRel(rel);
    if (!this.shapes.has(norm)) this.decode(norm);
    return this.shapes.get(norm) ?? newFileShape(this.opts);
  }

  /** Why `text` cannot be written to `rel` as the file is stored (checked again by writeAll), or null. */
  textProblem(rel: string, text: string): string | null {
    const norm = normalizeRel(rel);
    const shape = existsSync(join(this.root, norm)) ? this.shape(norm) : newFileShape(this.opts);
    if (text.includes("\0") || !canHold(text, shape)) return textProblem(norm, text, shape);
    // UTF-8's length bounds every encoding's but UTF-16's (at most twice the UTF-16 code units).
    const size = shape.encoding.startsWith("utf-16") ? text.length * 2 : Buffer.byteLength(text, "utf8");
    if (size > this.maxBytes) return `the new text of ${norm} is ${megabytes(size)}, over the ${megabytes(this.maxBytes)} limit for files coder writes (--max-file-size)`;
    return null;
  }

  /**
   * Make `read` answer what is there now for `rels`: an editor's buffers are read again (the
   * user may have typed while the model answered); without an editor, reads are live already.
   */
  async sync(rels: readonly string[]): Promise<void> {
    await this.opts.editor?.refresh?.(rels.map(normalizeRel));
  }

  /** A staged view for one reply's edits; `shown`: the files' texts as the model was shown them (null: not existing). */
  workspace(chatFiles: readonly string[], shown?: ReadonlyMap<string, string | null>): StagedWorkspace {
    return new StagedWorkspace(this, chatFiles, shown);
  }

  /** Call `listener` with what each `writeAll` wrote (not dry runs), until the returned function is called. */
  onWrite(listener: (written: readonly FileWrite[]) => void): () => void {
    this.writeListeners.add(listener);
    return () => void this.writeListeners.delete(listener);
  }

  /**
   * Write staged changes (null = delete). Every path and encoding is validated before the
   * first write; each file is written to a temp file beside it, fsynced and renamed over.
   * With `expected` (each file's text when the edits were computed), a file that changed
   * on disk since is not written (compare before rename), so a concurrent writer's change
   * is never lost. `beforeWrite` sees the whole batch (old and new bytes) before the first
   * write: the journal is written there.
   */
  async writeAll(changes: ReadonlyMap<string, string | null>, opts: WriteOptions = {}): Promise<WriteReport> {
    const report: WriteReport = { dryRun: !!opts.dryRun, written: [], refused: [], unchanged: [] };
    if (!opts.dryRun && changes.size) this.opts.beforeWriting?.();
    const planned: PlannedWrite[] = [];
    for (const [path, wanted] of changes) {
      const rel = normalizeRel(path);
      const problem = this.check(path);
      if (problem) {
        report.refused.push({ path: rel, reason: problem });
        continue;
      }
      const before = this.read(rel);
      if (opts.expected?.has(rel) && opts.expected.get(rel) !== before) {
        report.refused.push({ path: rel, reason: changedOnDisk(rel) });
        continue;
      }
      if (before === wanted) {
        report.unchanged.push(rel);
        continue;
      }
      let old: Uint8Array | null;
      try {
        old = this.rawBytes(rel);
      } catch (err) {
        report.refused.push({ path: rel, reason: (err as Error).message });
        continue;
      }
      if (wanted === null) {
        if (before !== null) planned.push({ write: { path: rel, action: "delete", before, after: null }, old, bytes: null, mode: null, text: "" });
        continue;
      }
      const mixed = before === null ? undefined : this.mixedEndings.get(rel);
      const after = mixed ? (await import("./line-endings.ts")).restoreEndings(mixed.folded, mixed.endings, wanted) : wanted;
      const shape = before === null ? newFileShape(this.opts) : this.shape(rel);
      const bytes = after.includes("\0") ? null : encodeText(after, shape);
      if (!bytes) {
        report.refused.push({ path: rel, reason: textProblem(rel, wanted, shape) });
        continue;
      }
      if (bytes.length > this.maxBytes) {
        report.refused.push({ path: rel, reason: `the new text of ${rel} is ${megabytes(bytes.length)}, over the ${megabytes(this.maxBytes)} limit for files coder writes (--max-file-size); it was not written` });
        continue;
      }
      planned.push({ write: { path: rel, action: before === null ? "create" : "update", before, after: wanted }, old, bytes, mode: shape.mode, text: after });
    }
    const groups = (opts.together ?? []).map((g) => g.map(normalizeRel)).filter((g) => g.length > 1);
    /** A path whose group lost a member: why it is not written (null: it may be). */
    const partnerRefused = (path: string): string | null => {
      for (const group of groups) {
        if (!group.includes(path)) continue;
        const other = report.refused.find((r) => r.path !== path && group.includes(r.path));
        if (other) return `${path} was not written because ${other.path}, which the same edit writes, was not (${other.reason})`;
      }
      return null;
    };
    // Contents first, deletions last: a move's source goes only once its destination is written.
    planned.sort((a, b) => Number(a.bytes === null) - Number(b.bytes === null));
    for (let dropped = groups.length > 0; dropped; ) {
      dropped = false;
      for (let i = planned.length - 1; i >= 0; i--) {
        const why = partnerRefused(planned[i]!.write.path);
        if (!why) continue;
        report.refused.push({ path: planned.splice(i, 1)[0]!.write.path, reason: why });
        dropped = true;
      }
    }
    if (report.dryRun) {
      report.written.push(...planned.map((p) => p.write));
      return report;
    }
    if (planned.length) opts.beforeWrite?.(planned.map((p) => ({ path: p.write.path, before: p.old, after: p.bytes })));
    for (const p of planned) {
      try {
        const why = partnerRefused(p.write.path);
        if (why) {
          report.refused.push({ path: p.write.path, reason: why });
          continue;
        }
        // Compare before rename: the bytes this write replaces must still be the ones it was planned on.
        if (!sameBytes(this.rawBytes(p.write.path), p.old)) {
          report.refused.push({ path: p.write.path, reason: changedOnDisk(p.write.path) });
          continue;
        }
        if (p.bytes === null) {
          unlinkSync(join(this.root, p.write.path)); // a symlink goes, not its target
          this.opts.editor?.removed?.(p.write.path);
        } else if (!(await this.opts.editor?.write?.(p.write.path, p.text))) this.writeAtomically(p.write.path, p.bytes, p.mode);
        this.shapes.delete(p.write.path);
        this.mixedEndings.delete(p.write.path);
        report.written.push(p.write);
      } catch (err) {
        if (err instanceof WriteDeclined) report.refused.push({ path: p.write.path, reason: err.message, declined: true });
        else report.refused.push({ path: p.write.path, reason: `could not write ${p.write.path}: ${(err as Error).message}` });
      }
    }
    if (report.written.length) for (const listener of this.writeListeners) listener(report.written);
    return report;
  }

  /**
   * Put exact bytes back (null: remove the file), for restoring what an interrupted write
   * replaced. The path passes the same checks as any write.
   */
  restoreBytes(rel: string, bytes: Uint8Array | null): void {
    const norm = normalizeRel(rel);
    const problem = this.check(norm);
    if (problem) throw new UsageError(`cannot restore ${rel}: ${problem}`);
    if (bytes === null) unlinkSync(join(this.root, norm));
    else this.writeAtomically(norm, bytes, this.rawMode(norm));
    this.shapes.delete(norm);
    this.mixedEndings.delete(norm);
  }

  private rawMode(rel: string): number | null {
    try {
      return statSync(join(this.root, rel)).mode & 0o7777;
    } catch {
      return null;
    }
  }

  /**
   * The file's bytes as they are on disk now, or null when it does not exist. Throws when it
   * exists but cannot be read as a regular file under the cap (it is then not a file to write over).
   */
  rawBytes(rel: string): Uint8Array | null {
    const r = readCapped(join(this.root, rel), { maxBytes: this.maxBytes, name: rel, capName: "--max-file-size" });
    if (r.ok) return r.bytes;
    if (r.reason === "missing") return null;
    throw new Error(r.message);
  }

  // ─── internals ─────────────────────────────────────────────────────────────

  /** Where a write lands: the symlink's target when the path is a symlink inside the repository. */
  private targetOf(rel: string): string {
    const abs = join(this.root, rel);
    try {
      if (lstatSync(abs).isSymbolicLink()) return realpathSync(abs);
    } catch {
      /* a new file */
    }
    return abs;
  }

  private writeAtomically(rel: string, bytes: Uint8Array, mode: number | null): void {
    const target = this.targetOf(rel);
    mkdirSync(dirname(target), { recursive: true });
    // A short name: a temp name built from a long file name would pass the 255-byte limit of a name.
    const tmp = join(dirname(target), `.coder-${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`);
    let fd: number | null = null;
    try {
      fd = openSync(tmp, "wx", mode ?? 0o666);
      // The replacement keeps the file's owner and group (root writing a user's file; a setgid folder's group).
      const owner = ownerOf(target);
      if (owner) {
        const made = fstatSync(fd);
        if (made.uid !== owner.uid || made.gid !== owner.gid) {
          try {
            fchownSync(fd, owner.uid, owner.gid);
          } catch (err) {
            // A group this user is not in cannot be kept; another owner must be (check() refuses it first).
            if (made.uid !== owner.uid) throw err;
          }
        }
      }
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      if (this.opts.fsync !== false) fsyncSync(fd);
      closeSync(fd);
      fd = null;
      if (mode !== null) chmodSync(tmp, mode);
      renameSync(tmp, target);
    } catch (err) {
      if (fd !== null) closeSync(fd);
      try {
        unlinkSync(tmp);
      } catch {
        /* already gone */
      }
      throw err;
    }
  }

  /** A problem when some existing part of the path resolves outside the repository. */
  private symlinkEscape(norm: string): string | null {
    const parts = norm.split("/");
    let current = this.root;
    for (let i = 0; i < parts.length; i++) {
      current = join(current, parts[i]!);
      let isLink = false;
      try {
        isLink = lstatSync(current).isSymbolicLink();
      } catch {
        return null; // the rest does not exist yet
      }
      if (!isLink) continue;
      let real: string;
      try {
        real = realpathSync(current);
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === "ELOOP" ? `${norm} goes through a symlink loop` : `${norm} goes through a broken symlink`;
      }
      const rel = relative(this.realRoot, real);
      if (leavesFolder(rel)) return `${norm} resolves outside the repository through a symlink`;
      if (rel.split(sep)[0] === ".git") return `${norm} resolves into .git/ through a symlink`;
    }
    return null;
  }

  /** A NUL byte in the first few KB (and no UTF-16 byte-order mark): binary. Reads only the head. */
  private looksBinary(abs: string): boolean {
    const bytes = readHead(abs, SNIFF_BYTES);
    if (bytes === null) return false;
    if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return false;
    return bytes.includes(0);
  }

  /** A regular file's bytes and permission bits, through the one capped reader, or null. */
  private readBytes(norm: string): { bytes: Uint8Array; mode: number } | null {
    const r = readCapped(join(this.root, norm), { maxBytes: this.maxBytes, name: norm, capName: "--max-file-size" });
    return r.ok ? r : null;
  }

  private decode(norm: string): { text: string } | null {
    const file = this.readBytes(norm);
    if (file === null) return null;
    const decoded = decodeBytes(file.bytes, this.opts.fallbackEncoding);
    if (!decoded) return null;
    let text = decoded.text;
    const lf = (text.match(/\n/g) ?? []).length;
    const crlf = (text.match(/\r\n/g) ?? []).length;
    const eol = lf > 0 && crlf === lf ? "crlf" : "lf";
    this.mixedEndings.delete(norm);
    if (eol === "crlf") text = text.replace(/\r\n/g, "\n");
    else if (crlf > 0) {
      // Both endings: edited as LF text; a write gives each surviving line its own ending back.
      const endings: string[] = [];
      text = text.replace(/\r?\n/g, (ending) => {
        endings.push(ending);
        return "\n";
      });
      this.mixedEndings.set(norm, { folded: text, endings });
    }
    this.shapes.set(norm, { ...decoded.shape, eol, mode: file.mode });
    return { text };
  }
}

/**
 * Why this process may not replace the existing file at `abs`, or null: no write permission on
 * the file itself (mode 0444, another owner), or another owner that a replacing rename would
 * take the file from. Root may write anything and keeps the owner (writeAtomically).
 */
function writeDenied(abs: string, stat: { mode: number; uid: number }): string | null {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return null;
  try {
    accessSync(abs, constants.W_OK);
  } catch {
    return `mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}${stat.uid !== uid ? `, owned by uid ${stat.uid}` : ""}`;
  }
  if (stat.uid !== uid) return `owned by uid ${stat.uid}; replacing it would make it yours`;
  return null;
}

function ownerOf(abs: string): { uid: number; gid: number } | null {
  try {
    const stat = statSync(abs);
    return { uid: stat.uid, gid: stat.gid };
  } catch {
    return null;
  }
}

function realpathOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * One reply's edits, staged: reads see earlier staged writes, nothing reaches the disk
 * until the kernel calls `FileStore.writeAll(ws.changes())`.
 */
export class StagedWorkspace implements Workspace {
  private readonly staged = new Map<string, string | null>();

  constructor(
    private readonly store: FileStore,
    readonly chatFiles: readonly string[],
    private readonly shownTexts?: ReadonlyMap<string, string | null>,
  ) {}

  /**
   * Without the texts of a request (a saved reply), every file counts as shown as it is now. A
   * file an earlier edit of this reply wrote counts as shown as written: the model wrote it.
   */
  shown(path: string): string | null | undefined {
    if (!this.shownTexts) return this.read(path);
    const rels = [normalizeRel(path), this.store.canonical(path)];
    for (const rel of rels) if (this.shownTexts.has(rel)) return this.shownTexts.get(rel)!;
    for (const rel of rels) if (this.staged.has(rel)) return this.staged.get(rel)!;
    return undefined;
  }

  read(path: string): string | null {
    for (const rel of [normalizeRel(path), this.store.canonical(path)]) if (this.staged.has(rel)) return this.staged.get(rel)!;
    return this.store.read(path);
  }

  exists(path: string): boolean {
    return this.read(path) !== null;
  }

  /** Why `path` may not be written, or null (formats turn this into a `refused` outcome). */
  check(path: string): string | null {
    return this.store.check(path);
  }

  /** Stage a write; throws (with the reason) for a path or text the store would refuse. */
  write(path: string, content: string): void {
    const problem = this.store.check(path) ?? this.store.textProblem(path, content);
    if (problem) throw new Error(problem);
    // Staged under the path it lands on, so a write through a link is committed as its target.
    this.staged.set(this.store.canonical(path), content);
  }

  remove(path: string): void {
    const problem = this.store.check(path);
    if (problem) throw new Error(problem);
    this.staged.set(normalizeRel(path), null);
  }

  /** Staged changes that differ from the disk (null = delete). */
  changes(): Map<string, string | null> {
    const out = new Map<string, string | null>();
    for (const [rel, content] of this.staged) {
      if (this.store.read(rel) !== content) out.set(rel, content);
    }
    return out;
  }
}
