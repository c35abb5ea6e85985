// Timing marks for diagnosing latency: CODER_TRACE=1 prints milliseconds since
// process start for each mark on stderr. Off, it costs one property read.
const enabled = Boolean(process.env.CODER_TRACE);

export function trace(label: string): void {
  if (enabled) process.stderr.write(`[trace ${performance.now().toFixed(1)} ms] ${label}\n`);
}
