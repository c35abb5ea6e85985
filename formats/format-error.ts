// The built-in formats' parsers are pure and throw their own syntax error; a format
// hands it on as kit.FormatError, whose message goes back to the model to retry.
import type { Kit } from "../core/plugin.ts";

/** `parse()`, with a `syntaxError` it throws rethrown as kit.FormatError (same message); other errors pass through. */
export function parseOrFormatError<T>(kit: Kit, syntaxError: new (message?: string) => Error, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof syntaxError) throw new kit.FormatError(err.message);
    throw err;
  }
}
