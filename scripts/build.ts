// Compile the self-contained `coder` binary: dist/coder for this machine, or with
// --release every supported target into dist/release/ with SHA256SUMS.
// Bytecode on; the binary never auto-loads a bunfig.toml, .env, tsconfig.json or
// package.json from the directory it runs in (coder reads the repository's .env
// itself, for API keys only). The version and the plugin API text are baked in.
// Code is split into chunks loaded on first import(), so `--version` evaluates only
// main.ts's own chunk; embedded grammars and queries are stored packed (grammars/packed.ts:
// brotli 11 for what is unpacked once into the user's cache, zstd 19 for the rest; kept in a
// build cache). Libraries no start-up path uses (web page, image, MCP, ACP, `coder init`'s
// prompts, YAML, zod) are bundled apart as library packs, embedded packed and imported from the
// user's cache on first use: no bytecode and no code room for them (LIBRARY_PACKS). zod carries
// English only (zodEnglishOnly); the openai SDK's resources coder never calls are stand-ins
// (scripts/openai-prune.ts). `coder eval`'s runner and report are a code pack the same way
// (CODE_PACKS), files that share much are packed together (ASSET_GROUPS), and the Node built-ins
// no start uses are taken at run time (RUNTIME_BUILTINS): all to keep the binary under its size
// floor (issue 26). dist/coder.modules.json maps each chunk to its source modules,
// for CODER_TRACE_MODULES (main.ts) and the test that keeps heavy packages off the start.
// CODER_BYTECODE=0 builds without bytecode (7.5 MB smaller, but `coder acp` and a task start
// markedly slower), and CODER_BYTECODE_DEPTH=N with bytecode for N levels of nested functions
// only (0: 6 MB smaller, but `coder acp`'s initialize twice as slow and a task 30% more CPU and
// 20 MB more memory), for measuring that trade. The bytecode is laid out by the start-up
// profiles in scripts/bytecode-order/ (scripts/bytecode-order.ts), and the binary starts with a
// raised JIT policy (JIT_POLICY): both keep a short run's resident memory down.
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import type { BunPlugin } from "bun";
import { CACHE_ABOVE, type Codec, memberPath, packAsset, unpackAsset } from "../grammars/packed.ts";
import { openaiPrune } from "./openai-prune.ts";
import { assetName } from "./release-lib.ts";

