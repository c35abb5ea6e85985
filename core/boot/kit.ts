// The kit: the capabilities handed to every plugin (built-in or user). main.ts
// injects the real implementations (matcher, reports, tokens, file store,
// registry); plugins reach coder only through this object.
import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { createTwoFilesPatch } from "diff";
import { FormatError, UsageError } from "../errors.ts";
import { fittedSize, mediaTokens, mediaTypeOfFile } from "../chat/parts.ts";
import type { Kit, Logger, Matcher, ModelEvent, ModelReply, ModelRequest, Reports } from "../plugin.ts";
import type { Registry } from "../plugins/registry.ts";
import { ReplyAssembler } from "../chat/stream.ts";
import type { App } from "../kernel.ts";
import { readCapped } from "../edit/read.ts";
import { DEFAULT_MAX_FILE_BYTES } from "../edit/files.ts";
import { shellArgv, spawnGroup, startGroup } from "../proc/spawn.ts";
import { makeTempFolder, outputFolderAt, readState, reopenTempFolder, replaceNamedFile, STATE_READ_BYTES, stateFolder, statePath, writeState } from "../edit/state.ts";
import { globMatches } from "../edit/glob.ts";
import type { RepoIgnore } from "../edit/ignore-rules.ts";
import { formatHelpers } from "../edit/search-replace.ts";
import { cacheNamespace, openCacheStore } from "../edit/cache-store.ts";

export interface KitDeps {
  version: string;
  /** Repository root (or the current directory without git). */
  root: string;
  /** Where typed paths are relative to (default: the root). */
  cwd?: string;
  matcher: Matcher;
  reports: Reports;
  /** core/chat/tokens.ts `countTokens`. */
  countTokens(text: string, encoding?: string): number;
  /** The tokenizer encoding of the model coder was started with; o200k_base when absent (a session's current model is the caller's: Kit["tokens"]). */
  encoding?: () => string | undefined;
  /** The file reads and the listing; the kit adds globs, ignore rules and named writes on top. */
  files: BaseFiles;
  /** The gitignore-style file of paths coder leaves alone (`--ignore-file`); `.coderignore` when absent. */
  ignoreFile?: string;
  /** Every file git tracks (the listing before `--subtree-only`); `files.list` when absent. */
  listAll?: () => Promise<string[]>;
  /** In a repository: does git ignore this path (`git check-ignore`)? Absent without git: the `.gitignore` files decide. */
  gitIgnores?: (rel: string) => boolean;
  /** Adapters and model info (the registry may still be filling while plugins load). */
  registry: Pick<Registry, "adapterFor" | "modelInfo">;
  log: Logger;
  /** Environment handed to adapters (process env + the repository's `.env` API keys). */
  env: Readonly<Record<string, string | undefined>>;
  /** `--api-base` / `--api-key`, used by `complete` when the request does not set them. */
  apiBase?: string;
  apiKey?: string;
  /** `--no-verify-ssl`: false, for `complete` too (commit messages, summaries). */
  verifySsl?: boolean;
  /** An option's effective value by key; throws (a one-line message) when the key is not in the option table or options are not settled yet. */
  readOption(key: string): unknown;
  /** Who answers `kit.ui` questions (App.ui); absent or unset: nobody, every answer no. */
  ui?: App["ui"];
}

/** What a front end hands the kit for `kit.files`: reads and the listing. */
export type BaseFiles = Pick<Kit["files"], "read" | "list" | "absolute" | "readBytes">;

