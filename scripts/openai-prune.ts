// The `openai` client without the API resources coder never calls. Its client class imports and
// constructs every resource of the API (admin, assistants, batches, evals, fine-tuning, realtime,
// vector stores, ...: some 200 modules), so one chat request evaluated all of them. The build
// (scripts/build.ts) puts a stand-in in place of each resource module outside KEPT_RESOURCES:
// the same exported names, each class an empty resource that only remembers its client, and
// anything else undefined; so are the chat helpers only `chat.completions.stream()` and
// `runTools()` construct (REPLACED_HELPERS). What coder calls, `chat.completions.create` and
// `audio.transcriptions`, is the package's own code; so is the client with its requests, retries
// and streaming. Workload identity, which coder never configures, is a stand-in that refuses
// (AUTH_STAND_INS).
//
// The build fails when a module the stand-ins do not cover (the client's own code, a kept
// resource, the helpers under lib/) imports a replaced one, other than the client and the
// resource index, which construct or re-export them: that module might call into a stand-in.
// After an update of the package, a new such import shows up there, not at run time.
import { dirname, join, normalize } from "node:path";
import type { BunPlugin } from "bun";

/** The resources coder calls (plugins/openai): chat completions, speech to text, and the types they share. */
export const KEPT_RESOURCES = /^resources\/(chat|audio)(\/|\.mjs$)|^resources\/(shared|index)\.mjs$/;

/**
 * The chat helpers behind `chat.completions.stream()`, `runTools()` and `parse()`'s runners, which
 * coder never calls (it streams with `create({ stream: true })`): only those methods construct them.
 */
const REPLACED_HELPERS = /^lib\/(AbstractChatCompletionRunner|ChatCompletionRunner|ChatCompletionStreamingRunner|ChatCompletionStream|EventStream)\.mjs$/;

/**
 * The modules that may import a replaced one: the client constructs every resource; the indexes
 * re-export them; chat completions' methods coder does not call construct the helpers.
 */
const MAY_IMPORT_REPLACED = /^(client|index|resources|resources\/index|resources\/chat\/completions\/completions)\.mjs$/;

/**
 * Workload identity (a token exchanged for a cloud identity or an X.509 certificate instead of an
 * API key): the client builds it only from its `workloadIdentity` option, which coder never passes
 * (it authenticates with a key, or none). These stand-ins keep what the client calls whatever its
 * options (the test that no identity is an X.509 one, and the class its `instanceof` tests name),
 * and throw on anything else: a use would fail loudly, never act half. ~100 kB of the binary.
 */
const NO_IDENTITY = "workload identity is not part of coder's build of the openai client";
export const AUTH_STAND_INS: Record<string, string> = {
  "internal/auth/x509-workload-identity-auth.mjs": [
    `const refuse = () => { throw new Error(${JSON.stringify(NO_IDENTITY)}); };`,
    "export function isX509WorkloadIdentity(identity) { if (identity === undefined || identity === null) return false; refuse(); }",
    "export const assertX509WebSocketSupported = refuse, assertX509FetchOptions = refuse, assertX509RequestOptions = refuse, snapshotX509RequestOptions = refuse;",
    "export class X509WorkloadIdentityAuth { constructor() { refuse(); } }",
  ].join("\n"),
  "auth/workload-identity-auth.mjs": `export class WorkloadIdentityAuth { constructor() { throw new Error(${JSON.stringify(NO_IDENTITY)}); } }`,
};

const PACKAGE = /\/node_modules\/openai\/(.+\.mjs)$/;

/** A module's path inside the package ("resources/batches.mjs"), or null outside it. */
function inPackage(path: string): string | null {
  return PACKAGE.exec(path.replaceAll("\\", "/"))?.[1] ?? null;
}

/** Whether the build replaces this module of the package by a stand-in. */
export function replaced(module: string): boolean {
  return (module.startsWith("resources/") && !KEPT_RESOURCES.test(module)) || REPLACED_HELPERS.test(module);
}

/** A stand-in module with the same exports as `source`. */
export function standIn(source: string): string {
  const { exports } = new Bun.Transpiler({ loader: "js" }).scan(source);
  return exports
    .map((name) => (name === "default" ? "export default undefined;" : /^[A-Z]/.test(name) ? `export class ${name} { constructor(client) { this._client = client; } }` : `export const ${name} = undefined;`))
    .join("\n");
}

export function openaiPrune(): BunPlugin {
  return {
    name: "openai-prune",
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        const importer = inPackage(args.importer);
        if (!importer || replaced(importer) || MAY_IMPORT_REPLACED.test(importer)) return undefined;
        const target = normalize(join(dirname(importer), args.path)).replaceAll("\\", "/");
        if (replaced(target)) {
          throw new Error(`openai/${importer} imports openai/${target}, which the build replaces by a stand-in (scripts/openai-prune.ts): keep that resource (KEPT_RESOURCES) or stop pruning`);
        }
        return undefined;
      });
      build.onLoad({ filter: /\/node_modules\/openai\/(internal\/)?auth\/.+\.mjs$/ }, (args) => {
        const module = inPackage(args.path);
        const text = module ? AUTH_STAND_INS[module] : undefined;
        return text === undefined ? undefined : { contents: text, loader: "js" };
      });
      build.onLoad({ filter: /\/node_modules\/openai\/(resources|lib)\/.+\.mjs$/ }, async (args) => {
        const module = inPackage(args.path);
        if (!module || !replaced(module)) return undefined;
        return { contents: standIn(await Bun.file(args.path).text()), loader: "js" };
      });
    },
  };
}
