// User-facing failures as typed values, mapped to exit codes and one-line
// messages in one place (main.ts). Bugs stay ordinary exceptions.

/** Bad flag, bad argument, unknown edit format or provider, path outside the repository: exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** Bad config file, pin mismatch, version-range mismatch, untrusted keys: exit 2. */
export class ConfigError extends Error {
  readonly exitCode = 2;
}

/** The request could not be completed (model unreachable, edits failed within the budget): exit 1. */
export class RuntimeFailure extends Error {
  readonly exitCode = 1;
}

/** Ctrl-C: exit 130. */
export class Interrupted extends Error {
  readonly exitCode = 130;
  constructor(message = "interrupted") {
    super(message);
  }
}

/** A malformed model reply; the message is written for the model (what was wrong, how to fix it). */
export class FormatError extends Error {}

/** A plugin failed (at load or when called); names the plugin and where it came from. */
export class PluginError extends Error {
  readonly exitCode = 2;
  constructor(
    readonly plugin: string,
    readonly origin: string,
    message: string,
  ) {
    super(`plugin ${plugin} (${origin}): ${message}`);
  }
}

export type CoderError = UsageError | ConfigError | RuntimeFailure | Interrupted | PluginError;

/** The exit code for a thrown value: typed errors carry theirs; anything else is a bug (1). */
export function exitCodeFor(error: unknown): number {
  if (error && typeof error === "object" && "exitCode" in error && typeof error.exitCode === "number") return error.exitCode;
  return 1;
}
