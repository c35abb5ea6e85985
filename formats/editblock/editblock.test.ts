import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "../../core/errors.ts";
import { loadFormat, runReply, tempRepo, textReply } from "../../tests/support/format-kit.ts";
import plugin from "./index.ts";

const APP = 'def greet():\n    return "Hello"\n\n\ndef main():\n    print(greet())\n';

describe("diff (SEARCH/REPLACE)", () => {
  test("a realistic reply round-trips: two blocks, a new file and a shell suggestion", async () => {
    const repo = tempRepo({ "app.py": APP });
    const fmt = await loadFormat(plugin, "diff", repo.kit);
    const reply = [
      "I'll make greet take a name.",
      "",
      "app.py",
      "```python",
      "<<<<<<< SEARCH",
      "def greet():",
      '    return "Hello"',
      "=======",
      "def greet(name):",
      '    return f"Hello {name}"',
      ">>>>>>> REPLACE",
      "```",
      "",
      "app.py",
      "```python",
      "<<<<<<< SEARCH",
      "    print(greet())",
      "=======",
      '    print(greet("Ada"))',
      ">>>>>>> REPLACE",
      "```",
      "",
      "tests/test_app.py",
      "```python",
      "<<<<<<< SEARCH",
      "=======",
      "from app import greet",
      ">>>>>>> REPLACE",
      "```",
      "",
      "```bash",
      "python -m pytest",
      "```",
    ].join("\n");
    const { parsed, outcomes, report } = await runReply(fmt, textReply(reply), repo);
    expect(parsed.shell).toEqual([{ command: "python -m pytest" }]);
    expect(outcomes.map((o) => o.status)).toEqual(["applied", "applied", "applied"]);
    expect(report).toBe("");
    expect(readFileSync(join(repo.root, "app.py"), "utf8")).toBe('def greet(name):\n    return f"Hello {name}"\n\n\ndef main():\n    print(greet("Ada"))\n');
    expect(readFileSync(join(repo.root, "tests/test_app.py"), "utf8")).toBe("from app import greet\n");
  });

  test("a failing block: the others still apply, the report is repair-grade", async () => {
    const repo = tempRepo({ "app.py": APP });
    const fmt = await loadFormat(plugin, "diff", repo.kit);
    const reply =
      "app.py\n```python\n<<<<<<< SEARCH\ndef greet():\n    return 'Hello'\n=======\ndef greet():\n    return 'Hi'\n>>>>>>> REPLACE\n```\n\n" +
      "app.py\n```python\n<<<<<<< SEARCH\ndef main():\n=======\ndef main() -> None:\n>>>>>>> REPLACE\n```\n";
    const { outcomes, report } = await runReply(fmt, textReply(reply), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["failed", "applied"]);
    expect(readFileSync(join(repo.root, "app.py"), "utf8")).toContain("def main() -> None:");
    expect(report).toContain("1 of 2 edits failed");
    expect(report).toContain("<<<<<<< SEARCH\ndef greet():\n    return 'Hello'");
    expect(report).toContain("Did you mean these actual lines of app.py (lines 1-2");
    expect(report).toContain('    return "Hello"');
    expect(report).toContain("do not send it again");
    expect(report).toContain("#2 app.py");
  });

  test("ambiguous SEARCH fails and lists the places", async () => {
    const repo = tempRepo({ "x.txt": "a\nb\na\n" });
    const fmt = await loadFormat(plugin, "diff", repo.kit);
    const { outcomes, report } = await runReply(fmt, textReply("x.txt\n```\n<<<<<<< SEARCH\na\n=======\nz\n>>>>>>> REPLACE\n```\n"), repo);
    expect(outcomes[0]).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(report).toContain("matches 2 places in x.txt: line 1, line 3");
    expect(readFileSync(join(repo.root, "x.txt"), "utf8")).toBe("a\nb\na\n");
  });

  test("a block that misses its named file lands in the other chat file; empty SEARCH never does", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n", "b.py": "y = 2\n" });
    const fmt = await loadFormat(plugin, "diff", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("a.py\n```\n<<<<<<< SEARCH\ny = 2\n=======\ny = 3\n>>>>>>> REPLACE\n```\n\nnew.py\n```\n<<<<<<< SEARCH\n=======\nz = 0\n>>>>>>> REPLACE\n```\n"), repo);
    expect(outcomes[0]).toMatchObject({ status: "applied", path: "b.py" });
    expect(readFileSync(join(repo.root, "b.py"), "utf8")).toBe("y = 3\n");
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("x = 1\n");
    expect(readFileSync(join(repo.root, "new.py"), "utf8")).toBe("z = 0\n");
  });

  test("malformed replies are FormatErrors written for the model, and nothing is written", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n" });
    const fmt = await loadFormat(plugin, "diff", repo.kit);
    const cut = "a.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n";
    expect(() => fmt.parse(textReply(cut), repo.ctx)).toThrow(FormatError);
    expect(() => fmt.parse(textReply(cut), repo.ctx)).toThrow("Expected `>>>>>>> REPLACE` to end the REPLACE section");
    expect(() => fmt.parse(textReply("```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```"), repo.ctx)).toThrow("filename");
    expect(() => fmt.parse(textReply("a.py\n<<<<<<< SEARCH\nx = 1\n>>>>>>> REPLACE\n"), repo.ctx)).toThrow("Expected `=======`");
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("x = 1\n");
  });

  test("diff-fenced: the path inside the fence; decorated and partial paths resolve", async () => {
    const repo = tempRepo({ "src/lib/util.ts": "export const a = 1;\n" });
    const fmt = await loadFormat(plugin, "diff-fenced", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("```ts\n`util.ts`\n<<<<<<< SEARCH\nexport const a = 1;\n=======\nexport const a = 2;\n>>>>>>> REPLACE\n```\n"), repo);
    expect(outcomes[0]).toMatchObject({ status: "applied", path: "src/lib/util.ts" });
  });

  test("path tricks are refused, never written", async () => {
    const repo = tempRepo({ "a.py": "x\n" });
    const fmt = await loadFormat(plugin, "diff", repo.kit);
    const { outcomes, written } = await runReply(fmt, textReply("../evil.py\n```\n<<<<<<< SEARCH\n=======\nboom\n>>>>>>> REPLACE\n```\n\n.git/hooks/pre-commit\n```\n<<<<<<< SEARCH\n=======\nboom\n>>>>>>> REPLACE\n```\n"), repo);
    expect(outcomes.map((o) => o.status === "failed" && o.reason)).toEqual(["refused", "refused"]);
    expect(written.written).toEqual([]);
    expect(existsSync(join(repo.root, "..", "evil.py"))).toBe(false);
  });

  test("prompts: rules, two examples, reminder; the editor variant asks for edits only", async () => {
    const fmt = await loadFormat(plugin, "diff");
    const base = { fence: ["```", "```"] as const, platform: "linux", chatFiles: [], shellSuggestions: true };
    const p = fmt.prompts({ ...base, editorOnly: false });
    expect(p.system).toContain("<<<<<<< SEARCH");
    expect(p.examples.filter((m) => m.role === "assistant")).toHaveLength(2);
    expect(p.reminder.length).toBeLessThan(400);
    const e = fmt.prompts({ ...base, editorOnly: true });
    expect(e.system).toContain("no explanations");
    // Every example block parses back with this format's own parser.
    for (const m of p.examples.filter((m) => m.role === "assistant")) {
      expect(fmt.parse(textReply(m.content), { fence: ["```", "```"], chatFiles: [], resolvePath: (r) => r }).edits.length).toBeGreaterThan(0);
    }
    const tags = fmt.prompts({ ...base, fence: ["<source>", "</source>"], editorOnly: false });
    expect(fmt.parse(textReply(tags.examples[1]!.content), { fence: ["<source>", "</source>"], chatFiles: [], resolvePath: (r) => r }).edits).toHaveLength(2);
  });
});
