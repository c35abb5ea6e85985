import { expect, test } from "bun:test";
import { type ArmTimer, CacheKeepalive, PING_INTERVAL_MS } from "./keepalive.ts";
import type { ModelAdapter, ModelEvent, ModelRequest } from "../plugin.ts";

test("pings re-send the prompt with max_tokens 1, at most N times, and stop when cancelled", async () => {
  const sent: ModelRequest[] = [];
  const adapter: ModelAdapter = {
    name: "recording",
    matches: () => true,
    info: () => undefined,
    async *stream(request): AsyncIterable<ModelEvent> {
      sent.push(request);
      yield { type: "finish", reason: "length" };
    },
  };
  // A hand-cranked clock: each armed timer waits in `armed` until the test fires it.
  const armed: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  const arm: ArmTimer = (fn, ms) => {
    const t = { fn, ms, cancelled: false };
    armed.push(t);
    return () => {
      t.cancelled = true;
    };
  };
  const fire = async () => {
    const t = armed.shift();
    if (t && !t.cancelled) t.fn();
    await k.pending;
  };
  const request: ModelRequest = { model: "m", messages: [{ role: "user", content: "hi" }], stream: true, env: {} };
  const k = new CacheKeepalive(arm);
  k.schedule(adapter, request, 2);
  expect(armed[0]?.ms).toBe(PING_INTERVAL_MS);
  await fire();
  await fire();
  expect(armed.length).toBe(0);
  expect(sent.length).toBe(2);
  expect(sent[0]).toMatchObject({ maxTokens: 1, stream: false, messages: request.messages });

  sent.length = 0;
  k.schedule(adapter, request, 3);
  k.cancel();
  await fire();
  expect(sent.length).toBe(0);
});
