// `coder doctor`'s grammar check: load every embedded grammar and run its tags
// query on a tiny sample, which must yield at least one definition.
import { EMBEDDED_ASSETS } from "./embedded.ts";
import { LANGUAGES } from "./languages.ts";

/** One tiny program per language, each defining `probe`/`Probe`. */
export const SAMPLES: Record<string, string> = {
  python: "def probe():\n    return 1\n",
  javascript: "function probe() { return 1; }\n",
  typescript: "function probe(): number { return 1; }\n",
  tsx: "function Probe() { return <div/>; }\n",
  go: "package main\nfunc probe() int { return 1 }\n",
  rust: "fn probe() -> i32 { 1 }\n",
  java: "class Probe { int probe() { return 1; } }\n",
  c: "int probe(void) { return 1; }\n",
  cpp: "int probe() { return 1; }\n",
  csharp: "class Probe { int P() { return 1; } }\n",
  ruby: "def probe\n  1\nend\n",
  php: "<?php\nfunction probe() { return 1; }\n",
  scala: "object Probe { def probe(): Int = 1 }\n",
  elixir: "defmodule Probe do\n  def probe, do: 1\nend\n",
  ocaml: "let probe x = x + 1\n",
  ocaml_interface: "val probe : int -> int\n",
  bash: "probe() {\n  echo 1\n}\n",
  haskell: "probe :: Int\nprobe = 1\n",
  dart: "int probe() { return 1; }\n",
  julia: "function probe()\n  1\nend\n",
  kotlin: "fun probe(): Int { return 1 }\n",
  lua: "function probe()\n  return 1\nend\n",
  zig: "fn probe() i32 {\n    return 1;\n}\n",
};

export interface GrammarCheck {
  language: string;
  ok: boolean;
  detail: string;
}

export async function checkGrammars(): Promise<GrammarCheck[]> {
  const { GrammarLoader } = await import("./runtime.ts");
  const loader = new GrammarLoader(EMBEDDED_ASSETS);
  const results: GrammarCheck[] = [];
  for (const spec of LANGUAGES) {
    const sample = SAMPLES[spec.name];
    if (sample === undefined) {
      results.push({ language: spec.name, ok: false, detail: "no sample to check" });
      continue;
    }
    try {
      const grammar = await loader.load(spec);
      const tree = grammar.parser.parse(sample);
      if (!tree) throw new Error("the parser returned no tree");
      try {
        const defs = grammar.tags.matches(tree.rootNode).filter((m) => m.captures.some((c) => c.name.startsWith("definition."))).length;
        results.push(
          defs > 0
            ? { language: spec.name, ok: true, detail: `${spec.source}: ${defs} definition(s) in the sample` }
            : { language: spec.name, ok: false, detail: `${spec.source}: the tags query found no definition in the sample` },
        );
      } finally {
        tree.delete();
      }
    } catch (error) {
      results.push({ language: spec.name, ok: false, detail: `${spec.source}: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return results;
}
