// The repo map's ranking on real files in temp folders (parsed with the embedded
// grammars, ranked and rendered as `coder map` does): what a chat file imports comes
// first, common member names do not pull in unrelated classes, test helpers stay out
// of a non-test chat file's map, and CI workflows do not crowd out code.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "../core/chat/tokens.ts";
import { EMBEDDED_ASSETS } from "../grammars/embedded.ts";
import { memoryCacheStore } from "../core/edit/cache-store.ts";
import { CACHE_VERSION, TagCache } from "../plugins/repomap/cache.ts";
import { buildRepoMap } from "../plugins/repomap/map.ts";
import { BARE_NAME_SHARE } from "../plugins/repomap/special.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-rank-"));
  dirs.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

async function mapOf(root: string, files: Record<string, string>, chatFiles: string[], budget = 1024): Promise<string> {
  return (await build(root, files, chatFiles, budget)).text;
}

function build(root: string, files: Record<string, string>, chatFiles: string[], budget: number) {
  return buildRepoMap({
    root,
    files: Object.keys(files),
    chatFiles,
    mentionedFiles: [],
    mentionedIdents: [],
    budget,
    countTokens: (t) => countTokens(t),
    cache: new TagCache(memoryCacheStore(CACHE_VERSION)),
    assets: async () => EMBEDDED_ASSETS,
    warn: () => {},
    reuse: "none",
    workers: 0,
  });
}

/** The files the map shows with an excerpt, and those it lists by name. */
function blocks(map: string): { shown: string[]; bare: string[] } {
  const lines = map.split("\n");
  return {
    shown: lines.filter((l) => l.endsWith(":") && !l.startsWith("│")).map((l) => l.slice(0, -1)),
    bare: lines.filter((l) => l && !l.endsWith(":") && !l.startsWith("│") && l !== "⋮"),
  };
}

/** 50 unrelated classes, each with `update`, `get` and `set` methods that other unrelated files call. */
function unrelatedClasses(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i++) {
    files[`widgets/widget${i}.ts`] =
      `export class Widget${i} {\n  update(value: number) {\n    return value + ${i};\n  }\n\n  get(key: string) {\n    return key;\n  }\n\n  set(key: string, value: number) {\n    return key + value;\n  }\n}\n`;
    files[`screens/screen${i}.ts`] = `import { Widget${i} } from "../widgets/widget${i}";\n\nexport function showScreen${i}(w: Widget${i}) {\n  w.update(1);\n  w.get("a");\n  return w.set("b", 2);\n}\n`;
  }
  return files;
}

test("an imported name outranks a same-named method defined in 50 unrelated classes", async () => {
  const files = {
    ...unrelatedClasses(),
    "core/ledger.ts":
      "export class Ledger {\n  private rows: number[] = [];\n\n  update(amount: number) {\n    this.rows.push(amount);\n    return this.rows.length;\n  }\n}\n\nexport function openLedger(): Ledger {\n  return new Ledger();\n}\n",
    "app/checkout.ts":
      'import { openLedger } from "../core/ledger";\n\nexport function checkout(amount: number) {\n  const ledger = openLedger();\n  return ledger.update(amount);\n}\n',
  };
  const root = repo(files);
  const result = await build(root, files, ["app/checkout.ts"], 1024);
  const at = (path: string, name: string) => result.ranking!.findIndex((e) => e.path === path && e.name === name);
  const widgets = result.ranking!.flatMap((e, i) => (e.path.startsWith("widgets/") && e.name === "update" ? [i] : []));
  // The widgets' `update`s are only ever called on unknown receivers: ranked after the ledger's, if at all.
  expect(at("core/ledger.ts", "update")).toBeGreaterThanOrEqual(0);
  for (const widget of widgets) expect(widget).toBeGreaterThan(at("core/ledger.ts", "update"));
  // With room for about three definitions the map shows the imported file's, and no widget.
  const map = await mapOf(root, files, ["app/checkout.ts"], 60);
  expect(blocks(map).shown).toEqual(["core/ledger.ts"]);
  expect(map).toContain("│  update(amount: number) {");
  expect(map).toContain("│export function openLedger(): Ledger {");
});

