// The listing's stat shared by two threads (stat.ts, stat-worker.ts): each claims chunks of
// the files from one counter in a SharedArrayBuffer and writes every file's result at the
// file's own index, so the entries come out in the listing's order whoever stat'ed them.
// Imported by the worker: nothing of coder's is imported here but the lstat (stat-path.ts).
import { lstatListed } from "./stat-path.ts";

/** What the main thread posts to the worker: the files joined by NUL (no path holds one), and the shared results. */
export interface StatJob {
  root: string;
  files: string;
  buffer: SharedArrayBuffer;
}

/** Files per claim: a few hundred microseconds of lstat, so the last claim keeps the other thread waiting little. */
const CHUNK = 64;
/** Control words: the next file index to claim, and how many files are done. */
const NEXT = 0;
const DONE = 1;
/** A file's state: not done yet, a regular file (its mtime and size are set), not one (missing, a link, a folder, under a file), or lstat threw. */
export const PENDING = 0;
export const FILE = 1;
export const NOT_FILE = 2;
export const FAILED = 3;

export interface StatViews {
  control: Int32Array;
  mtime: Float64Array;
  size: Float64Array;
  state: Uint8Array;
}

/** The shared memory for `count` files: two control words, each file's mtime and size, then its state. */
export function statBuffer(count: number): SharedArrayBuffer {
  return new SharedArrayBuffer(8 + count * 17);
}

export function statViews(buffer: SharedArrayBuffer, count: number): StatViews {
  return {
    control: new Int32Array(buffer, 0, 2),
    mtime: new Float64Array(buffer, 8, count),
    size: new Float64Array(buffer, 8 + count * 8, count),
    state: new Uint8Array(buffer, 8 + count * 16, count),
  };
}

/**
 * Claims chunks of `files` until none is left, lstat'ing each file of a chunk into the
 * shared arrays (as scan.ts statFiles does: nothing there or not a regular file is NOT_FILE;
 * any other failure is FAILED, for the main thread to meet again in order). Returns how many
 * files this thread claimed.
 */
export function claimAndStat(root: string, files: readonly string[], buffer: SharedArrayBuffer): number {
  const { control, mtime, size, state } = statViews(buffer, files.length);
  const count = files.length;
  let own = 0;
  for (;;) {
    const from = Atomics.add(control, NEXT, CHUNK);
    if (from >= count) return own;
    own += Math.min(count, from + CHUNK) - from;
    const to = Math.min(count, from + CHUNK);
    for (let i = from; i < to; i++) {
      let kind = NOT_FILE;
      try {
        const stat = lstatListed(root + "/" + files[i]!);
        if (stat && stat.isFile()) {
          mtime[i] = stat.mtimeMs;
          size[i] = stat.size;
          kind = FILE;
        }
      } catch {
        kind = FAILED;
      }
      // Atomic: whoever reads this state sees the mtime and size written before it.
      Atomics.store(state, i, kind);
    }
    Atomics.add(control, DONE, to - from);
    Atomics.notify(control, DONE);
  }
}

/**
 * Waits until every file is done (the other thread finishes the chunk it claimed last), at
 * most `timeoutMs`: false when the other thread is late (its files still PENDING are then
 * stat'ed by the caller).
 */
export function waitForAll(buffer: SharedArrayBuffer, count: number, timeoutMs: number): boolean {
  const control = new Int32Array(buffer, 0, 2);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const done = Atomics.load(control, DONE);
    if (done >= count) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    Atomics.wait(control, DONE, done, left);
  }
}
