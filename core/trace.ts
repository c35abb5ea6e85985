// Timing marks for diagnosing latency: with --verbose or CODER_TRACE=1, each
// mark prints the milliseconds since process start on stderr. Off, a mark
// costs one boolean test.
let enabled = Boolean(process.env.CODER_TRACE);

export function setTracing(on: boolean): void {
  enabled = enabled || on;
}

export function trace(label: string): void {
  if (enabled) process.stderr.write(`[trace ${performance.now().toFixed(1)} ms] ${label}\n`);
}

/**
 * With CODER_TRACE_MODULES (main.ts), a named point in the list of the binary's chunks evaluated:
 * scripts/module-trace.ts tells what was evaluated before it (`coder acp`'s answer to initialize).
 */
export function markModules(label: string): void {
  if (process.env.CODER_TRACE_MODULES) ((globalThis as { __coderChunks?: string[] }).__coderChunks ??= []).push(`#${label}`);
}
