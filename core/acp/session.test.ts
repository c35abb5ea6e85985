// The ACP session's modes come from the formats' own `mode`, not from their names.
import { expect, test } from "bun:test";
import { sessionModes } from "./session.ts";

test("formats that only answer come before Code, formats that plan for an editor after it; one that picks files is no mode", () => {
  const modes = sessionModes([
    { name: "diff", summary: "search/replace blocks" },
    { name: "ask", summary: "answer questions", mode: "none" },
    { name: "architect", summary: "plan the change", mode: "editor" },
    { name: "context", summary: "name the files", mode: "files" },
    { name: "review", summary: "comment on the code, never edit it", mode: "none" },
  ]);
  expect(modes.map((m) => m.id)).toEqual(["ask", "review", "code", "architect"]);
  expect(modes[1]).toEqual({ id: "review", name: "Review", description: "Comment on the code, never edit it" });
});
