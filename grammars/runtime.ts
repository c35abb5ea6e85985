// Loads web-tree-sitter, grammars and their tags queries from asset paths (see
// grammars/embedded.ts). Used by the repo map (main thread and workers) and by
// `coder doctor`. Heavy: import it lazily.
import { Language, type Node, Parser, Query } from "web-tree-sitter";
import { upgradeLegacyDylink } from "./dylink.ts";
import { compileTagMatcher, type TagMatch, type TagQuery } from "./tagmatch.ts";
import type { LanguageSpec } from "./languages.ts";
import { readAsset, readAssetText } from "./packed.ts";

/** Where the runtime and grammar files are: paths readable with node:fs, packed or not (grammars/packed.ts). */
export interface GrammarAssets {
  runtime: string;
  files: Readonly<Record<string, string>>;
}

export interface LoadedGrammar {
  spec: LanguageSpec;
  language: Language;
  /** The tags query: our matcher (grammars/tagmatch.ts; tree-sitter's Query past MATCHER_BYTES), or tree-sitter's Query when the query uses what the matcher does not take. */
  tags: TagQuery;
  /** True when `tags` is tree-sitter's Query (the matcher does not take this language's query). */
  tagsByQuery: boolean;
  parser: Parser;
}

/** The tags query compiled by tree-sitter (the matcher's fallback, and its oracle in tests). */
export function treeSitterTagsQuery(language: Language, source: string): TagQuery {
  return new Query(language, source);
}

/**
 * Bytes of one language's files a thread tags with our matcher before it compiles
 * tree-sitter's Query instead. The matcher needs no compile (80-400 ms for
 * TypeScript) but matches JavaScript about twice as slowly as the compiled query
 * (TypeScript 1.2x, Python 1.1x): a process that tags a few files (one changed
 * file, a cold map's first parses) never compiles; a worker that tags megabytes
 * pays the compile once the matcher's extra time would have exceeded it. Both give
 * the same matches (grammars/tagmatch.test.ts).
 */
export const MATCHER_BYTES = 2_000_000;

/** Our matcher for the first MATCHER_BYTES of a language's text in this thread, then tree-sitter's Query. */
class SwitchingTags implements TagQuery {
  readonly #language: Language;
  readonly #source: string;
  #matcher: TagQuery;
  #bytes = 0;
  #compiled: TagQuery | null = null;

  constructor(language: Language, source: string, matcher: TagQuery) {
    this.#language = language;
    this.#source = source;
    this.#matcher = matcher;
  }

  /** Which one the next file goes to. */
  get compiled(): boolean {
    return this.#compiled !== null;
  }

  matches(node: Node): TagMatch[] {
    if (this.#compiled) return this.#compiled.matches(node);
    this.#bytes += node.endIndex - node.startIndex;
    if (this.#bytes > MATCHER_BYTES) this.#compiled = treeSitterTagsQuery(this.#language, this.#source);
    return this.#matcher.matches(node);
  }
}

const runtimeReady = new Map<string, Promise<void>>();
/**
 * Each grammar is compiled once per thread, whichever loader asks first (the syntax check, the
 * repo map, highlighting): a second copy of a grammar's WebAssembly costs memory and time.
 */
const languages = new Map<string, Promise<Language>>();

function initRuntime(runtimePath: string): Promise<void> {
  let ready = runtimeReady.get(runtimePath);
  if (!ready) {
    // wasmBinary: the runtime must not try to locate its .wasm itself (inside the
    // compiled binary it lives in Bun's virtual file system).
    ready = Promise.resolve().then(() => Parser.init({ wasmBinary: readAsset(runtimePath) } as object));
    runtimeReady.set(runtimePath, ready);
  }
  return ready;
}

/** A grammar without its tags query: enough to parse (the syntax check). */
export interface LoadedParser {
  spec: LanguageSpec;
  language: Language;
  parser: Parser;
}

/** Loads each grammar once; remembers failures so a broken grammar is reported, not retried per file. */
export class GrammarLoader {
  readonly #assets: GrammarAssets;
  readonly #loaded = new Map<string, Promise<LoadedGrammar>>();
  readonly #parsers = new Map<string, Promise<LoadedParser>>();

  constructor(assets: GrammarAssets) {
    this.#assets = assets;
  }

  load(spec: LanguageSpec): Promise<LoadedGrammar> {
    let grammar = this.#loaded.get(spec.name);
    if (!grammar) {
      grammar = this.#loadNow(spec);
      this.#loaded.set(spec.name, grammar);
    }
    return grammar;
  }

  /** The grammar and a parser, without compiling the tags query (which costs most of a load). */
  parser(spec: LanguageSpec): Promise<LoadedParser> {
    let loaded = this.#parsers.get(spec.name);
    if (!loaded) {
      loaded = this.#loadLanguage(spec).then((language) => {
        const parser = new Parser();
        parser.setLanguage(language);
        return { spec, language, parser };
      });
      this.#parsers.set(spec.name, loaded);
    }
    return loaded;
  }

  #loadLanguage(spec: LanguageSpec): Promise<Language> {
    const wasmPath = this.#assets.files[spec.wasm];
    if (!wasmPath) return Promise.reject(new Error(`grammar ${spec.wasm} is not embedded`));
    let language = languages.get(wasmPath);
    if (!language) {
      language = initRuntime(this.#assets.runtime).then(() => Language.load(upgradeLegacyDylink(readAsset(wasmPath))));
      languages.set(wasmPath, language);
      language.catch(() => languages.delete(wasmPath));
    }
    return language;
  }

  /** An embedded query's text by key ("python-tags.scm", "go-highlights.scm"). */
  queryText(key: string): string {
    const queryPath = this.#assets.files[key];
    if (!queryPath) throw new Error(`query ${key} is not embedded`);
    return readAssetText(queryPath);
  }

  /** A language's tags query text: its query files joined. */
  tagsSource(spec: LanguageSpec): string {
    return spec.queries.map((key) => this.queryText(key)).join("\n");
  }

  async #loadNow(spec: LanguageSpec): Promise<LoadedGrammar> {
    const language = await this.#loadLanguage(spec);
    const source = this.tagsSource(spec);
    // Our matcher needs no query compile; a query it does not take goes to tree-sitter's.
    const matcher = compileTagMatcher(language, source);
    const tags = matcher ? new SwitchingTags(language, source, matcher) : treeSitterTagsQuery(language, source);
    const parser = new Parser();
    parser.setLanguage(language);
    return { spec, language, tags, tagsByQuery: matcher === null, parser };
  }
}
