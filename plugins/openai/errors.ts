// The adapter's failures, for chat requests and transcriptions alike: a one-line message
// and the exit code it maps to.

/** Thrown when a request finally fails; `exitCode` 1 (runtime failure) unless the cause is configuration (2). */
export class ModelRequestError extends Error {
  override readonly name = "ModelRequestError";
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
  }
}

/** Thrown when the caller's AbortSignal fires (Ctrl-C). */
export class ModelRequestAborted extends Error {
  override readonly name = "AbortError";
  readonly exitCode = 130;
  constructor(what = "model request") {
    super(`${what} interrupted`);
  }
}
