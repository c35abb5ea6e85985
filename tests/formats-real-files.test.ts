// Issue 17 on real files: Markdown, setext titles and TypeScript with doc-comment
// examples taken from npm packages in node_modules, edited through the built-in
// formats as a model's reply would edit them. Each test checks the bytes on disk.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "../core/errors.ts";
import type { EditFormat, Plugin } from "../core/plugin.ts";
import editblock from "../formats/editblock/index.ts";
import patch from "../formats/patch/index.ts";
import { loadFormat, runReply, tempRepo, textReply } from "./support/format-kit.ts";
import udiff from "../formats/udiff/index.ts";
import wholefile from "../formats/wholefile/index.ts";

const NM = join(import.meta.dir, "..", "node_modules");
const real = (path: string) => readFileSync(join(NM, path), "utf8");

/** base64-js README: a setext title underlined with nine `=` (divider-shaped). */
const BASE64_README = real("base64-js/README.md");
/** openai's chatkit sessions: TypeScript with ```ts examples in doc comments, and two near-copy methods. */
const SESSIONS = real("openai/src/resources/beta/chatkit/sessions.ts");
/** openai's content provenance checks: two interfaces that open with near-identical lines. */
const PROVENANCE = real("openai/src/resources/content-provenance-checks.ts");
/** js-tiktoken's README: a bare ``` fence (no language) around a command. */
const INDICES_README = real("js-tiktoken/README.md");
/** hono's Accept-header typings (through the MCP SDK): TypeScript without a final newline. */
const BKTREE = real("hono/dist/types/utils/accept.d.ts");

type Files = Record<string, string>;

async function run(plugin: Plugin, name: string, files: Files, reply: string, finishReason: "stop" | "length" = "stop") {
  const repo = tempRepo(files);
  const format: EditFormat = await loadFormat(plugin, name, repo.kit);
  const result = await runReply(format, { text: reply, toolCalls: [], finishReason }, repo);
  const read = (path: string) => (existsSync(join(repo.root, path)) ? readFileSync(join(repo.root, path), "utf8") : null);
  return { ...result, read, root: repo.root };
}

/** Parsing throws a FormatError: the reply is refused whole, nothing written. */
async function refused(plugin: Plugin, name: string, files: Files, reply: string, finishReason: "stop" | "length" = "stop"): Promise<string> {
  const repo = tempRepo(files);
  const format = await loadFormat(plugin, name, repo.kit);
  let message = "";
  try {
    format.parse({ text: reply, toolCalls: [], finishReason }, repo.ctx);
  } catch (err) {
    if (!(err instanceof FormatError)) throw err;
    message = err.message;
  }
  expect(message).not.toBe("");
  for (const [path, text] of Object.entries(files)) expect(readFileSync(join(repo.root, path), "utf8")).toBe(text);
  expect(readdirSync(repo.root).sort()).toEqual([...new Set(Object.keys(files).map((p) => p.split("/")[0]!))].sort());
  return message;
}

const block = (path: string, search: string, replace: string) => `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n\`\`\`\n`;
/** Lines `from`..`to` (1-based, inclusive) of `text`, each with its newline. */
const linesOf = (text: string, from: number, to: number) => text.split("\n").slice(from - 1, to).map((l) => l + "\n").join("");

describe("17.1 a blank line added to or dropped from SEARCH", () => {
  test("dropped: the edit lands once, and the file keeps the blank line SEARCH left out (sessions.ts)", async () => {
    // SessionCreateParams: `user: string;`, a blank line, then workflow's doc comment.
    const search = "  user: string;\n  /**\n   * Workflow that powers the session.\n   */\n  workflow: ThreadsAPI.ChatSessionWorkflowParam;\n";
    const replace = "  user: string;\n  /**\n   * Workflow that powers the session (required).\n   */\n  workflow: ThreadsAPI.ChatSessionWorkflowParam;\n";
    const r = await run(editblock, "diff", { "sessions.ts": SESSIONS }, block("sessions.ts", search, replace));
    expect(r.outcomes[0]).toMatchObject({ status: "applied", rung: "blank-lines" });
    expect(r.read("sessions.ts")).toBe(SESSIONS.replace("Workflow that powers the session.", "Workflow that powers the session (required)."));
  });

  test("added: the edit lands once and no blank line is added (sessions.ts, in a method body)", async () => {
    const search = "    return this._client.post(\n      '/chatkit/sessions',\n\n      resolveResourceRequestOptions(options, (options) => ({\n        body,\n";
    const replace = "    return this._client.post(\n      '/chatkit/sessions',\n\n      resolveResourceRequestOptions(options, (options) => ({\n        body: { ...body },\n";
    const r = await run(editblock, "diff", { "sessions.ts": SESSIONS }, block("sessions.ts", search, replace));
    expect(r.outcomes[0]).toMatchObject({ status: "applied", rung: "blank-lines" });
    expect(r.read("sessions.ts")).toBe(SESSIONS.replace("        body,\n", "        body: { ...body },\n"));
  });

  test("dropped, and the same non-blank lines occur twice: refused with both places (sessions.ts)", async () => {
    // `...options,` + `headers: ...` appear in create() and cancel(); a blank line between them matches neither exactly.
    const search = "        ...options,\n\n        headers: buildHeaders([{ 'OpenAI-Beta': 'chatkit_beta=v1' }, options?.headers]),\n";
    const r = await run(editblock, "diff", { "sessions.ts": SESSIONS }, block("sessions.ts", search, "        ...options,\n"));
    expect(r.outcomes[0]).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(r.report).toContain("lines 35-36, lines 57-58");
    expect(r.read("sessions.ts")).toBe(SESSIONS);
  });
});

