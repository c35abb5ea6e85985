// The size limit on one incoming JSON-RPC message. The SDK's line reader ends the whole
// connection on a line over its limit; this filter sits before it, drops such a line, and
// lets the caller answer it with a JSON-RPC error, so one huge message costs one error.

/** The largest message coder reads (the SDK's own default, 32 MiB). */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;

/** How many leading bytes of a dropped message are searched for its request id. */
const ID_SCAN_BYTES = 4096;

/** The JSON-RPC id of a message from its first bytes (`"id": 7` or `"id": "x"`), or null. */
export function leadingId(head: Uint8Array): number | string | null {
  const text = new TextDecoder().decode(head);
  // Only an id before "params" is the message's own: one inside the params belongs to something else.
  const params = text.indexOf('"params"');
  const match = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(params >= 0 ? text.slice(0, params) : text);
  if (!match) return null;
  const raw = match[1] as string;
  try {
    return JSON.parse(raw) as number | string;
  } catch {
    return null;
  }
}

/**
 * `input` with every line longer than `limit` bytes left out; `dropped` hears of each one
 * (its byte count so far and its first bytes) once, when its end arrives or the input ends.
 */
export function limitLines(input: ReadableStream<Uint8Array>, limit: number, dropped: (bytes: number, head: Uint8Array) => void): ReadableStream<Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  /** The line under way is over the limit: its bytes are counted and thrown away. */
  let skipping = false;
  let head = new Uint8Array(0);
  const keepHead = (bytes: Uint8Array) => {
    if (head.length >= ID_SCAN_BYTES) return;
    const more = bytes.subarray(0, ID_SCAN_BYTES - head.length);
    const next = new Uint8Array(head.length + more.length);
    next.set(head);
    next.set(more, head.length);
    head = next;
  };
  const endLine = () => {
    if (skipping) dropped(pendingBytes, head);
    pending = [];
    pendingBytes = 0;
    skipping = false;
    head = new Uint8Array(0);
  };
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let start = 0;
        while (start < chunk.length) {
          const nl = chunk.indexOf(NEWLINE, start);
          const end = nl < 0 ? chunk.length : nl;
          const piece = chunk.subarray(start, end);
          keepHead(piece);
          pendingBytes += piece.length;
          if (!skipping && pendingBytes > limit) {
            skipping = true;
            pending = [];
          }
          if (!skipping) pending.push(piece);
          if (nl < 0) break;
          if (!skipping) {
            for (const part of pending) controller.enqueue(part);
            controller.enqueue(new Uint8Array([NEWLINE]));
          }
          endLine();
          start = nl + 1;
        }
      },
      flush(controller) {
        if (!skipping) for (const part of pending) controller.enqueue(part);
        else endLine();
      },
    }),
  );
}