const ROOT = join(import.meta.dir, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

export const RELEASE_TARGETS = [
  "bun-linux-x64",
  "bun-linux-arm64",
  "bun-linux-x64-musl",
  "bun-linux-arm64-musl",
  "bun-darwin-x64",
  "bun-darwin-arm64",
  "bun-windows-x64",
] as const;

/** Entry points: main.ts, plus the repo map's workers when they exist (workers need their own entry). */
function entrypoints(): string[] {
  const list = [join(ROOT, "main.ts")];
  // The repo map's workers: the parser pool's, and the stat helper's (stat.ts).
  for (const file of ["plugins/repomap/worker.ts", "plugins/repomap/stat-worker.ts"]) {
    const worker = join(ROOT, file);
    if (existsSync(worker)) list.push(worker);
  }
  return list;
}

/**
 * The files embedded with `type: "file"` (grammars, queries, js-tiktoken's rank tables, the
 * documentation /help answers from, and core/plugin.ts for `coder plugin new`: nothing imports
 * them as code) are stored packed; grammars/packed.ts's readAsset unpacks them. The loader does
 * not tell an import's `type` attribute, hence the paths.
 */
const EMBEDDED_FILE = /(\.wasm|\.scm|\.md|\/js-tiktoken\/dist\/ranks\/\w+\.cjs|\/core\/plugin\.ts)$/;

export interface LibraryPack {
  /** The packages whose every import must go through the pack. */
  packages: RegExp;
  /** The specifiers the code imports them by: the pack's entry exports each one's module. */
  specifiers: string[];
  /** Loaded with require() (grammars/packed.ts requirePacked), for a library that synchronous code reaches. */
  sync?: boolean;
}

/**
 * Packs that keep the binary under its size floor (issue 26): `coder acp`'s SDK (with its own copy
 * of the zod it validates messages with), loaded when the SDK takes the stream over after
 * `initialize`; and zod, which only a config file that is not plainly valid (model overrides
 * always are not) and a plugin's typed tool need. First use, cached, at load 10: the SDK adds
 * ~200 ms to `session/new`, zod ~60 ms of CPU to a start with such a config. The REPL's pi-tui
 * is not packed: as a pack it added ~90 ms to the REPL's start (cached) for 0.18 MB.
 */
const SIZE_PACKS: Record<string, LibraryPack> = {
  acp: { packages: /^@agentclientprotocol\/sdk(\/|$)/, specifiers: ["@agentclientprotocol/sdk"] },
  zod: { packages: /^zod(\/|$)/, specifiers: ["zod"], sync: true },
};

/**
 * Libraries no start-up path uses, grouped by the feature that loads them: each group is bundled
 * on its own as one ES module, embedded packed, and imported from the user's cache on first use
 * (grammars/packed.ts importPacked). They take neither bytecode nor room in the binary's code
 * (5.7 MB of a full-bytecode build); their first use in a process costs about 30-150 ms more
 * (parsed without bytecode). Every import of one of these packages must name a specifier listed
 * here (the build fails otherwise), so no copy of a pack is bundled by accident.
 *
 * Measured with the web page and image libraries packed (`web`, `media`: 3.5 MB of it): `coder
 * acp` answers initialize as soon as without, and initialize + session/new within this machine's
 * noise (-1% to +12% over four runs of 30-40), but its CPU up to the first answer is about 10%
 * more (cause not found: not the stand-ins' top-level await, nor the Node built-ins the bundle
 * imports); before initialize was answered ahead of the kernel, that was 8-15% on the answer.
 */
export const LIBRARY_PACKS: Record<string, LibraryPack> = {
  web: { packages: /^(linkedom|@mozilla\/readability|turndown|@joplin\/turndown-plugin-gfm)(\/|$)/, specifiers: ["linkedom", "@mozilla/readability", "turndown", "@joplin/turndown-plugin-gfm"] },
  media: { packages: /^(@jimp\/|image-size(\/|$))/, specifiers: ["@jimp/core", "@jimp/js-png", "@jimp/js-jpeg", "@jimp/js-gif", "@jimp/plugin-resize", "image-size"] },
  mcp: {
    packages: /^@modelcontextprotocol\/sdk(\/|$)/,
    specifiers: [
      "@modelcontextprotocol/sdk/client/index.js",
      "@modelcontextprotocol/sdk/client/sse.js",
      "@modelcontextprotocol/sdk/client/streamableHttp.js",
      "@modelcontextprotocol/sdk/types.js",
      "@modelcontextprotocol/sdk/shared/stdio.js",
    ],
  },
  // `coder init`'s prompts, and `coder config import-aider`'s YAML reader.
  init: { packages: /^@clack\/prompts(\/|$)/, specifiers: ["@clack/prompts"] },
  yaml: { packages: /^yaml(\/|$)/, specifiers: ["yaml"] },
  ...SIZE_PACKS,
};

/**
 * Our own code that no start-up path or task uses, bundled apart as the library packs are (no
 * bytecode, no code room; unpacked into the user's cache on first use): `coder eval`'s runner and
 * report (0.18 MB of the binary), and `/paste`, `/copy` and `/voice` (0.03 MB). Loading a pack
 * costs a process ~40 ms more (measured for `coder eval report`), so none holds what a start uses:
 * --watch-files (core/watch) as a pack saved 0.03 MB but made that REPL's start 43 ms slower. The pack holds the files its entries reach inside its folder;
 * whatever else they import (the rest of coder, and `shared`: the folder's files the binary's
 * own code imports, and a library pack's specifier) it takes from the binary, which hands those
 * modules over when it loads the pack (globalThis.__coderHost), so there is one copy of each and
 * of its state. `coder init`, `config import-aider` and `doctor` save only 20 kB together (their
 * code is small and imports much of the binary's), but they run once in a project's life.
 */
export const CODE_PACKS: Record<string, { folder: string; entries: string[]; shared: string[] }> = {
  eval: { folder: "plugins/eval/", entries: ["plugins/eval/runner.ts", "plugins/eval/report.ts"], shared: ["plugins/eval/index.ts", "plugins/eval/options.ts"] },
  // `/paste`, `/copy` and `/voice`, which run a clipboard tool or a recorder anyway, and `/web` (or a URL in a message), which fetches a page.
  media: {
    folder: "plugins/media/",
    entries: ["plugins/media/clipboard.ts", "plugins/media/voice.ts", "plugins/media/web.ts"],
    shared: ["plugins/media/index.ts", "plugins/media/attach.ts", "plugins/media/options.ts"],
  },
  // An MCP server's connection (its transports), loaded only when a configured server is started.
  mcp: {
    folder: "plugins/mcp/",
    entries: ["plugins/mcp/connection.ts"],
    shared: ["plugins/mcp/index.ts", "plugins/mcp/commands.ts", "plugins/mcp/config.ts", "plugins/mcp/options.ts", "plugins/mcp/resources.ts", "plugins/mcp/servers.ts"],
  },
  // The subcommands run once in a project's life: `init` (and the first run's guided set-up), `doctor`, `config import-aider`, `plugin new`.
  cli: {
    folder: "core/cli/",
    entries: ["core/cli/init.ts", "core/cli/doctor.ts", "core/cli/import-aider.ts", "core/cli/scaffold.ts"],
    shared: ["core/cli/chat-modes.ts", "core/cli/dispatch.ts", "core/cli/help.ts", "core/cli/plugin-api.ts", "core/cli/prompts.ts", "core/cli/settings.ts", "core/cli/steps.ts", "core/cli/subcommands.ts"],
  },
};

/** The lines of a generated module that export each of `names` from the module object `m` (a pack's, or one the binary hands over). */
function reexportLines(names: readonly string[]): string[] {
  return [...names.map((n, i) => `const e${i} = m[${JSON.stringify(n)}];`), `export { ${names.map((n, i) => `e${i} as ${JSON.stringify(n)}`).join(", ")} };`];
}

export interface BuiltCodePack {
  file: string;
  /** Repository-relative paths of the binary's modules the pack imports. */
  hosts: string[];
  /** Per entry: the names it exports. */
  exports: string[][];
}

const exportsOf = (path: string) => new Bun.Transpiler({ loader: "ts" }).scan(readFileSync(path)).exports.sort();

/** Whether a repository-relative module belongs in the pack's own code (not taken from the binary). */
function inCodePack(pack: (typeof CODE_PACKS)[string], rel: string): boolean {
  return rel.startsWith(pack.folder) && !pack.shared.includes(rel);
}

/** Bundle each code pack into dist/.packs/NAME.js (then packed to NAME.cdz). */
async function buildCodePacks(dir: string, libraries: Record<string, BuiltPack>): Promise<Record<string, BuiltCodePack>> {
  const library = (spec: string) => Object.entries(LIBRARY_PACKS).find(([, pack]) => pack.specifiers.includes(spec));
  mkdirSync(dir, { recursive: true });
  const built: Record<string, BuiltCodePack> = {};
  for (const [name, pack] of Object.entries(CODE_PACKS)) {
    // Named apart from the library packs (there is an `init` of each).
    const base = `code-${name}`;
    const entry = join(dir, `${base}-entry.js`);
    writeFileSync(entry, pack.entries.map((file, i) => `export * as m${i} from ${JSON.stringify(join(ROOT, file))};\n`).join(""));
    const hosts = new Set<string>();
    const fromBinary: BunPlugin = {
      name: "code-pack-hosts",
      setup(build) {
        // A library pack's specifier: the binary's stand-in, which loads that pack.
        build.onResolve({ filter: /^[@a-z]/ }, (args) => {
          if (!library(args.path)) return undefined;
          hosts.add(args.path);
          return { path: args.path, namespace: "coder-host" };
        });
        build.onResolve({ filter: /^\.\.?\// }, (args) => {
          if (!args.importer.startsWith(ROOT)) return undefined;
          const rel = relative(ROOT, join(dirname(args.importer), args.path));
          if (rel.startsWith("..") || rel.includes("node_modules") || inCodePack(pack, rel)) return undefined;
          hosts.add(rel);
          return { path: rel, namespace: "coder-host" };
        });
        build.onLoad({ filter: /.*/, namespace: "coder-host" }, (args) => {
          const lib = library(args.path);
          const names = lib ? libraries[lib[0]]!.exports[lib[1].specifiers.indexOf(args.path)]! : exportsOf(join(ROOT, args.path));
          if (!lib && /\bexport\s+let\b/.test(readFileSync(join(ROOT, args.path), "utf8"))) throw new Error(`${args.path} exports a \`let\`, which the ${name} code pack would see as it was when it loaded`);
          const lines = [
            `const m = globalThis.__coderHost?.[${JSON.stringify(args.path)}];`,
            `if (!m) throw new Error(${JSON.stringify(`the ${name} code pack needs ${args.path} from the binary`)});`,
            ...reexportLines(names),
          ];
          return { contents: lines.join("\n"), loader: "js" };
        });
      },
    };
    const result = await Bun.build({ entrypoints: [entry], root: dir, target: "bun", format: "esm", minify: true, outdir: join(dir, base), naming: "[name].js", plugins: [fromBinary] });
    if (!result.success) {
      for (const log of result.logs) console.error(log);
      throw new Error(`could not bundle the ${name} code pack`);
    }
    const file = join(dir, `${base}.cdz`);
    writeFileSync(file, packCached(readFileSync(join(dir, base, `${base}-entry.js`))));
    built[name] = { file, hosts: [...hosts].sort(), exports: pack.entries.map((e) => exportsOf(join(ROOT, e))) };
  }
  return built;
}

/** An import of a code pack's entry becomes a module that hands the pack the binary's modules, imports it, and re-exports the entry's names. */
export function codePackImports(packs: Record<string, BuiltCodePack>): BunPlugin {
  return {
    name: "code-packs",
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (!args.importer.startsWith(ROOT) || args.importer.includes("/node_modules/")) return undefined;
        const rel = relative(ROOT, join(dirname(args.importer), args.path));
        for (const [name, pack] of Object.entries(CODE_PACKS)) {
          if (!inCodePack(pack, rel)) continue;
          const index = pack.entries.indexOf(rel);
          if (index < 0) throw new Error(`${relative(ROOT, args.importer)} imports ${rel}, which is in the ${name} code pack but is not one of its entries: add it to CODE_PACKS in scripts/build.ts`);
          return { path: `${name}:${index}`, namespace: "code-pack" };
        }
        return undefined;
      });
      build.onLoad({ filter: /.*/, namespace: "code-pack" }, (args) => {
        const [name, index] = [args.path.slice(0, args.path.lastIndexOf(":")), Number(args.path.slice(args.path.lastIndexOf(":") + 1))];
        const pack = packs[name]!;
        const names = pack.exports[index]!;
        const lines = [
          `import pack from ${JSON.stringify(pack.file)} with { type: "file" };`,
          `import { importPacked } from ${JSON.stringify(join(ROOT, "grammars/packed.ts"))};`,
          ...pack.hosts.map((host, i) => `import * as h${i} from ${JSON.stringify(/^[@a-z]/.test(host) && !host.includes(".ts") ? host : join(ROOT, host))};`),
          "const host = (globalThis.__coderHost ??= {});",
          ...pack.hosts.map((host, i) => `host[${JSON.stringify(host)}] = h${i};`),
          `const m = (await importPacked(pack)).m${index};`,
          ...reexportLines(names),
        ];
        return { contents: lines.join("\n"), loader: "js" };
      });
    },
  };
}

