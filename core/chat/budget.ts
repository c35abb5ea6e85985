// Shares the model's context window between the context providers: each provider's
// `budget` claim (an option the user sets, else a share of the window) is served by
// priority while the window, less the reply's reserve and the rest of the prompt, has room.
import type { BudgetClaim, ContextBudget, ModelInfo } from "../plugin.ts";

/** The tokens kept free for the reply: the model's output limit, at most a quarter of the window (as the window check keeps). */
export function replyReserve(model: Pick<ModelInfo, "contextWindow" | "maxOutput">): number {
  return Math.min(model.maxOutput, Math.floor(model.contextWindow / 4));
}

/** What one claim asks for: the option's tokens when set (0: off), else its share of the window, else null (what is left). */
export function wantedTokens(claim: BudgetClaim | undefined, options: Readonly<Record<string, unknown>>, window: number): number | null {
  if (!claim) return null;
  const set = claim.option ? options[claim.option.key] : undefined;
  if (typeof set === "number" && Number.isFinite(set)) return Math.max(0, Math.floor(set));
  if (!claim.share) return null;
  const { fraction, min = 0, max = Number.POSITIVE_INFINITY } = claim.share;
  return Math.min(max, Math.max(min, Math.floor(window * fraction)));
}

/**
 * Each provider's budget, in the order given (the registry's load order). Claims are served
 * by priority, higher first, equal ones in order; a claim never gets more than the room left
 * (`window - reserve - used`, where `used` is the rest of the prompt). Providers without a
 * claim, or whose claim is only a priority, share what the claims leave: each may use all of
 * it. `spare` is what nobody claimed.
 */
export function shareContextWindow(
  providers: readonly { budget?: BudgetClaim }[],
  model: Pick<ModelInfo, "contextWindow" | "maxOutput">,
  options: Readonly<Record<string, unknown>>,
  used = 0,
): ContextBudget[] {
  const window = model.contextWindow;
  let room = Math.max(0, window - replyReserve(model) - Math.max(0, used));
  const wanted = providers.map((p) => wantedTokens(p.budget, options, window));
  const granted: (number | null)[] = providers.map(() => null);
  const byPriority = providers.map((p, i) => ({ i, priority: p.budget?.priority ?? 0 })).sort((a, b) => b.priority - a.priority || a.i - b.i);
  for (const { i } of byPriority) {
    const want = wanted[i];
    if (want === null || want === undefined) continue;
    const tokens = Math.min(want, room);
    granted[i] = tokens;
    room -= tokens;
  }
  return granted.map((tokens) => ({ tokens: tokens ?? room, spare: room }));
}
