// Our BPE count must equal js-tiktoken's own encoder, and sampling must stay close for huge texts.
import { beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tiktoken } from "js-tiktoken/lite";
import { countMessages, countTokens, countTools, PARTIAL_READS, resetEncodings, SAMPLE_ABOVE, setTokenCacheDir, tableState } from "./tokens.ts";

let cache: string;
beforeAll(() => {
  cache = mkdtempSync(join(tmpdir(), "coder-tokens-"));
  setTokenCacheDir(cache);
  resetEncodings();
});

// js-tiktoken's own encoder over the package's rank data, read as JSON from its ESM file (tokens.ts embeds
// the .cjs twin as a file, which makes `require("js-tiktoken/ranks/…")` resolve to that path under bun test).
const reference = (name: "o200k_base" | "cl100k_base" | "p50k_base" | "p50k_edit" | "r50k_base" | "gpt2") => {
  const text = readFileSync(join(import.meta.dir, "../../node_modules/js-tiktoken/dist/ranks", `${name}.js`), "utf8");
  return new Tiktoken(JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)));
};

const samples = [
  "hello world",
  "def greet(name: str) -> str:\n    return f\"Hello, {name}!\"\n\n\nclass Foo(Bar):\n\tpass\n",
  "    indented    with   runs of     spaces\n\n\n\n   \t\t\r\n",
  "Ünïcödé façade — naïve café; 日本語のテキスト; 한국어; emoji 🎉🚀👩‍💻 and ZWJ",
  "<|endoftext|> special tokens count as plain text <|fim_prefix|>",
  "aVeryLongIdentifierWithoutAnySpacesQWERTYUIOPASDFGHJKLZXCVBNM1234567890".repeat(5),
  "<<<<<<< SEARCH\nold line\n=======\nnew line\n>>>>>>> REPLACE\n",
  "I'm sure they'll say it's what we'd've DONE'S — 1234567 numbers 3.14159",
  "",
];

// p50k_edit and gpt2 share p50k_base's and r50k_base's embedded tables: each still counts as its own file says.
for (const name of ["o200k_base", "cl100k_base", "p50k_base", "p50k_edit", "r50k_base", "gpt2"] as const) {
  test(`${name}: counts equal js-tiktoken's encoder`, () => {
    const enc = reference(name);
    for (const text of samples) expect(countTokens(text, name)).toBe(enc.encode(text, [], []).length);
    const source = readFileSync(join(import.meta.dir, "..", "..", "node_modules", "openai", "client.mjs"), "utf8").slice(0, 60_000);
    expect(countTokens(source, name)).toBe(enc.encode(source, [], []).length);
  });
}

test("unknown encodings count as o200k_base; default is o200k_base", () => {
  expect(countTokens("hello world", "nonsense")).toBe(countTokens("hello world", "o200k_base"));
  expect(countTokens("hello world")).toBe(2);
});

test("texts above the sampling threshold are estimated within a few percent", () => {
  const dir = join(import.meta.dir, "..", "..", "node_modules", "openai");
  let big = "";
  for (const f of ["client.mjs", "resources/chat/completions/completions.d.ts", "core/streaming.mjs", "error.mjs", "README.md"]) {
    try {
      big += readFileSync(join(dir, f), "utf8");
    } catch {}
  }
  while (big.length <= SAMPLE_ABOVE * 2) big += big;
  const exact = reference("o200k_base").encode(big, [], []).length;
  const estimate = countTokens(big);
  expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.03);
});

test("countMessages adds framing per message and for tool calls", () => {
  const content = countTokens("hello world");
  expect(countMessages([])).toBe(0);
  expect(countMessages([{ role: "user", content: "hello world" }])).toBe(3 + 1 + content + 3);
  const withCall = countMessages([{ role: "assistant", content: "", toolCalls: [{ id: "c1", name: "edit_file", arguments: '{"path":"a"}' }] }]);
  expect(withCall).toBeGreaterThan(3 + 1 + 3 + 3);
  expect(countTools([{ name: "edit_file", description: "Edit a file", parameters: { type: "object" } }])).toBeGreaterThan(8);
});

