// The repository's write lock, `.coder/write.lock`: two sessions never write and commit
// at once. The lock names its holder (pid, the process's start time, host, boot) and a
// random token, and is created complete or not at all: written to a temp file, then
// linked into place, so a full disk or a kill leaves no empty lock behind. A lock is
// honoured only while its holder runs; one whose holder is gone, or that coder did not
// write (planted, empty, another machine's), is taken over.
import { linkSync, lstatSync, readFileSync, readlinkSync, renameSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { bootId, ensureStateDir, readState, removeQuietly, StateFileError, stateDirOf, writeTempBeside } from "./state.ts";

const LOCK = "write.lock";

/** A process as a lock or journal names it. */
export interface ProcessOwner {
  pid: number;
  /** Its start time as the system keeps it; null where coder cannot read start times. */
  start: string | null;
  host: string;
  boot: string | null;
}

/** What the lock file holds. */
interface LockRecord extends ProcessOwner {
  version: 1;
  token: string;
  /** When it was taken (ISO). */
  created: string;
}

/** The lock's holder while another session waits for it. */
export interface LockHolder {
  pid: number;
  /** How long it has held the lock, in ms. */
  ageMs: number;
}

/**
 * When process `pid` started: on Linux field 22 of /proc/PID/stat (clock ticks since boot),
 * elsewhere what `ps -o lstart=` prints; null when it cannot be told (no such process, or no
 * way to ask on this system).
 */
export function processStartTime(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (process.platform === "linux") {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // Field 2 (the command) is in parentheses and may hold spaces and ")": count from the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return fields[22 - 3] ?? null;
    } catch {
      return null;
    }
  }
  if (process.platform === "win32") return null;
  try {
    const ps = Bun.spawnSync(["ps", "-o", "lstart=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
    const text = ps.stdout.toString().trim();
    return ps.exitCode === 0 && text ? text : null;
  } catch {
    return null;
  }
}

let selfMemo: ProcessOwner | undefined;

/** This process, as a lock or journal records it. */
export function currentOwner(): ProcessOwner {
  selfMemo ??= { pid: process.pid, start: processStartTime(process.pid), host: hostname(), boot: bootId() };
  return selfMemo;
}

/** Is process `pid` running (ours or another user's)? */
function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Is `owner` a process running now? Only on this machine, in this boot, with its pid alive
 * and (where start times can be read) the same start time: a pid reused since, or one a
 * planted file names (pid 1), is not the owner.
 */
export function ownerRunning(owner: ProcessOwner): boolean {
  const self = currentOwner();
  if (owner.host !== self.host) return false;
  if (self.boot !== null && owner.boot !== self.boot) return false;
  if (!pidAlive(owner.pid)) return false;
  if (self.start === null) return true;
  return owner.start !== null && processStartTime(owner.pid) === owner.start;
}

/** The lock file as found: its raw text (for a later comparison) and what it says, when coder wrote it. */
interface FoundLock {
  raw: string;
  record: LockRecord | null;
}

function parseLock(raw: string): LockRecord | null {
  try {
    const data = JSON.parse(raw) as Partial<LockRecord>;
    if (data.version !== 1 || typeof data.pid !== "number" || typeof data.token !== "string" || typeof data.host !== "string") return null;
    return {
      version: 1,
      pid: data.pid,
      start: typeof data.start === "string" ? data.start : null,
      host: data.host,
      boot: typeof data.boot === "string" ? data.boot : null,
      token: data.token,
      created: typeof data.created === "string" ? data.created : "",
    };
  } catch {
    return null;
  }
}

/** Sleep `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return Bun.sleep(ms);
  return new Promise((done) => {
    if (signal.aborted) return done();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal!.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}

export interface AcquireOptions {
  /** Stops the wait (Ctrl-C, SIGTERM): acquire answers "aborted". */
  signal?: AbortSignal;
  /** Once, when a running holder makes this session wait. */
  onWait?: (holder: LockHolder) => void;
  /** Each time a lock that binds nobody is taken over, with why it binds nobody. */
  onTakeOver?: (why: string) => void;
}

export class RepoLock {
  private token: string | null = null;

  constructor(private readonly root: string) {}

  private get file(): string {
    return join(stateDirOf(this.root), LOCK);
  }

  /**
   * Take the lock, waiting up to `waitMs` while a running holder has it. Answers "held",
   * "busy" (still held at the deadline) or "aborted". Throws when the lock cannot be made
   * at all (a full disk: nothing is left behind).
   */
  async acquire(waitMs: number, options: AcquireOptions = {}): Promise<"held" | "busy" | "aborted"> {
    ensureStateDir(this.root);
    const deadline = Date.now() + waitMs;
    let announced = false;
    for (let delay = 25; ; ) {
      if (options.signal?.aborted) return "aborted";
      if (this.create()) return "held";
      const found = this.read();
      if (!found) continue; // released meanwhile: try again at once
      const why = this.bindsNobody(found);
      if (why) {
        options.onTakeOver?.(why);
        this.takeOver(found);
        continue;
      }
      if (!announced) {
        announced = true;
        const created = Date.parse(found.record!.created);
        options.onWait?.({ pid: found.record!.pid, ageMs: Number.isNaN(created) ? 0 : Math.max(0, Date.now() - created) });
      }
      if (Date.now() >= deadline) return "busy";
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, 500);
    }
  }

  release(): void {
    const token = this.token;
    if (token === null) return;
    this.token = null;
    // Only our own lock: one taken over meanwhile (we were thought gone) is its new holder's.
    if (this.read()?.record?.token === token) removeQuietly(this.file);
  }

  /** Make the lock from a complete temp file; false when one is there already. */
  private create(): boolean {
    const self = currentOwner();
    const token = crypto.randomUUID();
    const record: LockRecord = { version: 1, ...self, token, created: new Date().toISOString() };
    const tmp = writeTempBeside(this.file, `${JSON.stringify(record)}\n`);
    try {
      linkSync(tmp, this.file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return false;
      // A file system without hard links: the temp file is renamed into place only if no lock is there.
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
      if (this.exists()) return false;
      renameSync(tmp, this.file);
    } finally {
      removeQuietly(tmp);
    }
    this.token = token;
    return true;
  }

  private exists(): boolean {
    try {
      lstatSync(this.file);
      return true;
    } catch {
      return false;
    }
  }

  /** The lock as it is now, or null when there is none. A link or anything else coder never writes reads as unparsable. */
  private read(): FoundLock | null {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(this.file);
    } catch {
      return null;
    }
    if (stat.isSymbolicLink()) return { raw: `link:${readlinkOrEmpty(this.file)}`, record: null };
    if (stat.isDirectory()) throw new StateFileError(`.coder/${LOCK} is a folder; coder keeps its write lock there (delete it)`);
    const bytes = readState(this.root, LOCK, 64 * 1024);
    if (!bytes) return this.exists() ? { raw: `unreadable:${stat.size}:${stat.mtimeMs}`, record: null } : null;
    const raw = new TextDecoder().decode(bytes);
    return { raw, record: parseLock(raw) };
  }

  /** Why a lock binds nobody (null when its holder runs). */
  private bindsNobody(found: FoundLock): string | null {
    const record = found.record;
    if (!record) return `.coder/${LOCK} was ignored: it is not a lock coder wrote (empty, unreadable or planted)`;
    const self = currentOwner();
    if (record.host !== self.host) return `.coder/${LOCK} was ignored: it was written on another machine (${record.host})`;
    if (ownerRunning(record)) return null;
    return `.coder/${LOCK} was taken over: its holder, pid ${record.pid}, is no longer running`;
  }

  /**
   * Remove a lock that binds nobody. It is first renamed aside, so that when another session
   * took it over in the meantime, its fresh lock is seen (the text differs) and put back.
   */
  private takeOver(found: FoundLock): void {
    const aside = `${this.file}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.stale`;
    try {
      renameSync(this.file, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // gone already
      throw error;
    }
    // What was moved aside is a coder lock other than the one judged: a fresh one, put back.
    const bytes = readState(this.root, basename(aside), 64 * 1024);
    const now = bytes ? new TextDecoder().decode(bytes) : null;
    if (now !== null && now !== found.raw && parseLock(now)) {
      try {
        linkSync(aside, this.file);
      } catch {
        // a third session holds it now
      }
    }
    removeQuietly(aside);
  }
}

function readlinkOrEmpty(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "";
  }
}

