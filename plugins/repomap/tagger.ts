// A session's tagger: one worker kept for the session, its grammars compiled
// ahead (the chat files' languages, soon after a map is returned), that parses
// the few files an edit changes. Compiling a tags query costs 40–90 ms (more on a
// busy machine) and would otherwise fall on the next map after the first edit.
import type { GrammarAssets } from "../../grammars/runtime.ts";
import type { ParseFile, WorkerReply, WorkerRequest, WorkerResult } from "./worker.ts";

export class SessionTagger {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (results: WorkerResult[]) => void; reject: (error: Error) => void; ref: boolean }>();
  #refs = 0;
  #aheadUsed = 0;
  #nextId = 0;
  #failed: Error | null = null;

  /** Whether the worker loaded the binary's embedded grammar assets itself (constructed with no assets). */
  readonly embedded: boolean;

  /**
   * Starts the worker; it keeps the process alive only while a request is pending. With
   * no assets, the worker loads the binary's embedded ones (grammars/embedded.ts) itself:
   * it can start before this thread has them.
   */
  constructor(entry: string, assets: GrammarAssets | null) {
    this.embedded = assets === null;
    this.#worker = new Worker(entry);
    this.#worker.unref();
    this.#worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const waiting = this.#pending.get(event.data.id);
      this.#pending.delete(event.data.id);
      this.#aheadUsed += event.data.ahead ?? 0;
      if (waiting?.ref && --this.#refs === 0) this.#worker.unref();
      waiting?.resolve(event.data.results);
    };
    this.#worker.onerror = (event) => this.#fail(new Error(event.message || "worker error"));
    this.#worker.postMessage((assets ? { kind: "init", assets } : { kind: "init-embedded" }) satisfies WorkerRequest);
  }

  get failed(): boolean {
    return this.#failed !== null;
  }

  /** Compiles these languages' grammars in the worker, off this thread. */
  async preload(langs: readonly string[]): Promise<void> {
    if (langs.length > 0) await this.#request((id) => ({ kind: "load", id, langs: [...langs] }));
  }

  /**
   * Parses these files in the worker now, unasked: a later `parse` of one of them with
   * the stat it was read at is answered at once (see WorkerRequest `ahead`).
   */
  async ahead(files: ParseFile[]): Promise<void> {
    // Not waited for by the process: a build that does not need them exits meanwhile.
    if (files.length > 0) await this.#request((id) => ({ kind: "ahead", id, files }), false);
  }

  /** How many files parsed ahead have answered a `parse` so far. */
  get aheadUsed(): number {
    return this.#aheadUsed;
  }

  /** Parses files in the worker; rejects if the worker failed. */
  parse(files: ParseFile[]): Promise<WorkerResult[]> {
    return this.#request((id) => ({ kind: "parse", id, files }));
  }

  /** Sends a request; `ref`: the worker keeps the process alive until it is answered. */
  #request(make: (id: number) => WorkerRequest, ref = true): Promise<WorkerResult[]> {
    if (this.#failed) return Promise.reject(this.#failed);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, ref });
      if (ref && this.#refs++ === 0) this.#worker.ref();
      this.#worker.postMessage(make(id));
    });
  }

  #fail(error: Error): void {
    this.#failed ??= error;
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
    this.#refs = 0;
    this.#worker.unref();
  }

  close(): void {
    this.#fail(new Error("the session's tagger was closed"));
    this.#worker.terminate();
  }
}
