// The stat helper's worker (stat.ts): lstats the listing's files by chunks it claims from the
// counter it shares with the main thread, into the shared arrays. Built as an extra entrypoint
// of the compiled binary; it imports only stat-chunks.ts, so it starts in a few milliseconds.
import { type StatJob, claimAndStat } from "./stat-chunks.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<StatJob>) => {
  const job = event.data;
  claimAndStat(job.root, job.files.split("\0"), job.buffer);
};
