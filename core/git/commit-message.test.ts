// withTrailers: plugins' trailers and coder's attribution end up in one block, as git parses it.
import { expect, test } from "bun:test";
import { withTrailers } from "./commit-message.ts";

test("a message without trailers gets a new block after a blank line", () => {
  expect(withTrailers("feat: x\n", ["Refs: A-1", "Co-authored-by: coder"])).toBe("feat: x\n\nRefs: A-1\nCo-authored-by: coder");
});

test("a message ending in a trailer block has the new ones joined to it, none twice", () => {
  expect(withTrailers("feat: x\n\nbody\n\nSigned-off-by: me", ["Refs: A-1", "Signed-off-by: me"])).toBe("feat: x\n\nbody\n\nSigned-off-by: me\nRefs: A-1");
  // A subject line that looks like a trailer is not a block.
  expect(withTrailers("fix: y", ["Refs: A-1"])).toBe("fix: y\n\nRefs: A-1");
  expect(withTrailers("fix: y", [])).toBe("fix: y");
});
