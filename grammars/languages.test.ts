// Every language of the table: its grammar loads, and the tags query finds the
// expected definitions and references in a small sample.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { extractTags } from "../plugins/repomap/tags.ts";
import { checkGrammars } from "./check.ts";
import { EMBEDDED_ASSETS, GRAMMAR_ASSETS } from "./embedded.ts";
import { LANGUAGES, languageFor } from "./languages.ts";
import { GrammarLoader } from "./runtime.ts";

interface Case {
  file: string;
  code: string;
  defs: string[];
  refs: string[];
}

const CASES: Record<string, Case> = {
  python: { file: "a.py", code: "class Shop:\n    def checkout(self):\n        return compute_total(self)\n\ndef compute_total(x):\n    return len(x)\n", defs: ["Shop", "checkout", "compute_total"], refs: ["compute_total", "len"] },
  javascript: { file: "a.js", code: "class Shop {\n  checkout() { return computeTotal(this); }\n}\nfunction computeTotal(x) { return x.items.reduce(sum); }\nconst helper = () => new Shop();\n", defs: ["Shop", "checkout", "computeTotal", "helper"], refs: ["computeTotal", "reduce", "Shop"] },
  typescript: { file: "a.ts", code: "interface Cart { total: number }\ntype Id = string;\nenum Color { Red }\nexport class Shop {\n  checkout(c: Cart): number { return computeTotal(c); }\n}\nexport function computeTotal(c: Cart) { return c.total; }\nexport const fetchCart = async (id: Id) => new Shop();\n", defs: ["Cart", "Id", "Color", "Shop", "checkout", "computeTotal", "fetchCart"], refs: ["Cart", "computeTotal", "Shop", "Id"] },
  tsx: { file: "a.tsx", code: "interface Props { name: string }\nexport function Badge(p: Props) { return <Label text={format(p.name)} />; }\n", defs: ["Props", "Badge"], refs: ["Props", "Label", "format"] },
  go: { file: "a.go", code: "package shop\n\ntype Cart struct{ Total int }\n\nfunc (c *Cart) Checkout() int { return ComputeTotal(c) }\n\nfunc ComputeTotal(c *Cart) int { return c.Total }\n", defs: ["Cart", "Checkout", "ComputeTotal"], refs: ["ComputeTotal", "Cart"] },
  rust: { file: "a.rs", code: "pub struct Cart { total: i64 }\nimpl Cart {\n    pub fn checkout(&self) -> i64 { compute_total(self) }\n}\nfn compute_total(c: &Cart) -> i64 { c.total }\n", defs: ["Cart", "checkout", "compute_total"], refs: ["compute_total", "Cart"] },
  java: { file: "A.java", code: "class Shop {\n  int checkout(Cart c) { return computeTotal(c); }\n  static int computeTotal(Cart c) { return c.total; }\n}\n", defs: ["Shop", "checkout", "computeTotal"], refs: ["computeTotal", "Cart"] },
  c: { file: "a.c", code: "struct cart { int total; };\nint compute_total(struct cart *c) { return c->total; }\nint checkout(struct cart *c) { return compute_total(c); }\n", defs: ["cart", "compute_total", "checkout"], refs: ["compute_total"] },
  cpp: { file: "a.cpp", code: "namespace shop {\nclass Cart { public: int total; };\nint computeTotal(const Cart& c) { return c.total; }\nint checkout(Cart& c) { return computeTotal(c); }\n}\n", defs: ["shop", "Cart", "computeTotal", "checkout"], refs: ["computeTotal", "Cart"] },
  csharp: { file: "a.cs", code: "namespace Shop {\n  interface ICart { int Total(); }\n  class Store {\n    int Checkout(ICart c) { return ComputeTotal(c); }\n    static int ComputeTotal(ICart c) { return c.Total(); }\n  }\n}\n", defs: ["Shop", "ICart", "Store", "Checkout", "ComputeTotal"], refs: ["ComputeTotal", "Total"] },
  ruby: { file: "a.rb", code: "class Shop\n  def checkout\n    compute_total(items)\n  end\nend\n\ndef compute_total(x)\n  x.sum\nend\n", defs: ["Shop", "checkout", "compute_total"], refs: ["compute_total"] },
  php: { file: "a.php", code: "<?php\nclass Shop {\n  function checkout() { return compute_total($this); }\n}\nfunction compute_total($x) { return count($x); }\n", defs: ["Shop", "checkout", "compute_total"], refs: ["compute_total", "count"] },
  scala: { file: "a.scala", code: "object Shop {\n  def checkout(c: Cart): Int = computeTotal(c)\n  def computeTotal(c: Cart): Int = c.total\n}\nclass Cart(val total: Int)\n", defs: ["Shop", "checkout", "computeTotal", "Cart"], refs: ["computeTotal"] },
  elixir: { file: "a.ex", code: "defmodule Shop do\n  def checkout(cart), do: compute_total(cart)\n  def compute_total(cart), do: Enum.sum(cart)\nend\n", defs: ["Shop", "checkout", "compute_total"], refs: ["compute_total", "sum"] },
  ocaml: { file: "a.ml", code: "module Shop = struct\n  let compute_total c = List.length c\n  let checkout c = compute_total c\nend\n", defs: ["Shop", "compute_total", "checkout"], refs: ["compute_total", "length"] },
  ocaml_interface: { file: "a.mli", code: "module Shop : sig\n  type cart\n  val checkout : cart -> int\nend\nval compute_total : Shop.cart -> int\n", defs: ["Shop", "cart", "checkout", "compute_total"], refs: ["cart"] },
  bash: { file: "a.sh", code: "TOTAL=0\ncompute_total() {\n  echo \"$TOTAL\"\n}\ncheckout() {\n  compute_total\n}\ncheckout\n", defs: ["TOTAL", "compute_total", "checkout"], refs: ["compute_total", "checkout", "TOTAL"] },
  haskell: { file: "a.hs", code: "module Shop where\n\ndata Cart = Cart Int\n\ncomputeTotal :: Cart -> Int\ncomputeTotal (Cart t) = t\n\ncheckout :: Cart -> Int\ncheckout c = computeTotal c\n", defs: ["Cart", "computeTotal", "checkout"], refs: ["computeTotal", "Cart"] },
  dart: { file: "a.dart", code: "class Shop {\n  int checkout(Cart c) {\n    return computeTotal(c);\n  }\n}\nint computeTotal(Cart c) {\n  return c.total;\n}\n", defs: ["Shop", "checkout", "computeTotal"], refs: ["computeTotal", "Cart"] },
  julia: { file: "a.jl", code: readFileSync(join(import.meta.dir, "samples", "sample.jl"), "utf8"), defs: ["Geometry", "Shape", "Circle", "area", "perimeter", "twice", "describe", "UNIT_RADIUS"], refs: ["area", "perimeter", "println"] },
  kotlin: { file: "a.kt", code: "class Shop {\n  fun checkout(c: Cart): Int = computeTotal(c)\n}\nfun computeTotal(c: Cart): Int = c.total\nobject Registry\n", defs: ["Shop", "checkout", "computeTotal", "Registry"], refs: ["computeTotal", "Cart"] },
  lua: { file: "a.lua", code: "local Shop = {}\nfunction Shop.checkout(c)\n  return compute_total(c)\nend\nfunction compute_total(c)\n  return #c\nend\n", defs: ["checkout", "compute_total"], refs: ["compute_total"] },
  zig: { file: "a.zig", code: "const Cart = struct {\n    total: i32,\n};\nfn computeTotal(c: Cart) i32 {\n    return c.total;\n}\npub fn checkout(c: Cart) i32 {\n    return computeTotal(c);\n}\n", defs: ["Cart", "computeTotal", "checkout", "total"], refs: ["computeTotal"] },
};

