import { expect, test } from "bun:test";
import { tsImportStatements, usedMembers } from "./import-syntax.ts";
import { ImportResolver } from "./imports.ts";

/** A resolver over an in-memory listing (its real interface: a file list and a reader). */
function resolverOf(files: Record<string, string>): ImportResolver {
  return new ImportResolver({ files: Object.keys(files), read: (path) => files[path] ?? null });
}

const importsOf = (files: Record<string, string>, chat: string) =>
  Object.fromEntries([...resolverOf(files).importsOf(chat)].map(([file, names]) => [file, [...names].sort()]));

test("TS/JS: relative imports with extensions, .js written for .ts, index files, default and namespace imports, require", () => {
  const files = {
    "src/app.ts": [
      'import { load, type Config as Cfg } from "./config.js";',
      'import Store from "./store";',
      'import * as util from "./util";',
      'import "./polyfill";',
      'const { parse } = require("../lib/parse");',
      "util.slugify(load(Store));",
      "export const x = util.trim;",
    ].join("\n"),
    "src/config.ts": "export function load() {}\nexport interface Config {}\n",
    "src/store/index.tsx": "export default class Store {}\n",
    "src/util.mjs": "export function slugify() {}\nexport function trim() {}\n",
    "src/polyfill.js": "",
    "lib/parse.cjs": "exports.parse = () => {};\n",
  };
  expect(importsOf(files, "src/app.ts")).toEqual({
    "src/config.ts": ["Config", "load"],
    "src/store/index.tsx": ["Store"],
    "src/util.mjs": ["slugify", "trim"],
    "src/polyfill.js": [],
    "lib/parse.cjs": ["parse"],
  });
});

test("TS: tsconfig paths and baseUrl (nearest config, extends), workspace packages, re-exports followed to their files", () => {
  const files = {
    "tsconfig.base.json": '{ "compilerOptions": { "paths": { "@lib/*": ["lib/*"] } } }',
    "packages/app/tsconfig.json": '{\n  // comments are allowed\n  "extends": "../../tsconfig.base.json",\n  "compilerOptions": { "baseUrl": "src", },\n}',
    "packages/app/src/main.ts": 'import { a } from "@lib/a";\nimport { helper } from "shared/helper";\nimport { Client, errors } from "@acme/core";\n',
    "packages/app/src/shared/helper.ts": "export function helper() {}\n",
    "lib/a.ts": "export const a = 1;\n",
    "packages/core/package.json": '{ "name": "@acme/core" }',
    "packages/core/src/index.ts": 'export { Client } from "./client";\nexport * from "./errors";\nexport * as internal from "./internal";\n',
    "packages/core/src/client.ts": "export class Client {}\n",
    "packages/core/src/errors.ts": "export const errors = {};\n",
    "packages/core/src/internal.ts": "export const secret = 1;\n",
  };
  expect(importsOf(files, "packages/app/src/main.ts")).toEqual({
    "lib/a.ts": ["a"],
    "packages/app/src/shared/helper.ts": ["helper"],
    "packages/core/src/index.ts": ["Client", "errors"],
    "packages/core/src/client.ts": ["Client"],
    "packages/core/src/errors.ts": ["Client", "errors"],
  });
});

test("Python: relative and absolute modules (nearest by path), a module imported from its package, package re-exports", () => {
  const files = {
    "gyp/pylib/gyp/generator/make.py": [
      "import os",
      "import gyp.common",
      "from gyp import easy_xml as xml",
      "from ..input import load, (",
      "from . import ninja",
      "from gyp.api import Client",
      "gyp.common.EnsureDirExists(xml.XmlToString(load()))",
    ].join("\n"),
    "gyp/pylib/gyp/common.py": "def EnsureDirExists(path):\n    pass\n",
    "gyp/pylib/gyp/easy_xml.py": "def XmlToString(x):\n    pass\n",
    "gyp/pylib/gyp/input.py": "def load():\n    pass\n",
    "gyp/pylib/gyp/generator/ninja.py": "",
    "gyp/pylib/gyp/__init__.py": "",
    "gyp/pylib/gyp/api/__init__.py": "from .client import Client\n",
    "gyp/pylib/gyp/api/client.py": "class Client:\n    pass\n",
    "other/gyp/common.py": "def EnsureDirExists(path):\n    pass\n",
  };
  expect(importsOf(files, "gyp/pylib/gyp/generator/make.py")).toEqual({
    "gyp/pylib/gyp/common.py": ["EnsureDirExists"],
    "gyp/pylib/gyp/__init__.py": ["easy_xml"],
    "gyp/pylib/gyp/easy_xml.py": ["XmlToString"],
    "gyp/pylib/gyp/input.py": ["load"],
    "gyp/pylib/gyp/generator/ninja.py": [],
    "gyp/pylib/gyp/api/__init__.py": ["Client"],
    "gyp/pylib/gyp/api/client.py": ["Client"],
  });
});

