// The "repomap" context provider: budget rules, refresh modes and session stability.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContextBudget, Kit, ModelInfo, TurnContext } from "../../core/plugin.ts";
import { shareContextWindow } from "../../core/chat/budget.ts";
import { countTokens } from "../../core/chat/tokens.ts";
import { openCacheStore } from "../../core/edit/cache-store.ts";
import { capReader } from "../../core/boot/kit.ts";
import { DEFAULT_MAX_FILE_BYTES } from "../../core/edit/files.ts";
import plugin, { MAP_BUDGET, RepoMapService, mapTokensFor } from "./index.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const FILES: Record<string, string> = {
  "src/orders.py": "from .billing import charge_card\n\ndef place_order(cart):\n    return charge_card(cart)\n",
  "src/billing.py": "def charge_card(cart):\n    return True\n\ndef refund_card(cart):\n    return False\n",
  "src/shipping.py": "def ship_parcel(order):\n    return order\n",
};

function setup(): { root: string; kit: Kit; warnings: string[] } {
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-provider-"));
  dirs.push(root);
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const warnings: string[] = [];
  // The kit's capabilities this plugin uses, over the real files.
  const kit = {
    apiVersion: 1,
    version: "test",
    root,
    tokens: { count: (text: string) => countTokens(text) },
    files: { list: async () => Object.keys(FILES), read: async () => null, absolute: (p: string) => join(root, p), readBytes: capReader(root, DEFAULT_MAX_FILE_BYTES) },
    log: { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) },
    // The options the last `turn(root, options)` named, as the kernel's settled settings would give them.
    options: { get: (spec: { key: string; default?: unknown }) => current[spec.key] ?? spec.default },
    cache: (namespace: string, options?: { version?: string | number }) => openCacheStore(root, namespace, { version: options?.version, warn: (m) => warnings.push(m) }),
  } as unknown as Kit;
  return { root, kit, warnings };
}

/** The kit's capabilities this plugin uses over a generated repository's `files`, its cache under `cacheRoot`. */
function listingKit(root: string, files: string[], cacheRoot = root): Kit {
  return {
    apiVersion: 2,
    version: "test",
    root,
    tokens: { count: (text: string) => countTokens(text) },
    files: { list: async () => files, read: async () => null, absolute: (p: string) => join(root, p), readBytes: capReader(root, DEFAULT_MAX_FILE_BYTES) },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    options: { get: (spec: { key: string; default?: unknown }) => current[spec.key] ?? spec.default },
    cache: (namespace: string, options?: { version?: string | number }) => openCacheStore(cacheRoot, namespace, { version: options?.version, warn: () => {} }),
  } as unknown as Kit;
}

const MODEL = { name: "test/model", contextWindow: 128_000, maxOutput: 16_000 } as ModelInfo;

let current: Record<string, unknown> = {};

/** A turn and the budget the kernel gives the map for it (the map alone in the window). */
function turn(root: string, options: Record<string, unknown>, extra: Partial<TurnContext> = {}): [TurnContext, ContextBudget] {
  current = options;
  const t: TurnContext = {
    root,
    chatFiles: [],
    readOnlyFiles: [],
    message: "",
    mentionedFiles: [],
    mentionedIdents: [],
    model: MODEL,
    options,
    interactive: false,
    signal: new AbortController().signal,
    ...extra,
  };
  return [t, shareContextWindow([{ budget: MAP_BUDGET }], MODEL, options)[0]!];
}

/** The map's tokens as the kernel shares a window of `window` tokens (the map alone) and the map grows with no chat files. */
function mapTokens(options: Record<string, unknown>, window: number, chatFiles: number): number {
  const [budget] = shareContextWindow([{ budget: MAP_BUDGET }], { contextWindow: window, maxOutput: 16_000 }, options);
  return mapTokensFor(budget!, chatFiles, (options.mapMultiplierNoFiles as number | undefined) ?? 2);
}

