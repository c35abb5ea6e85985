// The repo map as a context provider ("repomap", session-stable) with /map and
// /map-refresh. It needs no model: `coder map` and --show-repo-map call it too.
import { statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import type { BudgetClaim, ContextBlock, ContextBudget, Kit, Plugin, PluginObject, SubcommandContext, TurnContext } from "../../core/plugin.ts";
import type { GrammarAssets } from "../../grammars/runtime.ts";
import { CACHE_NAMESPACE, CACHE_VERSION, TagCache } from "./cache.ts";
import { buildPreparedMap, prepareRepoMap, type RepoMapInput } from "./map.ts";
import { MapMemory } from "./memory.ts";
import { SHARED_STAT_FILES, StatHelper, type SharedStatCounts } from "./stat.ts";
import { parseInBackground, reparseInBackground, type BackgroundParse, type BackgroundReparse } from "./scan.ts";
import { MAP_MULTIPLIER_NO_FILES, MAP_REFRESH, MAP_SUBCOMMAND, MAP_TOKENS, REPOMAP_OPTIONS } from "./options.ts";

export type RefreshMode = (typeof MAP_REFRESH.values)[number];

/**
 * The map's tokens for a turn from the kernel's budget: with no files in the chat the map is
 * the model's only orientation, so it grows by the multiplier into the window's spare room.
 */
export function mapTokensFor(budget: ContextBudget, chatFileCount: number, multiplierNoFiles: number): number {
  if (chatFileCount > 0 || budget.tokens <= 0) return budget.tokens;
  return Math.max(budget.tokens, Math.min(Math.floor(budget.tokens * multiplierNoFiles), budget.tokens + budget.spare));
}

/** The map's claim on the context window: `--map-tokens` when set (0: off), else 1/8 of the window within 1,024-4,096 tokens. */
export const MAP_BUDGET = { priority: 10, option: MAP_TOKENS, share: { fraction: 1 / 8, min: 1024, max: 4096 } } as const satisfies BudgetClaim;

export function mapPreamble(hasChatFiles: boolean): string {
  return hasChatFiles
    ? "Map of the other files in this repository: the definitions most relevant to the chat, with the lines around them that show where they sit. These files are read-only here; to change one, ask for it to be added to the chat first.\n"
    : "Map of this repository: its most relevant definitions, with the lines around them that show where they sit. These files are read-only here; to change one, ask for it to be added to the chat first.\n";
}

/**
 * From this many files without cached tags, a map does not wait for every parse:
 * the files it needs are parsed first and the rest in the background (cold.ts).
 * Below it, parsing everything costs about what choosing would save.
 */
export const COLD_FIRST_FILES = 800;

const loadAssets = async (): Promise<GrammarAssets> => (await import("../../grammars/embedded.ts")).EMBEDDED_ASSETS;

interface SessionMap {
  stateKey: string;
  text: string;
  /** Built from older tags of changed chat files: the next turn rebuilds it once from fresh tags. */
  provisional: boolean;
}

/** Per-session state: the open cache and the last map (kept while the repository and chat stay the same). */
export class RepoMapService {
  readonly #kit: Kit;
  #cache: TagCache | null = null;
  #last: SessionMap | null = null;
  #forceNext = false;
  #background: BackgroundReparse | null = null;
  /** A cold build's other files, being parsed into the cache (the provisional map stands until it is done). */
  #coldParse: BackgroundParse | null = null;
  #coldDone = true;
  /** Tags, grammars and ranks kept between this session's builds. */
  #memory = new MapMemory();
  #warmUpScheduled = false;
  /** Shares the stat of a large listing with a second thread (stat.ts), kept for the session. */
  #statHelper: StatHelper | null = null;
  /**
   * How long after a provisional map the background reparse starts: past the
   * request just sent and a quick reply (a worker compiling a grammar competes
   * for the cores), well within a real model's reply time.
   */
  backgroundDelayMs = 500;
  /** From this many files without cached tags, a build is a cold first map (COLD_FIRST_FILES). */
  coldFirstFiles = COLD_FIRST_FILES;
  /** From this many listed files, the stat is shared with a helper thread (SHARED_STAT_FILES). */
  sharedStatFiles = SHARED_STAT_FILES;
  /**
   * Whether a core is likely free for the stat helper: the machine's load (last minute) under its
   * core count. When every core is busy, two threads' lstats slow each other down (measured: 10k
   * files in 85-110 ms on two threads against 65-115 ms on one, at load 4.5 on 2 cores; 30-38
   * against 38-53 ms when quiet).
   */
  coreFree: () => boolean = () => loadavg()[0]! < availableParallelism();

  constructor(kit: Kit) {
    this.#kit = kit;
  }

  #openCache(): TagCache {
    // The kit's store: a planted link, a corrupt or a locked file each give one warning, never a crash.
    this.#cache ??= new TagCache(this.#kit.cache(CACHE_NAMESPACE, { version: CACHE_VERSION }));
    return this.#cache;
  }

  /** Whether the session's warm-up is scheduled (or done): never in a one-shot run. */
  get warmUpScheduled(): boolean {
    return this.#warmUpScheduled;
  }

  /** How the last stat shared with the helper thread went (null: no shared stat yet). */
  get sharedStat(): SharedStatCounts | null {
    return this.#statHelper?.last ?? null;
  }

  /** Whether a background reparse of changed chat files is scheduled (or done): never in a one-shot run. */
  get reparseScheduled(): boolean {
    return this.#background !== null;
  }

  /** The next map ignores every cached map (tags stay cached: they are keyed by content). */
  forceRefresh(): void {
    this.#forceNext = true;
  }

  async provide(turn: TurnContext, share: ContextBudget): Promise<ContextBlock | null> {
    // A read-only file outside the repository (an absolute path) is in no map.
    const chatFiles = [...new Set([...turn.chatFiles, ...turn.readOnlyFiles])].filter((f) => !f.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(f));
    const options = this.#kit.options;
    const budget = mapTokensFor(share, turn.chatFiles.length, options.get(MAP_MULTIPLIER_NO_FILES));
    if (budget <= 0) return null;
    const mode: RefreshMode = options.get(MAP_REFRESH);
    const forced = this.#forceNext;
    this.#forceNext = false;
    if (mode === "manual" && this.#last && !forced) return this.#block(this.#last, turn);

    // A large repository's stat is shared with a helper thread, started before the listing
    // when git's index looks large, so that it is running by the time the stat starts.
    const coreFree = this.coreFree();
    if (!this.#statHelper && coreFree && indexLooksLarge(turn.root, this.sharedStatFiles)) this.#statHelper = new StatHelper();
    // The cache is opened while git lists the files (a listing that fails is awaited below).
    const listing = this.#kit.files.list();
    listing.catch(() => {});
    const cache = this.#openCache();
    const files = await listing;
    const sharedStat = coreFree && files.length >= this.sharedStatFiles;
    if (sharedStat) this.#statHelper ??= new StatHelper();
    // Fitted in the turn's model's tokenizer (it changes with /model), and kept under its name.
    const tokenizer = this.#kit.tokens.encoding?.(turn.model);
    const input: RepoMapInput = {
      root: turn.root,
      files,
      chatFiles,
      mentionedFiles: turn.mentionedFiles,
      mentionedIdents: turn.mentionedIdents,
      budget,
      countTokens: (text) => this.#kit.tokens.count(text, tokenizer),
      tokenizer,
      read: (path) => textOf(this.#kit.files.readBytes(path)),
      cache,
      statHelper: sharedStat ? this.#statHelper : null,
      // A worker parsing ahead beside the stat, as for the stat helper: only with a core free.
      parseAhead: coreFree,
      assets: loadAssets,
      warn: (m) => this.#kit.log.warn(m),
      progress: turn.interactive ? progressBar() : undefined,
      reuse: forced || mode === "always" ? "none" : mode === "files" ? "files" : "state",
      signal: turn.signal,
      memory: this.#memory,
      // The session's first map is on the way to the first request: when only chat
      // files changed since their tags were cached, it is built from those older tags
      // (no grammar loaded now) and they are reparsed in the background once it is
      // returned; the next build uses fresh tags (a provisional map is rebuilt once).
      // Not outside a request (`coder map`, /map: message ""), where the exact map is
      // wanted, nor in manual mode, where the first map stays.
      deferChatFiles: this.#last === null && !forced && mode !== "manual" && turn.message !== "",
      coldFirst: this.coldFirstFiles,
    };
    const prepared = prepareRepoMap(input);
    // Session-stable: the same repository state, chat files and budget give the same block,
    // whatever identifiers later messages mention (mentions shape the map when it is rebuilt).
    // A cold build's provisional map stands while its background parse runs (nothing new to rank by yet).
    if (!forced && mode !== "always" && this.#last?.stateKey === prepared.stateKey && (!this.#last.provisional || !this.#coldDone)) return this.#block(this.#last, turn);
    let result;
    try {
      await this.#settleBackground(turn.signal);
      result = await buildPreparedMap(prepared);
    } catch (error) {
      // Interrupted (Ctrl-C): keep the last map, if any; the next turn builds on what was cached.
      if (turn.signal.aborted) return this.#last ? this.#block(this.#last, turn) : null;
      throw error;
    }
    this.#last = { stateKey: prepared.stateKey, text: result.text, provisional: result.provisional };
    // A one-shot run (--message, --message-file) ends after its reply, and starts no worker for
    // work that only pays off later in a session (10–25 MB resident each, for the whole wait on
    // the model): neither the reparse of changed chat files, whose text the reply is about to
    // change (their older tags stand in until a session, or a build that parses other files
    // too, reparses them), nor the warm-up for the map after an edit.
    const oneShot = turn.options.message !== undefined || turn.options.messageFile !== undefined;
    if (result.deferred.length > 0 && !oneShot) {
      this.#background = reparseInBackground(result.deferred, { root: input.root, cache: input.cache, assets: input.assets, memory: this.#memory }, this.backgroundDelayMs);
    }
    if (result.pending.length > 0) this.#parseRest(result.pending, input);
    if (!oneShot) this.#scheduleWarmUp(input);
    return this.#block(this.#last, turn);
  }

  /**
   * The files a cold build left: parsed in the background into the cache (one worker
   * per core, started once the map is returned). A newer cold build replaces a parse
   * under way (what was stored stays). When it is done, the next turn rebuilds the
   * provisional map from the full cache, once.
   */
  #parseRest(pending: Parameters<typeof parseInBackground>[0], input: RepoMapInput): void {
    this.#coldParse?.cancel();
    const parse = parseInBackground(pending, { root: input.root, cache: input.cache, assets: input.assets, memory: this.#memory }, this.backgroundDelayMs);
    this.#coldParse = parse;
    this.#coldDone = false;
    void parse.done.then(() => {
      if (this.#coldParse === parse) this.#coldDone = true;
    });
  }

  /** Waits for a cold build's background parse, keeping the process alive meanwhile (`coder map` fills the cache before it exits); false when there was none. */
  async finishBackground(): Promise<boolean> {
    if (!this.#coldParse) return false;
    await this.#coldParse.hold();
    return true;
  }

  /**
   * Once per session, soon after a map is returned (an unreferenced timer, like the
   * background reparse): the session's tagger compiles the chat files' languages
   * and the tags are read into memory, so the map after the first edit parses
   * with a compiled query and re-ranks from memory. Failures only lose that head start.
   */
  #scheduleWarmUp(input: RepoMapInput): void {
    if (this.#warmUpScheduled) return;
    this.#warmUpScheduled = true;
    const memory = this.#memory;
    const timer = setTimeout(() => {
      if (memory !== this.#memory) return;
      void input.assets().then((assets) => memory.warmUp(input.cache, assets, input.root, input.chatFiles)).catch(() => {});
    }, this.backgroundDelayMs);
    (timer as { unref?: () => void }).unref?.();
  }

  /**
   * Before a build: waits for a background reparse under way (or until the turn is
   * interrupted); one not started yet is cancelled (the build parses those files).
   */
  async #settleBackground(signal: AbortSignal): Promise<void> {
    const background = this.#background;
    if (!background) return;
    if (!background.started) {
      background.cancel();
      this.#background = null;
      return;
    }
    signal.throwIfAborted();
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([background.done, aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    if (this.#background === background) this.#background = null;
  }

  #block(map: SessionMap, turn: TurnContext): ContextBlock | null {
    if (!map.text.trim()) return null;
    return { text: mapPreamble(turn.chatFiles.length > 0) + map.text, label: "repo map" };
  }

  close(): void {
    this.#background?.cancel();
    this.#background = null;
    this.#coldParse?.cancel();
    this.#coldParse = null;
    this.#coldDone = true;
    this.#cache?.close();
    this.#cache = null;
    this.#memory.close();
    this.#memory = new MapMemory();
    this.#warmUpScheduled = false;
    this.#statHelper?.close();
    this.#statHelper = null;
  }
}

/**
 * Whether the repository at `root` looks like it has `files` files or more, by the size of a
 * plain repository's git index (an entry takes 70 bytes and its path): only a hint of when to
 * start the stat helper; the listing decides whether it is used.
 */
function indexLooksLarge(root: string, files: number): boolean {
  try {
    return statSync(join(root, ".git", "index")).size >= files * 100;
  } catch {
    return false;
  }
}

/** A one-line progress report on stderr for builds that take over a second. */
function progressBar(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  const started = Date.now();
  let shown = false;
  return (done, total) => {
    if (done >= total) {
      if (shown) process.stderr.write("\r\x1b[2K");
      return;
    }
    if (Date.now() - started < 1000) return;
    shown = true;
    const width = 30;
    const filled = Math.round((done / total) * width);
    process.stderr.write(`\r\x1b[2Krepo map: [${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} files`);
  };
}

/** The text of a capped read, or null when it was refused. */
function textOf(read: { ok: true; bytes: Uint8Array } | { ok: false }): string | null {
  return read.ok ? new TextDecoder().decode(read.bytes) : null;
}


/** `coder map [FILE ...]` / `--show-repo-map`: the map for these chat files, outside any request. */
async function printMap(service: RepoMapService, files: readonly string[], cli: SubcommandContext): Promise<number> {
  const { block, budget } = await cli.context(PROVIDER, files);
  cli.print(block?.text ? block.text : `(the repo map is empty)${budget.tokens <= 0 ? " (the map is off: --map-tokens is 0)" : ""}`);
  // A cold map was printed before every file was parsed: fill the cache before exiting, and
  // store the full map, so that the next run is warm.
  if (await service.finishBackground()) await cli.context(PROVIDER, files);
  return 0;
}

/** The context provider's name, also what /map and `coder map` ask the kernel for. */
const PROVIDER = "repomap";

export default ((kit: Kit): PluginObject => {
  const service = new RepoMapService(kit);
  return {
    apiVersion: 2,
    name: "repomap",
    options: REPOMAP_OPTIONS,
    subcommands: [{ ...MAP_SUBCOMMAND, run: (files, cli) => printMap(service, files, cli) }],
    context: [
      {
        name: PROVIDER,
        stability: "session",
        budget: MAP_BUDGET,
        provide: (turn, budget) => service.provide(turn, budget),
        banner: ({ chatFiles }, budget) => {
          const tokens = mapTokensFor(budget, chatFiles.length, kit.options.get(MAP_MULTIPLIER_NO_FILES));
          return tokens <= 0 ? "repo map: off" : `repo map: ${tokens.toLocaleString("en-US")} tokens${chatFiles.length ? "" : " (grown: no files in the chat)"}`;
        },
      },
    ],
    commands: [
      {
        name: "map",
        summary: "print the repo map for the current chat",
        run: async (_arg, session) => {
          const text = await session.refreshContext(PROVIDER);
          session.print(text || "The repo map is empty (or disabled with --map-tokens 0).");
        },
      },
      {
        name: "map-refresh",
        summary: "rebuild the repo map now (ignoring cached maps)",
        run: async (_arg, session) => {
          service.forceRefresh();
          const text = await session.refreshContext(PROVIDER);
          session.print(text ? `The repo map was refreshed (${kit.tokens.count(text, kit.tokens.encoding?.(session.model))} tokens).` : "The repo map is empty.");
        },
      },
    ],
  };
}) satisfies Plugin;
