import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "../../core/errors.ts";
import { loadFormat, runReply, tempRepo, textReply } from "../../tests/support/format-kit.ts";
import plugin from "./index.ts";
import { classifyLine, ListingSyntaxError, parseListings } from "./parse.ts";
import * as shellFences from "../../core/edit/shell-fence.ts";

describe("whole", () => {
  test("named listings replace files; a new path creates one; CRLF kept", async () => {
    const repo = tempRepo({ "a.txt": "one\r\ntwo\r\n", "b.txt": "b\n" });
    const fmt = await loadFormat(plugin, "whole", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("Here:\n\na.txt\n```\none\n2\n```\n\n**docs/new.md**\n```markdown\n# New\n```\n"), repo);
    expect(outcomes.map((o) => [o.status, o.path])).toEqual([["applied", "a.txt"], ["applied", "docs/new.md"]]);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe("one\r\n2\r\n");
    expect(readFileSync(join(repo.root, "docs/new.md"), "utf8")).toBe("# New\n");
  });

  test("a cut-off listing is a FormatError and writes nothing", async () => {
    const repo = tempRepo({ "a.txt": "keep\n" });
    const fmt = await loadFormat(plugin, "whole", repo.kit);
    expect(() => fmt.parse(textReply("a.txt\n```\nhalf of the"), repo.ctx)).toThrow(FormatError);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe("keep\n");
  });

  test("no path and several chat files: the one block lands on the chat file it plausibly is, else it is read as an example", async () => {
    const repo = tempRepo({ "a.txt": "a1\na2\na3\n", "b.txt": "b1\nb2\nb3\n" });
    const fmt = await loadFormat(plugin, "whole", repo.kit);
    const snippet = await runReply(fmt, textReply("Like this?\n\n```\nx\n```\n"), repo);
    expect(snippet.outcomes.map((o) => o.status)).toEqual(["skipped"]);
    const whole = await runReply(fmt, textReply("Done:\n\n```\nb1\nB2\nb3\n```\n"), repo);
    expect(whole.outcomes.map((o) => [o.status, o.path])).toEqual([["applied", "b.txt"]]);
    expect(readFileSync(join(repo.root, "a.txt"), "utf8")).toBe("a1\na2\na3\n");
    expect(readFileSync(join(repo.root, "b.txt"), "utf8")).toBe("b1\nB2\nb3\n");
  });

  test("a listing that is really a SEARCH/REPLACE block or a conflict is refused, nothing written; a file that has markers may keep them", async () => {
    const repo = tempRepo({ "a.py": "def f():\n    return 1\n", "merge.txt": "<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n" });
    const fmt = await loadFormat(plugin, "whole", repo.kit);
    const block = "a.py\n```python\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n```\n";
    const wrong = await runReply(fmt, textReply(block), repo);
    expect(wrong.outcomes.map((o) => [o.status, o.path])).toEqual([["failed", "a.py"]]);
    expect(wrong.outcomes[0]!.status === "failed" && wrong.outcomes[0]!.detail).toContain("SEARCH/REPLACE block or a merge conflict");
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("def f():\n    return 1\n");
    const fresh = await runReply(fmt, textReply("new.py\n```\n<<<<<<< HEAD\na\n>>>>>>> other\n```\n"), repo);
    expect(fresh.outcomes.map((o) => o.status)).toEqual(["failed"]);
    const kept = await runReply(fmt, textReply("merge.txt\n```\n<<<<<<< ours\nx\n=======\nz\n>>>>>>> theirs\n```\n"), repo);
    expect(kept.outcomes.map((o) => o.status)).toEqual(["applied"]);
  });

  test("editor variant and examples parse back", async () => {
    const fmt = await loadFormat(plugin, "whole");
    const ctx = { fence: ["```", "```"] as const, platform: "linux", chatFiles: [], shellSuggestions: false, editorOnly: true };
    const p = fmt.prompts(ctx);
    expect(p.system).toContain("nothing else");
    for (const m of p.examples.filter((m) => m.role === "assistant")) {
      expect(fmt.parse(textReply(m.content), { fence: ["```", "```"], chatFiles: [], resolvePath: (r) => r }).edits).toHaveLength(1);
    }
  });
});

describe("whole: a listing closed early by a bare fence in its content", () => {
  test("a URL after the early close is text, not a file name: the reply is refused, nothing written (mime-db's README)", () => {
    const content = "# db\n\nDownload it:\n\n```\nhttps://cdn.example.net/db.json\n```\n\n## Usage\n\n```js\nvar db = require('db')\n```\n";
    const reply = `README.md\n\`\`\`markdown\n${content}\`\`\`\n`;
    expect(() => parseListings(reply, ["```", "```"], ["README.md"], shellFences)).toThrow(ListingSyntaxError);
    expect(classifyLine("https://cdn.example.net/db.json", { chatFiles: [] })).toEqual({ kind: "prose" });
  });
});
