// Waiting on work that does not take a signal (a plugin's tools or context, an MCP server
// starting): the turn stops waiting the moment it is cancelled, and the work is left to
// finish or fail on its own.
import { Interrupted } from "../errors.ts";

/** `work`'s result, or Interrupted as soon as `signal` aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Interrupted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Interrupted());
    signal.addEventListener("abort", onAbort, { once: true });
    const settle = () => signal.removeEventListener("abort", onAbort);
    work.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}