test("budget: context/8 clamped to 1024–4096, ×multiplier with no chat files, 0 disables", () => {
  expect(mapTokens({}, 128_000, 1)).toBe(4096);
  expect(mapTokens({}, 8_000, 1)).toBe(1024);
  expect(mapTokens({}, 16_000, 1)).toBe(2000);
  expect(mapTokens({}, 128_000, 0)).toBe(8192);
  expect(mapTokens({ mapMultiplierNoFiles: 3 }, 128_000, 0)).toBe(12288);
  expect(mapTokens({ mapTokens: 500 }, 128_000, 2)).toBe(500);
  expect(mapTokens({ mapTokens: 0 }, 128_000, 0)).toBe(0);
  // The grown map stays within the window's room (less the reply's reserve).
  expect(mapTokens({ mapTokens: 3000, mapMultiplierNoFiles: 4 }, 8_000, 0)).toBe(6000);
});

test("the plugin registers the session-stable provider and its commands", async () => {
  const { kit } = setup();
  const object = await (plugin as (kit: Kit) => ReturnType<Extract<typeof plugin, (...a: never[]) => unknown>>)(kit);
  expect(object.context?.map((c) => [c.name, c.stability])).toEqual([["repomap", "session"]]);
  expect(object.commands?.map((c) => c.name)).toEqual(["map", "map-refresh"]);
});

test("--map-tokens 0 disables the map", async () => {
  const { root, kit } = setup();
  expect(await new RepoMapService(kit).provide(...turn(root, { mapTokens: 0 }))).toBeNull();
});

test("the block names the other files when files are in the chat, and leaves chat files out", async () => {
  const { root, kit } = setup();
  const service = new RepoMapService(kit);
  const block = (await service.provide(...turn(root, {}, { chatFiles: ["src/orders.py"] })))!;
  expect(block.label).toBe("repo map");
  expect(block.text).toStartWith("Map of the other files");
  expect(block.text).toContain("src/billing.py:");
  expect(block.text).not.toContain("src/orders.py");
});

test("auto: the block stays the same across turns whatever is mentioned, until files change", async () => {
  const { root, kit } = setup();
  const service = new RepoMapService(kit);
  const options = { mapTokens: 25, mapMultiplierNoFiles: 1 };
  const first = (await service.provide(...turn(root, options)))!.text;
  const second = (await service.provide(...turn(root, options, { mentionedIdents: ["shipping"], message: "shipping please" })))!.text;
  expect(second).toBe(first);
  writeFileSync(join(root, "src/billing.py"), FILES["src/billing.py"]!.replace("refund_card", "refund_payment"));
  const third = (await service.provide(...turn(root, options)))!.text;
  expect(third).not.toBe(first);
  expect(third).toContain("refund_payment");
});

test("always: mentions shape every turn's map", async () => {
  const { root, kit } = setup();
  const service = new RepoMapService(kit);
  const options = { mapTokens: 25, mapMultiplierNoFiles: 1, mapRefresh: "always" };
  const plain = (await service.provide(...turn(root, options)))!.text;
  expect(plain).not.toContain("ship_parcel");
  // "shipping" names src/shipping.py: the file is personalised.
  const mentioned = (await service.provide(...turn(root, options, { mentionedIdents: ["shipping"] })))!.text;
  expect(mentioned).toContain("ship_parcel");
  expect(mentioned).not.toBe(plain);
});

test("manual: the map is kept until /map-refresh", async () => {
  const { root, kit } = setup();
  const service = new RepoMapService(kit);
  const options = { mapRefresh: "manual" };
  const first = (await service.provide(...turn(root, options)))!.text;
  writeFileSync(join(root, "src/new_module.py"), "def brand_new_function():\n    return 1\n");
  FILES["src/new_module.py"] = "def brand_new_function():\n    return 1\n";
  try {
    expect((await service.provide(...turn(root, options)))!.text).toBe(first);
    service.forceRefresh();
    expect((await service.provide(...turn(root, options)))!.text).toContain("brand_new_function");
  } finally {
    delete FILES["src/new_module.py"];
  }
});

// ─── A chat file changed since the last session ──────────────────────────────

const ORDERS_EDITED = "from .shipping import ship_parcel\n\ndef place_order(cart):\n    return ship_parcel(cart)\n";

async function earlierSession(root: string, kit: Kit, options: Record<string, unknown>, chat: Partial<TurnContext>): Promise<string> {
  const earlier = new RepoMapService(kit);
  const text = (await earlier.provide(...turn(root, options, chat)))!.text;
  earlier.close();
  return text;
}

