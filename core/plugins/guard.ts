// The one guard around every call into plugin code (items, hooks, setup, dispose):
// a throw becomes a PluginError naming the plugin, its origin and what it was doing,
// for the caller to report and carry on. The session never goes down for a plugin.
import { FormatError, Interrupted, PluginError } from "../errors.ts";

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * What `guard` rethrows for a throw from plugin code: the errors that are part of a
 * plugin's contract (FormatError, Interrupted, PluginError, an abort) unchanged,
 * anything else as a PluginError naming the plugin, its origin and `what` failed.
 */
function guardedError(owner: { plugin: string; origin: string }, what: string, error: unknown): unknown {
  const passesThrough =
    error instanceof FormatError ||
    // A plugin's own error class of that name: its text is for the model, as kit.FormatError's.
    (error instanceof Error && error.name === "FormatError") ||
    error instanceof Interrupted ||
    error instanceof PluginError ||
    (error instanceof Error && error.name === "AbortError");
  return passesThrough ? error : new PluginError(owner.plugin, owner.origin, `${what} failed: ${messageOf(error)}`);
}

/**
 * Call into plugin code, synchronous or not: a throw or a rejection (other than a FormatError,
 * an abort or an Interrupted) becomes a PluginError naming the plugin, its origin and `what`.
 *
 * @example
 * const block = await guard(entry, "provide", () => entry.item.provide(turn));
 * const edits = guard(format, "parse", () => format.item.parse(reply, ctx));
 */
export function guard<T>(owner: { plugin: string; origin: string }, what: string, fn: () => Promise<T>): Promise<T>;
export function guard<T>(owner: { plugin: string; origin: string }, what: string, fn: () => T): T;
export function guard<T>(owner: { plugin: string; origin: string }, what: string, fn: () => T | Promise<T>): T | Promise<T> {
  let result: T | Promise<T>;
  try {
    result = fn();
  } catch (error) {
    throw guardedError(owner, what, error);
  }
  if (result && typeof (result as { then?: unknown }).then === "function") {
    return (result as Promise<T>).then(undefined, (error: unknown) => {
      throw guardedError(owner, what, error);
    });
  }
  return result;
}
