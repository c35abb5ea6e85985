import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendInputHistory, loadInputHistory } from "./input.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("input history keeps multi-line entries and typed backslashes apart", () => {
  const dir = mkdtempSync(join(tmpdir(), "coder-input-"));
  dirs.push(dir);
  const file = join(dir, "input.history");
  const entries = ['print("a\\n")', "first\nsecond", "C:\\path\\", "crlf\r\nline"];
  for (const e of entries) appendInputHistory(file, e);
  expect(readFileSync(file, "utf8").split("\n").length).toBe(entries.length + 1);
  expect(loadInputHistory(file)).toEqual(['print("a\\n")', "first\nsecond", "C:\\path\\", "crlf\nline"].reverse());
});
