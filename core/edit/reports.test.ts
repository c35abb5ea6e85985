import { expect, test } from "bun:test";
import { matcher } from "./matcher.ts";
import type { EditOutcome } from "../plugin.ts";
import { reports } from "./reports.ts";

const edit = (path: string, search: string, replace: string) => ({
  path,
  source: `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n\`\`\``,
});

test("failedEdits: count, each failure echoed with the explanation, applied ones listed not to be re-sent", () => {
  const search = "def f():\n    return 1\n";
  const m = matcher.replace("def f():\n    return 2\n\nx = 0\n", search, "def f():\n    return 3\n");
  if (m.status !== "failed") throw new Error("expected a failure");
  const outcomes: EditOutcome[] = [
    { status: "applied", edit: edit("a.py", "x = 0\n", "x = 1\n"), path: "a.py", rung: "exact" },
    { status: "failed", edit: edit("b.py", search, "def f():\n    return 3\n"), path: "b.py", reason: m.reason, detail: matcher.explain(m, search, "", "b.py"), match: m },
    { status: "skipped", edit: edit("c.py", "", "y\n"), path: "c.py", detail: "the user said no" },
  ];
  const text = reports.failedEdits(outcomes, { fence: ["```", "```"], appliedCount: 1 });
  expect(text).toContain("1 of 3 edits failed to apply.");
  expect(text).toContain("## Failed edit #2 in b.py (not-found)\nb.py\n```\n<<<<<<< SEARCH\ndef f():\n    return 1\n");
  expect(text).toContain("Did you mean these actual lines of b.py (lines 1-2");
  expect(text).toContain("- #3 c.py (y): the user said no");
  expect(text).toContain("1 other edit was applied and is now in the files: do not send it again.\n- #1 a.py (x = 0)");
  expect(reports.failedEdits([outcomes[0]!], { fence: ["```", "```"], appliedCount: 1 })).toBe("");
});
