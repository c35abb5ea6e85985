// Every grammar asset, imported as a file so `bun build --compile` embeds it.
// Keys are what grammars/languages.ts names; values are paths readable with Bun.file()
// (on disk from source, inside the binary's virtual file system when compiled).
// Each query key is "<language>-tags.scm" or "<language>-highlights.scm"; package queries come straight from the pinned npm packages.

import type { GrammarAssets } from "./runtime.ts";
import runtimeWasm from "../node_modules/web-tree-sitter/web-tree-sitter.wasm" with { type: "file" };
import a_python_wasm from "../node_modules/tree-sitter-python/tree-sitter-python.wasm" with { type: "file" };
import a_python_tags_scm from "../node_modules/tree-sitter-python/queries/tags.scm" with { type: "file" };
import a_javascript_wasm from "../node_modules/tree-sitter-javascript/tree-sitter-javascript.wasm" with { type: "file" };
import a_javascript_tags_scm from "../node_modules/tree-sitter-javascript/queries/tags.scm" with { type: "file" };
import a_typescript_wasm from "../node_modules/tree-sitter-typescript/tree-sitter-typescript.wasm" with { type: "file" };
import a_tsx_wasm from "../node_modules/tree-sitter-typescript/tree-sitter-tsx.wasm" with { type: "file" };
import a_go_wasm from "../node_modules/tree-sitter-go/tree-sitter-go.wasm" with { type: "file" };
import a_go_tags_scm from "../node_modules/tree-sitter-go/queries/tags.scm" with { type: "file" };
import a_rust_wasm from "../node_modules/tree-sitter-rust/tree-sitter-rust.wasm" with { type: "file" };
import a_rust_tags_scm from "../node_modules/tree-sitter-rust/queries/tags.scm" with { type: "file" };
import a_java_wasm from "../node_modules/tree-sitter-java/tree-sitter-java.wasm" with { type: "file" };
import a_java_tags_scm from "../node_modules/tree-sitter-java/queries/tags.scm" with { type: "file" };
import a_c_wasm from "../node_modules/tree-sitter-c/tree-sitter-c.wasm" with { type: "file" };
import a_c_tags_scm from "../node_modules/tree-sitter-c/queries/tags.scm" with { type: "file" };
import a_cpp_wasm from "../node_modules/tree-sitter-cpp/tree-sitter-cpp.wasm" with { type: "file" };
import a_cpp_tags_scm from "../node_modules/tree-sitter-cpp/queries/tags.scm" with { type: "file" };
import a_c_sharp_wasm from "../node_modules/tree-sitter-c-sharp/tree-sitter-c_sharp.wasm" with { type: "file" };
import a_c_sharp_tags_scm from "../node_modules/tree-sitter-c-sharp/queries/tags.scm" with { type: "file" };
import a_ruby_wasm from "../node_modules/tree-sitter-ruby/tree-sitter-ruby.wasm" with { type: "file" };
import a_ruby_tags_scm from "../node_modules/tree-sitter-ruby/queries/tags.scm" with { type: "file" };
import a_php_wasm from "../node_modules/tree-sitter-php/tree-sitter-php.wasm" with { type: "file" };
import a_php_tags_scm from "../node_modules/tree-sitter-php/queries/tags.scm" with { type: "file" };
import a_scala_wasm from "../node_modules/tree-sitter-scala/tree-sitter-scala.wasm" with { type: "file" };
import a_scala_tags_scm from "../node_modules/tree-sitter-scala/queries/tags.scm" with { type: "file" };
import a_elixir_wasm from "../node_modules/tree-sitter-elixir/tree-sitter-elixir.wasm" with { type: "file" };
import a_elixir_tags_scm from "../node_modules/tree-sitter-elixir/queries/tags.scm" with { type: "file" };
import a_ocaml_wasm from "../node_modules/tree-sitter-ocaml/tree-sitter-ocaml.wasm" with { type: "file" };
import a_ocaml_tags_scm from "../node_modules/tree-sitter-ocaml/queries/tags.scm" with { type: "file" };
import a_ocaml_interface_wasm from "../node_modules/tree-sitter-ocaml/tree-sitter-ocaml_interface.wasm" with { type: "file" };
import a_bash_wasm from "../node_modules/tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" };
import a_haskell_wasm from "../node_modules/tree-sitter-haskell/tree-sitter-haskell.wasm" with { type: "file" };
import a_dart_wasm from "../node_modules/tree-sitter-dart/tree-sitter-dart.wasm" with { type: "file" };
import a_julia_wasm from "../node_modules/tree-sitter-julia/tree-sitter-julia.wasm" with { type: "file" };
import a_kotlin_wasm from "../node_modules/@tree-sitter-grammars/tree-sitter-kotlin/tree-sitter-kotlin.wasm" with { type: "file" };
import a_lua_wasm from "../node_modules/@tree-sitter-grammars/tree-sitter-lua/tree-sitter-lua.wasm" with { type: "file" };
import a_lua_tags_scm from "../node_modules/@tree-sitter-grammars/tree-sitter-lua/queries/tags.scm" with { type: "file" };
import a_zig_wasm from "../node_modules/@tree-sitter-grammars/tree-sitter-zig/tree-sitter-zig.wasm" with { type: "file" };
import a_typescript_tags_scm from "./queries/typescript-tags.scm" with { type: "file" };
import a_tsx_tags_scm from "./queries/tsx-tags.scm" with { type: "file" };
import a_c_extra_tags_scm from "./queries/c-extra-tags.scm" with { type: "file" };
import a_cpp_extra_tags_scm from "./queries/cpp-extra-tags.scm" with { type: "file" };
import a_bash_tags_scm from "./queries/bash-tags.scm" with { type: "file" };
import a_haskell_tags_scm from "./queries/haskell-tags.scm" with { type: "file" };
import a_dart_tags_scm from "./queries/dart-tags.scm" with { type: "file" };
import a_julia_tags_scm from "./queries/julia-tags.scm" with { type: "file" };
import a_kotlin_tags_scm from "./queries/kotlin-tags.scm" with { type: "file" };
import a_zig_tags_scm from "./queries/zig-tags.scm" with { type: "file" };
import a_ocaml_interface_extra_tags_scm from "./queries/ocaml_interface-extra-tags.scm" with { type: "file" };
import a_php_extra_tags_scm from "./queries/php-extra-tags.scm" with { type: "file" };
import a_c_sharp_extra_tags_scm from "./queries/c_sharp-extra-tags.scm" with { type: "file" };
import a_java_extra_tags_scm from "./queries/java-extra-tags.scm" with { type: "file" };

