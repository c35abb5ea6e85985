import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { memoryCacheStore } from "../../core/edit/cache-store.ts";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { languageFor } from "../../grammars/languages.ts";
import { generateRepo, type GeneratedRepo } from "../../scripts/gen-repo.ts";
import { CACHE_VERSION, TagCache } from "./cache.ts";
import { importEdges, listingIds, mayHaveRank, planColdScan, prescanResolver, readHead, type ImportEdges } from "./cold.ts";
import type { RankFile } from "./graph.ts";
import { rankDefinitions, rankFile } from "./rank.ts";
import { seededRandom } from "../eval/history.ts";
import { ImportResolver } from "./imports.ts";
import { buildRepoMap, type RepoMapInput } from "./map.ts";
import { testInput } from "../../tests/support/repomap-input.ts";
import { parseInBackground, prescanInPool, segmentCuts, statFiles } from "./scan.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function generated(count: number): { root: string; repo: GeneratedRepo } {
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-cold-"));
  dirs.push(root);
  return { root, repo: generateRepo(root, count, 7) };
}

function input(root: string, files: readonly string[], cache: TagCache, overrides: Partial<RepoMapInput> = {}): RepoMapInput {
  return testInput(root, files, cache, { workers: 1, ...overrides });
}

const tags = () => new TagCache(memoryCacheStore(CACHE_VERSION));

/** The files a map shows with an excerpt (a `path:` line followed by excerpt lines). */
function shownFiles(text: string): Set<string> {
  const shown = new Set<string>();
  const lines = text.split("\n");
  for (let i = 0; i + 1 < lines.length; i++) if (lines[i]!.endsWith(":") && /^[│⋮]/.test(lines[i + 1]!)) shown.add(lines[i]!.slice(0, -1));
  return shown;
}

test("a cold first map parses the chat file's imported neighbours first and shows what a full parse shows of them; the rest waits", async () => {
  const { root, repo } = generated(400);
  const chat = repo.files.find((f) => (repo.imports.get(f)?.length ?? 0) >= 3)!;
  const imported = new Set(repo.imports.get(chat)!.map((i) => i.file));
  const cold = await buildRepoMap(input(root, repo.files, tags(), { chatFiles: [chat], coldFirst: 0 }));
  expect(cold.provisional).toBe(true);
  expect(cold.pending.length).toBeGreaterThan(200);
  const pending = new Set(cold.pending.map((e) => e.path));
  for (const file of imported) expect(pending.has(file)).toBe(false);
  expect(pending.has(chat)).toBe(false);
  expect(cold.stats.parsed).toBeLessThan(repo.files.length / 2);
  // Every imported file the full map shows, the cold map shows too.
  const full = await buildRepoMap(input(root, repo.files, tags(), { chatFiles: [chat] }));
  expect(full.pending).toEqual([]);
  const fullImported = [...shownFiles(full.text)].filter((f) => imported.has(f));
  expect(fullImported.length).toBeGreaterThan(0);
  const coldShown = shownFiles(cold.text);
  expect(fullImported.filter((f) => !coldShown.has(f))).toEqual([]);
  // Files not parsed yet show no definitions.
  for (const file of coldShown) expect(pending.has(file)).toBe(false);
});

test("the background parse fills the cache: the next build is warm and is the full map", async () => {
  const { root, repo } = generated(300);
  const chat = repo.files.find((f) => (repo.imports.get(f)?.length ?? 0) >= 2)!;
  const cache = tags();
  const cold = await buildRepoMap(input(root, repo.files, cache, { chatFiles: [chat], coldFirst: 0 }));
  expect(cold.pending.length).toBeGreaterThan(0);
  // Not cached under the state's key: the next build does not take the provisional map for the full one.
  const background = parseInBackground(cold.pending, { root, cache, assets: async () => EMBEDDED_ASSETS, workers: 2 });
  await background.hold();
  expect(background.stored).toBe(cold.pending.length);
  const warm = await buildRepoMap(input(root, repo.files, cache, { chatFiles: [chat], coldFirst: 0 }));
  expect(warm.stats.parsed).toBe(0);
  expect(warm.pending).toEqual([]);
  expect(warm.provisional).toBe(false);
  const full = await buildRepoMap(input(root, repo.files, tags(), { chatFiles: [chat], reuse: "none" }));
  expect(warm.text).toBe(full.text);
});

