// Building the repo map end to end: list → stat → (cached map?) → tags (cache,
// reparse what changed) → rank → fit to the budget. The finished map is cached by
// the repository state (files, mtimes, sizes), the chat files and the budget,
// never by the words of a message.
import { join } from "node:path";
import { GRAMMAR_TABLE_VERSION } from "../../grammars/languages.ts";
import type { GrammarAssets } from "../../grammars/runtime.ts";
import type { TagCache } from "./cache.ts";
import { rankDefinitions, type RankFile, type RankedEntry } from "./rank.ts";
import { MapRenderer, estimateTokens, fitToBudget } from "./render.ts";
import { scanTags, statFiles, type ScanStats } from "./scan.ts";
import { decodeDefNames, decodeDefs, decodeRefArrays, type Definition } from "./tags.ts";
import { readFileSync } from "node:fs";

/** Bump when ranking or rendering changes, so cached maps are not reused. */
const MAP_FORMAT = 1;

export interface RepoMapInput {
  root: string;
  /** Repository-relative files (tracked, .coderignore applied). */
  files: readonly string[];
  /** Files whose full text is in the chat (editable and read-only): personalised, never shown. */
  chatFiles: readonly string[];
  mentionedFiles: readonly string[];
  mentionedIdents: readonly string[];
  /** Token budget of the map body. */
  budget: number;
  countTokens: (text: string) => number;
  cache: TagCache;
  assets: () => Promise<GrammarAssets>;
  warn: (message: string) => void;
  progress?: (done: number, total: number) => void;
  /** "state": reuse a map for the same files, mtimes, chat and budget; "files": ignore mtimes; "none": always rebuild. */
  reuse: "state" | "files" | "none";
  /** Worker count for cold builds (default: cores). */
  workers?: number;
}

export interface RepoMapResult {
  /** The map body ("" when nothing fits or the repository has no files). */
  text: string;
  tokens: number;
  fromCache: boolean;
  key: string;
  stats: ScanStats & { statMs: number; scanMs: number; rankMs: number; renderMs: number };
}

/** Root-level files that orient a reader; listed first when not already ranked. */
const IMPORTANT_FILES = new Set([
  "README", "README.md", "README.rst", "README.txt", "package.json", "pyproject.toml", "setup.py", "setup.cfg",
  "requirements.txt", "Cargo.toml", "go.mod", "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
  "Gemfile", "composer.json", "mix.exs", "Makefile", "CMakeLists.txt", "Dockerfile", "docker-compose.yml",
  "tsconfig.json", "deno.json", "pubspec.yaml", "Package.swift", "build.zig", "dune-project", "stack.yaml",
]);

export function importantFiles(files: readonly string[]): string[] {
  return files.filter((f) => IMPORTANT_FILES.has(f) || (f.startsWith(".github/workflows/") && /\.ya?ml$/.test(f))).sort();
}

/** A stat of the repository and the keys of the map it would give. */
export interface PreparedMap {
  input: RepoMapInput;
  entries: ReturnType<typeof statFiles>;
  /** Repository state + chat files + budget (no mentions): a session reuses its map while this holds. */
  stateKey: string;
  /** stateKey + mentions: the persistent map cache's key. */
  key: string;
  statMs: number;
}

/** Stats the files and computes the cache keys (what a warm run costs). */
export function prepareRepoMap(input: RepoMapInput): PreparedMap {
  const started = performance.now();
  const entries = statFiles(input.root, input.files);
  const statMs = performance.now() - started;
  const state = new Bun.CryptoHasher("sha256");
  state.update(`${MAP_FORMAT}|${GRAMMAR_TABLE_VERSION}|${input.reuse}|${input.budget}\n`);
  state.update([...new Set(input.chatFiles)].sort().join("\n") + "\n\n");
  const parts: string[] = [];
  for (const e of entries) parts.push(input.reuse === "files" ? e.path : `${e.path}\u0000${e.mtime}\u0000${e.size}`);
  state.update(parts.join("\n"));
  const stateKey = state.digest("hex");
  const full = new Bun.CryptoHasher("sha256");
  full.update(stateKey + "\n");
  full.update([...new Set(input.mentionedFiles)].sort().join("\n") + "\n\n");
  full.update([...new Set(input.mentionedIdents)].sort().join("\n"));
  return { input, entries, stateKey, key: full.digest("hex"), statMs };
}

export async function buildRepoMap(input: RepoMapInput): Promise<RepoMapResult> {
  return buildPreparedMap(prepareRepoMap(input));
}

export async function buildPreparedMap(prepared: PreparedMap): Promise<RepoMapResult> {
  const { input, entries, key, statMs } = prepared;
  const chat = new Set(input.chatFiles);
  const stats = { files: entries.length, parsed: 0, bytesParsed: 0, workers: 0, statMs, scanMs: 0, rankMs: 0, renderMs: 0 };

  if (input.reuse !== "none") {
    const cached = input.cache.getMap(key);
    if (cached !== null) {
      return { text: cached, tokens: estimateTokens(cached, input.countTokens), fromCache: true, key, stats };
    }
  }

  const scanStart = performance.now();
  const { rows, stats: scanStats } = await scanTags(entries, {
    root: input.root,
    cache: input.cache,
    assets: input.assets,
    warn: input.warn,
    progress: input.progress,
    workers: input.workers,
  });
  Object.assign(stats, scanStats);
  stats.scanMs = performance.now() - scanStart;

  const rankStart = performance.now();
  const rankFiles: RankFile[] = [];
  for (const row of rows.values()) {
    if (row.skipped || (!row.defs && !row.refs)) continue;
    const defs = decodeDefNames(row.defs);
    const refs = decodeRefArrays(row.refs);
    rankFiles.push({ path: row.path, defNames: defs.names, defLines: defs.lines, refNames: refs.names, refCounts: refs.counts });
  }
  // Scope ranges are decoded only for the files the map renders.
  const definitions = new Map<string, Definition[]>();
  const definitionsOf = (path: string): Definition[] => {
    let defs = definitions.get(path);
    if (!defs) {
      defs = decodeDefs(rows.get(path)?.defs ?? "");
      definitions.set(path, defs);
    }
    return defs;
  };
  const allFiles = entries.map((e) => e.path);
  const ranked = rankDefinitions({
    files: rankFiles,
    allFiles,
    chatFiles: chat,
    mentionedFiles: new Set(input.mentionedFiles),
    mentionedIdents: new Set(input.mentionedIdents),
  });
  const rankedPaths = new Set(ranked.filter((e) => e.line !== undefined).map((e) => e.path));
  const special: RankedEntry[] = importantFiles(allFiles)
    .filter((f) => !rankedPaths.has(f) && !chat.has(f))
    .map((path) => ({ path }));
  const specialSet = new Set(special.map((e) => e.path));
  const ordered = [...special, ...ranked.filter((e) => e.line !== undefined || !specialSet.has(e.path))];
  stats.rankMs = performance.now() - rankStart;

  const renderStart = performance.now();
  const renderer = new MapRenderer({
    text: (path) => {
      try {
        return readFileSync(join(input.root, path), "utf8");
      } catch {
        return null;
      }
    },
    definitions: definitionsOf,
  });
  const fitted = fitToBudget(ordered, input.budget, (prefix) => renderer.render(prefix, chat), input.countTokens);
  stats.renderMs = performance.now() - renderStart;

  if (input.reuse !== "none") input.cache.putMap(key, fitted.text);
  return { text: fitted.text, tokens: fitted.tokens, fromCache: false, key, stats };
}
