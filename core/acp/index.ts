// `coder acp`: coder as an Agent Client Protocol agent on stdin/stdout, built on the
// official SDK (agent.ts). Each session is one engine session on the folder the client
// names, with the same options, CODER_* environment, .env and config files as the CLI.
// Only protocol goes to stdout; logs go to stderr.
//
// Start-up: the SDK's schemas and the kernel cost far more than the answer to `initialize`
// needs, so this file (which loads neither) reads the folder's settings while the client's
// first line arrives and, when that line is a plain `initialize` and the settings alone decide
// the answer (initialize.ts), answers it at once. Then the SDK loads and takes the stream over
// from that same first line: its own answer to it, the same, is dropped (agent.ts).
import { type RunInput, loadSettings } from "../cli/settings.ts";
import { messageOf } from "../plugins/registry.ts";
import { markModules, trace } from "../trace.ts";
import { initializeRequestId, initializeResult, quickMissingKey } from "./initialize.ts";
import { MAX_MESSAGE_BYTES, leadingId, limitLines } from "./limit.ts";

export type Log = (level: "info" | "warn" | "error", text: string) => void;

/** The client's first line (newline included; null when the input ended before one), what was read after it, and the rest. */
export interface Opening {
  line: Uint8Array | null;
  after: Uint8Array;
  reader: { read(): Promise<{ value?: Uint8Array; done: boolean }>; cancel(reason?: unknown): Promise<void> };
}

/** The exit code for each signal an editor stops its agent with. */
export const SIGNAL_EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** A signal before the agent serves (no turn can be under way): exit at once, with its code. */
export const onEarlySignal = (signal: NodeJS.Signals): void => process.exit(SIGNAL_EXIT_CODES[signal] ?? 143);

/** Serve ACP until the client closes stdin; the exit code. */
export async function runAcp(input: RunInput): Promise<number> {
  trace("acp: start");
  for (const signal of Object.keys(SIGNAL_EXIT_CODES) as NodeJS.Signals[]) process.on(signal, onEarlySignal);
  const verbose = input.args.values.verbose === true || /^(1|true|yes|on)$/i.test(process.env.CODER_VERBOSE ?? "");
  const log: Log = (level, text) => {
    if (level === "info" && !verbose) return;
    process.stderr.write(`coder acp: ${level === "info" ? "" : `${level}: `}${text}\n`);
  };
  // Until the SDK loads, lines go out through Bun's own writer, one after the other: the first
  // touch of process.stdout builds Node's stream objects, a cost the answer need not wait for.
  let written: Promise<unknown> = Promise.resolve();
  let writeLine = (line: string): void => {
    // A client that has gone away fails this write; the SDK finds it gone too, and coder ends as it would.
    written = written.then(() => Bun.write(Bun.stdout, `${line}\n`)).catch((error: unknown) => log("info", `stdout: ${messageOf(error)}`));
  };
  // A message over the limit is answered (when it has an id) and the agent keeps serving.
  const oversized = (bytes: number, head: Uint8Array) => {
    const id = leadingId(head);
    const message = `message of more than ${bytes} bytes refused: coder reads messages of up to ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB (send large files as resource links, not embedded text)`;
    log("warn", message);
    writeLine(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32600, message } }));
  };
  const cwd = input.cwd ?? process.cwd();
  // The settings of the folder coder was started in load while the client sends `initialize`; its kernel starts from them.
  const loaded = loadSettings({ ...input, cwd, rest: [] });
  loaded.catch(() => {});
  // Never rejects: what the answer does with an error is decided below.
  const missing: Promise<{ missing: string | null | undefined } | { error: unknown }> = loaded
    .then(async (settled) => ({ missing: await quickMissingKey(settled, await input.builtins()) }))
    .catch((error: unknown) => ({ error }));
  const opening = await firstLine(limitLines(Bun.stdin.stream(), MAX_MESSAGE_BYTES, oversized).getReader());
  const id = opening.line ? initializeRequestId(new TextDecoder().decode(opening.line)) : null;
  let answered: { id: number | string; result: ReturnType<typeof initializeResult> } | undefined;
  if (id !== null) {
    const decided = await missing;
    if ("error" in decided || decided.missing !== undefined) {
      // What the kernel's answer does with settings it cannot read: no auth method, and a warning.
      if ("error" in decided) log("warn", `could not read the settings of ${cwd}: ${messageOf(decided.error)}`);
      const result = initializeResult(input.version, "error" in decided ? null : (decided.missing ?? null));
      writeLine(JSON.stringify({ jsonrpc: "2.0", id, result }));
      trace("acp: initialize answered");
      markModules("acp initialize answered");
      answered = { id, result };
    }
  }
  await written;
  const out = takeStdout();
  writeLine = out.writeLine;
  const { serve } = await import("./agent.ts");
  return serve({ input, log, protocol: out.protocol, loaded, opening, answered });
}

/** Read up to the end of the first line that is not blank (or of the input); the SDK skips blank lines too. */
async function firstLine(reader: Opening["reader"]): Promise<Opening> {
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { line: null, after: Buffer.concat(chunks), reader };
    if (!value?.length) continue;
    chunks.push(value);
    if (value.indexOf(0x0a) < 0) continue;
    let all: Uint8Array = Buffer.concat(chunks.splice(0));
    for (;;) {
      const nl = all.indexOf(0x0a);
      if (nl < 0) {
        chunks.push(all);
        break;
      }
      const line = all.subarray(0, nl + 1);
      if (new TextDecoder().decode(line).trim()) return { line, after: all.subarray(nl + 1), reader };
      all = all.subarray(nl + 1);
    }
  }
}

/**
 * stdout belongs to the protocol: a stray write (a plugin's console.log, a library's
 * notice) goes to stderr instead, and the protocol stream keeps the real one.
 */
function takeStdout(): { protocol: WritableStream<Uint8Array>; writeLine: (line: string) => void } {
  const write = process.stdout.write.bind(process.stdout) as (chunk: Uint8Array | string, done: (error?: Error | null) => void) => boolean;
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  console.log = console.error;
  console.info = console.error;
  return {
    protocol: new WritableStream<Uint8Array>({
      write: (chunk) => new Promise<void>((resolve, reject) => void write(chunk, (error) => (error ? reject(error) : resolve()))),
    }),
    // One whole line in one write: it never lands inside a message the SDK is writing.
    writeLine: (line) => void write(`${line}\n`, () => {}),
  };
}
