import { expect, test } from "bun:test";
import { nearestNames } from "./session.ts";
test("a mistyped command name gets the nearest names as a suggestion", () => {
  const names = ["commit", "code", "copy", "drop", "add", "ask", "tokens", "exit", "undo", "model", "models"];
  expect(nearestNames("comit", names)).toEqual(["commit"]);
  expect(nearestNames("dorp", names)).toEqual(["drop"]);
  expect(nearestNames("tokns", names)).toEqual(["tokens"]);
  expect(nearestNames("xyzzy", names)).toEqual([]);
  expect(nearestNames("modle", names)).toEqual(["model"]);
});
