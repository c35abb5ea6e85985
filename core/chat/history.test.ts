import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatHistory, historyBudget, loadTranscript, summariseHistory, Transcript } from "./history.ts";
import type { ChatMessage } from "../plugin.ts";

const count = (ms: readonly ChatMessage[]) => ms.reduce((s, m) => s + Math.ceil(m.content.length / 4) + 4, 0);
const turn = (i: number): ChatMessage[] => [
  { role: "user", content: `request ${i} about parse_reply in core/coder.ts ${"x".repeat(400)}` },
  { role: "assistant", content: `reply ${i} ${"y".repeat(400)}` },
];

test("historyBudget follows min(max(ctx/16, 1024), 8192)", () => {
  expect(historyBudget(8000)).toBe(1024);
  expect(historyBudget(64_000)).toBe(4000);
  expect(historyBudget(1_000_000)).toBe(8192);
});

describe("summariseHistory", () => {
  test("keeps a verbatim tail that starts after an assistant message", async () => {
    const msgs = Array.from({ length: 10 }, (_, i) => turn(i)).flat();
    const seen: number[] = [];
    const out = await summariseHistory(msgs, 1000, count, async (head) => {
      seen.push(head.length);
      return "I asked about parse_reply in core/coder.ts.";
    });
    expect(count(out)).toBeLessThanOrEqual(1000);
    expect(out[0]?.content).toContain("parse_reply");
    expect(out[2]?.role).toBe("user");
    expect(out.at(-1)).toEqual(msgs.at(-1) as ChatMessage);
    expect(seen[0]! % 2).toBe(0);
  });

  test("under budget: unchanged, no model call", async () => {
    const msgs = turn(1);
    const out = await summariseHistory(msgs, 10_000, count, async () => {
      throw new Error("must not be called");
    });
    expect(out).toEqual(msgs);
  });
});

test("ChatHistory summarises in the background and swaps the head in", async () => {
  const h = new ChatHistory();
  for (let i = 0; i < 10; i++) {
    h.cur.push(...turn(i));
    h.finishTurn();
  }
  expect(h.maybeSummarise(1000, count, async () => "summary")).toBe(true);
  expect(h.summarising).toBe(true);
  await h.settle();
  expect(h.done[0]?.content).toContain("summary");
  expect(count(h.done)).toBeLessThanOrEqual(1000);
});

test("transcript round-trips through --restore-chat-history", () => {
  const path = join(mkdtempSync(join(tmpdir(), "coder-hist-")), ".coder", "chat.history.md");
  const t = new Transcript(path);
  t.sessionStart();
  t.user("add a test\nfor parse");
  t.assistant("Here is the change.");
  t.note("Applied edit to a.py");
  t.user("thanks");
  t.assistant("You're welcome.");
  expect(readFileSync(path, "utf8")).toContain("#### add a test");
  expect(loadTranscript(path)).toEqual([
    { role: "user", content: "add a test\nfor parse" },
    { role: "assistant", content: "Here is the change." },
    { role: "user", content: "thanks" },
    { role: "assistant", content: "You're welcome." },
  ]);
});

test("summariseAll replaces the whole history with one summary (edit-format switch)", async () => {
  const h = new ChatHistory();
  h.cur.push(...turn(1));
  h.finishTurn();
  expect(h.summariseAll(async () => "we talked about parse_reply")).toBe(true);
  await h.settle();
  expect(h.done.length).toBe(2);
  expect(h.done[0]?.content).toContain("parse_reply");
});

describe("state files read back never hang or flood", () => {
  test("a transcript, an input history, remembered answers or coder's commit list that is a FIFO or a link to /dev/zero reads as empty", async () => {
    const { symlinkSync, mkdirSync } = await import("node:fs");
    const { loadInputHistory } = await import("../term/input.ts");
    const { GitRepo } = await import("../git/git.ts");
    const dir = mkdtempSync(join(tmpdir(), "coder-statefiles-"));
    const fifo = join(dir, "fifo");
    Bun.spawnSync(["mkfifo", fifo]);
    symlinkSync("/dev/zero", join(dir, "zero"));
    for (const path of [fifo, join(dir, "zero")]) {
      expect(loadTranscript(path)).toEqual([]);
      expect(loadInputHistory(path)).toEqual([]);
    }
    // commits.json under a repository's .coder/ (read by /undo and the commit list).
    const root = join(dir, "repo");
    mkdirSync(join(root, ".coder"), { recursive: true });
    Bun.spawnSync(["git", "init", "-q"], { cwd: root });
    Bun.spawnSync(["mkfifo", join(root, ".coder", "commits.json")]);
    const repo = await GitRepo.open(root);
    expect(repo?.coderCommits() ?? []).toEqual([]);
  });
});
