import { expect, test } from "bun:test";
import { loadFormat } from "../../tests/support/format-kit.ts";
import plugin from "./index.ts";

test("ask never edits", async () => {
  const fmt = await loadFormat(plugin, "ask");
  expect(fmt.mode).toBe("none");
  const parsed = fmt.parse({ text: "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```", toolCalls: [], finishReason: "stop" }, { fence: ["```", "```"], chatFiles: [], resolvePath: (r) => r });
  expect(parsed.edits).toEqual([]);
  expect(fmt.prompts({ fence: ["```", "```"], platform: "linux", chatFiles: [], shellSuggestions: false, editorOnly: false }).system).toContain("nothing you write is applied");
});