test("below the threshold a cold build parses everything, as before", async () => {
  const { root, repo } = generated(120);
  const result = await buildRepoMap(input(root, repo.files, tags(), { coldFirst: 10_000 }));
  expect(result.pending).toEqual([]);
  expect(result.provisional).toBe(false);
});

test("a cancelled background parse stops and settles; what it stored stays valid", async () => {
  const { root, repo } = generated(300);
  const cache = tags();
  const cold = await buildRepoMap(input(root, repo.files, cache, { coldFirst: 0 }));
  const background = parseInBackground(cold.pending, { root, cache, assets: async () => EMBEDDED_ASSETS, workers: 1 }, 60_000);
  expect(background.started).toBe(false);
  background.cancel();
  await background.done;
  expect(background.stored).toBe(0);
  const next = await buildRepoMap(input(root, repo.files, cache));
  expect(next.pending).toEqual([]);
  expect(next.stats.parsed).toBe(cold.pending.length);
});

/** Files every language's import reader resolves in its own way, beside a generated repository. */
const VARIED: Record<string, string> = {
  "web/tsconfig.json": '{ "compilerOptions": { "baseUrl": ".", "paths": { "@app/*": ["src/lib/*"] } } }',
  "web/src/lib/util.ts": "export function helper() {}\nexport type Shape = {};\n",
  "web/src/lib/index.ts": 'export { helper } from "./util";\n',
  "web/src/main.ts": 'import type { Shape } from "./lib/util";\nimport { helper } from "./lib/util.js";\nimport * as lib from "@app/util";\nimport all from "./lib";\nlib.helper(all as Shape);\nconst { helper: h } = require("@app/util");\n',
  "app/__init__.py": "from .models import User\n",
  "app/models.py": "class User:\n    pass\n",
  "app/services/__init__.py": "def run():\n    pass\n",
  "app/main.py": "from app import models, services\nfrom app.services import run\nimport app.models as m\nfrom . import models as again\nm.User()\nservices.run()\n",
  "java/com/acme/util/Strings.java": "package com.acme.util;\npublic class Strings { public static String trim(String s) { return s; } }\n",
  "java/com/acme/util/Lists.java": "package com.acme.util;\npublic class Lists {}\n",
  "java/com/acme/util/notes.md": "not Java\n",
  "java/com/acme/App.java": "package com.acme;\nimport com.acme.util.*;\nimport com.acme.util.Strings;\nimport static com.acme.util.Strings.trim;\nimport com.acme.util.Lists.*;\npublic class App { String x = Strings.trim(\"a\"); }\n",
  "cs/Acme/Core/Thing.cs": "namespace Acme.Core { public class Thing {} }\n",
  "cs/Acme/App.cs": "using Acme.Core;\nusing System;\nnamespace Acme { class App { Thing t; } }\n",
  "pkg0/mod0/extra_test.go": 'package mod0\n\nimport (\n\tother "example.com/gen/pkg0/mod1"\n\t"example.com/gen/pkg0/mod0"\n)\n\nfunc TestX() { other.Run(); mod0.Go() }\n',
  "crate/Cargo.toml": '[package]\nname = "c"\n',
  "crate/src/lib.rs": "mod inner;\npub mod shapes;\nuse crate::shapes::{Circle, Square};\nuse self::inner::*;\n",
  "crate/src/inner.rs": "pub fn go() {}\n",
  "crate/src/shapes/mod.rs": "pub struct Circle;\npub struct Square;\n",
};

