import { expect, test } from "bun:test";
import { editLine, pickChoice } from "./confirm.ts";

test("pickChoice: a number, a name in any case, or the start of exactly one name", () => {
  const choices = ["quick", "thorough", "through-and-through"];
  expect(pickChoice("2", choices)).toBe("thorough");
  expect(pickChoice(" 3 ", choices)).toBe("through-and-through");
  expect(pickChoice("4", choices)).toBeNull();
  expect(pickChoice("0", choices)).toBeNull();
  expect(pickChoice("QUICK", choices)).toBe("quick");
  expect(pickChoice("th", choices)).toBeNull(); // two names start so
  expect(pickChoice("tho", choices)).toBe("thorough");
  expect(pickChoice("nope", choices)).toBeNull();
});

test("editLine: text echoed, Backspace, Enter ends the line, Esc cancels, Ctrl-C cancels and says so, arrows ignored", () => {
  let r = editLine([], "ab");
  expect(r).toEqual({ chars: ["a", "b"], echo: "ab" });
  r = editLine(r.chars, "\x7fc\x1b[D");
  expect(r).toEqual({ chars: ["a", "c"], echo: "\b \bc" });
  expect(editLine(r.chars, "d\r").end).toEqual({ line: "acd", ctrlC: false });
  expect(editLine(r.chars, "\x1b").end).toEqual({ line: null, ctrlC: false });
  expect(editLine(r.chars, "\x03").end).toEqual({ line: null, ctrlC: true });
  // A pasted line with an escape sequence in it: the sequence never reaches the screen.
  expect(editLine([], "x\x1b]0;title\x07y").echo).not.toContain("\x1b");
  expect(editLine(["é"], "\x7f").chars).toEqual([]);
});
