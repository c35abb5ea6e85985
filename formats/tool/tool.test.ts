import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "../../core/errors.ts";
import type { ModelReply } from "../../core/plugin.ts";
import { loadFormat, runReply, tempRepo } from "../../tests/support/format-kit.ts";
import plugin from "./index.ts";

const reply = (calls: [string, string, unknown][]): ModelReply => ({
  text: "",
  finishReason: "tool_calls",
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) })),
});

describe("tool", () => {
  test("offers edit_file and create_file; calls become edits carrying their call ids", async () => {
    const repo = tempRepo({ "a.py": "x = 1\ny = 2\n" });
    const fmt = await loadFormat(plugin, "tool", repo.kit);
    expect(fmt.tools?.map((t) => t.name)).toEqual(["edit_file", "create_file"]);
    const { parsed, outcomes, report } = await runReply(
      fmt,
      reply([
        ["c1", "edit_file", { path: "a.py", search: "y = 2\n", replace: "y = 3\n" }],
        ["c2", "create_file", { path: "b.py", content: "z = 0" }],
        ["c3", "edit_file", { path: "a.py", search: "nope\n", replace: "q\n" }],
      ]),
      repo,
    );
    expect(parsed.edits.map((e) => e.toolCallId)).toEqual(["c1", "c2", "c3"]);
    expect(outcomes.map((o) => o.status)).toEqual(["applied", "applied", "failed"]);
    expect(outcomes[2]!.edit.toolCallId).toBe("c3");
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("x = 1\ny = 3\n");
    expect(readFileSync(join(repo.root, "b.py"), "utf8")).toBe("z = 0\n");
    expect(report).toContain("1 of 3 edits failed");
  });

  test("bad calls are FormatErrors naming the call", async () => {
    const repo = tempRepo({ "a.py": "x\n" });
    const fmt = await loadFormat(plugin, "tool", repo.kit);
    expect(() => fmt.parse(reply([["c9", "edit_file", '{"path": "a.py", "search": ']]), repo.ctx)).toThrow(FormatError);
    expect(() => fmt.parse(reply([["c9", "edit_file", '{"path": "a.py", "search": ']]), repo.ctx)).toThrow("c9");
    expect(() => fmt.parse(reply([["c8", "rm_rf", {}]]), repo.ctx)).toThrow("unknown function");
    expect(() => fmt.parse(reply([["c7", "edit_file", { path: "a.py", search: 1, replace: "" }]]), repo.ctx)).toThrow('"search"');
  });

  test("create_file will not clobber an existing file outside the chat", async () => {
    const repo = tempRepo({ "a.py": "keep\n", "chat.py": "old\n" }, ["chat.py"]);
    const fmt = await loadFormat(plugin, "tool", repo.kit);
    const { outcomes } = await runReply(fmt, reply([["c1", "create_file", { path: "a.py", content: "new\n" }], ["c2", "create_file", { path: "chat.py", content: "new\n" }]]), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["failed", "applied"]);
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("keep\n");
  });
});
