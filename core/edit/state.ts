// coder's own folder in a repository, `.coder/` (transcript, input history,
// remembered answers, commit records, the write journal, caches, pages, pastes).
// A cloned repository decides what is in it, so every write there goes through
// the one writer below, which never follows a link: a linked `.coder`, folder
// or record would let the repository point coder's writes (model text, web
// pages, clipboard images included) at any file the user can write.
import { chmodSync, closeSync, constants, copyFileSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ConfigError, RuntimeFailure } from "../errors.ts";
import type { OutputFolder, TempFolder } from "../plugin.ts";
import { readCapped } from "./read.ts";

export const STATE_DIR = ".coder";

/** Where coder keeps its records for the repository at `root`. */
export function stateDirOf(root: string): string {
  return join(root, STATE_DIR);
}

function lstatOrNull(path: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** A record coder will not write: a link or something else planted in `.coder/`. The message names it and the fix. */
export class StateFileError extends RuntimeFailure {}

/**
 * Why coder may not keep records in `root/.coder`, or null. `.coder` must be a
 * real folder (or absent), and nothing in it or in `cache/` may be a symlink or
 * a file with other hard links.
 * (Deeper links are refused by the writer when something would be written there.)
 */
export function stateDirProblem(root: string): string | null {
  const dir = stateDirOf(root);
  const stat = lstatOrNull(dir);
  if (!stat) return null;
  if (stat.isSymbolicLink()) return `${STATE_DIR} is a symlink; coder keeps its history and records there and never writes through a link (delete ${STATE_DIR} and coder makes a plain folder)`;
  if (!stat.isDirectory()) return `${STATE_DIR} is not a folder; coder keeps its history and records there (delete it and coder makes the folder)`;
  for (const folder of [dir, join(dir, "cache")]) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const entry = lstatOrNull(join(folder, name));
      if (entry?.isSymbolicLink()) return `${relative(root, join(folder, name))} is a symlink; coder never writes its records through a link (delete it)`;
      // A hard link (a tarball can carry one) would take appends to another name: ~/.bashrc, say.
      if (entry?.isFile() && entry.nlink > 1) return `${relative(root, join(folder, name))} has other hard links; coder does not write its records into a file shared with another name (delete it)`;
    }
  }
  return null;
}

/**
 * Why `.coder/` may not be used when git tracks `tracked` (paths under it), or null when it
 * tracks none. coder keeps `.coder/` out of git, so tracked files there came with the
 * repository: a planted journal, lock, session record or link.
 */
export function trackedStateProblem(tracked: readonly string[]): string | null {
  if (!tracked.length) return null;
  const named = tracked.length === 1 ? tracked[0] : `${tracked[0]} (and ${tracked.length - 1} more)`;
  return `git tracks ${named}, but coder keeps ${STATE_DIR}/ out of git, so the repository put it there; to use coder here, run \`git rm --cached -r ${STATE_DIR}\`, delete ${STATE_DIR}, and commit`;
}

/** Check `.coder` before a run writes anything there: a ConfigError (exit 2) naming the link. */
export function checkStateDir(root: string): void {
  const problem = stateDirProblem(root);
  if (problem) throw new ConfigError(`cannot use this repository's ${STATE_DIR} folder: ${problem}`);
}

type RecordUse = "replace" | "in-place" | "remove" | "folder";

/**
 * The absolute path of `file` after checking every component from the last
 * `.coder` folder in it down: each folder is a real folder (made when missing,
 * never through a link), and the file itself is absent or a regular file, not a
 * link. For "in-place" use (the file is appended to or opened by a database, not
 * replaced) a file with other hard links is refused too. A path with no `.coder`
 * folder in it (a transcript the user placed elsewhere, the global trust store)
 * is the user's own: only its last component is guarded, by the writers. For
 * "remove" nothing is made, and null means a folder on the way is missing; for
 * "folder" the path itself is a folder to check (and make).
 */