describe("17.2 a setext or reStructuredText title underline inside SEARCH", () => {
  for (const variant of ["diff", "diff-fenced"] as const) {
    test(`${variant}: the underline of nine = is content; the ======= divider splits the block (base64-js README)`, async () => {
      const search = "base64-js\n=========\n\n`base64-js` does basic base64 encoding/decoding in pure JS.\n";
      const replace = "base64-js\n=========\n\n`base64-js` does fast base64 encoding/decoding in pure JS.\n";
      const reply = variant === "diff" ? block("README.md", search, replace) : `\`\`\`markdown\nREADME.md\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n\`\`\`\n`;
      const r = await run(editblock, variant, { "README.md": BASE64_README }, reply);
      expect(r.outcomes[0]).toMatchObject({ status: "applied" });
      expect(r.read("README.md")).toBe(BASE64_README.replace("does basic base64", "does fast base64"));
    });
  }

  test("no reading of a block with several divider-shaped lines matches: refused, naming the lines, nothing written", async () => {
    const search = "base64-js\n=========\n\nDoes basic base64 in pure JS.\n";
    const r = await run(editblock, "diff", { "README.md": BASE64_README }, block("README.md", search, "base64\n======\n"));
    expect(r.outcomes[0]).toMatchObject({ status: "failed" });
    expect(r.report).toContain("lines shaped like the `=======` divider (`=========`, `=======`, `======`)");
    expect(r.read("README.md")).toBe(BASE64_README);
  });
});

describe("17.3 a divider-shaped line in the new content", () => {
  test("a retitle with a seven-= underline keeps the whole REPLACE (base64-js README)", async () => {
    const r = await run(editblock, "diff", { "README.md": BASE64_README }, block("README.md", "base64-js\n=========\n", "base-64\n=======\n"));
    expect(r.outcomes[0]).toMatchObject({ status: "applied" });
    expect(r.read("README.md")).toBe(BASE64_README.replace("base64-js\n=========\n", "base-64\n=======\n"));
  });

  test("markers that do not pair up (a second ======= and no >>>>>>> REPLACE): malformed, nothing written", async () => {
    const reply = "README.md\n```\n<<<<<<< SEARCH\nbase64-js\n=========\n=======\nbase-64\n=======\nmore text\n```\n";
    const message = await refused(editblock, "diff", { "README.md": BASE64_README }, reply);
    expect(message).toContain("Expected `>>>>>>> REPLACE` to end the REPLACE section");
    expect(message).toContain("base-64");
  });
});