test("Go: packages of the module (aliased or not), the same package's other files, no tests for a non-test file", () => {
  const files = {
    "go.mod": "module github.com/acme/tool\n\ngo 1.22\n",
    "cmd/command.go": 'package cmd\n\nimport (\n\t"fmt"\n\tcfg "github.com/acme/tool/internal/config"\n\t"github.com/acme/tool/internal/log"\n)\n\nfunc Run() { fmt.Println(cfg.Load(), log.New()); preExecHook() }\n',
    "cmd/command_win.go": "package cmd\n\nfunc preExecHook() {}\n",
    "cmd/command_test.go": "package cmd\n",
    "internal/config/config.go": "package config\n\nfunc Load() {}\n",
    "internal/log/log.go": "package log\n\nfunc New() {}\n",
  };
  expect(importsOf(files, "cmd/command.go")).toEqual({
    "cmd/command_win.go": [],
    "internal/config/config.go": ["Load"],
    "internal/log/log.go": ["New"],
  });
});

test("Rust: mod declarations and use crate::/super:: paths down to the module file, with the names taken", () => {
  const files = {
    "Cargo.toml": "[package]\nname = \"x\"\n",
    "src/main.rs": "mod net;\nuse crate::store::{Store, items::Item};\nuse crate::net::http::get;\nfn main() {}\n",
    "src/net/mod.rs": "pub mod http;\n",
    "src/net/http.rs": "pub fn get() {}\n",
    "src/store.rs": "pub struct Store;\n",
    "src/store/items.rs": "pub struct Item;\n",
  };
  expect(importsOf(files, "src/main.rs")).toEqual({
    "src/net/mod.rs": [],
    "src/store.rs": ["Store"],
    "src/store/items.rs": ["Item"],
    "src/net/http.rs": ["get"],
  });
});

test("Java and C#: imported classes and wildcard packages, the same package's files, namespaces by folder", () => {
  const files = {
    "src/main/java/com/acme/App.java": "package com.acme;\n\nimport com.acme.util.Strings;\nimport com.acme.model.*;\nimport static com.acme.util.Math.max;\n\nclass App { void run() { Strings.trim(max(1, 2)); } }\n",
    "src/main/java/com/acme/Config.java": "package com.acme;\n",
    "src/main/java/com/acme/util/Strings.java": "package com.acme.util;\n",
    "src/main/java/com/acme/util/Math.java": "package com.acme.util;\n",
    "src/main/java/com/acme/model/User.java": "package com.acme.model;\n",
    "Acme/Web/Program.cs": "using Acme.Data;\nusing System;\n",
    "Acme/Data/Repo.cs": "namespace Acme.Data;\n",
  };
  expect(importsOf(files, "src/main/java/com/acme/App.java")).toEqual({
    "src/main/java/com/acme/Config.java": [],
    "src/main/java/com/acme/util/Strings.java": ["Strings", "trim"],
    "src/main/java/com/acme/model/User.java": [],
    "src/main/java/com/acme/util/Math.java": ["max"],
  });
  expect(importsOf(files, "Acme/Web/Program.cs")).toEqual({ "Acme/Data/Repo.cs": [] });
});

test("import statements: multi-line clauses, type-only imports, re-export renames", () => {
  const statements = tsImportStatements('import type {\n  A,\n  B as C,\n} from "./ab";\nexport { D as E } from "./d";\nexport * from "./all";\n');
  expect(statements.map((s) => [s.spec, s.names, s.reexport, s.star])).toEqual([
    ["./ab", ["A", "B"], false, false],
    ["./d", ["D"], true, false],
    ["./all", [], true, true],
  ]);
  expect(statements[1]!.exported.get("E")).toBe("D");
});

