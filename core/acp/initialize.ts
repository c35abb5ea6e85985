// The answer to `initialize`, and how `coder acp` gives it before the SDK and the kernel load.
// The answer depends on the settings alone but for `authMethods`: whether the model the
// folder's settings choose has its API key. That is decided by the settings, the environment
// and the model adapters, so without plugins of the user's own the quick path loads only the
// built-ins that register model adapters (builtins.ts says which) and asks the very functions
// the kernel would (core/chat/model-choice.ts). With plugins of the user's own (any of which
// may register or replace an adapter) the kernel decides, as it always did. The SDK's schemas
// cost more than everything else at start-up, so this file imports nothing of it but types.
import type { InitializeResponse } from "@agentclientprotocol/sdk";
import type { Kit, Logger } from "../plugin.ts";
import type { Loaded } from "../kernel.ts";
import { type BuiltinPlugin, loadPlugins } from "../plugins/loader.ts";
import { Registry } from "../plugins/registry.ts";
import { missingApiKey } from "../chat/model-choice.ts";

/** The ACP version coder speaks (the SDK's PROTOCOL_VERSION; tests/acp-initialize.test.ts holds them equal). */
export const PROTOCOL_VERSION = 1;

/** The id of the one auth method: an API key in the environment, .env or config. */
export const API_KEY_METHOD = "api-key";

/** coder's answer to `initialize`: `missing` is the key to set (an auth method), or null when a model is usable. */
export function initializeResult(version: string, missing: string | null): InitializeResponse {
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentInfo: { name: "coder", title: "coder", version },
    agentCapabilities: {
      loadSession: true,
      sessionCapabilities: { list: {}, close: {}, delete: {} },
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
    },
    authMethods: missing ? [{ id: API_KEY_METHOD, name: "API key", description: missing }] : [],
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The id of `line` when it is an `initialize` request the SDK would accept as it is: a JSON-RPC
 * 2.0 request with a number or string id and params holding an integer protocol version of
 * 0-65535 (every other field of the SDK's schema falls back to its default when malformed, and
 * the answer reads none of them). Anything else (null: not sure) is left to the SDK, which
 * answers it as it always did.
 */
export function initializeRequestId(line: string): number | string | null {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObject(message) || message.jsonrpc !== "2.0" || message.method !== "initialize") return null;
  const id = message.id;
  if (typeof id !== "string" && (typeof id !== "number" || !Number.isFinite(id))) return null;
  const params = message.params;
  if (!isObject(params)) return null;
  const version = params.protocolVersion;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0 || version > 65535) return null;
  return id;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The kit, to a model adapters' built-in loaded only to answer `initialize`: it refuses every
 * use, and a plugin that used it fails to load here, which hands the decision to the kernel.
 */
const refusingKit = new Proxy({} as Kit, {
  get: (_target, key) => {
    throw new Error(`kit.${String(key)} is not available while coder acp answers initialize`);
  },
});

/**
 * What `authMethods` says for `loaded` (the key to set, or null), decided from the settings and
 * the built-ins that register model adapters; undefined when only the kernel can decide (the
 * settings name plugins of the user's own, or a model built-in did not load here).
 */
export async function quickMissingKey(loaded: Loaded, builtins: readonly BuiltinPlugin[]): Promise<string | null | undefined> {
  const options = loaded.settings.options;
  // What assembleApp loads after the built-ins (core/plugins/loader.ts userSources).
  if (options.plugins.length > 0 || options.plugin.length > 0) return undefined;
  const registry = new Registry({ modelOverrides: options.models, log: silent });
  try {
    await loadPlugins(registry, builtins.filter((b) => b.models === true), refusingKit, silent);
  } catch {
    return undefined;
  }
  if (registry.failures.length) return undefined;
  return missingApiKey({ settings: loaded.settings, registry, env: loaded.env });
}