export interface BuiltPack {
  /** The packed bundle on disk (embedded with `type: "file"`). */
  file: string;
  /** Per specifier: the names its module exports. */
  exports: string[][];
}

/** Bundle each library pack into dist/.packs/NAME.js (then packed to NAME.cdz), once per build run. */
async function buildLibraryPacks(dir: string): Promise<Record<string, BuiltPack>> {
  mkdirSync(dir, { recursive: true });
  const built: Record<string, BuiltPack> = {};
  for (const [name, pack] of Object.entries(LIBRARY_PACKS)) {
    const entry = join(dir, `${name}-entry.js`);
    writeFileSync(entry, pack.specifiers.map((spec, i) => `export * as m${i} from ${JSON.stringify(spec)};\n`).join(""));
    const result = await Bun.build({ entrypoints: [entry], root: dir, target: "bun", format: "esm", minify: true, outdir: join(dir, name), naming: "[name].js", plugins: [zodEnglishOnly] });
    if (!result.success) {
      for (const log of result.logs) console.error(log);
      throw new Error(`could not bundle the ${name} library pack`);
    }
    const bundle = join(dir, name, `${name}-entry.js`);
    const mod = (await import(bundle)) as Record<string, Record<string, unknown>>;
    const file = join(dir, `${name}.cdz`);
    writeFileSync(file, packCached(readFileSync(bundle)));
    built[name] = { file, exports: pack.specifiers.map((_, i) => Object.keys(mod[`m${i}`] ?? {}).sort()) };
  }
  return built;
}

