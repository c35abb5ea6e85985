// Loads web-tree-sitter, grammars and their tags queries from asset paths (see
// grammars/embedded.ts). Used by the repo map (main thread and workers) and by
// `coder doctor`. Heavy: import it lazily.
import { Language, Parser, Query } from "web-tree-sitter";
import { upgradeLegacyDylink } from "./dylink.ts";
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
  query: Query;
  parser: Parser;
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

  async #loadNow(spec: LanguageSpec): Promise<LoadedGrammar> {
    const language = await this.#loadLanguage(spec);
    const query = new Query(language, spec.queries.map((key) => this.queryText(key)).join("\n"));
    const parser = new Parser();
    parser.setLanguage(language);
    return { spec, language, query, parser };
  }
}
