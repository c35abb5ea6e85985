// The kernel knows no built-in by name: no string literal in core/ (tests aside) is the name of
// a built-in plugin, of anything one registers (format, context or tool provider, subcommand)
// or of an option one declares (comments aside: they may explain). The names come from the built-ins themselves, so a
// new built-in is covered without touching this file. The same check as a command:
//
//   grep -rnE --include='*.ts' --exclude='*.test.ts' \
//     "[\"'\`](diff|diff-fenced|whole|udiff|patch|tool|ask|architect|context|editblock|wholefile|openai|repomap|commands|media|mcp|mapTokens|mapRefresh|mcpServers|mcpTools)[\"'\`]" core/ \
//     | grep -vE '^[^:]+:[0-9]+:\s*(//|/?\*)'
//
// which prints only lines of the allow-list below (the diff package, git diff, the tool role...).
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { BUILTINS } from "../builtins.ts";
import type { PluginObject } from "../core/plugin.ts";
import { testKit } from "./support/format-kit.ts";

const ROOT = join(import.meta.dir, "..");

/**
 * Literals that equal a built-in's name but are not about it, each with why. Kept short: an
 * entry here is a claim that the text means something else.
 */
const ALLOWED: readonly { file: string; literal: string; why: string }[] = [
  { file: "core/edit/blank-lines.ts", literal: "diff", why: "the npm package `diff` (import specifier)" },
  { file: "core/edit/uncommitted.ts", literal: "diff", why: "the npm package `diff` (import specifier)" },
  { file: "core/edit/line-endings.ts", literal: "diff", why: "the npm package `diff` (import specifier)" },
  { file: "core/edit/rebase.ts", literal: "diff", why: "the npm package `diff` (import specifier)" },
  { file: "core/boot/kit.ts", literal: "diff", why: "the npm package `diff` (import specifier)" },
  { file: "core/git/git.ts", literal: "diff", why: "the `git diff` subcommand" },
  { file: "core/acp/output.ts", literal: "diff", why: "ACP's `diff` tool-call content type (the protocol's word)" },
  { file: "core/acp/output.ts", literal: "tool", why: "the engine's `tool` event and ACP's card id prefix" },
  { file: "core/chat/history.ts", literal: "tool", why: "the `tool` message role" },
  { file: "core/chat/tool-calls.ts", literal: "tool", why: "the `tool` message role and event type" },
  { file: "core/chat/tool-calls.ts", literal: "ask", why: "a tool's `confirm: \"ask\"` (ask before each call)" },
  { file: "core/chat/tool-answers.ts", literal: "tool", why: "the `tool` message role" },
  { file: "core/chat/record.ts", literal: "tool", why: "the engine's `tool` event" },
  { file: "core/chat/events.ts", literal: "tool", why: "the engine's `tool` event type" },
  { file: "core/term/render.ts", literal: "tool", why: "the engine's `tool` event" },
  { file: "core/term/tty-output.ts", literal: "tool", why: "the engine's `tool` event" },
  { file: "core/cli/subcommands.ts", literal: "context", why: "the plugin item kind `context` (coder plugins' column)" },
  { file: "core/cli/subcommands.ts", literal: "tool", why: "the plugin item kind `tool` (coder plugins --json)" },
  { file: "core/plugins/registry.ts", literal: "context", why: "the plugin item kind `context`" },
  { file: "core/plugins/loader.ts", literal: "context", why: "the plugin item kind `context`" },
  { file: "core/plugins/loader.ts", literal: "commands", why: "the plugin item kind `commands`" },
  { file: "core/plugins/registry.ts", literal: "commands", why: "the plugin item kind `commands`" },
  { file: "core/cli/subcommands.ts", literal: "commands", why: "the plugin item kind `commands`" },
  { file: "core/config/options.ts", literal: "context", why: "`coder plugin new --kind context` (a template kind)" },
  { file: "core/config/options.ts", literal: "tool", why: "`coder plugin new --kind tool` (a template kind)" },
  { file: "core/cli/scaffold.ts", literal: "context", why: "`coder plugin new --kind context` (a template kind)" },
  { file: "core/cli/scaffold.ts", literal: "tool", why: "`coder plugin new --kind tool` (a template kind)" },
  { file: "core/cli/scaffold.ts", literal: "ask", why: "the template tool's `confirm: \"ask\"`" },
  { file: "core/cli/scaffold.ts", literal: "whole", why: "text of the template plugin that `coder plugin new` writes (its example model table entry)" },
  { file: "core/plugin.ts", literal: "tool", why: "the `tool` message role" },
  { file: "core/plugin.ts", literal: "ask", why: "a tool's `confirm: \"ask\"` (ask before each call)" },
  { file: "core/cli/subcommands.ts", literal: "media", why: "the `coder models` column saying which images and PDFs a model takes" },
  { file: "core/acp/agent.ts", literal: "mcpServers", why: "ACP's session/new request field `params.mcpServers` (the protocol's name)" },
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : [];
  });
}

