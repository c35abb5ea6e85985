import { expect, test } from "bun:test";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { languageFor } from "../../grammars/languages.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LANGUAGES } from "../../grammars/languages.ts";
import { GrammarLoader, treeSitterTagsQuery } from "../../grammars/runtime.ts";
import { compileTagMatcher } from "../../grammars/tagmatch.ts";
import { tagCorpus } from "../../tests/support/tag-corpus.ts";
import { extractTags, type ParseClock } from "./tags.ts";

const loader = new GrammarLoader(EMBEDDED_ASSETS);

async function refsOf(path: string, text: string) {
  const tags = extractTags(await loader.load(languageFor(path)!), text)!;
  return Object.fromEntries([...tags.refs].map(([name, count]) => [name, [count.plain, count.member]]));
}

test("a call on an unknown receiver is a member reference; a plain call and a capitalised qualified name are not", async () => {
  expect(await refsOf("a.ts", "store.get(1);\nget(2);\nerrors.HTTPError(3);\nthis.cache.update(4);\nnew Client();\n")).toEqual({
    get: [1, 1],
    HTTPError: [1, 0],
    update: [0, 1],
    Client: [1, 0],
  });
  expect(await refsOf("a.py", "self.items.append(1)\nload_config()\nmodels.User(2)\n")).toEqual({
    append: [0, 1],
    load_config: [1, 0],
    User: [1, 0],
  });
  // Go: a package-qualified call is capitalised (exported); an unexported method call is a member.
  expect(await refsOf("a.go", "package a\n\nfunc f() {\n\tconfig.Load()\n\tc.flush()\n\trun()\n}\n")).toEqual({
    Load: [1, 0],
    flush: [0, 1],
    run: [1, 0],
  });
});

/**
 * A clock whose wall time moves by a fixed step on each read, this thread getting
 * `cpuShare` of it (null: the runtime has no thread clock), with a given load.
 */
function fakeClock(wallStep: number, cpuShare: number | null, loadPerCore = 1): ParseClock & { reads: number } {
  let wall = 0;
  const clock = {
    reads: 0,
    wall: () => {
      clock.reads++;
      return (wall += wallStep);
    },
    threadCpu: () => (cpuShare === null ? null : wall * cpuShare),
    loadPerCore: () => loadPerCore,
  };
  return clock;
}

/** tree-sitter-python is quadratic on comment lines after an indented block (its progress callback comes rarely there). */
const QUADRATIC = `def head():\n    return 1\n\n${"# comment line\n".repeat(5_000)}`;

test("a parse that uses its CPU budget is stopped (null), and the parser is ready for the next file", async () => {
  const grammar = await loader.load(languageFor("a.py")!);
  // Each read of the clock says 10 s went by, all of it this thread's CPU.
  expect(extractTags(grammar, QUADRATIC, fakeClock(10_000, 1))).toBeNull();
  expect(extractTags(grammar, "def after():\n    return 2\n", fakeClock(10_000, 1))!.defs.map((d) => d.name)).toEqual(["after"]);
  // The same parse on a machine so busy that this thread got a hundredth of the time: still stopped, later.
  expect(extractTags(grammar, QUADRATIC, fakeClock(10_000, 0.01))).toBeNull();
}, 60_000);

test("on a busy machine a normal file is not cut: the limit counts this thread's CPU time, or stretches with the load", async () => {
  const grammar = await loader.load(languageFor("a.ts")!);
  const text = readFileSync(join(import.meta.dir, "tags.ts"), "utf8").repeat(3);
  // How often the parse reads the clock (the progress callback).
  const counting = fakeClock(0, 1);
  expect(extractTags(grammar, text, counting)).not.toBeNull();
  expect(counting.reads).toBeGreaterThan(3);
  const budget = 1000 + (text.length / 1000) * 10;
  // The wall clock passes the whole budget by the parse's middle: the old wall-clock limit stops it there.
  const wallStep = (2 * budget) / counting.reads;
  const wallOnly = fakeClock(wallStep, null, 1);
  expect(extractTags(grammar, text, wallOnly)).toBeNull();
  // The machine is busy, this thread got a tenth of the time: not stopped.
  expect(extractTags(grammar, text, fakeClock(wallStep, 0.1))).not.toBeNull();
  // No thread clock, four runnable tasks per core: the wall budget is four times longer.
  expect(extractTags(grammar, text, fakeClock(wallStep, null, 4))).not.toBeNull();
  // The same parse that used the CPU the wall clock shows is stopped.
  expect(extractTags(grammar, text, fakeClock(wallStep, 1))).toBeNull();
});

test("our tag matcher gives the same file tags as tree-sitter's query for every embedded language", async () => {
  const corpus = tagCorpus();
  const differ: string[] = [];
  let files = 0;
  for (const spec of LANGUAGES) {
    const grammar = await loader.load(spec);
    const source = loader.tagsSource(spec);
    const matcher = compileTagMatcher(grammar.language, source);
    if (!matcher) continue; // kept on tree-sitter's Query (grammars/tagmatch.test.ts lists these)
    const ours = { ...grammar, tags: matcher };
    const oracle = { ...grammar, tags: treeSitterTagsQuery(grammar.language, source) };
    for (const file of corpus.get(spec.name)!) {
      const expected = extractTags(oracle, file.text);
      const actual = extractTags(ours, file.text);
      files++;
      if (!Bun.deepEquals(actual, expected)) differ.push(`${spec.name} ${file.label}`);
    }
  }
  expect(files).toBeGreaterThan(250);
  expect(differ).toEqual([]);
}, 180_000);
