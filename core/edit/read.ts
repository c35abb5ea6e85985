// The one capped reader for every file coder reads on its own (chat and read-only files,
// `.env`, ignore files, configs, media): a regular file under a size cap, or a reason. A link
// to /dev/zero, /dev/stdin or a FIFO is refused before a byte is read, and a file that grows
// past the cap while it is read is refused too, so no file can make coder read without end.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";

/** The cap for small files coder reads for itself (`.env`, ignore files, config files, records). */
export const SMALL_FILE_BYTES = 1024 * 1024;

export type CappedRead =
  | { ok: true; bytes: Uint8Array; /** Permission bits. */ mode: number }
  | { ok: false; reason: "missing" | "not-regular" | "too-large" | "unreadable"; /** One line naming the file and what is wrong. */ message: string };

export interface CappedReadOptions {
  /** Refuse a file larger than this many bytes. */
  maxBytes: number;
  /** How the file is named in messages (default: its path). */
  name?: string;
  /** What the cap is called in the message, e.g. "--max-file-size" (default: none named). */
  capName?: string;
}

/** "12.5 MB", "300 KB", "12 bytes". */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isFIFO()) return "a pipe (FIFO)";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * A stat or open that failed: "missing" when nothing can be there now (gone, a parent folder
 * that is a file, a name past the system's limit); a link loop named as one; else the error.
 */
function failedRead(error: unknown, name: string): CappedRead {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR" || code === "ENAMETOOLONG") return { ok: false, reason: "missing", message: `${name} does not exist` };
  if (code === "ELOOP") return { ok: false, reason: "unreadable", message: `${name} cannot be read: its symbolic links loop` };
  return { ok: false, reason: "unreadable", message: `cannot read ${name}: ${(error as Error).message}` };
}

/**
 * Read a regular file of at most `maxBytes` (links followed to their target): `stat` first,
 * then open without blocking and `fstat` the open file (it may have been swapped), then read at
 * most `maxBytes + 1` bytes. Never throws.
 *
 * @example
 * const r = readCapped(join(root, ".env"), { maxBytes: SMALL_FILE_BYTES, name: ".env" });
 * if (!r.ok && r.reason !== "missing") warn(r.message);
 */
export function readCapped(path: string, options: CappedReadOptions): CappedRead {
  const name = options.name ?? path;
  const over = (size: string) => ({
    ok: false as const,
    reason: "too-large" as const,
    message: `${name} is ${size}, over the ${sizeText(options.maxBytes)} limit${options.capName ? ` (${options.capName})` : ""} for files coder reads`,
  });
  const notRegular = (stat: Stats) => ({
    ok: false as const,
    reason: "not-regular" as const,
    message: `${name} is ${kindOf(stat)}, not a regular file; coder reads only regular files`,
  });
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch (error) {
    return failedRead(error, name);
  }
  if (!stat.isFile()) return notRegular(stat);
  if (stat.size > options.maxBytes) return over(sizeText(stat.size));
  let fd: number;
  try {
    // O_NONBLOCK: a file swapped for a FIFO since the stat does not hang the open.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    return failedRead(error, name);
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) return notRegular(opened);
    if (opened.size > options.maxBytes) return over(sizeText(opened.size));
    // Read to the end, but never past the cap: a file that grew past it is refused, not cut short.
    const parts: Uint8Array[] = [];
    let length = 0;
    for (let size = Math.min(opened.size + 1, options.maxBytes + 1); ; size = 64 * 1024) {
      const part = new Uint8Array(Math.min(size, options.maxBytes + 1 - length));
      const n = readSync(fd, part, 0, part.length, null);
      if (n === 0) break;
      parts.push(part.subarray(0, n));
      length += n;
      if (length > options.maxBytes) return over(`more than ${sizeText(options.maxBytes)}`);
    }
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    return { ok: true, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), mode: opened.mode & 0o7777 };
  } catch (error) {
    return { ok: false, reason: "unreadable", message: `cannot read ${name}: ${(error as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/** `readCapped` as UTF-8 text (a BOM dropped); `text` null when missing or refused, `problem` the refusal (null when missing). */
export function readCappedText(path: string, options: CappedReadOptions): { text: string; problem: null } | { text: null; problem: string | null } {
  const r = readCapped(path, options);
  if (!r.ok) return { text: null, problem: r.reason === "missing" ? null : r.message };
  return { text: new TextDecoder().decode(r.bytes), problem: null };
}

/** The first `n` bytes of a regular file (for sniffing a type), or null when it is none or unreadable. Never blocks on a FIFO. */
export function readHead(path: string, n: number): Uint8Array | null {
  let fd: number | null = null;
  try {
    if (!statSync(path).isFile()) return null;
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    if (!fstatSync(fd).isFile()) return null;
    const head = new Uint8Array(n);
    const got = readSync(fd, head, 0, n, 0);
    return head.subarray(0, got);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
