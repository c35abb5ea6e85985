// What the engine tells the outside world, as typed events. The same events feed
// the `--json` stream (one object per line, CLI.md) and the human renderers.
import type { MatchRung } from "../plugin.ts";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export interface Totals extends Usage {
  cost: number;
  requests: number;
  /** Some reply of the session came from a model without prices: `cost` leaves it out. */
  costUnknown?: boolean;
}

/** Every event the engine emits; `time` is added when it is written. */
export type CoderEvent =
  | { type: "start"; version: string; model: string; editFormat: string; files: string[] }
  /** `estimated`: counted as characters/4 because the prompt clearly fits (the exact count is in `reply.usage`). */
  | { type: "request"; model: string; promptTokens: number; estimated: boolean }
  | { type: "delta"; text: string }
  /** The model's reasoning as it streams (from servers that send it); never part of the reply. */
  | { type: "reasoning"; text: string }
  /**
   * `costKnown: false`: the model has no prices (its cost counts as 0). `finishReason`
   * "interrupted": Ctrl-C stopped the reply; `text` is what arrived (kept in the history).
   */
  | { type: "reply"; text: string; usage: Usage; cost: number; model: string; finishReason: string; costKnown?: boolean }
  /**
   * `dryRun`: the edit matched but, under --dry-run, nothing was written. `diff`: the unified
   * diff of the file as this reply wrote it (on the file's last applied edit). `rung`: how the matcher found the place. `summary`: the
   * failure said for a person ("Could not find the SEARCH text in a.py; closest lines 4–6:").
   */
  | { type: "edit"; path: string; status: "applied" | "failed" | "skipped"; detail: string; rung?: MatchRung; dryRun?: boolean; diff?: string; summary?: string }
  /** A command starts (lint, tests, `/run`, a suggested shell command); its output follows as `output` events. */
  | { type: "command"; command: string; purpose: "lint" | "test" | "run" }
  /** Output of the running command, as it arrives (stdout and stderr). */
  | { type: "output"; text: string }
  | { type: "reflection"; n: number; reason: string }
  /**
   * The model called a tool while gathering (core/chat/tool-calls.ts). `status`: "ok" or "error" (what the
   * tool returned), "declined" (the user said no), "not-run" (unknown tool, bad arguments, budget spent).
   * `output`: what the model was sent (capped); `chars`: the full output's length before the cap.
   */
  | { type: "tool"; name: string; origin: string; arguments: string; status: "ok" | "error" | "declined" | "not-run"; output: string; chars: number }
  | { type: "lint"; ok: boolean; command: string; output: string }
  | { type: "test"; ok: boolean; command: string; output: string }
  | { type: "commit"; hash: string; message: string }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "warning"; message: string }
  | { type: "error"; message: string; code: number }
  | { type: "end"; exitCode: number; totals: Totals };

export type EventOf<T extends CoderEvent["type"]> = Extract<CoderEvent, { type: T }>;

/** Where the engine's output goes: a JSON line stream, plain text for pipes, or a pretty terminal. */
export interface Output {
  emit(event: CoderEvent): void;
  /** Human-only text (command output, notes); never written in `--json` mode's stdout. */
  print(text: string): void;
  warn(text: string): void;
  /** Flush anything buffered (the markdown renderer's last line). */
  flush(): void;
  /**
   * Optional, for a front end that shows each change before it happens (an editor's tool-call
   * cards): every file a reply's edits would change, before anyone is asked or anything written.
   */
  staged?(changes: readonly StagedChange[]): void;
  /** Optional: these files of the reply are being written now. */
  writing?(paths: readonly string[]): void;
  /** Optional: the request waits on something slow (tool providers starting their servers): said once it has taken a second. */
  waiting?(what: string): void;
  /** Optional: a tool call the model made is about to be asked about ("pending") or run ("running"); its `tool` event ends it. */
  toolCall?(call: { name: string; origin: string; arguments: string }, phase: "pending" | "running"): void;
}

/** One file a reply would change: its repository path and its text before and after (null: absent). */
export interface StagedChange {
  path: string;
  before: string | null;
  after: string | null;
}


/** USD cost of one reply from per-million prices (cached prompt tokens at the cache-read price when known). */
export function replyCost(usage: Usage, prices: { input: number; output: number; cacheRead?: number }): number {
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  const cacheRead = prices.cacheRead ?? prices.input;
  return (fresh * prices.input + cached * cacheRead + usage.completionTokens * prices.output) / 1_000_000;
}

/**
 * "Tokens: 3.1k sent, 1.2k cached, 210 received. Cost: $0.0040 message, $0.0120 session.";
 * "Cost: unknown" for a model without prices (its $0.00 would be a guess).
 */
export function usageLine(usage: Usage, cost: number, totals: Totals, costKnown = true): string {
  const parts = [`${formatTokens(usage.promptTokens)} sent`];
  if (usage.cachedTokens) parts.push(`${formatTokens(usage.cachedTokens)} cached`);
  parts.push(`${formatTokens(usage.completionTokens)} received`);
  if (!costKnown) return `Tokens: ${parts.join(", ")}. Cost unknown (no prices for this model)${totals.cost ? `, ${formatCost(totals.cost)} session` : ""}.`;
  const session = `${formatCost(totals.cost)} session${totals.costUnknown ? " (and replies of unpriced models)" : ""}`;
  return `Tokens: ${parts.join(", ")}. Cost: ${formatCost(cost)} message, ${session}.`;
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  return `${Math.round(n / 1000)}k`;
}

function formatCost(c: number): string {
  return c >= 0.01 || c === 0 ? `$${c.toFixed(2)}` : `$${c.toFixed(4)}`;
}

/** Whether a terminal front end shows each applied edit's diff: --show-diffs, by default in the REPL. */
export function diffsShown(options: { showDiffs?: boolean }, interactive: boolean): boolean {
  return options.showDiffs ?? interactive;
}
