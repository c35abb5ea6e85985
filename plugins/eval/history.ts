// History tasks: real commits of the repository, read from `git log`, filtered to the kind a
// model can be asked to redo from the message alone (a few source files, a small change, a
// subject that says something), then sampled with a seed so every machine picks the same.
import { languageFor } from "../../grammars/languages.ts";

/** One commit as a task. */
export interface CommitTask {
  id: string;
  sha: string;
  parent: string;
  /** The whole message: the request. */
  message: string;
  /** Source files the commit adds or modifies: the chat files, compared after the run. */
  files: string[];
  /** Its other files (tests, docs, lock files, ...): not asked for, put in place before `--test-cmd`. */
  others: { path: string; deleted: boolean }[];
  /** Lines added plus removed in `files`. */
  changed: number;
}

/** The commits looked at by the default selection. */
export const DEFAULT_DEPTH = 500;
const MAX_FILES = 3;
const MAX_LINES = 80;
const MIN_SUBJECT_WORDS = 4;

const TEST_PATH = /(^|\/)(tests?|__tests__|spec|specs|testdata|fixtures?)\//i;
const TEST_NAME = /(\.(test|spec)\.[^/.]+$)|(_test\.[^/.]+$)|((^|\/)test_[^/]*\.py$)|(Tests?\.(java|cs|kt|scala)$)/;
const LOCK_NAME = /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|Cargo\.lock|Gemfile\.lock|poetry\.lock|uv\.lock|Pipfile\.lock|composer\.lock|go\.sum|mix\.lock|pubspec\.lock|flake\.lock)$/;
const GENERATED_NAME = /(\.min\.(js|css|mjs)$)|(\.bundle\.js$)|(\.pb\.(go|cc|h)$)|(_pb2(_grpc)?\.pyi?$)|(\.g\.dart$)|(\.generated\.\w+$)|(\.designer\.cs$)|((^|\/)(dist|build|vendor|node_modules)\/)/i;

/** A file a history task asks the model to write: source in a language coder parses, not a test, lock or generated file. */
export function isTaskFile(path: string): boolean {
  return languageFor(path) !== null && !TEST_PATH.test(path) && !TEST_NAME.test(path) && !LOCK_NAME.test(path) && !GENERATED_NAME.test(path);
}

/** The `git log` arguments whose output `parseLog` reads. */
export function logArgs(): string[] {
  return ["-c", "core.quotePath=false", "log", "--no-merges", "--no-renames", "--format=%x1e%H %P%n%B%x1f", "--raw", "--numstat", "--no-abbrev"];
}

/** Every commit of `git log logArgs()` output with its files, whether or not it qualifies (`files` is empty when a source file was deleted or is binary). */
export function parseLog(text: string): (CommitTask & { subject: string })[] {
  const out: (CommitTask & { subject: string })[] = [];
  for (const record of text.split("\x1e")) {
    if (!record.trim()) continue;
    const end = record.indexOf("\x1f");
    if (end < 0) continue;
    const head = record.slice(0, end);
    const newline = head.indexOf("\n");
    const [sha, parent] = head.slice(0, newline < 0 ? head.length : newline).split(" ");
    const message = newline < 0 ? "" : head.slice(newline + 1).trim();
    if (!sha || !parent) continue; // a root commit has no parent to start from
    const status = new Map<string, string>();
    const counts = new Map<string, number | null>();
    for (const line of record.slice(end + 1).split("\n")) {
      const raw = /^:\d+ \d+ [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*\t(.+)$/.exec(line);
      if (raw) {
        status.set(raw[2]!, raw[1]!);
        continue;
      }
      const num = /^(\d+|-)\t(\d+|-)\t(.+)$/.exec(line);
      if (num) counts.set(num[3]!, num[1] === "-" ? null : Number(num[1]) + Number(num[2]));
    }
    const files: string[] = [];
    const others: { path: string; deleted: boolean }[] = [];
    let changed = 0;
    let unusable = false;
    for (const [path, st] of status) {
      if (isTaskFile(path)) {
        const n = counts.get(path);
        if ((st !== "M" && st !== "A") || n === null || n === undefined) unusable = true;
        files.push(path);
        changed += n ?? 0;
      } else others.push({ path, deleted: st === "D" });
    }
    out.push({ id: `history:${sha}`, sha, parent, message, subject: message.split("\n")[0] ?? "", files: unusable ? [] : files.sort(), others, changed });
  }
  return out;
}

/** The default filter: 1–3 source files added or modified, at most 80 changed lines in them, a subject of 4 words or more. */
export function qualifies(commit: CommitTask & { subject: string }): boolean {
  return commit.files.length >= 1 && commit.files.length <= MAX_FILES && commit.changed <= MAX_LINES && commit.subject.trim().split(/\s+/).length >= MIN_SUBJECT_WORDS;
}

/** A small seeded generator (mulberry32): the same seed gives the same sample everywhere (scripts/gen-repo.ts uses it too). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` of `items` chosen with `seed`, kept in their original order; all of them when n is undefined or not smaller. */
export function sample<T>(items: readonly T[], n: number | undefined, seed: number): T[] {
  if (n === undefined || n >= items.length) return [...items];
  const random = seededRandom(seed);
  const index = items.map((_, i) => i);
  for (let i = index.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [index[i], index[j]] = [index[j]!, index[i]!];
  }
  return index
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i]!);
}

/** Slice `i` of `n` (1-based): every n-th task from the i-th, so slices partition the list and stay balanced. */
export function shardOf<T>(items: readonly T[], shard: [number, number] | null): T[] {
  if (!shard) return [...items];
  const [i, n] = shard;
  return items.filter((_, k) => k % n === i - 1);
}

/** `"2/4"` → [2, 4]; null with a message when it is not I/N with 1 ≤ I ≤ N. */
export function parseShard(text: string): [number, number] | string {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) return `--shard expects I/N (e.g. 2/4), got "${text}"`;
  const i = Number(m[1]);
  const n = Number(m[2]);
  if (n < 1 || i < 1 || i > n) return `--shard ${text}: I must be between 1 and N (e.g. 1/${Math.max(n, 2)})`;
  return [i, n];
}
