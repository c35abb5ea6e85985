// The write-and-commit step's journal, `.coder/pending.json` (its lock is lock.ts): written
// before the first file is replaced and cleared once the reply is committed. A run killed in
// between (SIGKILL, power loss, a hook that hung) leaves the journal, and the next
// start offers to finish the commit or restore the old contents, instead of
// committing a half edit later as the user's "pending changes".
import { join } from "node:path";
import { readCapped } from "./read.ts";
import { foreignOrigin, readState, type RecordOrigin, recordOrigin, removeState, writeState } from "./state.ts";
import { currentOwner, type ProcessOwner } from "./lock.ts";

const JOURNAL = "pending.json";

/** One file of a reply's write batch, as the journal keeps it. */
export interface JournalFile {
  path: string;
  /** The bytes before the write (base64), null when the file did not exist. */
  before: string | null;
  beforeSha: string | null;
  /** sha256 of what the write puts there; null when it deletes the file. */
  afterSha: string | null;
}

export interface Journal {
  version: 1;
  pid: number;
  /** The writing process's start time (see lock.ts), to tell it from a later process with its pid. */
  processStart: string | null;
  /** Which machine and repository wrote it: a journal planted or copied from elsewhere is ignored. */
  origin: RecordOrigin;
  started: string;
  /** The user's request of the reply, for the commit message of a finished commit. */
  request: string;
  model: string;
  files: JournalFile[];
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** Record the batch before its first write (atomically, fsynced through the rename). */
export function writeJournal(root: string, journal: Omit<Journal, "version" | "pid" | "processStart" | "origin" | "started">): void {
  const owner = currentOwner();
  const full: Journal = { version: 1, pid: owner.pid, processStart: owner.start, origin: recordOrigin(root), started: new Date().toISOString(), ...journal };
  writeState(root, JOURNAL, `${JSON.stringify(full)}\n`);
}

export function clearJournal(root: string): void {
  removeState(root, JOURNAL);
}

/** A journal holds every written file's old bytes; past this it is no journal coder wrote. */
const JOURNAL_MAX_BYTES = 512 * 1024 * 1024;

/**
 * The journal a run left behind, or null: none, unreadable, or not written by coder on this
 * machine for this repository (then `ignored` hears why, and it is not acted on).
 */
export function readJournal(root: string, ignored?: (why: string) => void): Journal | null {
  const bytes = readState(root, JOURNAL, JOURNAL_MAX_BYTES);
  if (!bytes) return null;
  let data: Journal;
  try {
    data = JSON.parse(new TextDecoder().decode(bytes)) as Journal;
  } catch {
    return null;
  }
  if (!data || data.version !== 1 || !Array.isArray(data.files) || typeof data.pid !== "number") return null;
  const foreign = foreignOrigin(root, data.origin);
  if (foreign) {
    ignored?.(`.coder/${JOURNAL} was ignored: ${foreign}, so it is not coder's record of an unfinished write here`);
    return null;
  }
  return data;
}

/** The process that wrote `journal`, as the lock describes a holder. */
export function journalOwner(journal: Journal): ProcessOwner {
  return { pid: journal.pid, start: journal.processStart ?? null, host: journal.origin.host, boot: journal.origin.boot };
}

/** Where each journalled file stands now. */
export interface JournalState {
  /** Hold what the interrupted write put there. */
  written: string[];
  /** Still as they were before the write (it never reached them). */
  untouched: string[];
  /** Neither: changed by someone since; left alone. */
  changedSince: string[];
}

export function journalState(root: string, journal: Journal): JournalState {
  const state: JournalState = { written: [], untouched: [], changedSince: [] };
  for (const f of journal.files) {
    const now = currentSha(join(root, f.path));
    if (now === f.afterSha) state.written.push(f.path);
    else if (now === f.beforeSha) state.untouched.push(f.path);
    else state.changedSince.push(f.path);
  }
  return state;
}

/**
 * The file's sha256 now, null when nothing is there; something else there (a folder, a pipe:
 * never opened to block) matches neither side of the write, so it counts as changed since.
 */
function currentSha(file: string): string | null {
  const read = readCapped(file, { maxBytes: JOURNAL_MAX_BYTES });
  if (read.ok) return sha256(read.bytes);
  return read.reason === "missing" ? null : `(${read.message})`;
}

/** Put back the contents from before the write, for the files that still hold what it wrote. */
export function restoreJournal(root: string, journal: Journal, write: (path: string, bytes: Uint8Array | null) => void): string[] {
  const { written } = journalState(root, journal);
  for (const f of journal.files) {
    if (!written.includes(f.path)) continue;
    write(f.path, f.before === null ? null : Buffer.from(f.before, "base64"));
  }
  return written;
}