/** A chat file edited after an earlier session cached its tags: that session's map, and the turn's options and chat. */
async function changedChatFile() {
  const { root, kit } = setup();
  const options = { mapTokens: 25 };
  const chat = { chatFiles: ["src/orders.py"], message: "place the order" };
  const before = await earlierSession(root, kit, options, chat);
  writeFileSync(join(root, "src/orders.py"), ORDERS_EDITED);
  return { root, kit, options, chat, before };
}

test("a changed chat file: the first map comes from its older tags, the next turn rebuilds once from fresh tags, then it stays", async () => {
  const { root, kit } = setup();
  const options = { mapTokens: 25 };
  const chat = { chatFiles: ["src/orders.py"], message: "place the order" };
  const before = await earlierSession(root, kit, options, chat);
  expect(before).toContain("charge_card");
  expect(before).not.toContain("ship_parcel");
  writeFileSync(join(root, "src/orders.py"), ORDERS_EDITED);

  const service = new RepoMapService(kit);
  service.backgroundDelayMs = 0;
  const first = (await service.provide(...turn(root, options, chat)))!.text;
  expect(first).toBe(before);
  // Same repository state: rebuilt once, from the tags the background reparse stored.
  const second = (await service.provide(...turn(root, options, { ...chat, message: "and ship it" })))!.text;
  expect(second).toContain("ship_parcel");
  const third = (await service.provide(...turn(root, options, { ...chat, message: "thanks" })))!.text;
  expect(third).toBe(second);
  service.close();
  // The next session finds fresh tags: the same map straight away.
  expect(await earlierSession(root, kit, options, chat)).toBe(second);
});

test("a one-shot run (--message, --message-file) schedules no warm-up for a map after an edit; a session does", async () => {
  const { root, kit } = setup();
  const chat = { chatFiles: ["src/orders.py"], message: "place the order" };
  for (const [options, warms] of [[{ mapTokens: 25, message: "place the order" }, false], [{ mapTokens: 25, messageFile: "task.md" }, false], [{ mapTokens: 25 }, true]] as const) {
    const service = new RepoMapService(kit);
    service.backgroundDelayMs = 60_000;
    expect(await service.provide(...turn(root, options, chat))).not.toBeNull();
    expect(service.warmUpScheduled).toBe(warms);
    service.close();
  }
});

test("a one-shot run (--message, --message-file) starts no background reparse of a changed chat file: its older tags stand in; a session reparses it", async () => {
  const { root, kit, options, chat, before } = await changedChatFile();
  for (const oneShot of [{ message: "place the order" }, { messageFile: "task.md" }]) {
    const service = new RepoMapService(kit);
    service.backgroundDelayMs = 0;
    expect((await service.provide(...turn(root, { ...options, ...oneShot }, chat)))!.text).toBe(before);
    expect(service.reparseScheduled).toBe(false);
    service.close();
  }
  // Nothing reparsed the file: a later session's first map still stands on the older tags...
  const session = new RepoMapService(kit);
  session.backgroundDelayMs = 0;
  expect((await session.provide(...turn(root, options, chat)))!.text).toBe(before);
  expect(session.reparseScheduled).toBe(true);
  // ...and reparses it in the background: its next map is built from the fresh tags.
  expect((await session.provide(...turn(root, options, { ...chat, message: "and ship it" })))!.text).toContain("ship_parcel");
  session.close();
});

test("a reparse not started by the next turn is cancelled and that turn parses the file itself", async () => {
  const { root, kit, options, chat, before } = await changedChatFile();
  const service = new RepoMapService(kit);
  service.backgroundDelayMs = 60_000;
  expect((await service.provide(...turn(root, options, chat)))!.text).toBe(before);
  const second = (await service.provide(...turn(root, options, { ...chat, message: "again" })))!.text;
  expect(second).toContain("ship_parcel");
  service.close();
});