/** Imports of a packed library become a module that imports the pack and re-exports that specifier's names. */
export function packImports(packs: Record<string, BuiltPack>): BunPlugin {
  return {
    name: "library-packs",
    setup(build) {
      build.onResolve({ filter: /^[@a-z]/ }, (args) => {
        for (const [name, pack] of Object.entries(LIBRARY_PACKS)) {
          if (!pack.packages.test(args.path)) continue;
          if (!pack.specifiers.includes(args.path)) throw new Error(`${args.importer} imports ${args.path}, which belongs to the ${name} library pack but is not one of its specifiers: add it to LIBRARY_PACKS in scripts/build.ts`);
          return { path: `${name}:${args.path}`, namespace: "library-pack" };
        }
        return undefined;
      });
      build.onLoad({ filter: /.*/, namespace: "library-pack" }, (args) => {
        const [name, spec] = [args.path.slice(0, args.path.indexOf(":")), args.path.slice(args.path.indexOf(":") + 1)];
        const pack = packs[name]!;
        const index = LIBRARY_PACKS[name]!.specifiers.indexOf(spec);
        const names = pack.exports[index]!;
        const lines = [
          `import pack from ${JSON.stringify(pack.file)} with { type: "file" };`,
          `import { importPacked, requirePacked } from ${JSON.stringify(join(ROOT, "grammars/packed.ts"))};`,
          LIBRARY_PACKS[name]!.sync ? `const m = requirePacked(pack).m${index};` : `const m = (await importPacked(pack)).m${index};`,
          ...reexportLines(names),
        ];
        return { contents: lines.join("\n"), loader: "js" };
      });
    },
  };
}

