// The stat of a large listing on two threads: lstat costs about 3.4 µs a file here whatever
// the language, so 10k files are 35-45 ms on one thread. A helper worker, started once per
// session (before the listing, when the repository looks large), claims chunks of the files
// while this thread claims others (stat-chunks.ts); the entries are statFiles' exactly, in
// the listing's order. A helper that is slow to start, or gone, only leaves more to this thread.
import { languageFor } from "../../grammars/languages.ts";
import { isBinaryPath } from "./filter.ts";
import { statFiles, workerEntry, type FileEntry } from "./scan.ts";
import { claimAndStat, FAILED, FILE, PENDING, statBuffer, statViews, waitForAll, type StatJob } from "./stat-chunks.ts";

/** From this many files a session shares its stat with a helper (below, one thread is done before a helper could start). */
export const SHARED_STAT_FILES = 2_000;

/** How long this thread waits for the helper's last chunk before stat'ing what is left of it itself. */
const HELPER_GRACE_MS = 50;

/** How the last shared stat went: files stat'ed, by the helper, and by this thread after the helper was late. */
export interface SharedStatCounts {
  files: number;
  helped: number;
  takenOver: number;
}

export class StatHelper {
  readonly #worker: Worker;
  /** The last shared stat's counts (null: none yet). */
  last: SharedStatCounts | null = null;

  /** Starts the worker; it never keeps the process alive. */
  constructor(entry: string = workerEntry("stat-worker.ts")) {
    this.#worker = new Worker(entry);
    this.#worker.unref();
    // A failed worker claims nothing: this thread stats every file.
    this.#worker.onerror = () => {};
  }

  /** `statFiles(root, files)`: the same entries in the same order, stat'ed on two threads. */
  stat(root: string, files: readonly string[]): FileEntry[] {
    const paths = files.filter((path) => !isBinaryPath(path));
    const buffer = statBuffer(paths.length);
    this.#worker.postMessage({ root, files: paths.join("\0"), buffer } satisfies StatJob);
    const own = claimAndStat(root, paths, buffer);
    waitForAll(buffer, paths.length, HELPER_GRACE_MS);
    const { mtime, size, state } = statViews(buffer, paths.length);
    const entries: FileEntry[] = [];
    let takenOver = 0;
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i]!;
      const kind = Atomics.load(state, i);
      if (kind === FILE) entries.push({ path, mtime: mtime[i]!, size: size[i]!, lang: languageFor(path) });
      // Not stat'ed yet (the helper is late), or lstat threw: statFiles itself, here (it throws what it throws).
      else if (kind === PENDING || kind === FAILED) {
        if (kind === PENDING) takenOver++;
        entries.push(...statFiles(root, [path]));
      }
    }
    this.last = { files: paths.length, helped: paths.length - own - takenOver, takenOver };
    return entries;
  }

  /** Stops the worker. */
  close(): void {
    void this.#worker.terminate();
  }
}
