// Worker of the repo map's cold build: parses batches of files and posts their
// encoded tags back. Built as an extra entrypoint of the compiled binary.
import { join } from "node:path";
import { GrammarLoader, type GrammarAssets } from "../../grammars/runtime.ts";
import { LANGUAGES } from "../../grammars/languages.ts";
import { untagged } from "./filter.ts";
import { tagSource } from "./parse.ts";
import { lstatListed, readListedText } from "./stat-path.ts";
import type { ImportEdges } from "./cold.ts";
import type { ImportResolver } from "./imports.ts";

declare const self: Worker;

/** A file to parse; with its stat as the asker has it, a result parsed ahead at that stat may answer (see `ahead`). */
export interface ParseFile {
  abs: string;
  rel: string;
  lang: string;
  mtime?: number;
  size?: number;
}

export type WorkerRequest =
  | { kind: "init"; assets: GrammarAssets }
  /** Init with the binary's embedded grammar assets, loaded here (the asker has not loaded them yet). */
  | { kind: "init-embedded" }
  | { kind: "parse"; id: number; files: ParseFile[]; stat?: boolean }
  /**
   * Parse these files now, unasked, each under the stat taken around its read; a later
   * `parse` of the same file at the same stat is answered with that result. Answered, with
   * no results, once they are parsed.
   */
  | { kind: "ahead"; id: number; files: ParseFile[] }
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

/** `ahead`: how many of the results were parsed ahead (a `parse` request's). */
export type WorkerReply = { kind: "done"; id: number; results: WorkerResult[]; ahead?: number };

/** The answer to a `prescan` request. */
export type PrescanReply = { kind: "prescanned"; id: number } & ImportEdges;

let loader: Promise<GrammarLoader> | null = null;
/** Results parsed ahead, by absolute path, with the stat around their read (absent when the file changed meanwhile). */
const ahead = new Map<string, Promise<WorkerResult>>();
let prescan: Promise<{ files: string[]; stale: Int32Array; ids: Map<string, number>; resolver: ImportResolver; importEdges: typeof import("./cold.ts").importEdges }> | null = null;
const specs = new Map(LANGUAGES.map((l) => [l.name, l]));

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  if (request.kind === "init") {
    loader = Promise.resolve(new GrammarLoader(request.assets));
    return;
  }
  if (request.kind === "init-embedded") {
    loader = import("../../grammars/embedded.ts").then(({ EMBEDDED_ASSETS }) => new GrammarLoader(EMBEDDED_ASSETS));
    return;
  }
  if (request.kind === "ahead") {
    for (const file of request.files) ahead.set(file.abs, tagFile(file, true));
    await Promise.all(request.files.map((file) => ahead.get(file.abs)));
    self.postMessage({ kind: "done", id: request.id, results: [] } satisfies WorkerReply);
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
    const grammars = await loader;
    for (const name of request.langs) {
      const spec = specs.get(name);
      // A grammar that fails to load is reported when a file of it is parsed.
      if (spec && grammars) await grammars.load(spec).catch(() => {});
    }
    self.postMessage({ kind: "done", id: request.id, results: [] } satisfies WorkerReply);
    return;
  }
  const results: WorkerResult[] = [];
  let early = 0;
  for (const file of request.files) {
    const result = await parsedAhead(file, request.stat);
    if (result) early++;
    results.push(result ?? (await tagFile(file, request.stat)));
  }
  self.postMessage({ kind: "done", id: request.id, results, ahead: early } satisfies WorkerReply);
};

/** The result parsed ahead for this file, when it was read at the stat asked for (used once). */
async function parsedAhead(file: ParseFile, stat: boolean | undefined): Promise<WorkerResult | null> {
  const early = ahead.get(file.abs);
  if (!early || file.mtime === undefined) return null;
  ahead.delete(file.abs);
  const result = await early;
  if (result.mtime !== file.mtime || result.size !== file.size) return null;
  if (stat) return result;
  const { mtime: _mtime, size: _size, ...tags } = result;
  return tags;
}

/** One file's tags; with `stat`, the file's mtime and size when they were the same before and after its read. */
async function tagFile(file: ParseFile, stat: boolean | undefined): Promise<WorkerResult> {
  const spec = specs.get(file.lang);
  try {
    const grammars = await loader;
    if (!grammars || !spec) throw new Error("worker not initialised");
    const before = stat ? lstatListed(file.abs) : undefined;
    const text = readListedText(file.abs);
    const after = stat ? lstatListed(file.abs) : undefined;
    const result: WorkerResult = { rel: file.rel, ...(await tagSource(grammars, spec, text)) };
    if (before?.isFile() && after && before.mtimeMs === after.mtimeMs && before.size === after.size) {
      result.mtime = after.mtimeMs;
      result.size = after.size;
    }
    return result;
  } catch (error) {
    return { rel: file.rel, ...untagged(`unreadable: ${error instanceof Error ? error.message : String(error)}`) };
  }
}