/**
 * zod bundles the error messages of 50-odd languages (a third of its code) behind `z.locales`,
 * which coder never sets: English is zod's default. Bundled here, every locale is English's,
 * so a pack or the binary carries one (the zod pack loads about 40% faster on first use).
 */
export const zodEnglishOnly: BunPlugin = {
  name: "zod-english-only",
  setup(build) {
    build.onLoad({ filter: /\/node_modules\/zod\/v4\/locales\/index\.js$/ }, async (args) => {
      const names = [...(await Bun.file(args.path).text()).matchAll(/export \{ default as (\w+) \}/g)].map((m) => m[1]!);
      if (!names.includes("en")) throw new Error(`${args.path} no longer exports the English locale as \`en\`: see zodEnglishOnly in scripts/build.ts`);
      return { contents: `import en from "./en.js";\nexport { ${names.map((n) => (n === "en" ? "en" : `en as ${n}`)).join(", ")} };\n`, loader: "js" };
    });
  },
};

/**
 * Node built-ins taken at run time (process.getBuiltinModule), never imported: an import of one,
 * or a require() the bundle keeps, makes the compiled binary embed bytecode for Bun's own code of
 * it and of every built-in that one imports. These, which only /web's address check (net, dns)
 * and the REPL's file completion (child_process, in pi-tui) use, cost 0.49 MB that way; crypto
 * (ACP's session ids and hashes, the eval report's) 25 kB more. Each
 * import becomes a module that takes the built-in when one of its functions is first called (a
 * class or other value when the importing module is evaluated); the bundler keeps only the names
 * the importer uses. The build fails if a module still imports one.
 *
 * node:fs and what it imports (path, os, events, streams, readline: 1.45 MB more) stay imported:
 * every start uses them, and compiled from Bun's source at run time instead they cost the REPL's
 * start ~20% more CPU and a one-shot task ~6% (measured, load 9).
 */
export const RUNTIME_BUILTINS = ["child_process", "net", "dns/promises", "crypto"];

const BUILTIN_NAMES = RUNTIME_BUILTINS.map((name) => name.replaceAll("/", "\\/")).join("|");
/** `from "fs"`, `import("node:fs")`: the specifier gets a namespace Bun leaves to the plugins. */
const BUILTIN_IMPORT = new RegExp(`((?:\\bfrom|\\bimport)\\s*\\(?\\s*)(["'])(?:node:)?(${BUILTIN_NAMES})\\2`, "g");
/** `require("fs")`: the built-in itself, as require() would return it. */
const BUILTIN_REQUIRE = new RegExp(`\\brequire\\(\\s*(["'])(?:node:)?(${BUILTIN_NAMES})\\1\\s*\\)`, "g");

/** The module an import of a built-in stands for. */
export function runtimeBuiltinModule(name: string): string {
  const builtin = process.getBuiltinModule(`node:${name}`) as Record<string, unknown>;
  const names = Object.keys(builtin).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== "default");
  return [
    "let builtin;",
    `const get = () => (builtin ??= process.getBuiltinModule(${JSON.stringify(`node:${name}`)}));`,
    "export default /* @__PURE__ */ get();",
    ...names.map((n) =>
      typeof builtin[n] === "function" && /^[a-z]/.test(n)
        ? `export function ${n}(...args) { return get().${n}.apply(this, args); }`
        : `export const ${n} = /* @__PURE__ */ (() => get().${n})();`,
    ),
  ].join("\n");
}

export const builtinsAtRunTime: BunPlugin = {
  name: "builtins-at-run-time",
  setup(build) {
    // Bun resolves a built-in before any plugin sees it, so the importing module's specifier is renamed first.
    build.onLoad({ filter: /\.(m?[jt]sx?|cjs)$/ }, async (args) => {
      const text = await Bun.file(args.path).text();
      const renamed = text.replace(BUILTIN_IMPORT, "$1$2runtime-builtin:$3$2").replace(BUILTIN_REQUIRE, 'process.getBuiltinModule("node:$2")');
      if (renamed === text || !builtinImportsIn(args.path, text)) return undefined;
      return { contents: renamed, loader: /\.(m?js|cjs)$/.test(args.path) ? "js" : args.path.endsWith("x") ? "tsx" : "ts" };
    });
    build.onResolve({ filter: /^runtime-builtin:/ }, (args) => ({ path: args.path.slice("runtime-builtin:".length), namespace: "runtime-builtin" }));
    build.onLoad({ filter: /.*/, namespace: "runtime-builtin" }, (args) => ({ contents: runtimeBuiltinModule(args.path), loader: "js" }));
  },
};