/** What importsOf gives for `path`, in the form of ImportEdges (targets in order, distinct names per target, every name). */
function edgesOf(edges: ImportEdges, files: readonly string[], i: number): { targets: string[]; counts: number[]; names: string } {
  const targets: string[] = [];
  const counts: number[] = [];
  for (let e = edges.start[i]!; e < edges.start[i + 1]!; e++) {
    targets.push(files[edges.target[e]!]!);
    counts.push(edges.nameCount[e]!);
  }
  return { targets, counts, names: edges.names[i]! };
}

/** A generated repository of `count` files plus the VARIED ones: its listing and the files with a language. */
function generatedWithVaried(count: number) {
  const { root, repo } = generated(count);
  for (const [path, text] of Object.entries(VARIED)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const files = statFiles(root, [...repo.files, ...Object.keys(VARIED)]).map((e) => e.path);
  const stale = statFiles(root, files).filter((e) => e.lang);
  return { root, repo, files, stale, isStale: new Set(stale.map((e) => e.path)) };
}

test("the pre-scan's import edges are importsOf's, file by file, on this thread and in workers", async () => {
  const { root, files, stale, isStale } = generatedWithVaried(500);
  const head = (path: string, maxBytes: number) => readHead(join(root, path), maxBytes);
  const here = importEdges(
    stale.map((e) => e.path),
    listingIds(files),
    prescanResolver(files, (path) => isStale.has(path), head),
  );
  let resolved = 0;
  stale.forEach((entry, i) => {
    // A fresh resolver per file: nothing remembered from other files' imports.
    const expected = prescanResolver(files, (path) => isStale.has(path), head).importsOf(entry.path);
    const names = new Set<string>();
    for (const taken of expected.values()) for (const name of taken) names.add(name);
    expect({ path: entry.path, ...edgesOf(here, files, i) }).toEqual({ path: entry.path, targets: [...expected.keys()], counts: [...expected.values()].map((s) => s.size), names: [...names].join("\n") });
    resolved += expected.size;
  });
  expect(resolved).toBeGreaterThan(stale.length * 3);
  // Every reader had something to resolve.
  const at = (path: string) => edgesOf(here, files, stale.findIndex((e) => e.path === path)).targets;
  expect(at("web/src/main.ts")).toEqual(["web/src/lib/util.ts", "web/src/lib/index.ts"]);
  expect(at("app/main.py")).toEqual(["app/__init__.py", "app/models.py", "app/services/__init__.py"]);
  expect(at("java/com/acme/App.java")).toEqual(["java/com/acme/util/Strings.java", "java/com/acme/util/Lists.java"]);
  expect(at("cs/Acme/App.cs")).toEqual(["cs/Acme/Core/Thing.cs"]);
  expect(at("crate/src/lib.rs")).toEqual(["crate/src/inner.rs", "crate/src/shapes/mod.rs"]);
  expect(at("pkg0/mod0/extra_test.go").length).toBeGreaterThan(0);
  // In two workers, chunk by chunk: the same edges.
  const pooled = await prescanInPool(stale, files, { root }, 2);
  expect(Array.from(pooled.start)).toEqual(Array.from(here.start));
  expect(Array.from(pooled.target)).toEqual(Array.from(here.target));
  expect(Array.from(pooled.nameCount)).toEqual(Array.from(here.nameCount));
  expect(pooled.names).toEqual(here.names);
});

test("a cold build cancelled as it starts rejects with the signal's reason", async () => {
  const { root, repo } = generated(300);
  const controller = new AbortController();
  const reason = new Error("stopped by the user");
  const build = buildRepoMap(input(root, repo.files, tags(), { coldFirst: 0, workers: 2, poolThreshold: 1, signal: controller.signal }));
  queueMicrotask(() => controller.abort(reason));
  await expect(build).rejects.toBe(reason);
});

test("eachImport merged is importsOf; a Java class's members imported with .* resolve to the class", () => {
  const files = Object.keys(VARIED);
  const read = (path: string) => VARIED[path] ?? null;
  const resolver = new ImportResolver({ files, read });
  for (const path of files) {
    const merged = new Map<string, Set<string>>();
    resolver.eachImport(path, (found, names) => {
      for (const file of typeof found === "string" ? [found] : found) {
        const set = merged.get(file) ?? new Set<string>();
        for (const name of names) set.add(name);
        merged.set(file, set);
      }
    });
    expect(merged).toEqual(new ImportResolver({ files, read }).importsOf(path));
  }
  // A Java class's members imported with `.*` resolve to the class (not to nothing).
  const members = { "Main.java": "import com.acme.util.Lists.*;\nclass Main {}\n", "com/acme/util/Lists.java": "package com.acme.util;\npublic class Lists {}\n", "com/acme/util/README.md": "" };
  expect([...new ImportResolver({ files: Object.keys(members), read: (path) => members[path as keyof typeof members] ?? null }).importsOf("Main.java").keys()]).toEqual(["com/acme/util/Lists.java"]);
});

test("the parse pool cuts its queue at a change of language when one is within a quarter of a segment", () => {
  const queue = (spec: [string, number][]) => spec.flatMap(([lang, n]) => Array<string>(n).fill(lang));
  // 70 JavaScript and 58 TypeScript files (a first map's in node_modules/openai): one grammar per worker.
  expect(segmentCuts(queue([["javascript", 70], ["typescript", 58]]), 2)).toEqual([0, 70, 128]);
  expect(segmentCuts(queue([["a", 30], ["b", 30], ["c", 30], ["d", 30]]), 3)).toEqual([0, 30, 90, 120]);
  // No change of language near: even cuts.
  expect(segmentCuts(queue([["go", 10], ["python", 100], ["ts", 10]]), 2)).toEqual([0, 60, 120]);
  expect(segmentCuts(queue([["ts", 100]]), 2)).toEqual([0, 50, 100]);
});

test("a widely imported chat file's importers are parsed first only up to the budget's bytes; what the chat imports always", () => {
  const text: Record<string, string> = {
    "src/core.ts": 'import { dep } from "./dep";\nexport function core() { return dep(); }\n',
    "src/dep.ts": 'import { leaf } from "./leaf";\nexport function dep() { return leaf(); }\n',
    "src/leaf.ts": "export function leaf() { return 1; }\n",
  };
  // 60 files of 2,000 bytes importing the chat file (a budget of 100 tokens wants 20,000 bytes).
  for (let i = 0; i < 60; i++) text[`src/users/user${i}.ts`] = `import { core } from "../core";\nexport const u${i} = core();\n${"// padding\n".repeat(160)}`.slice(0, 2000);
  const files = Object.keys(text);
  const stale = files.map((path) => ({ path, mtime: 1, size: text[path]!.length, lang: languageFor(path) }));
  const plan = planColdScan(stale, { files, chatFiles: ["src/core.ts"], budget: 100, head: (path, max) => text[path]?.slice(0, max) ?? null, read: (path) => text[path] ?? null });
  const now = plan.now.map((e) => e.path);
  expect(now.slice(0, 3)).toEqual(["src/core.ts", "src/dep.ts", "src/leaf.ts"]);
  // Importers until 20,000 bytes, then by rank until 48 files or 40,000 bytes (never past it): not all 60.
  const bytes = plan.now.reduce((sum, e) => sum + e.size, 0);
  expect(bytes).toBeGreaterThanOrEqual(20_000);
  expect(bytes).toBeLessThanOrEqual(40_000);
  expect(plan.later.length).toBeGreaterThan(10);
  // With a chat file, the files left for later have no rank: their imported names are left out.
  for (const entry of plan.later) expect(plan.prescanned.get(entry.path)?.refs.length).toBe(0);
  // Without one (a uniform ranking), each keeps the one name it imports; and a file whose path names a mentioned identifier keeps its own.
  const uniform = planColdScan(stale, { files, chatFiles: [], budget: 100, head: (path, max) => text[path]?.slice(0, max) ?? null, read: (path) => text[path] ?? null });
  for (const entry of uniform.later) expect(uniform.prescanned.get(entry.path)?.refs.length).toBe(3);
  const later = plan.later[0]!.path;
  const mentioned = planColdScan(stale, { files, chatFiles: ["src/core.ts"], mentionedIdents: [later.slice(later.lastIndexOf("/") + 1, -3)], budget: 100, head: (path, max) => text[path]?.slice(0, max) ?? null, read: (path) => text[path] ?? null });
  expect(mentioned.prescanned.get(later)?.refs.length).toBe(3);
});

test("leaving out the references of files that can have no rank keeps the ranking: the same definitions, in the same order but for the last few (a rounding apart)", () => {
  // Parsed files defining names and referencing each other, and many more files not parsed
  // yet, each referencing some of those names (as the pre-scan describes them).
  const random = seededRandom(11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const names = Array.from({ length: 60 }, (_, i) => `name${i}`);
  const parsed: RankFile[] = Array.from({ length: 40 }, (_, f) => {
    const defs = [names[f]!, names[(f * 7) % 60]!].map((name, i) => ({ name, line: i + 1 }));
    const refs = new Map<string, number>();
    for (let i = 0; i < 5; i++) refs.set(pick(names), 1 + Math.floor(random() * 3));
    return rankFile(`src/parsed${f}.ts`, defs, refs);
  });
  const unparsedNames = Array.from({ length: 400 }, () => Array.from({ length: 6 }, () => pick([...names, "elsewhere", "unknown"])));
  const unparsed = (keep: (path: string) => boolean) =>
    unparsedNames.map((taken, f) => {
      const path = `lib/file${f}.ts`;
      return rankFile(path, [], new Map(keep(path) ? taken.map((name) => [name, 1]) : []));
    });
  for (const request of [
    { chatFiles: new Set(["src/parsed3.ts"]), mentionedFiles: new Set<string>(), mentionedIdents: new Set<string>() },
    { chatFiles: new Set(["src/parsed3.ts", "src/parsed9.ts"]), mentionedFiles: new Set(["lib/file7.ts"]), mentionedIdents: new Set(["file12", "name5"]) },
  ]) {
    const keep = mayHaveRank({ chatFiles: [...request.chatFiles], mentionedFiles: [...request.mentionedFiles], mentionedIdents: [...request.mentionedIdents] });
    expect(keep("lib/file7.ts")).toBe(request.mentionedFiles.has("lib/file7.ts"));
    // Every definition in rank order (the files after them, listed by name only, are a map's tail: a file without
    // rank comes there by path either way, among the ranked graph's files or after them).
    const rank = (files: RankFile[]) =>
      rankDefinitions({ files, ...request, allFiles: files.map((f) => f.path), limit: 500 })
        .filter((e) => e.line !== undefined)
        .map((e) => `${e.path}:${e.name}:${e.line}`);
    const all = rank([...parsed, ...unparsed(() => true)]);
    expect(all.length).toBeGreaterThan(60);
    const kept = rank([...parsed, ...unparsed(keep)]);
    // The same definitions; in the same order down to the last few, whose ranks are a rounding apart (the
    // iteration stops within its tolerance of the same ranks, from a start that gave the unranked files some).
    expect([...kept].sort()).toEqual([...all].sort());
    expect(kept.slice(0, 60)).toEqual(all.slice(0, 60));
  }
});

test("a head read until its known size is the head read to its end: byte order mark, bad bytes, a grown file, a link", () => {
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-head-"));
  dirs.push(root);
  const files: Record<string, Uint8Array> = {
    "plain.ts": new TextEncoder().encode('import { a } from "./a";\n'),
    "bom.py": new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("import os\n")]),
    "bad.go": new Uint8Array([...new TextEncoder().encode('import "x"\n// '), 0xff, 0xc3, 0x28, 0xe2, 0x82, 10]),
    "wide.rs": new TextEncoder().encode(`use crate::a;\n// ${"é漢".repeat(40)}\n`),
    "long.java": new TextEncoder().encode(`import a.B;\n${"// filler line\n".repeat(100)}`),
  };
  for (const [path, bytes] of Object.entries(files)) writeFileSync(join(root, path), bytes);
  symlinkSync(join(root, "plain.ts"), join(root, "link.ts"));
  for (const [path, bytes] of Object.entries(files)) {
    const stepped = readHead(join(root, path), 200);
    expect(stepped).not.toBeNull();
    // The size from a stat: the read ends there (or at the limit, as "long.java"'s does).
    expect(readHead(join(root, path), 200, bytes.length)).toBe(stepped!);
    // The file grew since its stat: read on, as without a size.
    expect(readHead(join(root, path), 200, 10)).toBe(stepped!);
  }
  expect(readHead(join(root, "bom.py"), 200, files["bom.py"]!.length)).toBe("import os\n");
  expect(readHead(join(root, "link.ts"), 200, files["plain.ts"]!.length)).toBeNull();
  expect(readHead(join(root, "link.ts"), 200)).toBeNull();
});

