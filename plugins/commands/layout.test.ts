import { expect, test } from "bun:test";
import { dropMatches } from "./args.ts";
import { twoColumns, usageLabel, wrapWords } from "./layout.ts";
import { globMatches } from "../../core/edit/glob.ts";

test("wrapWords breaks between words and cuts only a word longer than the line", () => {
  expect(wrapWords("one two three four", 9)).toEqual(["one two", "three", "four"]);
  expect(wrapWords("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  expect(wrapWords("", 10)).toEqual([""]);
});

test("twoColumns: descriptions wrap under themselves; a long name takes its own line; narrow widths stack", () => {
  const rows = [
    ["/add FILE", "add files to the chat so the model may edit them"],
    ["/mcp [list | add SERVER URI | drop [SERVER:URI]]", "MCP servers"],
  ] as const;
  const wide = twoColumns(rows, 50).split("\n");
  expect(wide[0]).toBe("/add FILE  add files to the chat so the model may");
  expect(wide[1]).toBe("           edit them");
  expect(wide[2]).toBe("/mcp [list | add SERVER URI | drop [SERVER:URI]]");
  expect(wide[3]).toBe("           MCP servers");
  expect(twoColumns(rows, 60).split("\n").every((l, i) => i === 2 || l.length < 60)).toBe(true);
  const narrow = twoColumns([["/add FILE", "add files"]], 30).split("\n");
  expect(narrow).toEqual(["/add FILE", "    add files"]);
});

test("usageLabel: a usage that names the command is kept; otherwise the name comes first", () => {
  expect(usageLabel({ name: "add", usage: "/add FILE" })).toBe("/add FILE");
  expect(usageLabel({ name: "mcp", usage: "[list]" })).toBe("/mcp [list]");
  expect(usageLabel({ name: "ls" })).toBe("/ls");
});

test("dropMatches: the file itself, a glob, a folder, else every chat file containing the word", () => {
  const chat = ["src/cli.py", "tests/test_cli.py", "app.py", "/abs/notes.md"];
  expect(dropMatches("app.py", chat, globMatches)).toEqual(["app.py"]);
  expect(dropMatches("cli.py", chat, globMatches)).toEqual(["src/cli.py", "tests/test_cli.py"]);
  expect(dropMatches("src/", chat, globMatches)).toEqual(["src/cli.py"]);
  expect(dropMatches("*.py", chat, globMatches)).toEqual(["app.py"]);
  expect(dropMatches("**/*.py", chat, globMatches)).toEqual(["src/cli.py", "tests/test_cli.py", "app.py"]);
  expect(dropMatches("notes", chat, globMatches)).toEqual(["/abs/notes.md"]);
  expect(dropMatches("nothing", chat, globMatches)).toEqual([]);
});