/**
 * How many imports of a built-in a module has. The renaming is textual, so it must only meet real
 * imports: in a module that has some, every text in its code (types and comments stripped) that
 * reads like an import or require() of a built-in must be one, or the build fails; a string that
 * reads like one (an error message's advice, a prompt's example) would otherwise change.
 */
export function builtinImportsIn(path: string, text: string): number {
  const loader = /\.tsx$/.test(path) ? "tsx" : /\.[mc]?ts$/.test(path) ? "ts" : "js";
  const transpiler = new Bun.Transpiler({ loader });
  const code = transpiler.transformSync(text);
  const seen = (code.match(BUILTIN_IMPORT)?.length ?? 0) + (code.match(BUILTIN_REQUIRE)?.length ?? 0);
  const real = new Bun.Transpiler({ loader: "js" }).scanImports(code).filter((i) => RUNTIME_BUILTINS.includes(i.path.replace(/^node:/, ""))).length;
  if (real && seen !== real) throw new Error(`${path}: ${seen} texts read as imports of a Node built-in but ${real} are imports: a string that reads like one would be changed by RUNTIME_BUILTINS's renaming in scripts/build.ts`);
  return real;
}

/** The modules that still import a built-in (in a form the renaming does not see): the build fails on them. */
export function runtimeBuiltinImporters(metafile: { inputs: Record<string, { imports?: { path: string; external?: boolean }[] }> }): string[] {
  return Object.entries(metafile.inputs)
    .filter(([, input]) => input.imports?.some((i) => i.external && RUNTIME_BUILTINS.includes(i.path.replace(/^node:/, ""))))
    .map(([name]) => name);
}

/**
 * zstd level 19 packs the embedded files 0.66 MB smaller than level 9 but takes about a minute
 * of CPU for all of them, so each packed form is kept in a build cache keyed by the raw bytes'
 * SHA-256 (shared by every checkout on the machine: $XDG_CACHE_HOME/coder-build, default
 * ~/.cache/coder-build); a build only packs what changed. Unpacking is as fast at any level.
 */
const PACK_LEVEL = 19;

/**
 * What is unpacked once per version into the user's cache (above CACHE_ABOVE: grammars, rank
 * tables, library packs) is packed with brotli at its highest quality and a 16 MB window: 6%
 * smaller than zstd 19 on the grammars (0.2 MB), and its unpacking, about three times slower
 * (the largest grammar in ~20 ms), is paid once. What is unpacked on every use stays zstd.
 */
const BROTLI_QUALITY = 11;

/** The codec and level an embedded file of `rawLength` bytes is packed with. */
export function packingOf(rawLength: number): { codec: Codec; level: number } {
  return rawLength > CACHE_ABOVE ? { codec: "brotli", level: BROTLI_QUALITY } : { codec: "zstd", level: PACK_LEVEL };
}

function buildCacheDir(codec: Codec, level: number): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "coder-build", codec === "zstd" ? `packed-${level}` : `packed-${codec}-${level}`);
}

function packCached(raw: Uint8Array): Uint8Array {
  const { codec, level } = packingOf(raw.length);
  const dir = buildCacheDir(codec, level);
  const file = join(dir, `${new Bun.CryptoHasher("sha256").update(raw).digest("hex")}.cdz`);
  try {
    const cached = new Uint8Array(readFileSync(file));
    // A damaged or truncated cache file is packed again.
    const unpacked = unpackAsset(cached);
    if (unpacked && Buffer.compare(unpacked, raw) === 0) return cached;
  } catch {
    // not cached yet
  }
  const packed = packAsset(raw, level, codec);
  try {
    mkdirSync(dir, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, packed);
    renameSync(temp, file);
  } catch {
    // a build without a writable cache only packs again next time
  }
  return packed;
}

/**
 * Embedded files packed together as one stream (brotli finds what they share), each still
 * imported on its own: js-tiktoken's four rank tables (p50k's is r50k's plus 24 tokens, and
 * cl100k's and o200k's share most of their tokens) pack 0.32 MB smaller than apart. An import of a
 * member is the group's path with the member's place (grammars/packed.ts memberPath), which
 * readAsset unpacks from the group once per version (the whole stream, ~15 ms more for o200k).
 */