test("a test helper does not appear for a non-test chat file, and does for a test that imports it", async () => {
  const files = {
    "src/orders.ts":
      'import { Store } from "./store";\n\nexport function placeOrder(store: Store, id: string) {\n  const existing = store.get(id);\n  store.set(id, existing + 1);\n  return store.get(id);\n}\n',
    "src/store.ts":
      "export class Store {\n  private items = new Map<string, number>();\n\n  get(id: string): number {\n    return this.items.get(id) ?? 0;\n  }\n\n  set(id: string, count: number): void {\n    this.items.set(id, count);\n  }\n}\n",
    "tests/helpers/fake-store.ts":
      'import { Store } from "../../src/store";\n\nexport class FakePersistentState extends Store {\n  calls: string[] = [];\n\n  get(id: string): number {\n    this.calls.push(id);\n    return 1;\n  }\n\n  set(id: string, count: number): void {\n    this.calls.push(id + count);\n  }\n\n  mockClear(): void {\n    this.calls = [];\n  }\n}\n',
    "tests/orders.test.ts":
      'import { placeOrder } from "../src/orders";\nimport { FakePersistentState } from "./helpers/fake-store";\n\nexport function checkPlaceOrder() {\n  const store = new FakePersistentState();\n  placeOrder(store, "a");\n  store.mockClear();\n  return store.get("a");\n}\n',
  };
  const root = repo(files);
  // Room for about four definitions: the store's, not the fake's (which defines the same methods).
  const forSource = await mapOf(root, files, ["src/orders.ts"], 120);
  expect(blocks(forSource).shown).toContain("src/store.ts");
  expect(forSource).not.toContain("FakePersistentState");
  expect(forSource).not.toContain("tests/helpers/fake-store.ts");

  const forTest = await mapOf(root, files, ["tests/orders.test.ts"], 120);
  expect(blocks(forTest).shown).toContain("tests/helpers/fake-store.ts");
  expect(forTest).toContain("│export class FakePersistentState extends Store {");
});

test("workflow YAML files do not crowd out code: few special files, names within their share of the budget", async () => {
  const files: Record<string, string> = {
    "README.md": "# shop\n",
    "package.json": '{ "name": "shop" }\n',
    "packages/core/package.json": '{ "name": "@shop/core" }\n',
    "packages/core/src/client.ts":
      'import { GeminiChat } from "./chat";\nimport { LoopDetectionService } from "./loop";\n\nexport function startClient() {\n  const chat = new GeminiChat();\n  return new LoopDetectionService(chat);\n}\n',
    "packages/core/src/chat.ts": "export class GeminiChat {\n  send(text: string) {\n    return text;\n  }\n}\n",
    "packages/core/src/loop.ts": 'import { GeminiChat } from "./chat";\n\nexport class LoopDetectionService {\n  constructor(private chat: GeminiChat) {}\n\n  check() {\n    return this.chat.send("ping");\n  }\n}\n',
  };
  for (let i = 0; i < 47; i++) files[`.github/workflows/job-${i}.yml`] = `name: job ${i}\non: [push]\njobs:\n  run:\n    runs-on: ubuntu-latest\n`;
  for (let i = 0; i < 60; i++) files[`packages/other/src/module${i}.ts`] = `export function helper${i}(value: number) {\n  return value * ${i};\n}\n`;
  const root = repo(files);
  const budget = 512;
  const map = await mapOf(root, files, ["packages/core/src/client.ts"], budget);
  const { shown, bare } = blocks(map);
  expect(shown.slice(0, 2).sort()).toEqual(["packages/core/src/chat.ts", "packages/core/src/loop.ts"]);
  expect(bare.filter((f) => f.startsWith(".github/"))).toEqual([]);
  // README and the chat file's own package manifest, within the share of the budget.
  expect(bare).toContain("README.md");
  expect(bare).toContain("packages/core/package.json");
  expect(countTokens(bare.map((b) => `\n${b}\n`).join(""))).toBeLessThanOrEqual(budget * BARE_NAME_SHARE);
});

test("Go: what a file calls from the other files of its package (build-tagged variants too) is shown, not a namesake elsewhere", async () => {
  const files: Record<string, string> = {
    "go.mod": "module github.com/acme/cli\n\ngo 1.22\n",
    "command.go":
      'package cli\n\nimport "github.com/acme/cli/internal/flags"\n\ntype Command struct {\n\tName string\n}\n\nfunc (c *Command) Execute() error {\n\tpreExecHookFn(c)\n\treturn flags.Parse(c.Name)\n}\n',
    "command_win.go": "//go:build windows\n\npackage cli\n\nfunc preExecHookFn(c *Command) {\n\tc.Name = c.Name + \".exe\"\n}\n",
    "command_notwin.go": "//go:build !windows\n\npackage cli\n\nfunc preExecHookFn(c *Command) {\n\t_ = c\n}\n",
    "internal/flags/flags.go": "package flags\n\nfunc Parse(name string) error {\n\treturn nil\n}\n",
    "internal/other/parse.go": "package other\n\nfunc Parse(name string) error {\n\treturn nil\n}\n",
  };
  for (let i = 0; i < 40; i++) files[`plugins/p${i}/p${i}.go`] = `package p${i}\n\nfunc Parse(name string) error {\n\treturn nil\n}\n\nfunc Register${i}() {\n\t_ = Parse("x")\n}\n`;
  const root = repo(files);
  const result = await build(root, files, ["command.go"], 1024);
  const top = [...new Set(result.ranking!.filter((e) => e.name !== undefined).slice(0, 3).map((e) => e.path))].sort();
  expect(top).toEqual(["command_notwin.go", "command_win.go", "internal/flags/flags.go"]);
  const { shown } = blocks(await mapOf(root, files, ["command.go"], 100));
  expect(shown).toEqual(["command_notwin.go", "command_win.go", "internal/flags/flags.go"]);
});
