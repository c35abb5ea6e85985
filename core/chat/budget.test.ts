// How the kernel shares the context window between context providers' claims.
import { expect, test } from "bun:test";
import type { BudgetClaim } from "../plugin.ts";
import { replyReserve, shareContextWindow } from "./budget.ts";

const TOKENS = { key: "docsTokens", type: "number", help: "docs tokens" } as const;
const model = (contextWindow: number, maxOutput = 4_000) => ({ contextWindow, maxOutput });

test("a claim gets its option's tokens when set (0: off), else its share of the window within min and max", () => {
  const claim: BudgetClaim = { option: TOKENS, share: { fraction: 1 / 8, min: 1024, max: 4096 } };
  expect(shareContextWindow([{ budget: claim }], model(128_000), {})[0]!.tokens).toBe(4096);
  expect(shareContextWindow([{ budget: claim }], model(16_000), {})[0]!.tokens).toBe(2000);
  expect(shareContextWindow([{ budget: claim }], model(128_000), { docsTokens: 700 })[0]!.tokens).toBe(700);
  expect(shareContextWindow([{ budget: claim }], model(128_000), { docsTokens: 0 })[0]!.tokens).toBe(0);
});

test("a higher priority is served first when the window is short; equal priorities in load order", () => {
  // Room: 20,000 - 4,000 (reply) - 6,000 (the rest of the prompt) = 10,000.
  const low: BudgetClaim = { priority: 0, share: { fraction: 0.4 } };
  const high: BudgetClaim = { priority: 5, share: { fraction: 0.4 } };
  const budgets = shareContextWindow([{ budget: low }, { budget: high }, { budget: low }], model(20_000), {}, 6_000);
  expect(budgets.map((b) => b.tokens)).toEqual([2_000, 8_000, 0]);
  expect(budgets.every((b) => b.spare === 0)).toBe(true);
});

test("providers without a claim share what the claims leave; spare is what nobody claimed", () => {
  const budgets = shareContextWindow([{}, { budget: { share: { fraction: 0.25 } } }, {}], model(100_000, 10_000), {}, 5_000);
  // Room 100,000 - 10,000 - 5,000 = 85,000; the claim takes 25,000.
  expect(budgets.map((b) => b.tokens)).toEqual([60_000, 25_000, 60_000]);
  expect(budgets[1]!.spare).toBe(60_000);
});

test("the reply's reserve is the output limit, at most a quarter of the window", () => {
  expect(replyReserve(model(100_000, 10_000))).toBe(10_000);
  expect(replyReserve(model(8_000, 10_000))).toBe(2_000);
});
