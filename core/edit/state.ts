// coder's own folder in a repository, `.coder/` (transcript, input history,
// remembered answers, commit records, the write journal, caches). A cloned
// repository decides what is in it, so nothing here is ever written through a
// symlink: a linked `.coder` or record would let the repository point coder's
// writes (model text included) at any file the user can write.
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { ConfigError } from "../errors.ts";

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

/**
 * Why coder may not keep records in `root/.coder`, or null. `.coder` must be a
 * real folder (or absent), and nothing in it or in `cache/` may be a symlink.
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
      if (lstatOrNull(join(folder, name))?.isSymbolicLink()) {
        return `${relative(root, join(folder, name))} is a symlink; coder never writes its records through a link (delete it)`;
      }
    }
  }
  return null;
}

/** Check `.coder` before a run writes anything there: a ConfigError (exit 2) naming the link. */
export function checkStateDir(root: string): void {
  const problem = stateDirProblem(root);
  if (problem) throw new ConfigError(`cannot use this repository's ${STATE_DIR} folder: ${problem}`);
}

/** Make the folder of `file`; a link in its place is refused. */
function ensureRecordFolder(file: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  if (lstatOrNull(dir)?.isSymbolicLink()) throw new Error(`${dir} is a symlink; coder does not write its records through a link`);
}

/** Make `root/.coder` (a real folder) when it is missing. */
export function ensureStateDir(root: string): void {
  ensureRecordFolder(join(stateDirOf(root), "record"));
}

/** Append `text` to one of coder's record files, creating it; never follows a symlink at `file`. */
export function appendRecord(file: string, text: string): void {
  ensureRecordFolder(file);
  writeText(openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644), text);
}

/** Write all of `data` (text as UTF-8) to `fd`, then close it. */
function writeText(fd: number, data: string | Uint8Array): void {
  try {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replace `file` (one of coder's own records, e.g. `.coder/commits.json`) with `data`
 * through a new temp file and a rename, so a reader never sees half of it. The temp
 * file is created exclusively (an existing file or link of that name is never
 * opened), and a rename replaces a link at `file` rather than writing through it.
 */
export function replaceRecord(file: string, data: string | Uint8Array, mode = 0o644): void {
  ensureRecordFolder(file);
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  writeText(openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode), data);
  try {
    renameSync(tmp, file);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw error;
  }
}
