// docs/aider.md, the "Aider command/option → coder" table, held to the binary: it has a
// row for each of Aider's 43 commands and 124 long options, and every row that says coder
// has the command or flag (or a renamed one that still takes Aider's spelling) is true.
import type { App } from "../core/kernel.ts";
import type { Output } from "../core/chat/events.ts";
import { terminalCommands } from "../core/term/repl.ts";
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgv } from "../core/config/argv.ts";
import { builtinTable } from "../builtins.ts";
import { BINARY } from "./engine-harness.ts";

const DOC = readFileSync(join(import.meta.dir, "..", "docs", "aider.md"), "utf8");

/** The rows of the table under `heading`: [aider, coder, notes]. */
function rows(heading: string): [string, string, string][] {
  const section = DOC.slice(DOC.indexOf(heading));
  const table = section.slice(section.indexOf("| ---"));
  const lines = table.split("\n").slice(1);
  const out: [string, string, string][] = [];
  for (const line of lines) {
    if (!line.startsWith("|")) break;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    out.push([cells[0] ?? "", cells[1] ?? "", cells[2] ?? ""]);
  }
  return out;
}

const commands = rows("## Slash commands");
const options = rows("## Options");
const newer = rows("Newer Aider releases");

test("one row per Aider command (43) and long option (124), each with a verdict", () => {
  expect(commands).toHaveLength(43);
  const longOptions = options.flatMap(([aider]) => aider.split(",")[0]!.trim());
  expect(longOptions).toHaveLength(124);
  expect(new Set(longOptions).size).toBe(124);
  for (const [, verdict, notes] of [...commands, ...options, ...newer]) {
    expect(["has", "renamed", "left out", "issue 11", "issue 13"]).toContain(verdict);
    if (verdict === "left out") expect(notes.length).toBeGreaterThan(0);
  }
});

describe("every flag the table says coder takes is taken (has, or renamed but still spelled Aider's way)", () => {
  for (const [aider, verdict, notes] of [...options, ...newer]) {
    if (verdict !== "has" && !(verdict === "renamed" && notes.includes("still works"))) continue;
    for (const spelling of aider.split(",").map((s) => s.trim().split(" ")[0]!)) {
      if (!spelling.startsWith("--")) continue;
      test(spelling, () => {
        // A wrong value ("x" for a number) is fine here: only an unknown flag fails.
        const problems = [[spelling], [spelling, "x"]].map((args) => {
          try {
            parseArgv(args, builtinTable());
            return "";
          } catch (e) {
            return String(e);
          }
        });
        expect(problems.every((p) => /unknown option/i.test(p)) ? problems[0] : "").toBe("");
      });
    }
  }
});

test("every command the table says coder has is registered (by a plugin, or by the REPL when it starts)", async () => {
  const proc = Bun.spawn([BINARY, "plugins", "--json"], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent" } });
  const listed = JSON.parse(await new Response(proc.stdout).text()) as { items: { kind: string; name: string }[] };
  const names = new Set(listed.items.filter((i) => i.kind === "command").map((i) => `/${i.name}`));
  // The terminal's own commands (/editor, /multiline-mode, ...) join when the REPL starts: the list it registers.
  for (const c of terminalCommands({} as App, null, {} as Output)) names.add(`/${c.name}`);
  const missing = commands.filter(([, verdict]) => verdict === "has").map(([aider]) => aider).filter((name) => !names.has(name));
  expect(missing).toEqual([]);
});
