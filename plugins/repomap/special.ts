// Files listed by name only: the few that orient a reader (README, the package
// manifests nearest the chat files) go first, and all names together never take
// more than a small share of the budget while definitions are left to show.
import { posix } from "node:path";
import type { RankedEntry } from "./rank.ts";

/** At most this many special files are listed first. */
export const MAX_SPECIAL_FILES = 5;
/** Share of the budget that files listed by name may take while definitions remain to be shown. */
export const BARE_NAME_SHARE = 0.05;

const READMES = new Set(["README", "README.md", "README.rst", "README.txt"]);
const MANIFESTS = new Set([
  "package.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Cargo.toml", "go.mod", "pom.xml",
  "build.gradle", "build.gradle.kts", "settings.gradle", "Gemfile", "composer.json", "mix.exs", "deno.json",
  "pubspec.yaml", "Package.swift", "build.zig", "dune-project", "stack.yaml", "CMakeLists.txt",
]);
const BUILD_FILES = new Set(["Makefile", "Dockerfile", "docker-compose.yml", "tsconfig.json"]);

/**
 * The special files to list first, most relevant first: the root README, the
 * manifests nearest each chat file (a package of a monorepo), the root manifests,
 * then root build files. CI workflows are not among them: a large repository has
 * dozens, and they say little about the code.
 */
export function specialFiles(files: readonly string[], chatFiles: readonly string[]): string[] {
  // Which of the candidates are listed, in one pass over the listing (no set of every path).
  const candidates = new Set<string>([...READMES, ...MANIFESTS, ...BUILD_FILES]);
  for (const chat of chatFiles) {
    for (let dir = posix.dirname(chat); dir !== "."; dir = posix.dirname(dir)) for (const m of MANIFESTS) candidates.add(`${dir}/${m}`);
  }
  const listed = new Set<string>();
  for (const path of files) if (candidates.has(path)) listed.add(path);
  const picked: string[] = [];
  const pick = (path: string) => {
    if (listed.has(path) && !picked.includes(path) && !chatFiles.includes(path)) picked.push(path);
  };
  for (const name of READMES) pick(name);
  for (const chat of chatFiles) {
    for (let dir = posix.dirname(chat); dir !== "."; dir = posix.dirname(dir)) {
      const manifests = [...MANIFESTS].map((m) => `${dir}/${m}`).filter((p) => listed.has(p));
      if (manifests.length === 0) continue;
      manifests.forEach(pick);
      break;
    }
  }
  for (const name of MANIFESTS) pick(name);
  for (const name of BUILD_FILES) pick(name);
  return picked.slice(0, MAX_SPECIAL_FILES);
}

/** What the map renders a prefix of (renderOrder). */
export interface RenderOrder {
  /** The kept entries (special files first), then the names moved behind them. */
  entries: RankedEntry[];
  /** How many entries come first as kept. */
  kept: number;
  /** The special files not listed by name because the ranking shows definitions of theirs. */
  shown: string[];
  /** How many ranking entries the first `n` kept entries were taken from. */
  consumed(n: number): number;
}

/**
 * What the map renders a prefix of: the special files not shown with definitions first (by
 * name), then the ranking without their name-only entries, names kept within their share:
 * capBareNames over that list, in one pass (the ranking has thousands of entries).
 *
 * `shown`, when given, is which special files the whole ranking shows definitions of, for a
 * `ranked` that is only its first part: the kept entries are then the first of the kept
 * entries of the whole (whether a name is kept depends only on the entries before it).
 */
export function renderOrder(
  ranked: readonly RankedEntry[],
  files: readonly string[],
  chatFiles: readonly string[],
  budget: number,
  countTokens: (text: string) => number,
  shown?: ReadonlySet<string>,
): RenderOrder {
  const picked = specialFiles(files, chatFiles);
  let withLines: Set<string>;
  if (shown) withLines = new Set(picked.filter((f) => shown.has(f)));
  else {
    // A special file with a ranked definition is shown there.
    withLines = new Set();
    if (picked.length > 0) {
      const wanted = new Set(picked);
      for (const e of ranked) if (e.line !== undefined && wanted.has(e.path)) withLines.add(e.path);
    }
  }
  const special = new Set(picked.filter((f) => !withLines.has(f)));
  // Most rankings list no file by name: then nothing is dropped or moved, and the list is the
  // special files and the ranking as it is (no walk entry by entry over thousands).
  let bare = false;
  for (let i = 0; i < ranked.length && !bare; i++) bare = ranked[i]!.line === undefined;
  if (!bare) {
    const cap = bareNameCap(budget, countTokens);
    for (const path of special) cap.take({ path }, 0);
    const names = cap.done();
    const lead = names.kept;
    // The names kept, the ranking, then the names moved behind it.
    return {
      entries: names.entries.slice(0, lead).concat(ranked, names.entries.slice(lead)),
      kept: lead + ranked.length,
      shown: [...withLines],
      consumed: (n) => (n <= lead ? 0 : Math.min(ranked.length, n - lead)),
    };
  }
  const cap = bareNameCap(budget, countTokens);
  for (const path of special) cap.take({ path }, 0);
  if (special.size === 0) for (let i = 0; i < ranked.length; i++) cap.take(ranked[i]!, i + 1);
  else
    for (let i = 0; i < ranked.length; i++) {
      const e = ranked[i]!;
      if (e.line !== undefined || !special.has(e.path)) cap.take(e, i + 1);
    }
  return { ...cap.done(), shown: [...withLines] };
}

/**
 * The ranking with files listed by name kept within BARE_NAME_SHARE of the budget:
 * past it, they move behind every definition (shown only if all definitions fit).
 */
export function capBareNames(ordered: readonly RankedEntry[], budget: number, countTokens: (text: string) => number): RankedEntry[] {
  const cap = bareNameCap(budget, countTokens);
  for (const entry of ordered) cap.take(entry, 0);
  return cap.done().entries;
}

/** capBareNames entry by entry: `take` each in order (with how many ranking entries it took so far), then `done`. */
function bareNameCap(budget: number, countTokens: (text: string) => number) {
  const kept: RankedEntry[] = [];
  const moved: RankedEntry[] = [];
  const consumed: number[] = [];
  let spent = 0;
  const seen = new Set<string>();
  return {
    take(entry: RankedEntry, taken: number): void {
      if (entry.line !== undefined) {
        kept.push(entry);
        consumed.push(taken);
        return;
      }
      if (seen.has(entry.path)) return;
      seen.add(entry.path);
      const cost = countTokens(`\n${entry.path}\n`);
      if (spent + cost <= budget * BARE_NAME_SHARE) {
        spent += cost;
        kept.push(entry);
        consumed.push(taken);
      } else moved.push(entry);
    },
    done(): Omit<RenderOrder, "shown"> {
      return {
        entries: moved.length === 0 ? kept : kept.concat(moved),
        kept: kept.length,
        consumed: (n) => {
          let most = 0;
          for (let i = 0; i < n && i < consumed.length; i++) most = Math.max(most, consumed[i]!);
          return most;
        },
      };
    },
  };
}
