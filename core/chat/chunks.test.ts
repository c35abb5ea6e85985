import { describe, expect, test } from "bun:test";
import { assembleChunks, chatFilesBlock, chunkMessages, contextOverflow, readOnlyBlock, renderTokenReport, type ChunkInputs, tokenRows } from "./chunks.ts";
import type { Fence } from "../plugin.ts";

const fence: Fence = ["```", "```"];
const count = (t: string) => Math.ceil(t.length / 4);

function inputs(over: Partial<ChunkInputs> = {}): ChunkInputs {
  return {
    system: "rules",
    examples: [
      { role: "user", content: "example request" },
      { role: "assistant", content: "example reply" },
    ],
    staticBlocks: [readOnlyBlock("CONVENTIONS.md", "use tabs\n", fence)],
    sessionBlocks: [{ label: "repo map", text: "map" }],
    history: [
      { role: "user", content: "earlier" },
      { role: "assistant", content: "earlier reply" },
    ],
    chatFiles: chatFilesBlock([{ path: "a.py", content: "x = 1\n" }], fence),
    turnBlocks: [],
    current: [{ role: "user", content: "now" }],
    reminder: "remember the format",
    systemRole: true,
    breakpoints: false,
    ...over,
  };
}

describe("assembleChunks", () => {
  test("stable-first order", () => {
    expect(assembleChunks(inputs()).map((c) => c.name)).toEqual(["system", "examples", "static", "session", "history", "chat-files", "current"]);
  });

  test("the reminder goes on the last user message and not into the stored turn", () => {
    const cur = [{ role: "user" as const, content: "now" }];
    const msgs = chunkMessages(assembleChunks(inputs({ current: cur })));
    expect(msgs.at(-1)?.content).toBe("now\n\nremember the format");
    expect(cur[0]?.content).toBe("now");
  });

  test("byte-stable: same inputs, same bytes; a new turn leaves the prefix unchanged", () => {
    const a = JSON.stringify(chunkMessages(assembleChunks(inputs())));
    const b = JSON.stringify(chunkMessages(assembleChunks(inputs())));
    expect(a).toBe(b);
    const one = chunkMessages(assembleChunks(inputs({ current: [{ role: "user", content: "first" }] })));
    const two = chunkMessages(assembleChunks(inputs({ current: [{ role: "user", content: "second" }] })));
    expect(JSON.stringify(two.slice(0, -1))).toBe(JSON.stringify(one.slice(0, -1)));
  });

  test("without a system role the rules travel as a user message", () => {
    const msgs = chunkMessages(assembleChunks(inputs({ systemRole: false })));
    expect(msgs[0]).toEqual({ role: "user", content: "rules" });
    expect(msgs.some((m) => m.role === "system")).toBe(false);
  });

  test("breakpoints close the format, context and chat-file layers", () => {
    const msgs = chunkMessages(assembleChunks(inputs({ breakpoints: true })));
    expect(msgs.filter((m) => m.cacheBreakpoint).length).toBe(3);
  });
});

test("contextOverflow names what takes the room", () => {
  const rows = tokenRows(assembleChunks(inputs({ sessionBlocks: [{ label: "repo map", text: "x".repeat(40_000) }] })), count);
  expect(contextOverflow(rows, 100_000, 1000)).toBeNull();
  const msg = contextOverflow(rows, 8000, 1000);
  expect(msg).toContain("repo map");
  expect(msg).toContain("/drop");
});

test("the /tokens report is a table: every figure aligned, a /drop hint per file, the cost when prices are known", () => {
  const rows = [{ label: "system", tokens: 635 }, { label: "a.py", tokens: 56, file: "a.py" }];
  const report = renderTokenReport(rows, 1_047_576, 2);
  const lines = report.split("\n").filter((l) => !l.startsWith("─"));
  expect(lines[0]).toMatch(/^\s*tokens\s+cost\s+part$/);
  expect(lines.find((l) => l.includes("a.py"))).toMatch(/^\s+56\s+\$0\.0001\s+a\.py\s+\/drop a\.py$/);
  expect(lines.at(-1)).toBe("1,046,885           remaining of the 1,047,576-token context window");
  const figures = lines.slice(1).map((l) => /^\s*[\d,]+/.exec(l)?.[0].length);
  expect(new Set(figures).size).toBe(1);
  const unpriced = renderTokenReport(rows, 1_047_576, null);
  expect(unpriced).not.toContain("$");
  expect(unpriced).toContain("cost unknown");
});

describe("blocks with images and documents", () => {
  const image = { type: "image" as const, mediaType: "image/png" as const, data: "iVBO", width: 1000, height: 1000, name: "shot.png" };

  test("a block's parts follow its text in one user message; content keeps the text alone", () => {
    const chunks = assembleChunks(inputs({ staticBlocks: [{ label: "images: shot.png", text: "In the chat:", parts: [image] }] }));
    const user = chunks.find((c) => c.label === "images: shot.png")!.messages[0]!;
    expect(user.content).toBe("In the chat:");
    expect(user.parts).toEqual([{ type: "text", text: "In the chat:" }, image]);
  });

  test("the reminder joins a current request that has parts as a last text part", () => {
    const chunks = assembleChunks(inputs({ current: [{ role: "user", content: "what is this?", parts: [{ type: "text", text: "what is this?" }, image] }] }));
    const last = chunkMessages(chunks).at(-1)!;
    expect(last.content).toBe("what is this?\n\nremember the format");
    expect(last.parts?.at(-1)).toEqual({ type: "text", text: "remember the format" });
  });

  test("/tokens counts an image by the model's rules: 765 by OpenAI's tiles, 1334 by Anthropic's area", () => {
    const chunks = assembleChunks(inputs({ staticBlocks: [{ label: "images: shot.png", text: "", parts: [image] }] }));
    const row = (rules?: Parameters<typeof tokenRows>[2]) => tokenRows(chunks, () => 0, rules).find((r) => r.label === "images: shot.png")!.tokens;
    // 4 tokens of framing per message (the block and its acknowledgement) on top of the image.
    expect(row()).toBe(765 + 8);
    expect(row({ tokens: "area", maxEdge: 1568, maxPixels: 1_192_464, maxBytes: 1 })).toBe(1334 + 8);
  });
});