/** Every name a built-in brings: its own, its formats', providers' and subcommands', its options' keys. */
async function builtinNames(): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const kit = testKit();
  for (const builtin of BUILTINS) {
    names.set(builtin.name, `plugin ${builtin.name}`);
    const exported = (await builtin.load()).default;
    const plugin: PluginObject = typeof exported === "function" ? await exported(kit) : exported;
    // Slash commands are left out: their names are everyday words (`git`, `help`, `model`).
    for (const kind of ["formats", "context", "tools", "subcommands"] as const) {
      for (const item of plugin[kind] ?? []) names.set(item.name, `${kind} of ${builtin.name}`);
    }
    // Command-line-only flags (`coder eval --out`, `--jobs`) are everyday words no config or
    // environment can carry: core never sees them except through the generic argv parser.
    for (const option of plugin.options ?? []) if (!option.cliOnly) names.set(option.key, `option of ${builtin.name}`);
  }
  return names;
}

test("no string literal in core/ is a built-in's name, beyond the allow-list", async () => {
  const names = await builtinNames();
  const optionKeys = new Set([...names].filter(([, what]) => what.startsWith("option of")).map(([key]) => key));
  // The check must see the built-ins it is about.
  for (const known of ["diff", "architect", "repomap", "mcp", "media", "mapTokens", "mcpServers"]) expect(names.has(known)).toBe(true);
  const found: string[] = [];
  const used = new Set<number>();
  for (const file of sources(join(ROOT, "core"))) {
    const rel = relative(ROOT, file).split("\\").join("/");
    // Comments may name built-ins (they explain); code may not. Blanked, so line numbers stay.
    const text = readFileSync(file, "utf8")
      .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
      .replace(/(^|[^:"'`\\])\/\/[^\n]*/g, (c, lead: string) => lead + " ".repeat(c.length - lead.length));
    for (const m of text.matchAll(/(["'`])([A-Za-z0-9_./:@-]+)\1/g)) {
      const literal = m[2]!;
      if (!names.has(literal)) continue;
      const allowed = ALLOWED.findIndex((a) => a.file === rel && a.literal === literal);
      if (allowed >= 0) {
        used.add(allowed);
        continue;
      }
      const line = text.slice(0, m.index).split("\n").length;
      found.push(`${rel}:${line}: "${literal}" (${names.get(literal)})`);
    }
    // A plugin's option key is special-cased by property too (`options.mapTokens`), not only as a string.
    for (const m of text.matchAll(/(?<=[A-Za-z0-9_)\]]\??\.)([a-z][A-Za-z0-9]*)\b|(?<=[{,]\s*)([a-z][A-Za-z0-9]*)(?=\??:)/g)) {
      const key = (m[1] ?? m[2])!;
      if (!optionKeys.has(key)) continue;
      const allowed = ALLOWED.findIndex((a) => a.file === rel && a.literal === key);
      if (allowed >= 0) {
        used.add(allowed);
        continue;
      }
      found.push(`${rel}:${text.slice(0, m.index).split("\n").length}: ${key} (${names.get(key)})`);
    }
  }
  expect(found).toEqual([]);
  // An allowance nothing needs any more goes.
  expect(ALLOWED.filter((_, i) => !used.has(i)).map((a) => `${a.file}: "${a.literal}"`)).toEqual([]);
});