// Highlight queries for code blocks in replies (core/term/highlight.ts), straight from the packages.
import a_python_highlights_scm from "../node_modules/tree-sitter-python/queries/highlights.scm" with { type: "file" };
import a_javascript_highlights_scm from "../node_modules/tree-sitter-javascript/queries/highlights.scm" with { type: "file" };
import a_typescript_highlights_scm from "../node_modules/tree-sitter-typescript/queries/highlights.scm" with { type: "file" };
import a_go_highlights_scm from "../node_modules/tree-sitter-go/queries/highlights.scm" with { type: "file" };
import a_rust_highlights_scm from "../node_modules/tree-sitter-rust/queries/highlights.scm" with { type: "file" };
import a_java_highlights_scm from "../node_modules/tree-sitter-java/queries/highlights.scm" with { type: "file" };
import a_c_highlights_scm from "../node_modules/tree-sitter-c/queries/highlights.scm" with { type: "file" };
import a_cpp_highlights_scm from "../node_modules/tree-sitter-cpp/queries/highlights.scm" with { type: "file" };
import a_c_sharp_highlights_scm from "../node_modules/tree-sitter-c-sharp/queries/highlights.scm" with { type: "file" };
import a_ruby_highlights_scm from "../node_modules/tree-sitter-ruby/queries/highlights.scm" with { type: "file" };
import a_php_highlights_scm from "../node_modules/tree-sitter-php/queries/highlights.scm" with { type: "file" };
import a_scala_highlights_scm from "../node_modules/tree-sitter-scala/queries/highlights.scm" with { type: "file" };
import a_elixir_highlights_scm from "../node_modules/tree-sitter-elixir/queries/highlights.scm" with { type: "file" };
import a_ocaml_highlights_scm from "../node_modules/tree-sitter-ocaml/queries/highlights.scm" with { type: "file" };
import a_bash_highlights_scm from "../node_modules/tree-sitter-bash/queries/highlights.scm" with { type: "file" };
import a_haskell_highlights_scm from "../node_modules/tree-sitter-haskell/queries/highlights.scm" with { type: "file" };
import a_dart_highlights_scm from "../node_modules/tree-sitter-dart/queries/highlights.scm" with { type: "file" };
import a_julia_highlights_scm from "../node_modules/tree-sitter-julia/queries/highlights.scm" with { type: "file" };
import a_lua_highlights_scm from "../node_modules/@tree-sitter-grammars/tree-sitter-lua/queries/highlights.scm" with { type: "file" };
import a_zig_highlights_scm from "../node_modules/@tree-sitter-grammars/tree-sitter-zig/queries/highlights.scm" with { type: "file" };

