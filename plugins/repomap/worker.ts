// Worker of the repo map's cold build: parses batches of files and posts their
// encoded tags back. Built as an extra entrypoint of the compiled binary.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { GrammarLoader, type GrammarAssets } from "../../grammars/runtime.ts";
import { LANGUAGES } from "../../grammars/languages.ts";
import { untagged } from "./filter.ts";
import { tagSource } from "./parse.ts";
import type { ImportEdges } from "./cold.ts";
import type { ImportResolver } from "./imports.ts";

declare const self: Worker;

export type WorkerRequest =
  | { kind: "init"; assets: GrammarAssets }
  | { kind: "parse"; id: number; files: { abs: string; rel: string; lang: string }[]; stat?: boolean }
  /** Compile these languages' grammars and queries now (a session's tagger, ahead of the edits); answered with no results. */
  | { kind: "load"; id: number; langs: string[] }
  /**
   * The cold map's pre-scan (cold.ts): the listing, and the stale files as listing ids in
   * their order (read by their heads); then chunks of those, by position, answered with
   * their import edges.
   */
  | { kind: "prescan-init"; root: string; files: string; stale: Int32Array; sizes: Float64Array }
  | { kind: "prescan"; id: number; from: number; to: number };

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

/** The answer to a `prescan` request. */
export type PrescanReply = { kind: "prescanned"; id: number } & ImportEdges;

let loader: GrammarLoader | null = null;
let prescan: Promise<{ files: string[]; stale: Int32Array; ids: Map<string, number>; resolver: ImportResolver; importEdges: typeof import("./cold.ts").importEdges }> | null = null;
const specs = new Map(LANGUAGES.map((l) => [l.name, l]));

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  if (request.kind === "init") {
    loader = new GrammarLoader(request.assets);
    return;
  }
  if (request.kind === "prescan-init") {
    const { root, stale } = request;
    // Imported here: a worker that only parses does not load the import resolver.
    prescan = import("./cold.ts").then(({ importEdges, listingIds, prescanResolver, readHead }) => {
      const files = request.files === "" ? [] : request.files.split("\n");
      // Each stale file's size (from its stat) by listing id; -1: not stale.
      const sizes = new Float64Array(files.length).fill(-1);
      stale.forEach((id, i) => (sizes[id] = request.sizes[i]!));
      const ids = listingIds(files);
      const sizeOf = (path: string) => sizes[ids.get(path) ?? -1] ?? -1;
      const resolver = prescanResolver(
        files,
        (path) => sizeOf(path) >= 0,
        (path, maxBytes) => {
          const size = sizeOf(path);
          return readHead(join(root, path), maxBytes, size >= 0 ? size : undefined);
        },
      );
      return { files, stale, ids, importEdges, resolver };
    });
    return;
  }
  if (request.kind === "prescan") {
    // Messages are handled as they come: a chunk may arrive while the import above is under way.
    const state = await prescan;
    if (!state) throw new Error("pre-scan not initialised");
    const paths: string[] = [];
    for (let i = request.from; i < request.to; i++) paths.push(state.files[state.stale[i]!]!);
    const edges = state.importEdges(paths, state.ids, state.resolver);
    self.postMessage({ kind: "prescanned", id: request.id, ...edges } satisfies PrescanReply, [edges.start.buffer as ArrayBuffer, edges.target.buffer as ArrayBuffer, edges.nameCount.buffer as ArrayBuffer]);
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