test("a plan read from only the files it needs is the plan read from every file's imports, and reads a few of them", () => {
  const { root, files, stale, isStale } = generatedWithVaried(900);
  const read = (path: string) => readHead(join(root, path), 1 << 20);
  let heads = 0;
  const head = (path: string, maxBytes: number) => {
    if (isStale.has(path)) heads++;
    return readHead(join(root, path), maxBytes);
  };
  const whole = importEdges(
    stale.map((e) => e.path),
    listingIds(files),
    prescanResolver(files, (path) => isStale.has(path), head),
  );
  const plain = (plan: ReturnType<typeof planColdScan>) => plan && { now: plan.now.map((e) => e.path), later: plan.later.map((e) => e.path), prescanned: [...plan.prescanned].map(([path, file]) => [path, Array.from(file.refs)]) };
  const tagged = stale.map((e) => e.path);
  const chats = [[tagged[1]!], [tagged[500]!], ["web/src/main.ts"], ["app/main.py", "java/com/acme/App.java"], ["crate/src/lib.rs"], ["pkg0/mod0/extra_test.go"], []];
  let fewReads = 0;
  for (const chatFiles of chats) {
    for (const budget of [100, 2048]) {
      for (const mentionedIdents of [[], ["util", "models"]]) {
        const base = { files, chatFiles, mentionedIdents, budget, read };
        const expected = plain(planColdScan(stale, { ...base, head, edges: whole }));
        heads = 0;
        const lazy = planColdScan(stale, { ...base, head });
        expect({ chatFiles, budget, mentionedIdents, ...plain(lazy) }).toEqual({ chatFiles, budget, mentionedIdents, ...expected });
        if (heads < stale.length / 4) fewReads++;
        // Asked to leave every file's imports to workers: the same plan, or null when it needs them all.
        const elsewhere = planColdScan(stale, { ...base, head, wholeElsewhere: true });
        if (elsewhere) expect(plain(elsewhere)).toEqual(expected);
        else expect(heads).toBeGreaterThanOrEqual(stale.length);
        // With no chat file and nothing mentioned, every file's names are needed.
        if (chatFiles.length === 0 && mentionedIdents.length === 0) expect(elsewhere).toBeNull();
      }
    }
  }
  // Most plans (a chat file whose neighbours fill the budget) read a few files' imports, not every file's.
  expect(fewReads).toBeGreaterThanOrEqual(4);
});