test("outside a request (coder map, /map) and after /map-refresh the map is exact at once", async () => {
  const { root, kit } = setup();
  const options = { mapTokens: 25 };
  const chat = { chatFiles: ["src/orders.py"], message: "place the order" };
  await earlierSession(root, kit, options, chat);
  writeFileSync(join(root, "src/orders.py"), ORDERS_EDITED);
  const service = new RepoMapService(kit);
  expect((await service.provide(...turn(root, options, { ...chat, message: "" })))!.text).toContain("ship_parcel");
  service.close();
  writeFileSync(join(root, "src/orders.py"), FILES["src/orders.py"]!);
  const refreshed = new RepoMapService(kit);
  refreshed.forceRefresh();
  expect((await refreshed.provide(...turn(root, options, chat)))!.text).not.toContain("ship_parcel");
  refreshed.close();
});

test("a cold first map stands while the rest is parsed in the background; the turn after that rebuilds once from the full cache", async () => {
  const { generateRepo } = await import("../../scripts/gen-repo.ts");
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-provider-cold-"));
  dirs.push(root);
  const repo = generateRepo(root, 200, 7);
  const chat = repo.files.find((f) => (repo.imports.get(f)?.length ?? 0) >= 2)!;
  const kitFor = () => listingKit(root, repo.files);
  const service = new RepoMapService(kitFor());
  service.backgroundDelayMs = 0;
  service.coldFirstFiles = 0;
  const ask = () => service.provide(...turn(root, { mapTokens: 1024 }, { chatFiles: [chat], message: "change it" }));
  const first = (await ask())!.text;
  // The same state while the background parse may still run: the block stays.
  expect((await ask())!.text).toBe(first);
  await service.finishBackground();
  const rebuilt = (await ask())!.text;
  // What a session gets when it parses every file before its first map.
  const exact = new RepoMapService(kitFor());
  exact.coldFirstFiles = Number.POSITIVE_INFINITY;
  const full = (await exact.provide(...turn(root, { mapTokens: 1024 }, { chatFiles: [chat], message: "" })))!.text;
  expect(rebuilt).toBe(full);
  expect((await ask())!.text).toBe(rebuilt);
  service.close();
  exact.close();
}, 60_000);

test("a session whose listing reaches sharedStatFiles stats it with a helper thread: the same maps as a session that stats alone, before and after a file is deleted and another edited", async () => {
  const { generateRepo } = await import("../../scripts/gen-repo.ts");
  const root = mkdtempSync(join(tmpdir(), "coder-repomap-provider-shared-"));
  dirs.push(root);
  const repo = generateRepo(root, 300, 11);
  const chat = repo.files.find((f) => (repo.imports.get(f)?.length ?? 0) >= 2)!;
  const edited = repo.files.find((f) => f !== chat && f.endsWith(".py"))!;
  // Each session its own cache folder: each builds its own maps.
  const cacheRoot = () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-repomap-cache-"));
    dirs.push(dir);
    return dir;
  };
  const shared = new RepoMapService(listingKit(root, repo.files, cacheRoot()));
  shared.sharedStatFiles = 100;
  // Whatever the machine's load.
  shared.coreFree = () => true;
  const alone = new RepoMapService(listingKit(root, repo.files, cacheRoot()));
  alone.sharedStatFiles = Number.POSITIVE_INFINITY;
  const ask = async (service: RepoMapService) => (await service.provide(...turn(root, { mapTokens: 1024 }, { chatFiles: [chat], message: "" })))!.text;
  // Until the helper has taken part in a stat (its worker starts in a few milliseconds).
  const sharedMap = async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const text = await ask(shared);
      if ((shared.sharedStat?.helped ?? 0) > 0) return text;
      await Bun.sleep(20);
    }
    throw new Error("the helper never took part");
  };
  const before = await ask(alone);
  expect(await sharedMap()).toBe(before);
  expect(shared.sharedStat!.files).toBeGreaterThanOrEqual(300);
  expect(alone.sharedStat).toBeNull();
  // A file the map shows is deleted (still listed), and another file gets a definition.
  const shown = /^(pkg\S+):$/m.exec(before)![1]!;
  rmSync(join(root, shown));
  writeFileSync(join(root, edited), `${readFileSync(join(root, edited), "utf8")}\n\ndef shared_stat_added(value):\n    return value\n`);
  const after = await ask(alone);
  expect(after).not.toContain(`${shown}:`);
  expect(after).not.toBe(before);
  expect(await sharedMap()).toBe(after);
  shared.close();
  alone.close();
}, 60_000);
