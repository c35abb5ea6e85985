import { expect, test } from "bun:test";
import { personalizedPageRank } from "./pagerank.ts";

const edges = (list: [number, number, number][]) => ({
  src: Int32Array.from(list.map((e) => e[0])),
  dst: Int32Array.from(list.map((e) => e[1])),
  weight: Float64Array.from(list.map((e) => e[2])),
  count: list.length,
});

test("matches a hand-computed personalised PageRank with a dangling node", () => {
  // 0→1 (1), 0→2 (3), 1→2 (1); node 2 has no out-edges; personalisation all on node 0.
  // Stationary equations (α = 0.85, dangling mass follows the personalisation):
  //   x1 = α·¼·x0 = 0.2125·x0
  //   x2 = α·(¾·x0 + x1) = 0.818125·x0
  //   x0 = α·x2 + (1−α) = 0.69540625·x0 + 0.15  →  x0 = 0.15 / 0.30459375
  const ranks = personalizedPageRank(3, edges([[0, 1, 1], [0, 2, 3], [1, 2, 1]]), Float64Array.from([1, 0, 0]), { tolerance: 1e-12, maxIterations: 1000 });
  const x0 = 0.15 / 0.30459375;
  expect(ranks[0]).toBeCloseTo(x0, 6);
  expect(ranks[1]).toBeCloseTo(0.2125 * x0, 6);
  expect(ranks[2]).toBeCloseTo(0.818125 * x0, 6);
});

test("without personalisation a symmetric cycle ranks every node equally", () => {
  const ranks = personalizedPageRank(4, edges([[0, 1, 1], [1, 2, 1], [2, 3, 1], [3, 0, 1]]), null);
  for (const r of ranks) expect(r).toBeCloseTo(0.25, 6);
});

test("personalisation pulls rank towards its nodes; ranks sum to 1", () => {
  const graph = edges([[0, 1, 1], [1, 0, 1], [2, 3, 1], [3, 2, 1]]);
  const ranks = personalizedPageRank(4, graph, Float64Array.from([0, 0, 5, 0]));
  expect(ranks[2]! + ranks[3]!).toBeGreaterThan(0.99);
  expect([...ranks].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  // All-zero personalisation falls back to uniform teleport.
  const uniform = personalizedPageRank(4, graph, new Float64Array(4));
  for (const r of uniform) expect(r).toBeCloseTo(0.25, 6);
});

test("edge weights split a node's rank proportionally", () => {
  // 0 → 1 (weight 1) and 0 → 2 (weight 3): node 2 gets three times node 1's share from node 0.
  const ranks = personalizedPageRank(3, edges([[0, 1, 1], [0, 2, 3], [1, 0, 1], [2, 0, 1]]), null, { tolerance: 1e-12, maxIterations: 1000 });
  const fromZero1 = ranks[1]! - 0.15 / 3;
  const fromZero2 = ranks[2]! - 0.15 / 3;
  expect(fromZero2 / fromZero1).toBeCloseTo(3, 6);
});