const loader = new GrammarLoader(EMBEDDED_ASSETS);

describe("language table", () => {
  test("covers at least 20 languages, each with a sample here", () => {
    expect(LANGUAGES.length).toBeGreaterThanOrEqual(20);
    for (const spec of LANGUAGES) expect(CASES[spec.name], spec.name).toBeDefined();
  });

  test("maps extensions and file names, and leaves unknown files without a grammar", () => {
    expect(languageFor("src/app.py")?.name).toBe("python");
    expect(languageFor("web/App.TSX")?.name).toBe("tsx");
    expect(languageFor("lib/x.mli")?.name).toBe("ocaml_interface");
    expect(languageFor("Rakefile")?.name).toBe("ruby");
    expect(languageFor("sketch.ino")?.name).toBe("cpp");
    expect(languageFor("README.md")).toBeNull();
    expect(languageFor("Makefile")).toBeNull();
    expect(languageFor(".gitignore")).toBeNull();
  });

  test("every query and grammar asset is embedded", () => {
    for (const spec of LANGUAGES) {
      expect(GRAMMAR_ASSETS[spec.wasm], spec.wasm).toBeString();
      for (const q of spec.queries) expect(GRAMMAR_ASSETS[q], q).toBeString();
    }
  });
});

describe("tags per language", () => {
  for (const spec of LANGUAGES) {
    test(`${spec.name}: definitions and references`, async () => {
      const sample = CASES[spec.name]!;
      expect(languageFor(sample.file)?.name).toBe(spec.name);
      const tags = extractTags(await loader.load(spec), sample.code)!;
      const defs = new Set(tags.defs.map((d) => d.name));
      for (const name of sample.defs) expect(defs.has(name), `${spec.name} defines ${name} (found: ${[...defs].join(", ")})`).toBe(true);
      for (const name of sample.refs) expect(tags.refs.has(name), `${spec.name} references ${name} (found: ${[...tags.refs.keys()].join(", ")})`).toBe(true);
    });
  }
});

test("checkGrammars reports every language as working", async () => {
  const results = await checkGrammars();
  expect(results.map((r) => r.language).sort()).toEqual(LANGUAGES.map((l) => l.name).sort());
  for (const r of results) expect(r.ok, `${r.language}: ${r.detail}`).toBe(true);
}, 60_000);
