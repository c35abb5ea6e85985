// `--cache-keepalive-pings N`: while the user is idle, re-send the last prompt
// with max_tokens 1 shortly before the provider's prompt cache expires (about
// five minutes), at most N times, so the next real request still hits the cache.
import type { ModelAdapter, ModelRequest } from "../plugin.ts";

export const PING_INTERVAL_MS = 5 * 60_000 - 10_000;

/** Arms a timer; returns its canceller. Injected in tests so no test waits on a clock. */
export type ArmTimer = (fn: () => void, ms: number) => () => void;

const realTimer: ArmTimer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref?.();
  return () => clearTimeout(t);
};

export class CacheKeepalive {
  private disarm: (() => void) | null = null;

  /** The ping in flight (tests await it). */
  pending: Promise<void> = Promise.resolve();

  constructor(private readonly armTimer: ArmTimer = realTimer) {}

  /** Start (or restart) pinging with `request`; the timers never keep the process alive. */
  schedule(adapter: ModelAdapter, request: ModelRequest, pings: number, intervalMs = PING_INTERVAL_MS): void {
    this.cancel();
    if (pings <= 0) return;
    const ping: ModelRequest = { ...request, maxTokens: 1, stream: false };
    let left = pings;
    const tick = () => {
      this.disarm = null;
      if (left-- <= 0) return;
      this.pending = drain(adapter, ping);
      if (left > 0) this.arm(tick, intervalMs);
    };
    this.arm(tick, intervalMs);
  }

  cancel(): void {
    this.disarm?.();
    this.disarm = null;
  }

  private arm(fn: () => void, ms: number): void {
    this.disarm = this.armTimer(fn, ms);
  }
}

async function drain(adapter: ModelAdapter, request: ModelRequest): Promise<void> {
  try {
    for await (const _ of adapter.stream(request, new AbortController().signal)) {
      // only the cache refresh matters
    }
  } catch {
    // a failed ping only means the cache may go cold
  }
}
