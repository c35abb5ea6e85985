// Source files per embedded language for the tag matcher's equivalence tests:
// `coder doctor`'s probes, grammars/samples, hand-written snippets that use every
// query feature (anchors, negated fields, quantifiers, predicates, alternations),
// the code blocks of tree-sitter-dart's test corpus, real files from node_modules
// and this repository, and Aider's per-language fixtures when ../shared has them.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { SAMPLES } from "../../grammars/check.ts";
import { LANGUAGES, languageFor } from "../../grammars/languages.ts";

export interface CorpusFile {
  /** Where it came from (a path, or "snippet:<language>:<n>"). */
  label: string;
  text: string;
}

const ROOT = join(import.meta.dir, "../..");
const AIDER_LANGUAGES = join(ROOT, "../shared/fixtures/aider/repomap/languages");
const MAX_BYTES = 200_000;

/** Snippets written for the query features each language's tags query uses. */
const SNIPPETS: Record<string, string[]> = {
  javascript: [
    "// a\n// b\nclass A {\n  // doc\n  constructor() {}\n  /** m */\n  m() { return require('x'); }\n  x = 1;\n  n() {}\n}\n/* c */\nfunction f() {}\nconst g = () => 1, h = function () {};\nvar k = function named() {};\nexports.z = () => 1;\nmodule.exports = { p: () => 2, q: 3 };\nexport const C = new Thing(1);\nnew A.B();\nobj.call(1)(2);\nfunction* gen() {}\n",
  ],
  typescript: [
    "export const a = 1, b = () => 2;\nconst c = function () {};\nlet d: Map<string, Foo> = new Map();\nabstract class K<T> extends Base implements I, J { abstract m(): void; f = () => 1; }\ninterface I extends J { x(): void }\ntype T = Foo | Bar;\nenum E { A }\nnamespace N {}\ndeclare module \"m\" {}\nfunction s(x: Y): Z;\nrequire('x');\nthis.a.b();\n",
  ],
  tsx: ["const App = () => <Layout><Header title=\"x\" /><div><item.Row /></div></Layout>;\nfunction Page(p: Props) { return <main/>; }\n"],
  python: ["X = 1\nY, Z = 2, 3\nclass A(B):\n    def m(self):\n        self.items.append(f(1))\n        return g()(2)\n\ndef top():\n    pass\n"],
  go: ["package p\n\n// F does\n// things\nfunc F() {}\n\n// M is\nfunc (r *R) M() { (f)(1); (x.Y)(2); x.Z() }\ntype R struct{}\ntype I interface{ M() }\nimport \"fmt\"\nvar v = 1\nconst c = 2\n"],
  rust: ["struct S; enum E {} union U { a: u8 } type T = u8;\nimpl S { fn m(&self) {} }\nimpl Tr for S {}\ntrait Tr {}\nmod m {}\nmacro_rules! mac { () => {} }\nfn f() { g(); s.h(); mac!(); }\n"],
  java: ["class A extends B implements C, D { void m() { x.f(1); new E(); } }\ninterface I extends J {}\n"],
  c: ["#define N 1\n#define M(x) x\nstruct S { int a; };\nunion U u;\nenum E { A };\ntypedef int T;\nint g, h = 2;\nint f(int x) { return k(x) + s.t(x); }\n"],
  cpp: ["namespace n { class C { void m(); }; }\nvoid n::C::m() { f(); a::g(); o.h(); new T(); }\nstruct S { int x; } s;\n"],
  csharp: ["namespace N { class A : B, I { void M() { F(); o.G(); new C(); List<T> l; } } interface I : J {} }\n"],
  ruby: ["# doc\ndef m; end\nclass A < B\n  # s\n  def self.s; end\n  alias b a\nend\nmodule M::N; end\nclass << self; end\nx = 1\nputs x\nfoo.bar(1)\nrequire 'y'\n"],
  php: ["<?php\nnamespace N;\ninterface I {}\ntrait T {}\nclass A implements I, \\X\\Y { public $p; function m() { f(); \\g\\h(); $v(); A::s(); $o->m(); new B(); new \\C\\D(); } }\nfunction f() {}\n"],
  scala: ["package p\ntrait T\nenum E { case A, B; case C(x: Int) }\nclass K(val a: Int) extends T with U[Int]\nobject O { def f(): Int = g(1); val v = 1; var w = 2; given x: Int = 1; type Y = Int }\nnew T {}\nnew U[Int] {}\n"],
  elixir: ["defmodule M do\n  @moduledoc \"x\"\n  def f(a) when a > 1, do: g(a)\n  defp h, do: M.N.k() |> j\n  alias A.B\nend\ndefprotocol P do end\n"],
  ocaml: ["(** doc *)\nmodule M = struct end\nmodule type S = sig end\nclass c = object method m = 1 end\ntype t = A | B of int and u = { f : int }\nlet f x = x |> g @@ h\nlet ( +! ) a b = a\nlet v = fun x -> x\nexternal e : int -> int = \"e\"\nlet () = M.f x; o#m; r.f; A 1; `T\n"],
  ocaml_interface: ["val f : int -> int\nmodule M : S\ntype t\n"],
  bash: ["f() { echo \"$x\"; }\nfunction g { ls; }\nX=1\nexport Y=2\nfoo ${BAR} $(baz)\n"],
  haskell: ["module M where\nf :: Int -> Int\nf x = g x\nv = 1\ndata D = C Int | E\nnewtype N = N Int\ntype T = Int\nclass K a where\n  k :: a\n"],
  dart: ["class A extends B with M { A(); int get g => 1; set s(v) {} void m() { f(); o.p(); } }\nmixin M {}\nenum E { a }\nextension X on A {}\ntypedef T = int;\nfinal c = 1;\nint top() => 1;\n"],
  julia: ["module M\nabstract type A <: B end\nstruct S{T} <: A; x::T end\nfunction f(x::Int)::Int where T; g(x); end\nh(x) = x\nconst C = 1\nmacro m(x) end\n@m f(1)\nBase.show(io, x)\nend\n"],
  kotlin: ["class A : B(), I { val p = 1; fun m() { f(); o.g(); } }\nobject O\ntypealias T = Int\nval top = 1\nfun f(x: List<Int>): Map<String, Int> = mapOf()\n"],
  lua: ["function f() end\nfunction M.g() end\nfunction M:h() end\nlocal k = function() end\nx, y = function() end, 1\nt = { a = function() end, b = 1 }\nf(); M.g(); M:h()\n"],
  zig: ["const std = @import(\"std\");\nconst S = struct { a: u8, fn m() void {} };\nconst E = enum { a };\npub fn main() void { f(); std.debug.print(\"\", .{}); }\ntest \"t\" {}\n"],
};

