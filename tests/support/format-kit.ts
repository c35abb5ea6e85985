// A real kit for the formats' unit tests, assembled from coder's own core modules
// (matcher, reports, file store) rather than mocks: the same pieces main.ts injects.
import { openCacheStore } from "../../core/edit/cache-store.ts";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { FormatError } from "../../core/errors.ts";
import { DEFAULT_MAX_FILE_BYTES, FileStore } from "../../core/edit/files.ts";
import { capReader, kitFiles, kitProcesses } from "../../core/boot/kit.ts";
import { matcher } from "../../core/edit/matcher.ts";
import { fittedSize, mediaTokens, mediaTypeOfFile } from "../../core/chat/parts.ts";
import type { EditFormat, Kit, ModelReply, ParseContext, Plugin, PluginObject } from "../../core/plugin.ts";
import { resolveModelPath } from "../../core/edit/paths.ts";
import { reports } from "../../core/edit/reports.ts";
import { formatHelpers } from "../../core/edit/search-replace.ts";
import { outputFolderAt, readState, replaceNamedFile, STATE_READ_BYTES, stateFolder, statePath, writeState } from "../../core/edit/state.ts";

/** A kit over `root` (a fresh temp dir by default). */
export function testKit(root: string = mkdtempSync(join(tmpdir(), "coder-fmt-"))): Kit {
  const store = new FileStore(root);
  return {
    apiVersion: 2,
    version: "0.0.0-test",
    options: { get: (spec) => spec.default as never },
    ui: { confirm: async () => false, select: async (_q, _c, o) => o?.default ?? null, input: async (_q, o) => o?.default ?? null },
    root,
    cwd: root,
    matcher,
    reports,
    formats: formatHelpers(matcher),
    FormatError,
    tool: (tool) => tool,
    tokens: { count: (text) => Math.ceil(text.length / 4) },
    media: { typeOf: mediaTypeOfFile, fit: (width, height, rules) => fittedSize(width, height, rules), tokens: mediaTokens },
    files: kitFiles(root, root, {
      files: {
        read: async (path) => store.read(path),
        list: async () => [],
        absolute: (path) => join(root, path),
        readBytes: capReader(root, DEFAULT_MAX_FILE_BYTES),
      },
    }),
    diff: { unified: (path, before, after) => `--- ${path}\n+++ ${path}\n-${before}\n+${after}\n` },
    ...kitProcesses(root),
    run: async () => ({ code: 0, stdout: "", stderr: "" }),
    log: { debug() {}, info() {}, warn() {}, error() {} },
    outputFolder: (path) => outputFolderAt(resolve(root, path)),
    writeOutput: (path, data) => replaceNamedFile(resolve(root, path), data),
    cacheDir: (plugin) => stateFolder(root, `cache/${plugin}`),
    cache: (namespace, options) => openCacheStore(root, namespace, { version: options?.version, warn: () => {} }),
    state: {
      write: (path, data) => writeState(root, path, data),
      file: (path, siblings) => statePath(root, path, siblings),
      read: (path, maxBytes) => readState(root, path, maxBytes ?? STATE_READ_BYTES),
    },
    modelInfo: () => {
      throw new Error("no models in format tests");
    },
    complete: async () => {
      throw new Error("no models in format tests");
    },
    transcribe: async () => {
      throw new Error("no models in format tests");
    },
  };
}

/** The named format of a plugin module, instantiated with `kit`. */
export async function loadFormat(plugin: Plugin, name: string, kit: Kit = testKit()): Promise<EditFormat> {
  const obj: PluginObject = typeof plugin === "function" ? await plugin(kit) : plugin;
  const format = obj.formats?.find((f) => f.name === name);
  if (!format) throw new Error(`no format ${name}`);
  return format;
}

/** A temp repository with these files, a store over it and a parse context for the chat. */
export function tempRepo(files: Record<string, string | Uint8Array>, chatFiles: readonly string[] = Object.keys(files)) {
  const root = mkdtempSync(join(tmpdir(), "coder-repo-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const store = new FileStore(root);
  const ctx: ParseContext = {
    fence: ["```", "```"],
    chatFiles,
    resolvePath: (raw) => resolveModelPath(raw, chatFiles, Object.keys(files)),
  };
  return { root, store, ctx, kit: testKit(root) };
}

export const textReply = (text: string): ModelReply => ({ text, toolCalls: [], finishReason: "stop" });

/** Parse, apply to a staged workspace and write: what the engine does with one reply. */
export async function runReply(format: EditFormat, reply: ModelReply, repo: ReturnType<typeof tempRepo>, opts: { dryRun?: boolean } = {}) {
  const parsed = format.parse(reply, repo.ctx);
  const ws = repo.store.workspace(repo.ctx.chatFiles);
  const outcomes = await format.apply(parsed.edits, ws);
  const written = await repo.store.writeAll(ws.changes(), opts);
  return { parsed, outcomes, written, report: format.report(outcomes, { fence: repo.ctx.fence, appliedCount: outcomes.filter((o) => o.status === "applied").length }) };
}
