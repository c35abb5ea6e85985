// --reasoning-effort and --thinking-tokens against the model table: which of them a
// model takes, and the one-line notice for a setting it does not (the adapter leaves
// such a setting out of the request, so the endpoint never rejects it).
import type { ModelInfo } from "../plugin.ts";

export interface ReasoningSettings {
  reasoningEffort?: string;
  thinkingTokens?: number;
}

/** A notice per setting `info` does not take; empty when it takes every one that is set. */
export function unsupportedReasoning(settings: ReasoningSettings, info: ModelInfo): string[] {
  const caps = info.capabilities;
  const notes: string[] = [];
  const effort = settings.reasoningEffort;
  if (effort && !caps.reasoningEffort) notes.push(`${info.name} does not take a reasoning effort: --reasoning-effort ${effort} is not sent to it.`);
  else if (effort && caps.reasoningLevels && !caps.reasoningLevels.includes(effort)) {
    notes.push(`${info.name} takes reasoning effort ${caps.reasoningLevels.join(" or ")}, not ${effort}: it is not sent.`);
  }
  if (settings.thinkingTokens !== undefined && !caps.thinkingTokens) notes.push(`${info.name} does not take a thinking-token budget: --thinking-tokens ${settings.thinkingTokens} is not sent to it.`);
  return notes;
}

/** What `coder models` shows of a model's reasoning settings: "effort", "budget", both, or "-". */
export function reasoningColumn(info: ModelInfo): string {
  const caps = info.capabilities;
  const parts: string[] = [];
  if (caps.reasoningEffort) parts.push(caps.reasoningLevels ? `effort (${caps.reasoningLevels.join("/")})` : "effort");
  if (caps.thinkingTokens) parts.push("budget");
  return parts.join("+") || "-";
}
