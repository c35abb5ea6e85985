// The gathering step's pure parts: the output cap.
import { expect, test } from "bun:test";
import { capOutput, TOOL_OUTPUT_CAP } from "./tool-calls.ts";

test("a result within the cap is sent whole; a longer one is cut with a note saying how much", () => {
  expect(capOutput("short")).toBe("short");
  const exact = "x".repeat(TOOL_OUTPUT_CAP);
  expect(capOutput(exact)).toBe(exact);
  const long = "y".repeat(123_456);
  const sent = capOutput(long);
  expect(sent.startsWith("y".repeat(TOOL_OUTPUT_CAP) + "\n\n[Output cut: the tool returned 123,456 characters; these are the first 40,000.")).toBe(true);
  expect(sent.length).toBeLessThan(TOOL_OUTPUT_CAP + 200);
});
