// What a chat file imports: its import statements, read by pattern, resolved to
// listed repository files as each language's tooling would (TS/JS relative paths,
// tsconfig `paths`/`baseUrl` and workspace packages; Python modules; Go packages of
// the module and the same package; Rust `mod`/`use crate::`; Java/Kotlin/Scala
// classes and packages; C# namespaces by folder), with the names taken from each.
import { posix } from "node:path";
import { aliasOf, expandUse, goImports, readTsPaths, tsImportStatements, usedMembers, type TsPaths } from "./import-syntax.ts";

/** Per imported file, the names the chat file takes from it (empty: the file as a whole). */
export type FileImports = Map<string, Set<string>>;

/**
 * Receives one import statement's resolution: the file (or the files, e.g. a Go
 * package's) and the names taken from each. The same file may come more than once
 * (its names are then merged, as importsOf does); never the importing file itself.
 */
export type ImportSink = (files: string | readonly string[], names: readonly string[]) => void;

/** What a language's reader hands each resolution to (null: unresolved, ignored). */
interface Emit {
  one(file: string | null, names: Iterable<string>): void;
  all(files: readonly string[], names: readonly string[]): void;
}

const NONE: readonly string[] = [];

export interface ImportSource {
  /** Every listed repository file. */
  files: readonly string[];
  /** A listed file's text, or null when unreadable. */
  read(path: string): string | null;
}

