// Timing marks for diagnosing latency and memory: with --verbose or CODER_TRACE=1, each
// mark prints the milliseconds since process start on stderr and, after the label, the
// resident memory then (on Linux its anonymous and file-backed parts: most of a short run's
// memory is pages of the binary itself). Off, a mark costs one boolean test.
let enabled = Boolean(process.env.CODER_TRACE);

export function setTracing(on: boolean): void {
  enabled = enabled || on;
}

export function trace(label: string): void {
  if (enabled) process.stderr.write(`[trace ${performance.now().toFixed(1)} ms] ${label} (${residentMemory()})\n`);
}

/** "rss 61.2 MB: anon 19.0, file 42.2" from /proc/self/status, or the runtime's figure elsewhere. */
function residentMemory(): string {
  const mb = (kb: number) => (kb / 1024).toFixed(1);
  try {
    const status = (require("node:fs") as typeof import("node:fs")).readFileSync("/proc/self/status", "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1]);
    const [rss, anon, file] = [kb("VmRSS"), kb("RssAnon"), kb("RssFile")];
    if (rss >= 0 && anon >= 0 && file >= 0) return `rss ${mb(rss)} MB: anon ${mb(anon)}, file ${mb(file)}`;
  } catch {
    // No /proc: the runtime's figure below.
  }
  return `rss ${(process.memoryUsage.rss() / 1048576).toFixed(1)} MB`;
}

/**
 * With CODER_TRACE_MODULES (main.ts), a named point in the list of the binary's chunks evaluated:
 * scripts/module-trace.ts tells what was evaluated before it (`coder acp`'s answer to initialize).
 */
export function markModules(label: string): void {
  if (process.env.CODER_TRACE_MODULES) ((globalThis as { __coderChunks?: string[] }).__coderChunks ??= []).push(`#${label}`);
}
