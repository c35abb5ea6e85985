// Worker of the repo map's cold build: parses batches of files and posts their
// encoded tags back. Built as an extra entrypoint of the compiled binary.
import { lstatSync } from "node:fs";
import { GrammarLoader, type GrammarAssets } from "../../grammars/runtime.ts";
import { LANGUAGES } from "../../grammars/languages.ts";
import { untagged } from "./filter.ts";
import { tagSource } from "./parse.ts";

declare const self: Worker;

export type WorkerRequest =
  | { kind: "init"; assets: GrammarAssets }
  | { kind: "parse"; id: number; files: { abs: string; rel: string; lang: string }[]; stat?: boolean }
  /** Compile these languages' grammars and queries now (a session's tagger, ahead of the edits); answered with no results. */
  | { kind: "load"; id: number; langs: string[] };

export interface WorkerResult {
  rel: string;
  skipped: string;
  sig: string;
  defs: string;
  names: string;
  refs: Uint8Array;
  /**
   * With `stat` requested: the file's mtime and size, the same just before and
   * just after it was read (absent when it changed meanwhile: the tags are then
   * not stored, as no stat is known to match the text they came from).
   */
  mtime?: number;
  size?: number;
}

export type WorkerReply = { kind: "done"; id: number; results: WorkerResult[] };

let loader: GrammarLoader | null = null;
const specs = new Map(LANGUAGES.map((l) => [l.name, l]));

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  if (request.kind === "init") {
    loader = new GrammarLoader(request.assets);
    return;
  }
  if (request.kind === "load") {
    for (const name of request.langs) {
      const spec = specs.get(name);
      // A grammar that fails to load is reported when a file of it is parsed.
      if (spec && loader) await loader.load(spec).catch(() => {});
    }
    self.postMessage({ kind: "done", id: request.id, results: [] } satisfies WorkerReply);
    return;
  }
  const results: WorkerResult[] = [];
  for (const file of request.files) {
    const spec = specs.get(file.lang);
    try {
      if (!loader || !spec) throw new Error("worker not initialised");
      const before = request.stat ? lstatSync(file.abs, { throwIfNoEntry: false }) : undefined;
      const text = await Bun.file(file.abs).text();
      const after = request.stat ? lstatSync(file.abs, { throwIfNoEntry: false }) : undefined;
      const result: WorkerResult = { rel: file.rel, ...(await tagSource(loader, spec, text)) };
      if (before?.isFile() && after && before.mtimeMs === after.mtimeMs && before.size === after.size) {
        result.mtime = after.mtimeMs;
        result.size = after.size;
      }
      results.push(result);
    } catch (error) {
      results.push({ rel: file.rel, ...untagged(`unreadable: ${error instanceof Error ? error.message : String(error)}`) });
    }
  }
  self.postMessage({ kind: "done", id: request.id, results } satisfies WorkerReply);
};