/** The web-tree-sitter runtime .wasm. */
export const RUNTIME_WASM: string = runtimeWasm;

/** Grammar .wasm files and tags queries by key. */
export const GRAMMAR_ASSETS: Readonly<Record<string, string>> = {
  "python.wasm": a_python_wasm,
  "python-tags.scm": a_python_tags_scm,
  "javascript.wasm": a_javascript_wasm,
  "javascript-tags.scm": a_javascript_tags_scm,
  "typescript.wasm": a_typescript_wasm,
  "tsx.wasm": a_tsx_wasm,
  "go.wasm": a_go_wasm,
  "go-tags.scm": a_go_tags_scm,
  "rust.wasm": a_rust_wasm,
  "rust-tags.scm": a_rust_tags_scm,
  "java.wasm": a_java_wasm,
  "java-tags.scm": a_java_tags_scm,
  "c.wasm": a_c_wasm,
  "c-tags.scm": a_c_tags_scm,
  "cpp.wasm": a_cpp_wasm,
  "cpp-tags.scm": a_cpp_tags_scm,
  "c_sharp.wasm": a_c_sharp_wasm,
  "c_sharp-tags.scm": a_c_sharp_tags_scm,
  "ruby.wasm": a_ruby_wasm,
  "ruby-tags.scm": a_ruby_tags_scm,
  "php.wasm": a_php_wasm,
  "php-tags.scm": a_php_tags_scm,
  "scala.wasm": a_scala_wasm,
  "scala-tags.scm": a_scala_tags_scm,
  "elixir.wasm": a_elixir_wasm,
  "elixir-tags.scm": a_elixir_tags_scm,
  "ocaml.wasm": a_ocaml_wasm,
  "ocaml-tags.scm": a_ocaml_tags_scm,
  "ocaml_interface.wasm": a_ocaml_interface_wasm,
  "bash.wasm": a_bash_wasm,
  "haskell.wasm": a_haskell_wasm,
  "dart.wasm": a_dart_wasm,
  "julia.wasm": a_julia_wasm,
  "kotlin.wasm": a_kotlin_wasm,
  "lua.wasm": a_lua_wasm,
  "lua-tags.scm": a_lua_tags_scm,
  "zig.wasm": a_zig_wasm,
  "typescript-tags.scm": a_typescript_tags_scm,
  "tsx-tags.scm": a_tsx_tags_scm,
  "c-extra-tags.scm": a_c_extra_tags_scm,
  "cpp-extra-tags.scm": a_cpp_extra_tags_scm,
  "bash-tags.scm": a_bash_tags_scm,
  "haskell-tags.scm": a_haskell_tags_scm,
  "dart-tags.scm": a_dart_tags_scm,
  "julia-tags.scm": a_julia_tags_scm,
  "kotlin-tags.scm": a_kotlin_tags_scm,
  "zig-tags.scm": a_zig_tags_scm,
  "ocaml_interface-extra-tags.scm": a_ocaml_interface_extra_tags_scm,
  "php-extra-tags.scm": a_php_extra_tags_scm,
  "c_sharp-extra-tags.scm": a_c_sharp_extra_tags_scm,
  "java-extra-tags.scm": a_java_extra_tags_scm,
  "python-highlights.scm": a_python_highlights_scm,
  "javascript-highlights.scm": a_javascript_highlights_scm,
  "typescript-highlights.scm": a_typescript_highlights_scm,
  "go-highlights.scm": a_go_highlights_scm,
  "rust-highlights.scm": a_rust_highlights_scm,
  "java-highlights.scm": a_java_highlights_scm,
  "c-highlights.scm": a_c_highlights_scm,
  "cpp-highlights.scm": a_cpp_highlights_scm,
  "c_sharp-highlights.scm": a_c_sharp_highlights_scm,
  "ruby-highlights.scm": a_ruby_highlights_scm,
  "php-highlights.scm": a_php_highlights_scm,
  "scala-highlights.scm": a_scala_highlights_scm,
  "elixir-highlights.scm": a_elixir_highlights_scm,
  "ocaml-highlights.scm": a_ocaml_highlights_scm,
  "bash-highlights.scm": a_bash_highlights_scm,
  "haskell-highlights.scm": a_haskell_highlights_scm,
  "dart-highlights.scm": a_dart_highlights_scm,
  "julia-highlights.scm": a_julia_highlights_scm,
  "lua-highlights.scm": a_lua_highlights_scm,
  "zig-highlights.scm": a_zig_highlights_scm,
};

/** The runtime and every grammar asset, as GrammarLoader takes them. */
export const EMBEDDED_ASSETS: GrammarAssets = { runtime: RUNTIME_WASM, files: GRAMMAR_ASSETS };
