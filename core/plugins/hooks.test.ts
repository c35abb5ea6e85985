// The hook runner: order (pre, load order, post), sequential hand-over, first veto wins,
// parallel onReply, a throwing handler reported by plugin and hook, dispose bounded in time.
import { expect, test } from "bun:test";
import type { Logger, PluginObject, RequestEvent } from "../plugin.ts";
import { Hooks } from "./hooks.ts";

function hooksOf(...plugins: Partial<PluginObject>[]) {
  const errors: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn() {}, error: (m) => errors.push(m) };
  const hooks = new Hooks(log);
  plugins.forEach((p, i) => hooks.add({ apiVersion: 2, name: `p${i}`, ...p } as PluginObject, `/p${i}.ts`));
  return { hooks, errors };
}

test("no handler: has() is false and the event passes unchanged", async () => {
  const { hooks } = hooksOf({});
  expect(hooks.has("onRequest")).toBe(false);
  const messages = [{ role: "user" as const, content: "hi" }];
  expect(await hooks.request("m", messages)).toBe(messages);
});

test("order: pre first, then load order, then post; each sees the previous handler's messages", async () => {
  const seen: string[] = [];
  const tag = (name: string) => ({ messages }: RequestEvent) => {
    seen.push(`${name}:${messages[0]!.content}`);
    return { messages: [{ role: "user" as const, content: `${messages[0]!.content}>${name}` }] };
  };
  const { hooks } = hooksOf({ onRequest: { order: "post", handler: tag("post") } }, { onRequest: tag("a") }, { onRequest: { order: "pre", handler: tag("pre") } }, { onRequest: tag("b") });
  const out = await hooks.request("m", [{ role: "user", content: "x" }]);
  expect(seen).toEqual(["pre:x", "a:x>pre", "b:x>pre>a", "post:x>pre>a>b"]);
  expect(out[0]!.content).toBe("x>pre>a>b>post");
});

test("onEdit: a content change is handed on; the first veto stops the rest and names its plugin", async () => {
  let later = false;
  const { hooks } = hooksOf(
    { onEdit: ({ after }) => ({ content: `${after}!` }) },
    { onEdit: ({ after }) => (after === "new!" ? { veto: "no bangs" } : undefined) },
    { onEdit: () => void (later = true) },
  );
  expect(await hooks.edit({ path: "a", before: "old", after: "new", format: "whole" })).toEqual({ veto: "no bangs", plugin: "p1" });
  expect(later).toBe(false);
  const { hooks: plain } = hooksOf({ onEdit: ({ after }) => ({ content: `${after}!` }) });
  expect(await plain.edit({ path: "a", before: null, after: "x", format: "whole" })).toEqual({ after: "x!" });
});

test("onCommit: messages chain, trailers add up once each, a veto wins", async () => {
  const { hooks } = hooksOf({ onCommit: ({ message }) => ({ message: `${message} (edited)`, trailers: ["Refs: A-1", "not a trailer"] }) }, { onCommit: () => ({ trailers: ["Refs: A-1", "Reviewed-by: bot"] }) });
  expect(await hooks.commit({ message: "feat: x", files: ["a"] })).toEqual({ message: "feat: x (edited)", trailers: ["Refs: A-1", "Reviewed-by: bot"] });
  const { hooks: vetoing } = hooksOf({ onCommit: () => ({ veto: "frozen" }) });
  expect(await vetoing.commit({ message: "m", files: [] })).toEqual({ veto: "frozen", plugin: "p0" });
});

test("a throwing handler is reported with plugin, origin and hook, and counts as no change", async () => {
  const { hooks, errors } = hooksOf({ onToolCall: () => { throw new Error("boom"); } }, { onToolCall: async () => { throw new Error("later"); } });
  expect(await hooks.toolCall({ name: "t", arguments: "{}", origin: "x" })).toBeNull();
  expect(errors).toEqual(["plugin p0 (/p0.ts): onToolCall failed: boom", "plugin p1 (/p1.ts): onToolCall failed: later"]);
});

test("onReply handlers run at once", async () => {
  const order: string[] = [];
  const wait = (ms: number, name: string) => async () => { await Bun.sleep(ms); order.push(name); };
  const { hooks } = hooksOf({ onReply: wait(30, "slow") }, { onReply: wait(1, "quick") });
  await hooks.reply({ model: "m", text: "t", toolCalls: [], finishReason: "stop" });
  expect(order).toEqual(["quick", "slow"]);
});

test("dispose: every plugin's at once, once, and a hung one is reported and left behind", async () => {
  let disposed = 0;
  const { hooks, errors } = hooksOf({ dispose: () => void disposed++ }, { dispose: () => new Promise(() => {}) });
  await hooks.dispose(50);
  await hooks.dispose(50);
  expect(disposed).toBe(1);
  expect(errors).toEqual(["plugin p1: dispose did not finish within 0.05 s; left behind"]);
});