function walk(dir: string, out: string[], depth = 0): void {
  if (depth > 8) return;
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    let stat;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    if (stat.isDirectory()) walk(path, out, depth + 1);
    else if (stat.isFile() && stat.size > 0 && stat.size <= MAX_BYTES) out.push(path);
  }
}

/** Every `step`-th file of each language under these folders, at most `perLanguage` each. */
function realFiles(dirs: string[], perLanguage: number): Map<string, string[]> {
  const all: string[] = [];
  for (const dir of dirs) walk(dir, all);
  const byLanguage = new Map<string, string[]>();
  for (const path of all) {
    const language = languageFor(path)?.name;
    if (!language) continue;
    let list = byLanguage.get(language);
    if (!list) byLanguage.set(language, (list = []));
    list.push(path);
  }
  for (const [language, list] of byLanguage) {
    const step = Math.max(1, Math.floor(list.length / perLanguage));
    byLanguage.set(language, list.filter((_, i) => i % step === 0).slice(0, perLanguage));
  }
  return byLanguage;
}

/** Code blocks of a tree-sitter test corpus file (between the name header and the expected tree). */
function corpusBlocks(text: string): string[] {
  const blocks: string[] = [];
  const re = /^=+\n[^\n]*\n=+\n([\s\S]*?)\n-{3,}\n/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) blocks.push(m[1]!);
  return blocks;
}

/** The corpus of every embedded language, by language name. */
export function tagCorpus(perLanguage = 40): Map<string, CorpusFile[]> {
  const corpus = new Map<string, CorpusFile[]>(LANGUAGES.map((l) => [l.name, []]));
  const add = (language: string, label: string, text: string): void => {
    corpus.get(language)?.push({ label, text });
  };
  for (const [language, text] of Object.entries(SAMPLES)) add(language, `doctor:${language}`, text);
  for (const [language, texts] of Object.entries(SNIPPETS)) texts.forEach((text, i) => add(language, `snippet:${language}:${i}`, text));
  const files = realFiles([join(ROOT, "grammars/samples"), join(ROOT, "node_modules/openai"), join(ROOT, "node_modules/zod"), join(ROOT, "node_modules/commander"), join(ROOT, "node_modules/diff"), join(ROOT, "plugins"), join(ROOT, "core"), join(ROOT, "node_modules/@modelcontextprotocol")], perLanguage);
  if (existsSync(AIDER_LANGUAGES)) {
    const aider = realFiles([AIDER_LANGUAGES], perLanguage);
    for (const [language, list] of aider) files.set(language, [...(files.get(language) ?? []), ...list]);
  }
  for (const [language, list] of files) for (const path of list) add(language, relative(ROOT, path), readFileSync(path, "utf8"));
  const dartCorpus = join(ROOT, "node_modules/tree-sitter-dart/test/corpus");
  if (existsSync(dartCorpus)) {
    for (const name of readdirSync(dartCorpus).sort()) {
      corpusBlocks(readFileSync(join(dartCorpus, name), "utf8")).forEach((text, i) => add("dart", `tree-sitter-dart/test/corpus/${name}#${i}`, text));
    }
  }
  return corpus;
}