function checkedRecordPath(file: string, use: RecordUse): string | null {
  const abs = resolve(file);
  const parts = abs.split(sep);
  const at = parts.lastIndexOf(STATE_DIR, use === "folder" ? parts.length - 1 : parts.length - 2);
  if (at <= 0) {
    if (use !== "remove") mkdirSync(use === "folder" ? abs : dirname(abs), { recursive: true });
    return abs;
  }
  const base = parts.slice(0, at).join(sep) || sep;
  const shown = (path: string) => relative(base, path);
  let dir = base;
  for (const name of parts.slice(at, use === "folder" ? undefined : -1)) {
    dir = join(dir, name);
    let stat = lstatOrNull(dir);
    if (!stat && use === "remove") return null;
    if (!stat) {
      try {
        mkdirSync(dir, 0o755);
        if (name === STATE_DIR) ignoreItself(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      stat = lstatOrNull(dir);
    }
    if (stat?.isSymbolicLink()) throw new StateFileError(`${shown(dir)} is a symlink; coder never writes its records through a link (delete it and coder makes a plain folder)`);
    if (!stat?.isDirectory()) throw new StateFileError(`${shown(dir)} is not a folder; coder keeps its records there (delete it and coder makes the folder)`);
  }
  if (use === "remove" || use === "folder") return abs;
  const stat = lstatOrNull(abs);
  if (stat?.isSymbolicLink()) throw new StateFileError(`${shown(abs)} is a symlink; coder never writes its records through a link (delete it)`);
  if (stat && !stat.isFile()) throw new StateFileError(`${shown(abs)} is not a regular file; coder keeps one of its records there (delete it)`);
  if (use === "in-place" && stat && stat.nlink > 1) throw new StateFileError(`${shown(abs)} has other hard links; coder does not write its records into a file shared with another name (delete it)`);
  return abs;
}

/**
 * A `.coder` folder coder has just made holds a `.gitignore` of `*`, so git leaves all of it
 * out whatever the repository's own .gitignore says (`git add -A` after `coder map` must not
 * track the cache, which coder would then refuse as planted). Made exclusively in the folder
 * coder itself created: nothing is followed or replaced.
 */
function ignoreItself(dir: string): void {
  try {
    const fd = openSync(join(dir, ".gitignore"), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    writeAll(fd, "# coder's state: never committed\n*\n");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** `.coder/<rel>` of `root`, refusing a path that leaves `.coder/`. */
function stateRecordPath(root: string, rel: string): string {
  const parts = rel.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (!parts.length || isAbsolute(rel) || parts.includes("..")) throw new StateFileError(`${rel} is not a path inside ${STATE_DIR}/`);
  return join(stateDirOf(root), ...parts);
}

/** Make `root/.coder` (a real folder) when it is missing; a link or file in its place is refused. */
export function ensureStateDir(root: string): void {
  checkedRecordPath(stateDirOf(root), "folder");
}

/** Write all of `data` (text as UTF-8) to `fd`, then close it. */
function writeAll(fd: number, data: string | Uint8Array): void {
  try {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
}

/** A temp file beside `file`, created exclusively (an existing file or link of that name is never opened), holding `data`. */
export function writeTempBeside(file: string, data: string | Uint8Array, mode = 0o644): string {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    writeAll(fd, data);
  } catch (error) {
    removeQuietly(tmp);
    throw error;
  }
  return tmp;
}

/** Remove `file` if it is there (a link itself, never its target). */
export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/**
 * Replace `file` (one of coder's records, e.g. `.coder/commits.json`) with `data` through
 * a new temp file and a rename, so a reader never sees half of it. Under `.coder/` every
 * folder on the way and the file itself are checked first (see checkedRecordPath): a
 * planted link is refused with a StateFileError naming it, never written through.
 */
export function replaceRecord(file: string, data: string | Uint8Array, mode = 0o644): void {
  const abs = checkedRecordPath(file, "replace")!;
  const tmp = writeTempBeside(abs, data, mode);
  try {
    renameSync(tmp, abs);
  } catch (error) {
    removeQuietly(tmp);
    throw error;
  }
}

/**
 * Replace a file the user named (a report written with `--html FILE`) as replaceRecord does,
 * refusing a link or anything but a regular file at that name: the user asked for a file there,
 * and silently replacing their link (or a FIFO, or a folder) is not what they asked for.
 */
export function replaceNamedFile(file: string, data: string | Uint8Array): string {
  const abs = resolve(file);
  const stat = lstatOrNull(abs);
  if (stat?.isSymbolicLink()) throw new StateFileError(`${file} is a symlink; coder does not write through a link (name another file, or delete the link)`);
  if (stat && !stat.isFile()) throw new StateFileError(`${file} is not a regular file; coder writes only plain files there (name another file)`);
  replaceRecord(abs, data);
  return abs;
}

/** Append `text` to one of coder's record files, creating it; never through a link (nor a hard-linked file under `.coder/`). */
export function appendRecord(file: string, text: string): void {
  const abs = checkedRecordPath(file, "in-place")!;
  writeAll(openSync(abs, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644), text);
}

/** Replace `root/.coder/<rel>` with `data` (text or bytes): the one writer for everything under `.coder/`. Returns the absolute path. */
export function writeState(root: string, rel: string, data: string | Uint8Array, mode = 0o644): string {
  const file = stateRecordPath(root, rel);
  replaceRecord(file, data, mode);
  return file;
}

/** Append `text` to `root/.coder/<rel>`. */
export function appendState(root: string, rel: string, text: string): void {
  appendRecord(stateRecordPath(root, rel), text);
}

/**
 * The checked absolute path of `root/.coder/<rel>` for a file that is opened and written
 * in place by someone else (a SQLite database): its folders are made and are real
 * folders, and the file and any `siblings` (suffixes such as `-wal`, `-shm`, `-journal`)
 * are absent or plain regular files with no other hard links. Throws a StateFileError.
 */
export function statePath(root: string, rel: string, siblings: readonly string[] = []): string {
  const file = checkedRecordPath(stateRecordPath(root, rel), "in-place")!;
  for (const suffix of siblings) checkedRecordPath(file + suffix, "in-place");
  return file;
}

/** The checked absolute path of the folder `root/.coder/<rel>`, made when missing. */
export function stateFolder(root: string, rel: string): string {
  return checkedRecordPath(stateRecordPath(root, rel), "folder")!;
}

/** Remove `root/.coder/<rel>` if it is there (a link is removed, never followed). */
export function removeState(root: string, rel: string): void {
  const file = checkedRecordPath(stateRecordPath(root, rel), "remove");
  if (file) removeQuietly(file);
}

// ─── Where a record came from ────────────────────────────────────────────────
// A record coder acts on (the write journal, the lock, an ACP session) says which machine
// and which repository wrote it, so one planted by a repository (or copied with it from
// another machine) is ignored rather than trusted.

/** The machine, its current boot, and the repository's real path. */
export interface RecordOrigin {
  host: string;
  /** Linux's /proc/sys/kernel/random/boot_id; null where there is none. */
  boot: string | null;
  repo: string;
}

let bootIdMemo: string | null | undefined;

/** This boot's id (Linux), or null. */
export function bootId(): string | null {
  if (bootIdMemo === undefined) {
    try {
      bootIdMemo = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
    } catch {
      bootIdMemo = null;
    }
  }
  return bootIdMemo;
}

function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return resolve(root);
  }
}

/** The origin to write into a record of the repository at `root`. */
export function recordOrigin(root: string): RecordOrigin {
  return { host: hostname(), boot: bootId(), repo: realRoot(root) };
}

/**
 * Why a record claiming `origin` was not written by coder on this machine for the repository
 * at `root` (a phrase, e.g. "it was written for /other/repo"), or null when it was. A different
 * boot is no reason: a journal left by a power cut is exactly what it is for.
 */
export function foreignOrigin(root: string, origin: unknown): string | null {
  if (!origin || typeof origin !== "object") return "it does not say where it was written";
  const o = origin as Partial<RecordOrigin>;
  if (o.host !== hostname()) return `it was written on another machine (${typeof o.host === "string" ? o.host : "unnamed"})`;
  if (o.repo !== realRoot(root)) return `it was written for ${typeof o.repo === "string" ? o.repo : "another repository"}`;
  return null;
}

/** What a plugin reads of one state file by default (`kit.state.read`). */
export const STATE_READ_BYTES = 16 * 1024 * 1024;

/**
 * The bytes of `root/.coder/<rel>` when it is a regular file (not a link, a device or a
 * fifo) of at most `maxBytes`; null when it is absent or anything else.
 */
export function readState(root: string, rel: string, maxBytes: number): Uint8Array | null {
  const file = stateRecordPath(root, rel);
  if (lstatOrNull(file)?.isSymbolicLink() !== false) return null;
  const read = readCapped(file, { maxBytes });
  return read.ok ? read.bytes : null;
}

// ─── Folders outside the repository ──────────────────────────────────────────
// A plugin's private temp folder (`kit.tempFolder`) and a folder the user named for output
// (`kit.outputFolder`, e.g. `coder eval --out DIR`). A write goes only inside the folder: the
// path is relative, with no `..`; every folder on the way is a real folder (made when missing,
// a link refused); a file is replaced whole through a temp file and a rename.

/** The names of `rel`, a path inside `folder`; an absolute path, `..` or nothing is refused. */
function namesInside(folder: string, rel: string): string[] {
  const names = rel.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (!names.length || isAbsolute(rel) || names.includes("..")) throw new StateFileError(`${rel} is not a path inside ${folder}`);
  return names;
}

/** `base/<names>` as a folder: each one made when missing (with `make`), a link or a file on the way refused. Null when one is missing and not made. */
function folderInside(base: string, names: readonly string[], make: boolean): string | null {
  let dir = base;
  for (const name of names) {
    dir = join(dir, name);
    let stat = lstatOrNull(dir);
    if (!stat && !make) return null;
    if (!stat) {
      try {
        mkdirSync(dir, 0o755);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      stat = lstatOrNull(dir);
    }
    if (stat?.isSymbolicLink()) throw new StateFileError(`${dir} is a symlink; coder never writes through a link (delete it)`);
    if (!stat?.isDirectory()) throw new StateFileError(`${dir} is not a folder; coder writes inside it (delete it)`);
  }
  return dir;
}

/** Rename `tmp` over `file`, removing `tmp` when that fails. */
function renameOver(tmp: string, file: string): void {
  try {
    renameSync(tmp, file);
  } catch (error) {
    removeQuietly(tmp);
    throw error;
  }
}

/**
 * `kit.tempFolder(prefix)`: a new private folder `coder-<prefix>-XXXXXX` in the system's temp
 * folder (its real path), with writes confined to it. `write` and `copyIn` replace the name they
 * are given (a link planted there is replaced, never written through); `copyIn` copies a file,
 * or a folder's regular files and folders (links and devices are left out), keeping their modes.
 */
export function makeTempFolder(prefix: string): TempFolder {
  return tempFolderAt(realpathSync(mkdtempSync(join(tmpdir(), tempFolderPrefix(prefix)))));
}

function tempFolderPrefix(prefix: string): string {
  return `coder-${prefix.replace(/[^A-Za-z0-9._-]/g, "_")}-`;
}

/**
 * An existing folder that `makeTempFolder(prefix)` made (an earlier coder's, left by a kill), to
 * write in or remove: only a real folder directly in the system's temp folder with that prefix
 * in its name; null for anything else.
 */
export function reopenTempFolder(prefix: string, path: string): TempFolder | null {
  const abs = resolve(path);
  if (!basename(abs).startsWith(tempFolderPrefix(prefix))) return null;
  try {
    if (realpathSync(dirname(abs)) !== realpathSync(tmpdir())) return null;
  } catch {
    return null;
  }
  const stat = lstatOrNull(abs);
  return stat?.isDirectory() && !stat.isSymbolicLink() ? tempFolderAt(join(realpathSync(dirname(abs)), basename(abs))) : null;
}

function tempFolderAt(path: string): TempFolder {
  const target = (rel: string) => {
    const names = namesInside(path, rel);
    return join(folderInside(path, names.slice(0, -1), true)!, names.at(-1)!);
  };
  const copyFile = (source: string, file: string) => {
    const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
    copyFileSync(source, tmp, constants.COPYFILE_EXCL);
    renameOver(tmp, file);
  };
  const copyTree = (source: string, dest: string, skip: readonly string[]) => {
    const stat = lstatSync(source);
    if (stat.isFile()) return copyFile(source, dest);
    if (!stat.isDirectory()) return;
    const have = lstatOrNull(dest);
    if (!have?.isDirectory()) {
      if (have) removeQuietly(dest);
      mkdirSync(dest, 0o700);
    }
    for (const name of readdirSync(source)) if (!skip.includes(name)) copyTree(join(source, name), join(dest, name), []);
    // The folder's own mode last, so a read-only one is still filled.
    chmodSync(dest, stat.mode & 0o7777);
  };
  return {
    path,
    write: (rel, data) => {
      const file = target(rel);
      renameOver(writeTempBeside(file, data), file);
      return file;
    },
    copyIn: (source, rel, options) => {
      const file = target(rel);
      copyTree(source, file, options?.skip ?? []);
      return file;
    },
    remove: (rel) => {
      if (rel === undefined) return rmSync(path, { recursive: true, force: true });
      const names = namesInside(path, rel);
      const dir = folderInside(path, names.slice(0, -1), false);
      if (dir === null) return;
      const file = join(dir, names.at(-1)!);
      const stat = lstatOrNull(file);
      if (stat?.isDirectory()) rmSync(file, { recursive: true, force: true });
      else if (stat) removeQuietly(file);
    },
  };
}

/**
 * `kit.outputFolder(path)`: a folder the user named (made when missing, as they named it), with
 * files written inside it only: `write` replaces a file whole (temp file and rename), `append`
 * adds text with one write to the end of a file. A link, or anything but a plain file, at the
 * name is refused with an Error naming it, as is a file with other hard links for `append`.
 * Inside `.coder/` every folder on the way is checked as for coder's own records.
 */
export function outputFolderAt(path: string): OutputFolder {
  const abs = resolve(path);
  const target = (rel: string) => {
    const names = namesInside(abs, rel);
    checkedRecordPath(abs, "folder");
    const file = join(folderInside(abs, names.slice(0, -1), true)!, names.at(-1)!);
    const stat = lstatOrNull(file);
    if (stat?.isSymbolicLink()) throw new StateFileError(`${file} is a symlink; coder does not write through a link (delete the link, or choose another folder)`);
    if (stat && !stat.isFile()) throw new StateFileError(`${file} is not a regular file; coder writes only plain files there (delete it, or choose another folder)`);
    return { file, stat };
  };
  return {
    path: abs,
    write: (rel, data) => {
      const { file } = target(rel);
      renameOver(writeTempBeside(file, data), file);
      return file;
    },
    append: (rel, text) => {
      const { file, stat } = target(rel);
      if (stat && stat.nlink > 1) throw new StateFileError(`${file} has other hard links; coder does not append to a file shared with another name (delete it, or choose another folder)`);
      writeAll(openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644), text);
      return file;
    },
  };
}
