// The write-and-commit step's safety: a repository lock (two sessions never write
// and commit at once) and a journal, `.coder/pending.json`, written before the
// first file is replaced and cleared once the reply is committed. A run killed in
// between (SIGKILL, power loss, a hook that hung) leaves the journal, and the next
// start offers to finish the commit or restore the old contents, instead of
// committing a half edit later as the user's "pending changes".
import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ensureStateDir, replaceRecord, stateDirOf } from "./state.ts";

const JOURNAL = "pending.json";
const LOCK = "write.lock";

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
export function writeJournal(root: string, journal: Omit<Journal, "version" | "pid" | "started">): void {
  const full: Journal = { version: 1, pid: process.pid, started: new Date().toISOString(), ...journal };
  replaceRecord(join(stateDirOf(root), JOURNAL), `${JSON.stringify(full)}\n`);
}

export function clearJournal(root: string): void {
  try {
    unlinkSync(join(stateDirOf(root), JOURNAL));
  } catch {
    // nothing pending
  }
}

/** The journal a run left behind, or null (none, or unreadable: then it is not ours to act on). */
export function readJournal(root: string): Journal | null {
  try {
    const data = JSON.parse(readFileSync(join(stateDirOf(root), JOURNAL), "utf8")) as Journal;
    return data && data.version === 1 && Array.isArray(data.files) ? data : null;
  } catch {
    return null;
  }
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

function currentSha(file: string): string | null {
  try {
    return sha256(readFileSync(file));
  } catch {
    return null;
  }
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

/** Is the process that wrote a lock or journal still running? */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The repository's write lock: `.coder/write.lock`, created exclusively, holding the owner's pid. */
export class RepoLock {
  private held = false;

  constructor(private readonly root: string) {}

  private get file(): string {
    return join(stateDirOf(this.root), LOCK);
  }

  /** The pid in the lock file: a number, null without a lock, NaN while its owner is still writing it. */
  private owner(): number | null {
    try {
      return Number.parseInt(readFileSync(this.file, "utf8").trim(), 10);
    } catch {
      return null;
    }
  }

  /**
   * Take the lock, waiting up to `waitMs` for another session to finish its write; a lock
   * whose owner is gone is taken over. Returns false when it stayed held.
   */
  async acquire(waitMs: number): Promise<boolean> {
    ensureStateDir(this.root);
    const deadline = Date.now() + waitMs;
    for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
      try {
        const fd = openSync(this.file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
        writeSync(fd, `${process.pid}\n`);
        closeSync(fd);
        this.held = true;
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const owner = this.owner();
      if (owner !== null && !Number.isNaN(owner) && !processAlive(owner)) {
        // The owner died without releasing it: take it over.
        try {
          unlinkSync(this.file);
        } catch {
          // someone else took it over first
        }
        continue;
      }
      if (Date.now() >= deadline) return false;
      await Bun.sleep(delay);
    }
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      unlinkSync(this.file);
    } catch {
      // already gone
    }
  }
}
