// A session's tagger: one worker kept for the session, its grammars compiled
// ahead (the chat files' languages, soon after a map is returned), that parses
// the few files an edit changes. Compiling a tags query costs 40–90 ms (more on a
// busy machine) and would otherwise fall on the next map after the first edit.
import type { GrammarAssets } from "../../grammars/runtime.ts";
import type { WorkerReply, WorkerRequest, WorkerResult } from "./worker.ts";

type ParsedFile = { abs: string; rel: string; lang: string };

export class SessionTagger {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (results: WorkerResult[]) => void; reject: (error: Error) => void }>();
  #nextId = 0;
  #failed: Error | null = null;

  /** Starts the worker; it keeps the process alive only while a request is pending. */
  constructor(entry: string, assets: GrammarAssets) {
    this.#worker = new Worker(entry);
    this.#worker.unref();
    this.#worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const waiting = this.#pending.get(event.data.id);
      this.#pending.delete(event.data.id);
      if (this.#pending.size === 0) this.#worker.unref();
      waiting?.resolve(event.data.results);
    };
    this.#worker.onerror = (event) => this.#fail(new Error(event.message || "worker error"));
    this.#worker.postMessage({ kind: "init", assets } satisfies WorkerRequest);
  }

  get failed(): boolean {
    return this.#failed !== null;
  }

  /** Compiles these languages' grammars in the worker, off this thread. */
  async preload(langs: readonly string[]): Promise<void> {
    if (langs.length > 0) await this.#request((id) => ({ kind: "load", id, langs: [...langs] }));
  }

  /** Parses files in the worker; rejects if the worker failed. */
  parse(files: ParsedFile[]): Promise<WorkerResult[]> {
    return this.#request((id) => ({ kind: "parse", id, files }));
  }

  #request(make: (id: number) => WorkerRequest): Promise<WorkerResult[]> {
    if (this.#failed) return Promise.reject(this.#failed);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.ref();
      this.#worker.postMessage(make(id));
    });
  }

  #fail(error: Error): void {
    this.#failed ??= error;
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
    this.#worker.unref();
  }

  close(): void {
    this.#fail(new Error("the session's tagger was closed"));
    this.#worker.terminate();
  }
}
