import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { fileMentions, identMentions } from "./mentions.ts";

const FIXTURE = new URL("../../../shared/fixtures/aider/file_mention_cases.json", import.meta.url).pathname;

interface MentionCase {
  content: string;
  addable_files: string[];
  in_chat: string[];
  read_only: string[];
  expect: string[];
}

describe("fileMentions", () => {
  test("full paths, backslashes, markdown emphasis and quotes", () => {
    const files = ["dir/a_b.py", "README.md", "src/x.ts"];
    expect(fileMentions("Look at **dir\\a_b.py** and `src/x.ts`.", files)).toEqual(["dir/a_b.py", "src/x.ts"]);
  });

  test("a basename already in the chat is not a mention of another file", () => {
    expect(fileMentions("edit util.py", ["b/util.py"], ["a/util.py"])).toEqual([]);
  });

  test("an ambiguous basename is ignored", () => {
    expect(fileMentions("edit util.py", ["a/util.py", "b/util.py"])).toEqual([]);
  });

  // Aider's own vectors: parity target.
  test.skipIf(!existsSync(FIXTURE))("Aider parity (file_mention_cases.json; skipped when ../shared is absent)", () => {
    const { cases } = JSON.parse(readFileSync(FIXTURE, "utf8")) as { cases: MentionCase[] };
    let agree = 0;
    const disagree: string[] = [];
    for (const c of cases) {
      const got = fileMentions(c.content, c.addable_files, c.in_chat, c.read_only);
      if (JSON.stringify(got) === JSON.stringify([...c.expect].sort())) agree++;
      else disagree.push(`${JSON.stringify(c.content)} → ${JSON.stringify(got)} (want ${JSON.stringify(c.expect)})`);
    }
    expect(disagree).toEqual([]);
    expect(agree).toBe(cases.length);
  });
});

test("identMentions keeps identifier-like words", () => {
  expect(identMentions("call parse_reply() in Coder.runOne, not x")).toEqual(["call", "parse_reply", "Coder", "runOne", "not"]);
});