export function createKit(deps: KitDeps): Kit {
  const { root } = deps;
  const cwd = deps.cwd ?? root;
  return {
    apiVersion: 2,
    version: deps.version,
    options: { get: (spec) => deps.readOption(spec.key) as never },
    ui: {
      confirm: async (question, options) => (deps.ui?.confirm ? deps.ui.confirm(question, options ?? {}) : false),
      select: async <const T extends string>(question: string, choices: readonly T[], options?: { default?: T; detail?: string }) =>
        (deps.ui?.select ? deps.ui.select(question, choices, options ?? {}) : (options?.default ?? null)) as Promise<T | null> | T | null,
      input: async (question, options) => (deps.ui?.input ? deps.ui.input(question, options ?? {}) : (options?.default ?? null)),
    },
    root,
    cwd,
    matcher: deps.matcher,
    reports: deps.reports,
    formats: formatHelpers(deps.matcher),
    FormatError,
    tokens: kitTokens(deps),
    media: { typeOf: mediaTypeOfFile, fit: (width, height, rules) => fittedSize(width, height, rules), tokens: mediaTokens },
    files: kitFiles(root, cwd, deps),
    diff: { unified: (path, before, after) => createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, { context: 3 }) },
    ...kitProcesses(root),
    log: deps.log,
    writeOutput: (path, data) => replaceNamedFile(resolve(cwd, path), data),
    outputFolder: (path) => outputFolderAt(resolve(cwd, path)),
    cacheDir: (plugin) => stateFolder(root, `cache/${cacheNamespace(plugin)}`),
    cache: (namespace, options) => openCacheStore(root, namespace, { version: options?.version, warn: (m) => deps.log.warn(m) }),
    state: {
      write: (path, data) => writeState(root, path, data),
      file: (path, siblings) => statePath(root, path, siblings),
      read: (path, maxBytes) => readState(root, path, maxBytes ?? STATE_READ_BYTES),
    },
    tool: (tool) => tool,
    modelInfo: (model) => deps.registry.modelInfo(model),
    complete: (request, signal) =>
      completeRequest(deps.registry.adapterFor(request.model), {
        ...request,
        apiBase: request.apiBase ?? deps.apiBase,
        apiKey: request.apiKey ?? deps.apiKey,
        verifySsl: request.verifySsl ?? deps.verifySsl,
        env: deps.env,
        stream: true,
      }, signal ?? new AbortController().signal),
    transcribe: async (request, signal) => {
      const adapter = deps.registry.adapterFor(request.model);
      if (!adapter.transcribe) throw new UsageError(`the model adapter ${adapter.name} (serving ${request.model}) cannot transcribe speech`);
      return adapter.transcribe(
        { ...request, apiBase: request.apiBase ?? deps.apiBase, apiKey: request.apiKey ?? deps.apiKey, env: deps.env },
        signal ?? new AbortController().signal,
      );
    },
  };
}

/** The encoding of a model that names none (as core/chat/tokens.ts counts an unknown name). */
const DEFAULT_ENCODING = "o200k_base";

/** Token counts in a model's encoding: the one given, else the start model's (a session's model may be another since `/model`). */
function kitTokens(deps: KitDeps): Kit["tokens"] {
  const start = () => deps.encoding?.() ?? DEFAULT_ENCODING;
  return {
    count: (text, encoding) => deps.countTokens(text, encoding ?? start()),
    encoding: (model) => (model ? (model.encoding ?? DEFAULT_ENCODING) : start()),
  };
}

/** The kit's processes and scratch space: commands run in `root` unless told otherwise. */
export function kitProcesses(root: string): Pick<Kit, "run" | "spawn" | "start" | "which" | "tempFolder" | "reopenTempFolder" | "self"> {
  return {
    run: (command, options) => runCommand(command, { ...options, cwd: options?.cwd ?? root }),
    spawn: (argv, options) => spawnGroup(argv, { ...options, cwd: options?.cwd ?? root }),
    start: (argv, options) => startGroup(argv, { ...options, cwd: options?.cwd ?? root }),
    which: (command) => Bun.which(command),
    tempFolder: makeTempFolder,
    reopenTempFolder,
    self: selfCommand,
  };
}

/** The command that runs this coder: the compiled binary, or `bun main.ts` from the sources. */
export function selfCommand(): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs/") || main.includes("~BUN");
  return compiled ? [process.execPath] : [process.execPath, main];
}

