// One coder run of a task: the running coder itself as a child (`--json --yes-always`), in the
// task's temporary directory, read back through its `--json` events. The eval stays on the
// public surface: what a task measures is exactly what a user's one-shot request would do.
import type { Kit } from "../../core/plugin.ts";

export interface ChildRequest {
  cwd: string;
  message: string;
  model: string;
  format: string;
  files: readonly string[];
  /** More flags, as typed for `coder eval` and passed on (`--map-tokens 0`, ...). */
  flags: readonly string[];
  env: Record<string, string | undefined>;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface ChildRun {
  /** The child's `--json` events, in order; lines that are not JSON are kept as `{ type: "stdout", text }`. */
  events: Record<string, unknown>[];
  code: number;
  aborted: boolean;
  stderr: string;
}

/** Run one request. A slash at the start would run a command, so such a request is prefixed. */
export async function runCoder(kit: Kit, request: ChildRequest): Promise<ChildRun> {
  const message = request.message.startsWith("/") ? `Request: ${request.message}` : request.message;
  const argv = [
    ...kit.self(),
    "--json",
    "--yes-always",
    "--no-auto-commits",
    `--message=${message}`,
    `--model=${request.model}`,
    `--edit-format=${request.format}`,
    ...request.flags,
    "--",
    ...request.files,
  ];
  const result = await kit.spawn(argv, { cwd: request.cwd, env: request.env, input: "", signal: request.signal, timeoutMs: request.timeoutMs });
  const events: Record<string, unknown>[] = [];
  for (const line of result.stdout.split("\n")) {
    if (!line.trim()) continue;
    try {
      const parsed = JSON.parse(line) as unknown;
      events.push(parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { type: "stdout", text: line });
    } catch {
      events.push({ type: "stdout", text: line });
    }
  }
  if (result.startError) events.push({ type: "error", message: `could not start coder: ${result.startError}`, code: 127 });
  if (result.timedOut) events.push({ type: "error", message: `coder ran past ${Math.round(request.timeoutMs / 1000)} s and was stopped`, code: 124 });
  return { events, code: result.code, aborted: result.aborted, stderr: result.stderr };
}

/** What the events of one or more runs add up to. */
export interface Tally {
  applied: number;
  failed: number;
  refused: number;
  reflections: number;
  replies: number;
  /** Replies the format could not parse (a reflection followed with no edit at all). */
  malformed: number;
  tokensIn: number;
  tokensOut: number;
  /** Null once a reply came from a model without prices. */
  cost: number | null;
  /** The first error event's message, and whether it came before any reply (the endpoint failed). */
  error: string | null;
  modelError: boolean;
  /** Every run ended with an `end` event and exit code 0 or 1. */
  clean: boolean;
}

export function emptyTally(): Tally {
  return { applied: 0, failed: 0, refused: 0, reflections: 0, replies: 0, malformed: 0, tokensIn: 0, tokensOut: 0, cost: 0, error: null, modelError: false, clean: true };
}

const ADDED_FILES = /^I added \S.* to the chat\b/;

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Add one run's events to `tally`. */
export function tallyRun(tally: Tally, run: ChildRun): Tally {
  let afterReply: "none" | "edits" | "pending" = "none";
  let sawEnd = false;
  for (const event of run.events) {
    switch (event.type) {
      case "reply": {
        if (afterReply === "pending") afterReply = "none";
        tally.replies++;
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        tally.tokensIn += num(usage.promptTokens);
        tally.tokensOut += num(usage.completionTokens);
        if (event.costKnown === false) tally.cost = null;
        else if (tally.cost !== null) tally.cost += num(event.cost);
        afterReply = "pending";
        break;
      }
      case "edit":
        if (event.status === "applied") tally.applied++;
        else if (event.status === "failed") tally.failed++;
        else if (event.status === "skipped") tally.refused++;
        if (afterReply === "pending") afterReply = "edits";
        break;
      case "reflection":
        tally.reflections++;
        // A reflection after a reply with no edit is the format's parse error, unless coder only
        // added files the reply named (its words in core/chat/reply/offers.ts: "I added FILE to the chat").
        if (afterReply === "pending" && !ADDED_FILES.test(String(event.reason ?? ""))) tally.malformed++;
        afterReply = "none";
        break;
      case "error":
        if (tally.error === null) {
          tally.error = typeof event.message === "string" ? event.message : "coder reported an error";
          tally.modelError = tally.replies === 0 && num(event.code) === 1;
        }
        break;
      case "end":
        sawEnd = true;
        // The last reply had no edit and the request failed: it did not parse (the budget left no reflection to say so).
        if (afterReply === "pending" && num(event.exitCode) !== 0 && tally.error === null) tally.malformed++;
        break;
    }
  }
  if (!sawEnd || (run.code !== 0 && run.code !== 1)) {
    tally.clean = false;
    if (tally.error === null) tally.error = `coder exited with code ${run.code}${run.stderr.trim() ? `: ${lastLine(run.stderr)}` : ""}`;
  }
  return tally;
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines[lines.length - 1] ?? "").slice(0, 300);
}
