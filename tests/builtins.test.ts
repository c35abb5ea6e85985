// builtins.ts declares each built-in's name, options and subcommands so --help and argv need no
// plugin code, and which register model adapters so `coder acp` answers initialize loading only
// those: each loaded plugin must declare the very same.
import { expect, test } from "bun:test";
import { BUILTINS } from "../builtins.ts";
import type { PluginObject } from "../core/plugin.ts";
import { testKit } from "./support/format-kit.ts";

for (const builtin of BUILTINS) {
  test(`${builtin.origin} declares what builtins.ts says it does`, async () => {
    const exported = (await builtin.load()).default;
    const plugin: PluginObject = typeof exported === "function" ? await exported(testKit()) : exported;
    expect(plugin.name).toBe(builtin.name);
    expect(plugin.options ?? []).toEqual(builtin.options ?? []);
    // `coder acp` answers initialize from the built-ins marked `models` alone (core/acp/initialize.ts).
    expect((plugin.models ?? []).length > 0).toBe(builtin.models === true);
    expect((plugin.subcommands ?? []).map(({ name, summary, usage }) => ({ name, summary, usage }))).toEqual((builtin.subcommands ?? []).map(({ name, summary, usage }) => ({ name, summary, usage })));
  });
}