/** `kit.files`: the front end's reads and listing, with the one glob syntax and the one set of ignore rules. */
export function kitFiles(root: string, cwd: string, deps: Pick<KitDeps, "files" | "ignoreFile" | "listAll" | "gitIgnores">): Kit["files"] {
  const { files } = deps;
  // The ignore library loads on the first question, not at start-up.
  let rules: RepoIgnore | null = null;
  const isTracked = async (rel: string) => (await (deps.listAll ?? files.list)()).includes(rel);
  return {
    ...files,
    glob: async (pattern) => {
      const clean = pattern.replace(/^\.\//, "");
      return (await files.list()).filter((path) => globMatches(clean, path));
    },
    matches: (pattern, path) => globMatches(pattern.replace(/^\.\//, ""), path.replace(/^\.\//, "")),
    ignored: async (path) => {
      const rel = relative(root, files.absolute(path)).split(sep).join("/");
      if (rel === "") return false;
      rules ??= new (await import("../edit/ignore-rules.ts")).RepoIgnore(root, deps.ignoreFile, deps.gitIgnores);
      return rules.isIgnored(rel, isTracked);
    },
  };
}

/** Collect an adapter's stream into one reply (text and tool calls assembled from deltas). */
export async function completeRequest(
  adapter: { stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> },
  request: ModelRequest,
  signal: AbortSignal,
): Promise<ModelReply> {
  const reply = new ReplyAssembler();
  for await (const event of adapter.stream(request, signal)) reply.add(event);
  return { text: reply.text, toolCalls: reply.toolCalls(), finishReason: reply.finishReason };
}

/** How runCommand runs: where, for how long, with what input, and who sees the output as it comes. */
export interface RunCommandOptions {
  cwd: string;
  timeoutMs?: number;
  input?: string;
  /** The command reads the terminal itself (`/run` in the REPL); `input` is then ignored. */
  inheritStdin?: boolean;
  /** Each chunk of stdout and stderr as it arrives (the result still holds all of it). */
  onOutput?: (text: string) => void;
  signal?: AbortSignal;
}

/**
 * Run argv directly, or a string through the platform shell, in its own process group (a
 * timeout ends the command and all it started); never throws for a non-zero exit.
 */
export async function runCommand(command: string[] | string, options: RunCommandOptions): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await spawnGroup(typeof command === "string" ? shellArgv(command) : command, options);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr + stopNote(r, options.timeoutMs) };
}

/** The line a stopped command's output ends with (a timeout or an interrupt), or "". */
export function stopNote(how: { timedOut: boolean; aborted: boolean }, timeoutMs = 0): string {
  if (how.timedOut) return `timed out after ${Number((timeoutMs / 1000).toFixed(1))} s; the command and the processes it started were stopped\n`;
  return how.aborted ? "interrupted; the command and the processes it started were stopped\n" : "";
}

/** `kit.files.readBytes`: any file (relative to `root`, or absolute) through the one capped reader. */
export function capReader(root: string, maxBytes: number): Kit["files"]["readBytes"] {
  return (path, options) => {
    const r = readCapped(resolve(root, path), { maxBytes: options?.maxBytes ?? maxBytes, name: path, capName: options?.maxBytes === undefined ? "--max-file-size" : undefined });
    return r.ok ? { ok: true, bytes: r.bytes } : { ok: false, missing: r.reason === "missing", problem: r.message };
  };
}

/**
 * `kit.files` over the plain file system, for when no file store is injected
 * (tests, tools): refuses paths outside `root`, returns null for missing or
 * binary files.
 */
export function plainFiles(root: string, list: () => Promise<string[]>, maxBytes: number = DEFAULT_MAX_FILE_BYTES): BaseFiles {
  const absolute = (path: string) => {
    const full = resolve(root, path);
    const rel = relative(root, full);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new UsageError(`${path} is outside the repository (${root})`);
    return full;
  };
  return {
    absolute,
    list,
    readBytes: capReader(root, maxBytes),
    async read(path) {
      try {
        const full = absolute(path);
        const real = realpathSync(full);
        const realRel = relative(realpathSync(root), real);
        if (realRel.startsWith("..") || isAbsolute(realRel)) return null;
        const r = readCapped(real, { maxBytes, name: path });
        if (!r.ok || r.bytes.subarray(0, 8000).includes(0)) return null;
        return new TextDecoder().decode(r.bytes);
      } catch {
        return null;
      }
    },
  };
}
