import { describe, expect, test } from "bun:test";
import type { EditOutcome } from "../plugin.ts";
import { CoderCompletions, identifiersIn } from "./completions.ts";
import { choiceLine, choiceOf } from "../gate/prompter.ts";
import { keyAnswer } from "./confirm.ts";
import { failureSummary } from "../chat/failures.ts";
import { HistorySearch } from "./history-search.ts";
import { recordingOutput } from "../chat/record.ts";
import { codePaint, makeTheme } from "./style.ts";
import { ViKeys } from "./vi-keys.ts";

describe("one-key confirmations", () => {
  const all = ["yes", "no", "all", "skip-all", "never"] as const;
  test("the question line names each key, and the default", () => {
    expect(choiceLine(all, "yes")).toBe("(Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: ");
    expect(choiceLine(["yes", "no", "never"], "no")).toBe("(Y)es/(N)o/(D)on't ask again [No]: ");
  });
  test("a letter answers at once, Enter takes the default, Esc and Ctrl-C are No, other keys nothing", () => {
    expect(keyAnswer("y", all, "yes")).toEqual({ answer: "yes", ctrlC: false });
    expect(keyAnswer("N", all, "yes")).toEqual({ answer: "no", ctrlC: false });
    expect(keyAnswer("a", all, "yes")?.answer).toBe("all");
    expect(keyAnswer("s", all, "yes")?.answer).toBe("skip-all");
    expect(keyAnswer("d", all, "yes")?.answer).toBe("never");
    expect(keyAnswer("\r", all, "no")?.answer).toBe("no");
    expect(keyAnswer("\x1b", all, "yes")).toEqual({ answer: "no", ctrlC: false });
    expect(keyAnswer("\x03", all, "yes")).toEqual({ answer: "no", ctrlC: true });
    expect(keyAnswer("/", all, "yes")).toBeNull();
    expect(keyAnswer("\x1b[A", all, "yes")).toBeNull();
    // A letter and Enter in one chunk (typed fast, as on a line prompt) is the letter.
    expect(keyAnswer("n\r", all, "yes")?.answer).toBe("no");
    expect(keyAnswer("nn", all, "yes")).toBeNull();
    // "a" is no answer when All is not offered.
    expect(keyAnswer("a", ["yes", "no", "never"], "yes")).toBeNull();
  });
  test("a typed line (plain prompts) answers by its first letter or the whole label", () => {
    expect(choiceOf("", all, "yes")).toBe("yes");
    expect(choiceOf("yes", all, "no")).toBe("yes");
    expect(choiceOf("skip all", all, "yes")).toBe("skip-all");
    expect(choiceOf("dont", all, "yes")).toBeNull();
    expect(choiceOf("x", all, "yes")).toBeNull();
  });
});

describe("failures said for people", () => {
  const edit = { path: "shop/cart.py", search: "a", replace: "b" } as never;
  test("not found: the closest lines with their numbers", () => {
    const outcome: EditOutcome = {
      status: "failed",
      edit,
      path: "shop/cart.py",
      reason: "not-found",
      detail: "not-found: no match",
      match: { status: "failed", reason: "not-found", candidates: [{ startLine: 40, endLine: 42, similarity: 0.8, text: "def total(items):\n    s = 0\n    return s\n" }] },
    };
    expect(failureSummary(outcome)).toBe("Could not find the SEARCH text in shop/cart.py; closest lines 40–42:\n   40 │ def total(items):\n   41 │     s = 0\n   42 │     return s");
  });
  test("no internal codes for the other reasons", () => {
    expect(failureSummary({ status: "failed", edit, path: "a.py", reason: "refused", detail: "The user did not allow editing a.py. Do not edit it again." })).toBe("Did not edit a.py: The user did not allow editing a.py.");
    expect(failureSummary({ status: "failed", edit, path: "a.py", reason: "missing-file", detail: "missing-file" })).toBe("Could not edit a.py: the file does not exist.");
    expect(failureSummary({ status: "applied", edit, path: "a.py" })).toBeNull();
  });
});