const TS_LIKE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const TS_EXTENSIONS = [".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
const JVM = /\.(java|kt|kts|scala)$/;
const PY_PLAIN_LIST = /^[\w \t,]*$/;
const PY_NAME = /^\w+$/;
/** How far re-exports are followed (`index.ts` → `./schemas.ts` → ...). */
const REEXPORT_HOPS = 3;

/**
 * What is read of a listing alone (no file's text), built on first use: a cold map's
 * plan, its pre-scan and the chat files' imports each resolve against the same listing
 * of (at 100k files) a second's worth of indexes, built once.
 */
class ListingIndex {
  readonly listed: Set<string>;
  byDir: Map<string, string[]> | null = null;
  /** Listed files by base name, and by their last two path components (`pkg/__init__.py`), each in path order. */
  byBase: Map<string, string[]> | null = null;
  byLastTwo: Map<string, string[]> | null = null;
  /** Every folder holding a listed file at any depth, by its last component. */
  folders: Map<string, string[]> | null = null;
  /** Folders by their last component, each in path order. */
  dirsByName: Map<string, string[]> | null = null;

  constructor(files: readonly string[]) {
    this.listed = new Set(files);
  }
}

/** Each listing's indexes, by the listing's array (a resolver over another array builds its own). */
const LISTING_INDEXES = new WeakMap<readonly string[], ListingIndex>();

/** Resolves imports of chat files against one listing (indexes built on first use). */
export class ImportResolver {
  readonly #source: ImportSource;
  /** The listing's indexes (shared by every resolver over the same array). */
  readonly #ix: ListingIndex;
  /** Whether a module path names a listed folder. */
  readonly #packageFolders = new Map<string, boolean>();
  /** A bare TS/JS specifier's file per importing folder and specifier; a path's file per path. */
  readonly #tsResolved = new Map<string, string | null>();
  readonly #tsFiles = new Map<string, string | null>();
  /** A relative Python module's file per importing folder; an absolute module's candidates (nearest picked per importer). */
  readonly #pyRelative = new Map<string, string | null>();
  readonly #pyAbsolute = new Map<string, readonly string[]>();
  /** A folder's Go files (`true`: with its tests). */
  readonly #goFiles = new Map<string, readonly string[]>();
  #packages: Map<string, string> | null = null;
  readonly #tsconfigs = new Map<string, TsPaths | null>();
  readonly #texts = new Map<string, string | null>();
  readonly #endings = new Map<string, readonly string[]>();
  readonly #dirEndings = new Map<string, string | null>();
  /** A JVM class path's files (`a/b/C` → `…/a/b/C.java`, `.kt`, `.scala`), sorted. */
  readonly #jvmClasses = new Map<string, readonly string[]>();
  /** A Rust module path's file (`a/b` → `a/b.rs` or `a/b/mod.rs`). */
  readonly #rustFiles = new Map<string, string | null>();
  /** A folder's Rust crate root (see #crateRoot). */
  readonly #crateRoots = new Map<string, string | null>();
  /** A folder's Go module (the nearest go.mod above it), read once. */
  readonly #goModules = new Map<string, { dir: string; path: string } | null>();
  /** How far re-exports are followed (0: not at all, as the cold map's pre-scan of every file does). */
  readonly #hops: number;

  /** Whether the other files of a Go/JVM/C# file's folder count as imported (its package); not in the pre-scan, where they would link every folder to itself. */
  readonly #samePackage: boolean;

  constructor(source: ImportSource, options: { followReexports?: boolean; samePackage?: boolean } = {}) {
    this.#source = source;
    let index = LISTING_INDEXES.get(source.files);
    if (!index) LISTING_INDEXES.set(source.files, (index = new ListingIndex(source.files)));
    this.#ix = index;
    this.#hops = options.followReexports === false ? 0 : REEXPORT_HOPS;
    this.#samePackage = options.samePackage !== false;
  }

  /** The repository files `chat` imports, with the names it uses from each. */
  importsOf(chat: string): FileImports {
    const out: FileImports = new Map();
    const add = (file: string, names: Iterable<string>) => {
      let set = out.get(file);
      if (!set) out.set(file, (set = new Set()));
      for (const name of names) set.add(name);
    };
    this.#collect(chat, {
      one: (file, names) => {
        if (file && file !== chat) add(file, names);
      },
      all: (files, names) => {
        for (const file of files) if (file !== chat) add(file, names);
      },
    });
    return out;
  }

  /**
   * The same resolutions as importsOf, unmerged, statement by statement (a Go package's
   * files as one shared list): the cold map's pre-scan of every file builds its graph
   * from these without a set per imported file. Merged in order, they are importsOf.
   */
  eachImport(path: string, sink: ImportSink): void {
    this.#collect(path, {
      one: (file, names) => {
        if (file && file !== path) sink(file, Array.isArray(names) ? names : [...names]);
      },
      all: (files, names) => {
        const others = files.includes(path) ? files.filter((f) => f !== path) : files;
        if (others.length > 0) sink(others, names);
      },
    });
  }

  #collect(chat: string, emit: Emit): void {
    const text = this.#source.read(chat);
    if (text === null) return;
    const add = emit.one;
    if (TS_LIKE.test(chat)) this.#typescript(chat, text, add);
    else if (/\.pyi?$/.test(chat)) this.#python(chat, text, add);
    else if (chat.endsWith(".go")) this.#go(chat, text, emit);
    else if (chat.endsWith(".rs")) this.#rust(chat, text, add);
    else if (JVM.test(chat)) this.#jvm(chat, text, emit);
    else if (chat.endsWith(".cs")) this.#csharp(chat, text, emit);
  }

  // ─── TS/JS ────────────────────────────────────────────────────────────────

  #typescript(chat: string, text: string, add: (file: string | null, names: Iterable<string>) => void): void {
    for (const statement of tsImportStatements(text)) {
      const file = this.#resolveTs(chat, statement.spec);
      if (!file) continue;
      const names = statement.namespace ? usedMembers(text, statement.namespace) : statement.names;
      add(file, names);
      if (this.#hops > 0) this.#followTsReexports(file, names, add, this.#hops);
    }
  }

  /** Names taken from a file that re-exports them (`export { A } from`, `export * from`): their files too. */
  #followTsReexports(file: string, names: readonly string[], add: (file: string | null, names: Iterable<string>) => void, hops: number): void {
    if (hops === 0 || names.length === 0) return;
    const text = this.#read(file);
    if (text === null) return;
    for (const statement of tsImportStatements(text)) {
      if (!statement.reexport) continue;
      const passed = statement.star ? names : names.flatMap((name) => (statement.exported.has(name) ? [statement.exported.get(name)!] : []));
      if (passed.length === 0) continue;
      const target = this.#resolveTs(file, statement.spec);
      if (!target) continue;
      add(target, passed);
      this.#followTsReexports(target, passed, add, hops - 1);
    }
  }

  #read(path: string): string | null {
    let text = this.#texts.get(path);
    if (text === undefined) this.#texts.set(path, (text = this.#source.read(path)));
    return text;
  }

  #resolveTs(from: string, spec: string): string | null {
    if (spec.startsWith("./") || spec.startsWith("../")) return this.#tsFile(posix.join(posix.dirname(from), spec));
    if (spec.startsWith("/")) return null;
    // A bare specifier resolves by the folder's tsconfig and the workspace packages: remembered per folder.
    const key = `${posix.dirname(from)}\0${spec}`;
    let found = this.#tsResolved.get(key);
    if (found === undefined) {
      found = null;
      const config = this.#tsconfigFor(from);
      for (const base of [...(config ? config.resolve(spec) : []), ...this.#workspacePackage(spec)]) {
        found = this.#tsFile(base);
        if (found) break;
      }
      this.#tsResolved.set(key, found);
    }
    return found;
  }

  /** The listed file a TS/JS path without extension (or with `.js` written for `.ts`) names, remembered per path. */
  #tsFile(base: string): string | null {
    let found = this.#tsFiles.get(base);
    if (found === undefined) this.#tsFiles.set(base, (found = this.#tsFileNow(base)));
    return found;
  }

  #tsFileNow(base: string): string | null {
    const normal = posix.normalize(base);
    if (normal.startsWith("../")) return null;
    if (this.#ix.listed.has(normal)) return normal;
    // Candidates built one at a time: the first usually answers (the pre-scan resolves every import of every file).
    const stripped = normal.endsWith("js") ? normal.replace(/\.(m|c)?js$/, "") : normal;
    for (const e of TS_EXTENSIONS) if (this.#ix.listed.has(stripped + e)) return stripped + e;
    for (const e of TS_EXTENSIONS) if (this.#ix.listed.has(`${normal}/index${e}`)) return `${normal}/index${e}`;
    return null;
  }

  /** The nearest tsconfig.json (or jsconfig.json) above `file` that has `paths` or `baseUrl`. */
  #tsconfigFor(file: string): TsPaths | null {
    let dir = posix.dirname(file);
    for (;;) {
      let config = this.#tsconfigs.get(dir);
      if (config === undefined) {
        config = null;
        for (const name of ["tsconfig.json", "jsconfig.json"]) {
          const path = dir === "." ? name : `${dir}/${name}`;
          if (this.#ix.listed.has(path)) config = readTsPaths(path, (p) => (this.#ix.listed.has(p) ? this.#source.read(p) : null));
          if (config) break;
        }
        this.#tsconfigs.set(dir, config);
      }
      if (config) return config;
      const up = posix.dirname(dir);
      // "." ends a repository path; "/" (an absolute path, e.g. a read-only file outside the repository) ends itself.
      if (dir === "." || up === dir) return null;
      dir = up;
    }
  }

  /** `@scope/pkg/sub` → candidate paths in the listed package.json whose name is `@scope/pkg` (monorepos). */
  #workspacePackage(spec: string): string[] {
    if (!this.#packages) {
      this.#packages = new Map();
      for (const file of this.#source.files) {
        if (file !== "package.json" && !file.endsWith("/package.json")) continue;
        if (file.includes("node_modules/")) continue;
        try {
          const name = (JSON.parse(this.#source.read(file) ?? "{}") as { name?: unknown }).name;
          if (typeof name === "string") this.#packages.set(name, posix.dirname(file));
        } catch {
          // Not JSON: not a package.
        }
      }
    }
    const parts = spec.split("/");
    const name = spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
    const dir = this.#packages.get(name);
    if (dir === undefined) return [];
    const rest = spec.slice(name.length + 1);
    const at = (p: string) => (dir === "." ? p : `${dir}/${p}`);
    return rest ? [at(rest), at(`src/${rest}`)] : [at("src/index"), at("index"), at("src/main"), at("lib/index")];
  }

  // ─── Python ───────────────────────────────────────────────────────────────

  #python(chat: string, text: string, add: (file: string | null, names: Iterable<string>) => void): void {
    const code = text.replace(/\\\r?\n/g, " ");
    for (const m of code.matchAll(/^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)/gm)) {
      const module = m[1]!;
      const list = m[2]!;
      // A plain list (`a, b`: no parentheses, no `as`) read without a RegExp per name (the pre-scan reads every file's).
      const names = (PY_PLAIN_LIST.test(list) && !/\sas\s/.test(list) ? list.split(",").map((p) => p.trim()) : list.replace(/[()]/g, "").split(",").map((p) => p.trim().split(/\s+as\s+/)[0]!)).filter((n) => PY_NAME.test(n));
      const target = this.#resolvePython(chat, module);
      add(target, names);
      if (target && this.#hops > 0) this.#followPythonReexports(target, names, add, this.#hops);
      // `from package import module`: a name may be a module of its own (only where the package is a listed folder).
      if (this.#packageFolder(chat, module)) for (const name of names) {
        const sub = this.#resolvePython(chat, module.endsWith(".") ? module + name : `${module}.${name}`);
        if (sub) add(sub, usedMembers(code, aliasOf(m[2]!, name)));
      }
    }
    for (const m of code.matchAll(/^[ \t]*import[ \t]+([\w. \t,]+)/gm)) {
      for (const part of m[1]!.split(",")) {
        const [module, alias] = part.trim().split(/\s+as\s+/) as [string, string | undefined];
        add(this.#resolvePython(chat, module), usedMembers(code, alias ?? module));
      }
    }
  }

  /** Names a module takes from another (`from .x import A` in a package's __init__.py): their files too. */
  #followPythonReexports(file: string, names: readonly string[], add: (file: string | null, names: Iterable<string>) => void, hops: number): void {
    if (hops === 0 || names.length === 0) return;
    const text = this.#read(file);
    if (text === null) return;
    for (const m of text.matchAll(/^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)/gm)) {
      const taken = m[2]!.replace(/[()]/g, "").split(",").map((p) => p.trim().split(/\s+as\s+/));
      const passed = taken.flatMap(([original, alias]) => (original && names.includes(alias ?? original) ? [original] : m[2]!.trim() === "*" ? [...names] : []));
      if (passed.length === 0) continue;
      const target = this.#resolvePython(file, m[1]!);
      if (!target) continue;
      add(target, passed);
      this.#followPythonReexports(target, passed, add, hops - 1);
    }
  }

  /** Whether a folder that `module.name` could resolve into is listed (an ancestor of some listed file). */
  #packageFolder(from: string, module: string): boolean {
    if (!this.#ix.folders) {
      this.#ix.folders = new Map();
      const seen = new Set<string>();
      for (const file of this.#source.files) {
        for (let dir = posix.dirname(file); !seen.has(dir); dir = posix.dirname(dir)) {
          seen.add(dir);
          push(this.#ix.folders, dir.slice(dir.lastIndexOf("/") + 1), dir);
          if (dir === "." || dir === "/") break;
        }
      }
    }
    const relative = module.startsWith(".");
    // Remembered per module (absolute), or per importing folder and module (relative).
    const key = relative ? `${posix.dirname(from)}\0${module}` : module;
    let known = this.#packageFolders.get(key);
    if (known !== undefined) return known;
    const dots = /^\.*/.exec(module)![0].length;
    const rel = module.slice(dots).split(".").filter(Boolean).join("/");
    if (relative) {
      let dir = posix.dirname(from);
      for (let i = 1; i < dots; i++) dir = posix.dirname(dir);
      const folder = posix.normalize(posix.join(dir, rel));
      known = this.#ix.folders.get(folder.slice(folder.lastIndexOf("/") + 1))?.includes(folder) ?? false;
    } else known = !rel || (this.#ix.folders.get(rel.slice(rel.lastIndexOf("/") + 1))?.some((dir) => dir === rel || dir.endsWith("/" + rel)) ?? false);
    this.#packageFolders.set(key, known);
    return known;
  }

  #resolvePython(from: string, module: string): string | null {
    if (module.startsWith(".")) {
      const key = `${posix.dirname(from)}\0${module}`;
      let found = this.#pyRelative.get(key);
      if (found === undefined) {
        const dots = /^\.*/.exec(module)![0].length;
        const rel = module.slice(dots).split(".").filter(Boolean).join("/");
        let dir = posix.dirname(from);
        for (let i = 1; i < dots; i++) dir = posix.dirname(dir);
        const base = posix.join(dir, rel);
        found = [`${base}.py`, `${base}.pyi`, `${base}/__init__.py`].map((p) => posix.normalize(p)).find((p) => this.#ix.listed.has(p)) ?? null;
        this.#pyRelative.set(key, found);
      }
      return found;
    }
    let candidates = this.#pyAbsolute.get(module);
    if (candidates === undefined) {
      candidates = NONE;
      const rel = module.split(".").filter(Boolean).join("/");
      if (rel) {
        for (const ending of [`${rel}.py`, `${rel}.pyi`, `${rel}/__init__.py`]) {
          const found = this.#endingWith(ending);
          if (found.length > 0) {
            candidates = found;
            break;
          }
        }
      }
      this.#pyAbsolute.set(module, candidates);
    }
    return candidates.length === 0 ? null : candidates.length === 1 ? candidates[0]! : nearest(from, candidates);
  }

  // ─── Go ───────────────────────────────────────────────────────────────────

  #go(chat: string, text: string, emit: Emit): void {
    const isTest = chat.endsWith("_test.go");
    const goFiles = (dir: string) => {
      const key = `${isTest ? "t" : "p"}${dir}`;
      let files = this.#goFiles.get(key);
      if (!files) this.#goFiles.set(key, (files = this.#filesIn(dir).filter((f) => f.endsWith(".go") && (isTest || !f.endsWith("_test.go")))));
      return files;
    };
    // The same package: the other files of the folder.
    if (this.#samePackage) emit.all(goFiles(posix.dirname(chat)), NONE);
    const module = this.#goModule(chat);
    if (!module) return;
    for (const { alias, path } of goImports(text)) {
      if (path !== module.path && !path.startsWith(module.path + "/")) continue;
      const rel = path.slice(module.path.length + 1);
      const dir = module.dir === "." ? rel || "." : rel ? `${module.dir}/${rel}` : module.dir;
      const files = goFiles(dir);
      if (files.length > 0) emit.all(files, usedMembers(text, alias ?? path.slice(path.lastIndexOf("/") + 1)));
    }
  }

  #goModule(file: string): { dir: string; path: string } | null {
    const start = posix.dirname(file);
    const known = this.#goModules.get(start);
    if (known !== undefined) return known;
    let found: { dir: string; path: string } | null = null;
    for (let dir = start; ; dir = posix.dirname(dir)) {
      const mod = dir === "." ? "go.mod" : `${dir}/go.mod`;
      if (this.#ix.listed.has(mod)) {
        const path = /^module\s+(\S+)/m.exec(this.#source.read(mod) ?? "")?.[1];
        found = path ? { dir, path } : null;
        break;
      }
      if (dir === ".") break;
    }
    this.#goModules.set(start, found);
    return found;
  }

  // ─── Rust ─────────────────────────────────────────────────────────────────

  #rust(chat: string, text: string, add: (file: string | null, names: Iterable<string>) => void): void {
    const base = posix.basename(chat, ".rs");
    const moduleDir = ["mod", "lib", "main"].includes(base) ? posix.dirname(chat) : posix.join(posix.dirname(chat), base);
    for (const m of text.matchAll(/^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;/gm)) {
      add(this.#rustFile(posix.join(moduleDir, m[1]!)), []);
    }
    const crateRoot = this.#crateRoot(chat);
    for (const m of text.matchAll(/^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?use[ \t]+([^;]+);/gm)) {
      for (const path of expandUse(m[1]!.replace(/\s+/g, ""))) {
        const segments = path.split("::");
        const head = segments[0];
        let dir: string | null;
        if (head === "crate") dir = crateRoot;
        else if (head === "self") dir = moduleDir;
        else if (head === "super") dir = posix.dirname(moduleDir);
        else continue;
        if (dir === null) continue;
        let rest = segments.slice(1);
        while (rest[0] === "super") {
          dir = posix.dirname(dir);
          rest = rest.slice(1);
        }
        // The longest prefix of the path that is a module file; what follows are names in it.
        for (let cut = rest.length; cut >= 1; cut--) {
          // posix.join by hand (#rustFile normalises): a native call per cut cost more than the rest of the file.
          let path = dir;
          for (let i = 0; i < cut; i++) if (rest[i]) path += "/" + rest[i]!;
          const file = this.#rustFile(path);
          if (!file) continue;
          add(file, rest.slice(cut, cut + 1).filter((n) => n !== "*" && n !== "self"));
          break;
        }
      }
    }
  }

  #rustFile(base: string): string | null {
    let found = this.#rustFiles.get(base);
    if (found === undefined) {
      const normal = posix.normalize(base);
      found = this.#ix.listed.has(`${normal}.rs`) ? `${normal}.rs` : this.#ix.listed.has(`${normal}/mod.rs`) ? `${normal}/mod.rs` : null;
      this.#rustFiles.set(base, found);
    }
    return found;
  }

  /** The `src` folder beside the nearest Cargo.toml, else the chat file's top `src` folder. */
  #crateRoot(file: string): string | null {
    const start = posix.dirname(file);
    let root = this.#crateRoots.get(start);
    if (root === undefined) this.#crateRoots.set(start, (root = this.#crateRootNow(file)));
    return root;
  }

  #crateRootNow(file: string): string | null {
    for (let dir = posix.dirname(file); ; dir = posix.dirname(dir)) {
      const cargo = dir === "." ? "Cargo.toml" : `${dir}/Cargo.toml`;
      if (this.#ix.listed.has(cargo)) return dir === "." ? "src" : `${dir}/src`;
      if (dir === ".") break;
    }
    const at = file.lastIndexOf("/src/");
    return at >= 0 ? file.slice(0, at + 4) : file.startsWith("src/") ? "src" : ".";
  }

  // ─── Java, Kotlin, Scala ──────────────────────────────────────────────────

  #jvm(chat: string, text: string, emit: Emit): void {
    const add = emit.one;
    const ext = /\.\w+$/.exec(chat)![0];
    const sameLanguage = (f: string) => JVM.test(f) && (f.endsWith(ext) || f.endsWith(".java"));
    // The same package: the other files of the folder.
    if (this.#samePackage) emit.all(this.#filesIn(posix.dirname(chat)).filter(sameLanguage), NONE);
    for (const m of text.matchAll(/^[ \t]*import[ \t]+(static[ \t]+)?(\w+(?:\.\w+)*)(\.\*)?[ \t]*;?/gm)) {
      const parts = m[2]!.split(".");
      if (m[3]) {
        // `import a.b.*`: every file of the package (or the members of a class).
        const dir = this.#dirEndingWith(parts.join("/"));
        if (dir !== null) emit.all(this.#filesIn(dir).filter(sameLanguage), NONE);
        else add(this.#jvmClass(chat, parts), []);
        continue;
      }
      // `import a.b.C` (a class), or `import static a.b.C.m` / Kotlin `import a.b.fn` (a member).
      const asClass = this.#jvmClass(chat, parts);
      if (asClass) add(asClass, [parts[parts.length - 1]!, ...usedMembers(text, parts[parts.length - 1]!)]);
      else add(this.#jvmClass(chat, parts.slice(0, -1)), [parts[parts.length - 1]!]);
    }
  }

  #jvmClass(from: string, parts: string[]): string | null {
    if (parts.length === 0) return null;
    const rel = parts.join("/");
    // The candidates per class path, remembered (a class is imported by many files).
    let found = this.#jvmClasses.get(rel);
    if (!found) this.#jvmClasses.set(rel, (found = [".java", ".kt", ".scala"].flatMap((e) => this.#endingWith(rel + e)).sort()));
    return found.length === 0 ? null : found.length === 1 ? found[0]! : nearest(from, found);
  }

  // ─── C# ───────────────────────────────────────────────────────────────────

  #csharp(chat: string, text: string, emit: Emit): void {
    const csharp = (file: string) => file.endsWith(".cs");
    if (this.#samePackage) emit.all(this.#filesIn(posix.dirname(chat)).filter(csharp), NONE);
    for (const m of text.matchAll(/^[ \t]*(?:global[ \t]+)?using[ \t]+(?:static[ \t]+)?([\w.]+)[ \t]*;/gm)) {
      const parts = m[1]!.split(".");
      // Namespaces follow folders by convention, often without the root namespace.
      for (let start = 0; start < parts.length; start++) {
        const dir = this.#dirEndingWith(parts.slice(start).join("/"));
        if (dir === null) continue;
        emit.all(this.#filesIn(dir).filter(csharp), NONE);
        break;
      }
    }
  }

  // ─── Indexes ──────────────────────────────────────────────────────────────

  #filesIn(dir: string): string[] {
    if (!this.#ix.byDir) {
      this.#ix.byDir = new Map();
      for (const file of this.#source.files) {
        const d = posix.dirname(file);
        const list = this.#ix.byDir.get(d);
        if (list) list.push(file);
        else this.#ix.byDir.set(d, [file]);
      }
    }
    return this.#ix.byDir.get(dir) ?? [];
  }

  /** Listed files equal to `ending` or ending with `/ending`, in path order. */
  #endingWith(ending: string): readonly string[] {
    let found = this.#endings.get(ending);
    if (found) return found;
    if (!this.#ix.byBase || !this.#ix.byLastTwo) {
      this.#ix.byBase = new Map();
      this.#ix.byLastTwo = new Map();
      for (const file of [...this.#source.files].sort()) {
        const slash = file.lastIndexOf("/");
        push(this.#ix.byBase, file.slice(slash + 1), file);
        if (slash >= 0) push(this.#ix.byLastTwo, file.slice(file.lastIndexOf("/", slash - 1) + 1), file);
      }
    }
    // Looked up by the ending's last one or two components: only files that share them can match.
    const slash = ending.lastIndexOf("/");
    const list = slash < 0 ? this.#ix.byBase.get(ending) : this.#ix.byLastTwo.get(ending.slice(ending.lastIndexOf("/", slash - 1) + 1));
    // Most endings asked for match nothing (`from a.b import name`: is `a/b/name.py` a module?); those are not remembered.
    if (!list) return NONE;
    found = list.filter((f) => f === ending || f.endsWith("/" + ending));
    this.#endings.set(ending, found);
    return found;
  }

  /** A listed folder equal to `ending` or ending with `/ending` (the first in path order). */
  #dirEndingWith(ending: string): string | null {
    let found = this.#dirEndings.get(ending);
    if (found !== undefined) return found;
    if (!this.#ix.dirsByName) {
      this.#filesIn(".");
      this.#ix.dirsByName = new Map();
      for (const dir of [...this.#ix.byDir!.keys()].sort()) push(this.#ix.dirsByName, dir.slice(dir.lastIndexOf("/") + 1), dir);
    }
    found = this.#ix.dirsByName.get(ending.slice(ending.lastIndexOf("/") + 1))?.find((dir) => dir === ending || dir.endsWith("/" + ending)) ?? null;
    this.#dirEndings.set(ending, found);
    return found;
  }
}

function push(index: Map<string, string[]>, key: string, value: string): void {
  const list = index.get(key);
  if (list) list.push(value);
  else index.set(key, [value]);
}

/** The candidate sharing the longest path prefix with `from` (ties: path order). */
function nearest(from: string, candidates: readonly string[]): string {
  let best = candidates[0]!;
  let bestShare = -1;
  // Candidates come sorted (#endingWith); a tie goes to the first in path order.
  for (const candidate of candidates) {
    let i = 0;
    while (i < candidate.length && candidate[i] === from[i]) i++;
    if (i > bestShare) {
      best = candidate;
      bestShare = i;
    }
  }
  return best;
}