test("a path outside the repository (an absolute read-only file) has no imports, and the lookup ends", () => {
  const files = { "tsconfig.json": '{ "compilerOptions": { "baseUrl": "." } }', "src/a.ts": "export const a = 1;\n" };
  expect(importsOf(files, "/home/me/CONVENTIONS.md")).toEqual({});
  expect(importsOf(files, "/home/me/notes.ts")).toEqual({});
});

// The readers before the pre-scan's fast paths (a RegExp per name and per character), kept here as oracles.
function oldClause(clause: string): { names: string[]; namespace: string | null; exported: [string, string][] } {
  const namespace = /\*\s*as\s+([\w$]+)/.exec(clause)?.[1] ?? null;
  const names: string[] = [];
  const exported: [string, string][] = [];
  const braces = /\{([^}]*)\}/.exec(clause);
  if (braces) {
    for (const part of braces[1]!.split(",")) {
      const [original = "", alias] = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/).map((n) => n.trim());
      if (!/^[\w$]+$/.test(original)) continue;
      names.push(original);
      exported.push([alias ?? original, original]);
    }
  }
  const defaultName = /^\s*([\w$]+)\s*(,|$)/.exec(clause.replace(/^\s*type\s+/, ""))?.[1];
  if (defaultName && defaultName !== "type") names.push(defaultName);
  return { names, namespace, exported };
}

function oldUsedMembers(text: string, qualifier: string): string[] {
  const names = new Set<string>();
  const needle = qualifier + ".";
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    if (at > 0 && /[\w$.]/.test(text[at - 1]!)) continue;
    let end = at + needle.length;
    if (end >= text.length || !/[A-Za-z_$]/.test(text[end]!)) continue;
    while (end < text.length && /[\w$]/.test(text[end]!)) end++;
    names.add(text.slice(at + needle.length, end));
  }
  return [...names];
}

test("the pre-scan's fast readers give what the general ones gave: TS clauses, Python name lists, qualified names", () => {
  const clauses = ["{ A, B }", "{ A as B, type C, }", "D, { E }", "* as ns", "type { F }", "type G", "G, * as ns", "{}", "{ a$b, $c as d }", "\n  H,\n  I as J\n", "type", "{ type }", "K , { L as M } ", "{ 1bad, ok }", "{ A }{ B }", "{ A"];
  for (const clause of clauses) {
    const [statement] = tsImportStatements(`import ${clause} from "./x";\n`);
    const old = oldClause(clause);
    expect({ clause, names: statement?.names, namespace: statement?.namespace, exported: statement && [...statement.exported] }).toEqual({ clause, ...old });
  }
  // require() and import() only where the text has them; the same statements either way.
  expect(tsImportStatements('const { a, b: c } = require("./r");\nconst m = require("./m");\nawait import("./d");\n').map((s) => [s.spec, s.names, s.namespace])).toEqual([
    ["./r", ["a", "b"], null],
    ["./m", [], "m"],
    ["./r", [], null],
    ["./m", [], null],
    ["./d", [], null],
  ]);
  // Python: a plain list and its spellings with parentheses, aliases, tabs and comments take the same names as before.
  const py = (list: string) => importsOf({ "app/a.py": `from app.b import ${list}\n`, "app/b.py": "" }, "app/a.py")["app/b.py"];
  expect(py("x, y")).toEqual(["x", "y"]);
  expect(py("(x,\ty)")).toEqual(["x", "y"]);
  expect(py("x as z, y")).toEqual(["x", "y"]);
  expect(py("x as z, y  # note")).toEqual(["x", "y"]);
  expect(py("x,y,")).toEqual(["x", "y"]);
  expect(py("x, 2y, *")).toEqual(["2y", "x"]);
  expect(py("xas, asy")).toEqual(["asy", "xas"]);
  // Qualified names: before a dot, after a name or `$`, a digit first, at the end of the text.
  const text = "ns.A(); ns.b2.c; x.ns.D; ans.E; $ns.F; ns.1G; ns.$h; ns._i; ns.\nns.J ns.";
  for (const qualifier of ["ns", "b2", "x", "$ns", "a", "ns.b2", "é"]) {
    for (const body of [text, `é${qualifier}.K; ${qualifier}.é; ${qualifier}.Lé ${qualifier}`]) expect({ qualifier, body, used: usedMembers(body, qualifier) }).toEqual({ qualifier, body, used: oldUsedMembers(body, qualifier) });
  }
  expect(usedMembers(text, "ns")).toEqual(["A", "b2", "$h", "_i", "J"]);
});
