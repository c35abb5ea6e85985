import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadFormat, runReply, tempRepo, textReply } from "../../tests/support/format-kit.ts";
import plugin from "./index.ts";

const FILE = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n";

describe("udiff", () => {
  test("hunks land by text (line numbers ignored); new and deleted files", async () => {
    const repo = tempRepo({ "io.py": FILE, "old.py": "x = 1\n" });
    const fmt = await loadFormat(plugin, "udiff", repo.kit);
    const reply =
      "Changes:\n\n```diff\n--- a/io.py\n+++ b/io.py\n@@ -40,3 +40,3 @@\n def load(path):\n-    with open(path) as f:\n+    with open(path, encoding='utf-8') as f:\n         return f.read()\n" +
      "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n--- old.py\n+++ /dev/null\n@@ ... @@\n-x = 1\n```\n";
    const { outcomes } = await runReply(fmt, textReply(reply), repo);
    expect(outcomes.map((o) => [o.status, o.path])).toEqual([["applied", "io.py"], ["applied", "notes.txt"], ["applied", "old.py"]]);
    expect(readFileSync(join(repo.root, "io.py"), "utf8")).toContain("open(path, encoding='utf-8') as f:\n        return");
    expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toBe("hello\nworld\n");
    expect(existsSync(join(repo.root, "old.py"))).toBe(false);
  });

  test("a hunk whose pieces only match separately is split; a bad hunk fails with a report", async () => {
    const repo = tempRepo({ "io.py": FILE });
    const fmt = await loadFormat(plugin, "udiff", repo.kit);
    const reply =
      "```diff\n--- io.py\n+++ io.py\n@@ ... @@\n def load(path):\n-    with open(path) as f:\n+    with open(path, 'rb') as f:\n         return f.read()\n MISSING LINE\n def save(path, text):\n-    with open(path, 'w') as f:\n+    with open(path, 'wb') as f:\n@@ ... @@\n-nothing like this\n+x\n```\n";
    const { outcomes, report } = await runReply(fmt, textReply(reply), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["applied", "failed"]);
    expect(readFileSync(join(repo.root, "io.py"), "utf8")).toContain("open(path, 'wb')");
    expect(report).toContain("1 of 2 edits failed");
    expect(report).toContain("-nothing like this");
  });

  test("a bare diff without a fence is read too", async () => {
    const repo = tempRepo({ "io.py": FILE });
    const fmt = await loadFormat(plugin, "udiff", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("Here:\n\n--- io.py\n+++ io.py\n@@ ... @@\n-import os\n+import os, sys\n"), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["applied"]);
    expect(readFileSync(join(repo.root, "io.py"), "utf8").startsWith("import os, sys\n")).toBe(true);
  });

  test("examples parse back", async () => {
    const fmt = await loadFormat(plugin, "udiff");
    const p = fmt.prompts({ fence: ["```", "```"], platform: "linux", chatFiles: [], shellSuggestions: true, editorOnly: false });
    const counts = p.examples.filter((m) => m.role === "assistant").map((m) => fmt.parse(textReply(m.content), { fence: ["```", "```"], chatFiles: [], resolvePath: (r) => r }).edits.length);
    expect(counts).toEqual([2, 3]);
  });
});