export const ASSET_GROUPS: Record<string, string[]> = {
  "tiktoken-ranks": ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"].map((n) => join(ROOT, "node_modules", "js-tiktoken", "dist", "ranks", `${n}.cjs`)),
  // Grammars built from one another (TSX extends TypeScript, C++ C, an OCaml interface OCaml): 41 kB.
  "grammars-typescript": ["tree-sitter-typescript.wasm", "tree-sitter-tsx.wasm"].map((n) => join(ROOT, "node_modules", "tree-sitter-typescript", n)),
  "grammars-ocaml": ["tree-sitter-ocaml.wasm", "tree-sitter-ocaml_interface.wasm"].map((n) => join(ROOT, "node_modules", "tree-sitter-ocaml", n)),
  "grammars-c": [join(ROOT, "node_modules", "tree-sitter-c", "tree-sitter-c.wasm"), join(ROOT, "node_modules", "tree-sitter-cpp", "tree-sitter-cpp.wasm")],
};

/** Per member file of a group: the module that stands for its `type: "file"` import. */
function buildAssetGroups(dir: string): Map<string, string> {
  mkdirSync(dir, { recursive: true });
  const members = new Map<string, string>();
  for (let [name, files] of Object.entries(ASSET_GROUPS)) {
    // Keyed by the real path, as the loader sees it (node_modules may be a link).
    files = files.map((file) => realpathSync(file));
    const raws = files.map((file) => new Uint8Array(readFileSync(file)));
    const joined = new Uint8Array(raws.reduce((n, raw) => n + raw.length, 0));
    const group = join(dir, `${name}.cdz`);
    let at = 0;
    raws.forEach((raw, i) => {
      joined.set(raw, at);
      const member = memberPath("", basename(files[i]!), at, raw);
      members.set(files[i]!, `import group from ${JSON.stringify(group)} with { type: "file" };\nexport default group + ${JSON.stringify(member)};\n`);
      at += raw.length;
    });
    writeFileSync(group, packCached(joined));
  }
  return members;
}

const packEmbedded: BunPlugin = {
  name: "pack-embedded-files",
  setup(build) {
    const members = buildAssetGroups(join(ROOT, "dist", ".packs"));
    build.onLoad({ filter: /\.(cjs|wasm)$/ }, (args) => {
      const member = members.get(args.path);
      return member ? { contents: member, loader: "js" } : undefined;
    });
    build.onLoad({ filter: EMBEDDED_FILE }, async (args) => {
      const bytes = await Bun.file(args.path).bytes();
      // core/plugin.ts is embedded as text for `coder plugin new`: code importing a value from it would get a path instead.
      if (args.path.endsWith(".ts") && new Bun.Transpiler({ loader: "ts" }).scan(bytes).exports.length) {
        throw new Error(`${args.path} is embedded as a file (coder plugin new writes its text), so it must keep to types: move its run-time exports elsewhere`);
      }
      return { contents: packCached(bytes), loader: "file" };
    });
  },
};

/**
 * Each chunk records itself when it is evaluated, if CODER_TRACE_MODULES is set (main.ts writes
 * the list at exit): one environment read per chunk otherwise.
 */
const TRACE_BANNER = "(globalThis.__coderChunks??=[]).push(import.meta.url);";

/** The bytecode layout profiles (scripts/bytecode-order.ts records them), most common start first. */
export const BYTECODE_PROFILES = ["task", "version", "acp", "repl", "map"] as const;
export const PROFILE_DIR = join(ROOT, "scripts", "bytecode-order");

export function profilePath(name: (typeof BYTECODE_PROFILES)[number]): string {
  return join(PROFILE_DIR, `${name}.order`);
}

/**
 * JavaScriptCore's tier-up thresholds times this: code that runs during one short task (start-up,
 * the map from the cache, one request) stays in the interpreter instead of waking the JIT
 * compilers, whose own code would be paged in (the trivial task's peak RSS is 3.5 MB lower,
 * and it is no slower); hot loops (a cold map, counting a long text) still reach the JIT within
 * moments. The REPL restores the normal policy once it waits for input (core/cli/chat-modes.ts).
 */
export const JIT_POLICY = 30;

/** Chunk file name -> the source modules bundled into it (repository-relative), from the build's metafile. */
export type ModuleMap = Record<string, string[]>;

function moduleMap(metafile: { outputs: Record<string, { inputs: Record<string, unknown> }> }): ModuleMap {
  const map: ModuleMap = {};
  for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
    if (!/\.(js|ts)$/.test(output) && !output.endsWith("coder")) continue;
    map[basename(output)] = Object.keys(inputs)
      .map((input) => {
        // A library pack's stand-in is named as its package, so a trace of it names the package.
        const packed = /^library-pack:(\w+):(.+)$/.exec(input);
        if (packed) return `node_modules/${packed[2]} (library pack ${packed[1]})`;
        const code = /^code-pack:([\w-]+):(\d+)$/.exec(input);
        if (code) return `${CODE_PACKS[code[1]!]!.entries[Number(code[2])]} (code pack ${code[1]})`;
        return (input.startsWith("/") ? relative(ROOT, input) : input).replace(/^(\.\.\/)+[^/]+\/node_modules\//, "node_modules/");
      })
      .sort();
  }
  return map;
}