describe("completion menu", () => {
  const source = {
    commands: () => [
      { name: "add", summary: "add files" },
      { name: "exit", summary: "leave" },
      { name: "exit", summary: "leave" },
      { name: "help", summary: "help" },
    ],
    argument: (command: string, arg: string) => (command === "add" ? ["my\\ notes.md", "main.py"].filter((f) => f.startsWith(arg)) : []),
    words: () => ["shop/cart.py", "cart.py", "calculate_total", "CartItem"],
  };
  const menu = new CoderCompletions(source);
  test("commands once each, with their summaries", async () => {
    const s = await menu.getSuggestions(["/e"], 0, 2, {});
    expect(s?.items).toEqual([{ value: "/exit", label: "/exit", description: "leave" }]);
    const all = await menu.getSuggestions(["/"], 0, 1, {});
    expect(all?.items.map((i) => i.value)).toEqual(["/add", "/exit", "/help"]);
  });
  test("a command's arguments, and the whole argument replaced on completion", async () => {
    const s = await menu.getSuggestions(["/add my"], 0, 7, {});
    expect(s).toEqual({ items: [{ value: "my\\ notes.md", label: "my\\ notes.md" }], prefix: "my" });
    expect(menu.applyCompletion(["/add my"], 0, 7, s!.items[0]!, s!.prefix)).toEqual({ lines: ["/add my\\ notes.md"], cursorLine: 0, cursorCol: 17 });
  });
  test("plain text: file names and identifiers from three letters on", async () => {
    expect(await menu.getSuggestions(["fix ca"], 0, 6, {})).toBeNull();
    const s = await menu.getSuggestions(["fix cal"], 0, 7, {});
    expect(s?.items.map((i) => i.value)).toEqual(["calculate_total"]);
    const c = await menu.getSuggestions(["look at car"], 0, 11, {});
    expect(c?.items.map((i) => i.value)).toEqual(["cart.py"]);
    expect(identifiersIn(["def calculate_total(items): x = CartItem()"])).toEqual(new Set(["def", "calculate_total", "items", "CartItem"]));
  });
});

test("Ctrl-R finds older entries as the query grows; Esc puts back what was typed", () => {
  const search = new HistorySearch(() => ["git status", "add a test for cart", "add pricing"]);
  search.begin("draft");
  for (const ch of "add") search.handle(ch);
  expect(search.status()).toBe("(reverse-i-search)`add': add a test for cart");
  search.handle("\x12");
  expect(search.status()).toBe("(reverse-i-search)`add': add pricing");
  expect(search.handle("\r")).toEqual({ accept: "add pricing" });
  expect(search.active).toBe(false);
  search.begin("draft");
  search.handle("z");
  expect(search.status()).toContain("(no match)");
  expect(search.handle("\x1b")).toEqual({ accept: "draft" });
});

test("vi keys: Esc enters normal mode; motions become editor keys; i, a, A return to insert", () => {
  const vi = new ViKeys();
  expect(vi.translate("x")).toEqual(["x"]);
  expect(vi.translate("\x1b")).toEqual(["\x1b[D"]);
  expect(vi.normal).toBe(true);
  expect(vi.translate("h")).toEqual(["\x1b[D"]);
  expect(vi.translate("0")).toEqual(["\x01"]);
  expect(vi.translate("d")).toEqual([]);
  expect(vi.translate("d")).toEqual(["\x01", "\x0b"]);
  expect(vi.translate("A")).toEqual(["\x05"]);
  expect(vi.normal).toBe(false);
  expect(vi.translate("q")).toEqual(["q"]);
});

test("themes: light and dark headings differ; --code-theme changes code colours; a capture falls back to its shorter name", () => {
  const dark = makeTheme();
  const light = makeTheme({ light: true });
  expect(dark.heading[0]("T")).not.toBe(light.heading[0]("T"));
  expect(codePaint(makeTheme({ codeTheme: "monokai" }), "keyword")("if")).toBe("\x1b[38;2;249;38;114mif\x1b[39m");
  expect(codePaint(dark, "function.method.call")("f")).toBe(codePaint(dark, "function")("f"));
});

test("the transcript hears applied edits with their diff, commits and failures", () => {
  const notes: string[] = [];
  const seen: string[] = [];
  const out = recordingOutput({ emit: (e) => seen.push(e.type), print() {}, warn() {}, flush() {} }, { note: (t) => notes.push(t) });
  out.emit({ type: "edit", path: "a.py", status: "applied", detail: "applied", diff: "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" });
  out.emit({ type: "commit", hash: "abcdef0123", message: "fix: x" });
  out.emit({ type: "edit", path: "b.py", status: "failed", detail: "not-found: …", summary: "Could not find the SEARCH text in b.py." });
  out.emit({ type: "delta", text: "hi" });
  expect(seen).toEqual(["edit", "commit", "edit", "delta"]);
  expect(notes).toEqual(["Applied edit to a.py\n\n```diff\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n```", "Commit abcdef0 fix: x", "Could not find the SEARCH text in b.py."]);
});