test("tables read back from the disk cache count exactly as freshly built ones; a damaged cache is rebuilt", () => {
  const text = samples.join("\n");
  const expected = reference("o200k_base").encode(text, [], []).length;
  resetEncodings();
  expect(countTokens(text)).toBe(expected); // built (or read) and cached
  const file = join(cache, readdirSync(cache).find((f) => f.startsWith("tokens-o200k_base"))!);
  expect(existsSync(file)).toBe(true);
  resetEncodings();
  expect(countTokens(text)).toBe(expected); // read back
  writeFileSync(file, "garbage");
  resetEncodings();
  expect(countTokens(text)).toBe(expected); // rebuilt
  expect(readFileSync(file).length).toBeGreaterThan(1_000_000);
  setTokenCacheDir(null);
  resetEncodings();
  expect(countTokens(text)).toBe(expected); // no cache at all
  setTokenCacheDir(cache);
});

test("a table read back from the cache is opened, not read: a short count reads only the buckets it looks up, a long one reads it whole", () => {
  const enc = reference("o200k_base");
  resetEncodings();
  countTokens("warm the cache");
  resetEncodings();
  expect(tableState()).toEqual({ loaded: "none", bucketsRead: 0 });
  const short = "def greet(name: str) -> str:\n    return f\"Hello, {name}!\"\n";
  expect(countTokens(short)).toBe(enc.encode(short, [], []).length);
  const after = tableState();
  expect(after.loaded).toBe("partial");
  expect(after.bucketsRead).toBeGreaterThan(0);
  expect(after.bucketsRead).toBeLessThan(200);
  // Past PARTIAL_READS bucket reads the rest of the table is read at once, and counts stay exact.
  const source = readFileSync(join(import.meta.dir, "..", "..", "node_modules", "openai", "client.mjs"), "utf8");
  let step = 0;
  while (tableState().loaded === "partial") {
    const slice = source.slice(step * 1500, (step + 1) * 1500);
    expect(countTokens(slice)).toBe(enc.encode(slice, [], []).length);
    step++;
  }
  expect(tableState().loaded).toBe("all");
  expect(step).toBeGreaterThan(1);
  expect(PARTIAL_READS).toBeGreaterThan(after.bucketsRead);
  const long = source.slice(0, 30_000);
  resetEncodings();
  expect(countTokens(long)).toBe(enc.encode(long, [], []).length);
  expect(tableState().loaded).toBe("all");
});

test("a cache file cut short while its table is open is rebuilt from the ranks, and counts stay exact", () => {
  const enc = reference("o200k_base");
  resetEncodings();
  countTokens("warm the cache");
  resetEncodings();
  expect(countTokens("hello")).toBe(1);
  expect(tableState().loaded).toBe("partial");
  const file = join(cache, readdirSync(cache).find((f) => f.startsWith("tokens-o200k_base"))!);
  truncateSync(file, 100);
  const text = samples.join("\n");
  expect(countTokens(text)).toBe(enc.encode(text, [], []).length);
  expect(tableState().loaded).toBe("all");
  resetEncodings();
});

test("a cache file whose bucket directory is damaged inside (its ends intact) is caught as its buckets are looked up: the table is rebuilt and counts stay exact", () => {
  const enc = reference("o200k_base");
  const short = "def greet(name: str) -> str:\n    return f\"Hello, {name}!\"\n";
  const source = readFileSync(join(import.meta.dir, "..", "..", "node_modules", "openai", "client.mjs"), "utf8").slice(0, 30_000);
  for (const text of [short, source]) {
    resetEncodings();
    countTokens("warm the cache");
    resetEncodings();
    const file = join(cache, readdirSync(cache).find((f) => f.startsWith("tokens-o200k_base"))!);
    const bytes = new Uint8Array(readFileSync(file));
    const ints = new Uint32Array(bytes.buffer, 0, 8);
    const [buckets, patternLength] = [ints[3]!, ints[4]!];
    const dir = new Uint32Array(bytes.buffer, 32 + Math.ceil(patternLength / 4) * 4, buckets + 1);
    // Every entry but the first and the last points past the data.
    dir.fill(0xfffffff0, 1, buckets);
    writeFileSync(file, bytes);
    expect(countTokens(text)).toBe(enc.encode(text, [], []).length);
    expect(tableState().loaded).toBe("all");
    resetEncodings();
    // Rebuilt: the next process reads a good file (the one written by the rebuild of a miss, or this one again: counts are exact either way).
    expect(countTokens(text)).toBe(enc.encode(text, [], []).length);
  }
  resetEncodings();
});
