// The one language table: which grammar, tags queries and comment syntax a file
// gets, by extension or file name. Grammar assets are named by key; their bytes
// come from grammars/embedded.ts (embedded in the compiled binary).

export interface CommentSyntax {
  line?: string;
  block?: readonly [open: string, close: string];
}

export interface LanguageSpec {
  /** Stable language id, e.g. "python", "tsx". */
  name: string;
  /** Lower-case extensions with the dot. */
  extensions: readonly string[];
  /** Exact base names (e.g. "Rakefile"). */
  filenames?: readonly string[];
  /** Asset key of the grammar .wasm. */
  wasm: string;
  /** Asset keys of tags queries, concatenated in order. */
  queries: readonly string[];
  /** Asset keys of highlight queries (code blocks in replies), concatenated in order; none: shown plain. */
  highlights?: readonly string[];
  comment: CommentSyntax;
  /** npm package and pinned version the grammar comes from (part of the tag-cache key). */
  source: string;
}

const C_LIKE: CommentSyntax = { line: "//", block: ["/*", "*/"] };
const HASH: CommentSyntax = { line: "#" };

export const LANGUAGES: readonly LanguageSpec[] = [
  { name: "python", extensions: [".py", ".pyi", ".pyw"], wasm: "python.wasm", queries: ["python-tags.scm"], highlights: ["python-highlights.scm"], comment: HASH, source: "tree-sitter-python@0.25.0" },
  { name: "javascript", extensions: [".js", ".jsx", ".mjs", ".cjs"], wasm: "javascript.wasm", queries: ["javascript-tags.scm"], highlights: ["javascript-highlights.scm"], comment: C_LIKE, source: "tree-sitter-javascript@0.25.0" },
  { name: "typescript", extensions: [".ts", ".mts", ".cts"], wasm: "typescript.wasm", queries: ["typescript-tags.scm"], highlights: ["javascript-highlights.scm", "typescript-highlights.scm"], comment: C_LIKE, source: "tree-sitter-typescript@0.23.2" },
  { name: "tsx", extensions: [".tsx"], wasm: "tsx.wasm", queries: ["typescript-tags.scm", "tsx-tags.scm"], highlights: ["javascript-highlights.scm", "typescript-highlights.scm"], comment: C_LIKE, source: "tree-sitter-typescript@0.23.2" },
  { name: "go", extensions: [".go"], wasm: "go.wasm", queries: ["go-tags.scm"], highlights: ["go-highlights.scm"], comment: C_LIKE, source: "tree-sitter-go@0.25.0" },
  { name: "rust", extensions: [".rs"], wasm: "rust.wasm", queries: ["rust-tags.scm"], highlights: ["rust-highlights.scm"], comment: C_LIKE, source: "tree-sitter-rust@0.24.0" },
  { name: "java", extensions: [".java"], wasm: "java.wasm", queries: ["java-tags.scm", "java-extra-tags.scm"], highlights: ["java-highlights.scm"], comment: C_LIKE, source: "tree-sitter-java@0.23.5" },
  { name: "c", extensions: [".c", ".h"], wasm: "c.wasm", queries: ["c-tags.scm", "c-extra-tags.scm"], highlights: ["c-highlights.scm"], comment: C_LIKE, source: "tree-sitter-c@0.24.1" },
  { name: "cpp", extensions: [".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ino"], wasm: "cpp.wasm", queries: ["cpp-tags.scm", "cpp-extra-tags.scm"], highlights: ["c-highlights.scm", "cpp-highlights.scm"], comment: C_LIKE, source: "tree-sitter-cpp@0.23.4" },
  { name: "csharp", extensions: [".cs"], wasm: "c_sharp.wasm", queries: ["c_sharp-tags.scm", "c_sharp-extra-tags.scm"], highlights: ["c_sharp-highlights.scm"], comment: C_LIKE, source: "tree-sitter-c-sharp@0.23.5" },
  { name: "ruby", extensions: [".rb", ".rake", ".gemspec"], filenames: ["Rakefile", "Gemfile"], wasm: "ruby.wasm", queries: ["ruby-tags.scm"], highlights: ["ruby-highlights.scm"], comment: HASH, source: "tree-sitter-ruby@0.23.1" },
  { name: "php", extensions: [".php"], wasm: "php.wasm", queries: ["php-tags.scm", "php-extra-tags.scm"], highlights: ["php-highlights.scm"], comment: C_LIKE, source: "tree-sitter-php@0.24.2" },
  { name: "scala", extensions: [".scala", ".sc"], wasm: "scala.wasm", queries: ["scala-tags.scm"], highlights: ["scala-highlights.scm"], comment: C_LIKE, source: "tree-sitter-scala@0.24.0" },
  { name: "elixir", extensions: [".ex", ".exs"], wasm: "elixir.wasm", queries: ["elixir-tags.scm"], highlights: ["elixir-highlights.scm"], comment: HASH, source: "tree-sitter-elixir@0.3.5" },
  { name: "ocaml", extensions: [".ml"], wasm: "ocaml.wasm", queries: ["ocaml-tags.scm"], highlights: ["ocaml-highlights.scm"], comment: { block: ["(*", "*)"] }, source: "tree-sitter-ocaml@0.24.2" },
  { name: "ocaml_interface", extensions: [".mli"], wasm: "ocaml_interface.wasm", queries: ["ocaml-tags.scm", "ocaml_interface-extra-tags.scm"], comment: { block: ["(*", "*)"] }, source: "tree-sitter-ocaml@0.24.2" },
  { name: "bash", extensions: [".sh", ".bash"], filenames: [".bashrc", ".bash_profile"], wasm: "bash.wasm", queries: ["bash-tags.scm"], highlights: ["bash-highlights.scm"], comment: HASH, source: "tree-sitter-bash@0.25.1" },
  { name: "haskell", extensions: [".hs"], wasm: "haskell.wasm", queries: ["haskell-tags.scm"], highlights: ["haskell-highlights.scm"], comment: { line: "--", block: ["{-", "-}"] }, source: "tree-sitter-haskell@0.23.1" },
  { name: "dart", extensions: [".dart"], wasm: "dart.wasm", queries: ["dart-tags.scm"], highlights: ["dart-highlights.scm"], comment: C_LIKE, source: "tree-sitter-dart@1.0.0" },
  { name: "julia", extensions: [".jl"], wasm: "julia.wasm", queries: ["julia-tags.scm"], highlights: ["julia-highlights.scm"], comment: { line: "#", block: ["#=", "=#"] }, source: "tree-sitter-julia@0.23.1" },
  { name: "kotlin", extensions: [".kt", ".kts"], wasm: "kotlin.wasm", queries: ["kotlin-tags.scm"], comment: C_LIKE, source: "@tree-sitter-grammars/tree-sitter-kotlin@1.1.0" },
  { name: "lua", extensions: [".lua"], wasm: "lua.wasm", queries: ["lua-tags.scm"], highlights: ["lua-highlights.scm"], comment: { line: "--", block: ["--[[", "]]"] }, source: "@tree-sitter-grammars/tree-sitter-lua@0.4.1" },
  { name: "zig", extensions: [".zig"], wasm: "zig.wasm", queries: ["zig-tags.scm"], highlights: ["zig-highlights.scm"], comment: { line: "//" }, source: "@tree-sitter-grammars/tree-sitter-zig@1.1.2" },
];

const byExtension = new Map<string, LanguageSpec>();
const byFilename = new Map<string, LanguageSpec>();
for (const lang of LANGUAGES) {
  for (const ext of lang.extensions) byExtension.set(ext, lang);
  for (const name of lang.filenames ?? []) byFilename.set(name, lang);
}

/** The language of a repository path, or null when no grammar covers it (the file still appears by name). */
export function languageFor(path: string): LanguageSpec | null {
  const slash = path.lastIndexOf("/");
  const base = path.slice(slash + 1);
  const named = byFilename.get(base);
  if (named) return named;
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return null;
  return byExtension.get(base.slice(dot).toLowerCase()) ?? null;
}

/** Bump when a query in grammars/queries changes, or what the repo map extracts with them. */
const QUERY_REVISION = 3;

/** One string naming every grammar and query version: part of the tag-cache key. */
export const GRAMMAR_TABLE_VERSION = `${QUERY_REVISION}:` + LANGUAGES.map((l) => `${l.name}=${l.source}`).join(",");
