// The repo map's one lstat of a listed path, and its one read of a file to parse. git lists
// what was committed; mid-refactor the working tree may hold anything there: nothing, a folder,
// a link, a pipe, or a file where a parent folder was. Imported by the workers: nothing of
// coder's is imported here.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, type Stats } from "node:fs";

/**
 * Errors of a path that cannot name anything now: gone (ENOENT), a parent that is a file
 * (ENOTDIR), a parent that is a link loop (ELOOP), a name past the system's limit (ENAMETOOLONG).
 */
const ABSENT = new Set(["ENOENT", "ENOTDIR", "ELOOP", "ENAMETOOLONG"]);

/** The path's lstat, or undefined when nothing can be there now; any other failure (EACCES, EIO) throws. */
export function lstatListed(abs: string): Stats | undefined {
  try {
    // throwIfNoEntry: the common absence (a deleted file) costs no exception.
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch (error) {
    if (ABSENT.has((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw error;
  }
}

/** No link is followed (the listing's stat left links out; one put in the file's place since is not read), and a pipe does not block the open. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const UTF8 = new TextDecoder();

/**
 * A listed file's text, read only when it is still a regular file: one replaced since its stat
 * by a pipe, a device or a link throws (as a vanished file does) instead of blocking the parse.
 */
export function readListedText(abs: string): string {
  const fd = openSync(abs, READ_FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${abs} is no longer a regular file`);
    // Read to the end, not to the stat's size: a file that grows while it is read is read whole.
    return UTF8.decode(readFileSync(fd));
  } finally {
    closeSync(fd);
  }
}
