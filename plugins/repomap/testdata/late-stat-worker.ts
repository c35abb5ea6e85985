// A stat helper's worker that claims chunks of a job and never stats them (a helper that is
// late or stuck): stat.test.ts checks that the main thread stats those files itself.
declare const self: Worker;

self.onmessage = (event: MessageEvent<{ buffer: SharedArrayBuffer }>) => {
  const control = new Int32Array(event.data.buffer, 0, 2);
  Atomics.add(control, 0, 256);
};