/** The profiles present (none when they were never recorded: the default layout). */
export function bytecodeProfiles(): string[] | false {
  const present = BYTECODE_PROFILES.map(profilePath).filter((path) => existsSync(path));
  return present.length ? present : false;
}

/** The `compile` options of Bun.build for one binary. */
export function compileOptions(outfile: string, target?: (typeof RELEASE_TARGETS)[number]) {
  return {
    outfile,
    ...(target ? { target } : {}),
    autoloadBunfig: false,
    autoloadDotenv: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
    jitPolicy: JIT_POLICY,
    // The recorded start-ups' bytecode first: a run touches fewer of the binary's pages.
    bytecodeOrder: process.env.CODER_BYTECODE !== "0" && bytecodeProfiles(),
  } satisfies Bun.CompileBuildOptions;
}

/** CODER_BYTECODE_DEPTH=N: bytecode for N levels of nested functions only (Bun's bytecodeDepth), for measuring that trade. */
function bytecodeDepth(): { bytecodeDepth?: number } {
  const raw = process.env.CODER_BYTECODE_DEPTH;
  if (raw === undefined || raw === "") return {};
  if (!/^\d+$/.test(raw)) throw new Error(`CODER_BYTECODE_DEPTH must be a whole number, got ${JSON.stringify(raw)}`);
  return { bytecodeDepth: Number(raw) };
}

export async function buildBinary(outfile: string, target?: (typeof RELEASE_TARGETS)[number], packs?: Record<string, BuiltPack>, codePacks?: Record<string, BuiltCodePack>): Promise<void> {
  packs ??= await buildLibraryPacks(join(ROOT, "dist", ".packs"));
  codePacks ??= await buildCodePacks(join(ROOT, "dist", ".packs"), packs);
  const result = await Bun.build({
    entrypoints: entrypoints(),
    root: ROOT,
    format: "esm",
    splitting: true,
    metafile: true,
    banner: TRACE_BANNER,
    plugins: [packImports(packs), codePackImports(codePacks), zodEnglishOnly, packEmbedded, openaiPrune(), builtinsAtRunTime],
    compile: compileOptions(outfile, target),
    bytecode: process.env.CODER_BYTECODE !== "0",
    ...bytecodeDepth(),
    minify: true,
    sourcemap: "none",
    define: {
      CODER_VERSION: JSON.stringify(pkg.version),
    },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`build failed for ${target ?? "this machine"}`);
  }
  const stray = result.metafile ? runtimeBuiltinImporters(result.metafile) : [];
  if (stray.length) throw new Error(`${stray.join(", ")} import(s) a Node built-in in a form the build does not take at run time, which costs the binary its bytecode: see RUNTIME_BUILTINS in scripts/build.ts`);
  if (!target && result.metafile) writeFileSync(`${outfile}.modules.json`, `${JSON.stringify(moduleMap(result.metafile), null, 1)}\n`);
}

async function main(): Promise<void> {
  const release = process.argv.includes("--release");
  const dist = join(ROOT, "dist");
  mkdirSync(dist, { recursive: true });
  const started = performance.now();
  const packs = await buildLibraryPacks(join(dist, ".packs"));
  const codePacks = await buildCodePacks(join(dist, ".packs"), packs);
  await buildBinary(join(dist, "coder"), undefined, packs, codePacks);
  console.log(`built dist/coder (coder ${pkg.version}) in ${Math.round(performance.now() - started)} ms`);
  if (!release) return;
  const out = join(dist, "release");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const sums: string[] = [];
  for (const target of RELEASE_TARGETS) {
    const name = assetName(pkg.version, target);
    const file = join(out, name);
    const t = performance.now();
    await buildBinary(target.includes("windows") ? file.replace(/\.exe$/, "") : file, target, packs, codePacks);
    const hash = new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
    sums.push(`${hash}  ${basename(file)}`);
    console.log(`built dist/release/${name} in ${Math.round(performance.now() - t)} ms`);
  }
  writeFileSync(join(out, "SHA256SUMS"), `${sums.join("\n")}\n`);
  console.log(`wrote dist/release/SHA256SUMS (${sums.length} binaries)`);
}

if (import.meta.main) {
  main().catch((error) => {
    const details = error instanceof AggregateError ? error.errors.map(String) : [];
    console.error([error instanceof Error ? error.message : String(error), ...details].join("\n"));
    process.exit(1);
  });
}