describe("17.4 a listing whose content holds a bare fence line", () => {
  test("a Markdown README with a bare ``` example, in a ``` listing: refused, no stray file, told to use a longer fence", async () => {
    const reply = `README.md\n\`\`\`markdown\n${INDICES_README.replace("# ⏳ js-tiktoken", "# js-tiktoken")}\`\`\`\n`;
    const message = await refused(wholefile, "whole", { "README.md": INDICES_README }, reply);
    expect(message).toContain("npm install js-tiktoken");
    expect(message).toContain("longer fence (````)");
  });

  test("the same README in a ```` listing is written byte for byte", async () => {
    const next = INDICES_README.replace("# ⏳ js-tiktoken", "# js-tiktoken");
    const r = await run(wholefile, "whole", { "README.md": INDICES_README }, `README.md\n\`\`\`\`markdown\n${next}\`\`\`\`\n`);
    expect(r.outcomes[0]).toMatchObject({ status: "applied" });
    expect(r.read("README.md")).toBe(next);
  });

  test("TypeScript whose doc comments hold ```ts examples (sessions.ts) round-trips in a ``` listing", async () => {
    const next = SESSIONS.replace("Create a ChatKit session.", "Create a ChatKit session for a user.");
    const r = await run(wholefile, "whole", { "sessions.ts": SESSIONS }, `sessions.ts\n\`\`\`ts\n${next}\`\`\`\n`);
    expect(r.read("sessions.ts")).toBe(next);
  });

  test("doc comments without leading stars, ```ts examples at column 0 (sessions.ts): the nested fences keep the listing whole", async () => {
    const unstarred = SESSIONS.replace(/^ {3}\* ?/gm, "");
    const r = await run(wholefile, "whole", { "sessions.ts": SESSIONS }, `sessions.ts\n\`\`\`ts\n${unstarred}\`\`\`\n`);
    expect(r.read("sessions.ts")).toBe(unstarred);
  });

  test("...and with bare ``` example fences (as in ky's doc comments): refused, not truncated, no stray file", async () => {
    const bare = SESSIONS.replace(/^ {3}\* ?/gm, "").replace(/^```ts$/gm, "```");
    const message = await refused(wholefile, "whole", { "sessions.ts": SESSIONS }, `sessions.ts\n\`\`\`ts\n${bare}\`\`\`\n`);
    expect(message).toContain("longer fence");
  });

  test("every Markdown README in node_modules, rewritten whole in a ``` listing: byte-exact or refused, never written wrong", async () => {
    const readmes = readdirSync(NM).flatMap((d) => (existsSync(join(NM, d, "README.md")) ? [join(d, "README.md")] : []));
    let exact = 0;
    let refusedCount = 0;
    for (const path of readmes) {
      const text = real(path);
      const eol = text.includes("\r\n") ? "\r\n" : "\n"; // the store keeps a CRLF file's endings
      const next = `${text}${eol}One more line.${eol}`;
      try {
        const r = await run(wholefile, "whole", { "README.md": text }, `README.md\n\`\`\`markdown\n${next}\`\`\`\n`);
        expect(r.read("README.md")).toBe(next);
        exact++;
      } catch (err) {
        if (!(err instanceof FormatError)) throw err;
        refusedCount++;
      }
    }
    console.log(`17.4: ${readmes.length} READMEs from node_modules in a \`\`\` listing: ${exact} byte-exact, ${refusedCount} refused, 0 written wrong`);
    expect(exact + refusedCount).toBe(readmes.length);
  });
});

describe("17.5 patch chunks out of order, with a near-copy further down", () => {
  // C2PA (line 60) and SynthID (line 99) open with the same doc comment and field.
  const patchReply = [
    "*** Begin Patch",
    "*** Update File: checks.ts",
    "@@ export namespace ContentProvenanceCheck {",
    "     /**",
    "      * The C2PA manifest issuer, when available.",
    "      */",
    "-    issuer: string | null;",
    "+    issuer?: string | null;",
    "@@",
    "   export interface C2PA {",
    "     /**",
    "      * The UTC RFC 3339 timestamp recorded by the provenance signal for when the asset",
    "      * was generated, when available.",
    "      */",
    "-    generated_at: string | null;",
    "+    generated_at?: string | null;",
    "*** End Patch",
  ].join("\n");

  test("the second chunk (earlier in the file) lands on its exact copy, not on SynthID's near-copy after the first", async () => {
    const r = await run(patch, "patch", { "checks.ts": PROVENANCE }, patchReply);
    expect(r.outcomes[0]).toMatchObject({ status: "applied", rung: "exact" });
    const lines = r.read("checks.ts")!.split("\n");
    expect(lines[64]).toBe("    generated_at?: string | null;");
    expect(lines[69]).toBe("    issuer?: string | null;");
    expect(lines[98]).toBe("  export interface SynthID {");
    expect(lines[103]).toBe("    generated_at: string | null;");
  });

  test("two near-copies that fit alike at a loose rung: refused as ambiguous, nothing written", async () => {
    // Both interfaces' openings, re-indented: only the indentation rung fits, and at two places.
    const loose = "*** Begin Patch\n*** Update File: checks.ts\n@@\n       /**\n        * The UTC RFC 3339 timestamp recorded by the provenance signal for when the asset\n        * was generated, when available.\n        */\n-      generated_at: string | null;\n+      generated_at?: string | null;\n*** End Patch";
    const r = await run(patch, "patch", { "checks.ts": PROVENANCE }, loose);
    expect(r.outcomes[0]).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(r.read("checks.ts")).toBe(PROVENANCE);
  });

  test("the rung used is reported on the outcome (indentation here)", async () => {
    const reply = "*** Begin Patch\n*** Update File: checks.ts\n@@ export interface C2PA {\n   /**\n    * The C2PA manifest issuer, when available.\n    */\n-  issuer: string | null;\n+  issuer?: string | null;\n*** End Patch";
    const r = await run(patch, "patch", { "checks.ts": PROVENANCE }, reply);
    expect(r.outcomes[0]).toMatchObject({ status: "applied", rung: "indentation" });
    expect(r.read("checks.ts")).toBe(PROVENANCE.replace("    issuer: string | null;", "    issuer?: string | null;"));
  });
});

describe("17.6 a file without a final newline rewritten whole", () => {
  test("its last line survives: still no final newline (hono's accept.d.ts)", async () => {
    expect(BKTREE.endsWith("\n")).toBe(false);
    const next = BKTREE.replace("  q: number;", "  readonly q: number;");
    expect(next).not.toBe(BKTREE);
    const r = await run(wholefile, "whole", { "bk-tree.d.ts": BKTREE }, `bk-tree.d.ts\n\`\`\`ts\n${next}\n\`\`\`\n`);
    expect(r.read("bk-tree.d.ts")).toBe(next);
  });

  test("its last line changes: the listing's final newline is written", async () => {
    const next = `${BKTREE}\n\nexport type Quality = number;\n`;
    const r = await run(wholefile, "whole", { "bk-tree.d.ts": BKTREE }, `bk-tree.d.ts\n\`\`\`ts\n${next}\`\`\`\n`);
    expect(r.read("bk-tree.d.ts")).toBe(next);
  });
});

describe("17.7 a SEARCH that matches two places (create() and cancel() in sessions.ts)", () => {
  const both = "        headers: buildHeaders([{ 'OpenAI-Beta': 'chatkit_beta=v1' }, options?.headers]),\n        __security: { bearerAuth: true },\n";
  const fixed = "        headers: buildHeaders([{ 'OpenAI-Beta': 'chatkit_beta=v2' }, options?.headers]),\n        __security: { bearerAuth: true },\n";
  const onlyIn = (which: "create" | "cancel") => {
    const at = SESSIONS.indexOf(both, which === "create" ? 0 : SESSIONS.indexOf("  cancel("));
    return SESSIONS.slice(0, at) + fixed + SESSIONS.slice(at + both.length);
  };

  test("the enclosing scope named in the prose picks cancel()", async () => {
    const r = await run(editblock, "diff", { "sessions.ts": SESSIONS }, `In \`cancel\`, move to the v2 beta header:\n\n${block("sessions.ts", both, fixed)}`);
    expect(r.outcomes[0]).toMatchObject({ status: "applied" });
    expect(r.outcomes[0]!.status === "applied" && r.outcomes[0]!.note).toContain("inside `cancel`");
    expect(r.read("sessions.ts")).toBe(onlyIn("cancel"));
  });

  test("a line number the model gave picks create()", async () => {
    const r = await run(editblock, "diff", { "sessions.ts": SESSIONS }, `Around line 36 the header is old:\n\n${block("sessions.ts", both, fixed)}`);
    expect(r.read("sessions.ts")).toBe(onlyIn("create"));
  });

  test("the previous block's place in the same file picks the only match after it", async () => {
    const first = block("sessions.ts", "   * Cancel an active ChatKit session and return its most recent metadata.\n", "   * Cancel an active ChatKit session and return its final metadata.\n");
    const r = await run(editblock, "diff", { "sessions.ts": SESSIONS }, `${first}\n${block("sessions.ts", both, fixed)}`);
    expect(r.outcomes.map((o) => o.status)).toEqual(["applied", "applied"]);
    expect(r.read("sessions.ts")).toBe(onlyIn("cancel").replace("its most recent metadata", "its final metadata"));
  });

  test("a udiff hunk's @@ line (number and heading) picks the place", async () => {
    const hunk = `\`\`\`diff\n--- sessions.ts\n+++ sessions.ts\n@@ -57,2 +57,2 @@ cancel(sessionID: string, options?: RequestOptions)\n-${both.split("\n")[0]}\n+${fixed.split("\n")[0]}\n ${both.split("\n")[1]}\n\`\`\`\n`;
    const r = await run(udiff, "udiff", { "sessions.ts": SESSIONS }, hunk);
    expect(r.read("sessions.ts")).toBe(onlyIn("cancel"));
  });

  test("no clue, or clues that disagree: refused with every place listed, nothing written", async () => {
    const none = await run(editblock, "diff", { "sessions.ts": SESSIONS }, block("sessions.ts", both, fixed));
    expect(none.outcomes[0]).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(none.report).toContain("lines 36-37, lines 58-59");
    const split = await run(editblock, "diff", { "sessions.ts": SESSIONS }, `In \`cancel\` (line 36):\n\n${block("sessions.ts", both, fixed)}`);
    expect(split.outcomes[0]).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(split.read("sessions.ts")).toBe(SESSIONS);
  });

  test("a real file, linesOf helper sanity: the duplicated lines are where the tests say", () => {
    expect(linesOf(SESSIONS, 36, 37)).toBe(both);
    expect(linesOf(SESSIONS, 58, 59)).toBe(both);
  });
});
