import { describe, expect, test } from "bun:test";
import { closestRegions, isElisionLine, matcher, SharedMatcher } from "./matcher.ts";
import type { MatchFailure } from "../plugin.ts";

const applied = (content: string, search: string, replace: string) => {
  const r = matcher.replace(content, search, replace);
  if (r.status !== "applied") throw new Error(`expected applied, got ${r.reason}`);
  return r;
};

describe("matcher ladder", () => {
  test("exact lines", () => {
    const r = applied("a\nb\nc\n", "b\n", "B\n");
    expect(r).toMatchObject({ content: "a\nB\nc\n", rung: "exact", startLine: 2, endLine: 2 });
  });

  test("trailing whitespace is ignored", () => {
    const r = applied("a  \nb\t\nc\n", "a\nb\n", "x\n");
    expect(r.rung).toBe("trailing-whitespace");
    expect(r.content).toBe("x\nc\n");
  });

  test("uniform indentation shift re-indents the replacement", () => {
    const file = "class A:\n    def f(self):\n        return 1\n";
    const r = applied(file, "def f(self):\n    return 1\n", "def f(self):\n    return 2\n");
    expect(r.rung).toBe("indentation");
    expect(r.content).toBe("class A:\n    def f(self):\n        return 2\n");
  });

  test("indentation shift the other way (SEARCH more indented than the file)", () => {
    const r = applied("def f():\n    return 1\n", "    def f():\n        return 1\n", "    def f():\n        return 3\n");
    expect(r.content).toBe("def f():\n    return 3\n");
  });

  test("a spurious blank first line is skipped", () => {
    const r = applied("x = 1\ny = 2\n", "\ny = 2\n", "\ny = 3\n");
    expect(r.rung).toBe("leading-blank");
    expect(r.content).toBe("x = 1\ny = 3\n");
  });

  test("blank lines: SEARCH with a blank line added or dropped lands once; the file keeps its blank lines where the edit leaves the gap", () => {
    const file = "import a\n\n\ndef f():\n    x = 1\n\n    return x\n\n\ndef g():\n    pass\n";
    const dropped = applied(file, "def f():\n    x = 1\n    return x\n", "def f():\n    x = 2\n    return x\n");
    expect(dropped.rung).toBe("blank-lines");
    expect(dropped.content).toBe(file.replace("x = 1", "x = 2"));
    const added = applied(file, "def f():\n\n    x = 1\n\n    return x\n", "def f():\n\n    x = 3\n\n    return x\n");
    expect(added.content).toBe(file.replace("x = 1", "x = 3"));
    // REPLACE that rewrites the gap itself keeps its own blank lines; blank lines outside the span stay.
    expect(applied(file, "    x = 1\n    return x\n", "    return 5\n").content).toBe("import a\n\n\ndef f():\n    return 5\n\n\ndef g():\n    pass\n");
    // A trailing blank line SEARCH has and the file lacks is not added.
    expect(applied("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\n\n", "a = 1\nb = 9\n\n").content).toBe("a = 1\nb = 9\nc = 3\n");
  });

  test("blank lines: two places with the same non-blank lines are ambiguous", () => {
    const r = matcher.replace("a\n\nb\nz\na\n\n\nb\n", "a\nb\n", "c\n");
    expect(r).toMatchObject({ status: "failed", reason: "ambiguous" });
    if (r.status === "failed") expect(r.candidates.map((c) => [c.startLine, c.endLine])).toEqual([[1, 3], [5, 8]]);
  });

  test("fuzzy never matches lines shifted against each other (a blank line facing a non-blank one)", () => {
    // One blank line dropped and one line mistyped: the blank-lines rung cannot match, and the
    // best window (its last line blank where SEARCH has `end = 0`) would leave `end = 0` behind.
    const file = "value_1 = 1\nvalue_2 = 2\nvalue_3 = 3\nvalue_4 = 4\nvalue_5 = 5\nvalue_6 = 6\nvalue_7 = 7\n\nend = 0\n";
    const r = matcher.replace(file, "value_1 = 1\nvalue_2 = 2\nvalue_3 = 33\nvalue_4 = 4\nvalue_5 = 5\nvalue_6 = 6\nvalue_7 = 7\nend = 0\n", "Z\n");
    expect(r).toMatchObject({ status: "failed", reason: "not-found" });
  });

  test("options: loosest stops the climb, at picks one of several places", () => {
    expect(matcher.replace("  a\n  b\n", "a\nb\n", "c\n", { loosest: "trailing-whitespace" })).toMatchObject({ status: "failed", reason: "not-found" });
    expect(matcher.replace("  a\n  b\n", "a\nb\n", "c\n", { loosest: "indentation" })).toMatchObject({ status: "applied", content: "  c\n" });
    expect(matcher.replace("x\ny\nx\ny\n", "x\ny\n", "z\n")).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(matcher.replace("x\ny\nx\ny\n", "x\ny\n", "z\n", { at: 3 })).toMatchObject({ status: "applied", content: "x\ny\nz\n", startLine: 3 });
    expect(matcher.replace("x\ny\nx\ny\n", "x\ny\n", "z\n", { at: 2 })).toMatchObject({ status: "failed" });
  });

  test("... elision: each piece must match once", () => {
    const file = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n";
    const r = applied(file, "def f():\n...\n    return a\n", "def g():\n...\n    return c\n");
    expect(r.rung).toBe("elision");
    expect(r.content).toBe("def g():\n    a = 1\n    b = 2\n    c = 3\n    return c\n");
    const bad = matcher.replace("x\ny\nx\n", "x\n...\ny\n", "z\n...\ny\n");
    expect(bad.status).toBe("failed");
  });

  test("elision lines: bare or in a comment, never code", () => {
    for (const l of ["...", "…", "    // ... existing code ...", "# ...", "/* ... */", "<!-- ... rest of the page ... -->", "{/* ... */}"]) expect(isElisionLine(l)).toBe(true);
    for (const l of ["...args,", "return ...", "foo(...)", "x = [...xs]"]) expect(isElisionLine(l)).toBe(false);
    const file = "function f() {\n  const a = 1;\n  const b = 2;\n  return a + b;\n}\n";
    const r = applied(file, "function f() {\n  // ... existing code ...\n  return a + b;\n}\n", "function f() {\n  // ... existing code ...\n  return a * b;\n}\n");
    expect(r.content).toBe("function f() {\n  const a = 1;\n  const b = 2;\n  return a * b;\n}\n");
  });

  test("fuzzy: one clearly best region above the threshold", () => {
    const file = "def total(items):\n    s = 0\n    for it in items:\n        s += it.price\n    return s\n\nprint('x')\n";
    const search = "def total(items):\n    s = 0\n    for it in items:\n        s += it.prices\n    return s\n";
    const r = applied(file, search, "def total(items):\n    return sum(it.price for it in items)\n");
    expect(r.rung).toBe("fuzzy");
    expect(r.content).toBe("def total(items):\n    return sum(it.price for it in items)\n\nprint('x')\n");
  });

  test("fuzzy refuses when two regions are equally close", () => {
    const block = "if x:\n    y = compute(a, b)\n    z = y + 1\n";
    const r = matcher.replace(block + "\n" + block, "if x:\n    y = compute(a, c)\n    z = y + 1\n", "pass\n");
    expect(r.status).toBe("failed");
  });

  test("several matches are ambiguous, every location listed", () => {
    const r = matcher.replace("line1\nline2\nline1\nline3\n", "line1\n", "new\n");
    expect(r.status).toBe("failed");
    if (r.status !== "failed") return;
    expect(r.reason).toBe("ambiguous");
    expect(r.candidates.map((c) => c.startLine)).toEqual([1, 3]);
    expect(matcher.explain(r, "line1\n", "new\n", "f.txt")).toContain("line 1, line 3");
  });

  test("not found: closest regions with line numbers, similarity and text", () => {
    const file = "import os\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n";
    const r = matcher.replace(file, "def load(p):\n    with open(p) as fh:\n", "x\n");
    expect(r.status).toBe("failed");
    if (r.status !== "failed") return;
    expect(r.reason).toBe("not-found");
    expect(r.candidates[0]).toMatchObject({ startLine: 3, endLine: 4 });
    expect(r.candidates[0]!.text).toBe("def load(path):\n    with open(path) as f:\n");
    const text = matcher.explain(r, "def load(p):\n", "x\n", "io.py");
    expect(text).toContain("Did you mean these actual lines of io.py (lines 3-4");
    expect(text).toContain("    with open(path) as f:");
    expect(text).toContain("Rule:");
  });

  test("already applied: SEARCH gone, REPLACE present", () => {
    const r = matcher.replace("def f():\n    return compute(1, 2)\n", "def f():\n    return 1\n", "def f():\n    return compute(1, 2)\n");
    expect(r).toMatchObject({ status: "failed", reason: "already-applied" });
    if (r.status === "failed") expect(matcher.explain(r, "", "", "a.py")).toContain("Do not send it again");
  });

  test("no-op: SEARCH equals REPLACE", () => {
    expect(matcher.replace("a\nb\n", "a\n", "a\n")).toMatchObject({ status: "failed", reason: "no-op" });
  });

  test("empty SEARCH creates or appends", () => {
    expect(applied("", "", "new\n").content).toBe("new\n");
    expect(applied("old\n", "", "new\n").content).toBe("old\nnew\n");
    expect(applied("old", "\n", "new\n").content).toBe("old\nnew\n");
  });

  test("CRLF files keep CRLF on new lines and untouched lines", () => {
    const r = applied("a\r\nb\r\nc\r\n", "b\n", "B1\nB2\n");
    expect(r.content).toBe("a\r\nB1\r\nB2\r\nc\r\n");
    expect(applied("a\r\nb\r\n", "a\r\n", "x\r\n").content).toBe("x\r\nb\r\n");
  });

  test("no final newline is kept", () => {
    expect(applied("a\nb", "a\n", "x\n").content).toBe("x\nb");
  });

  test("big files: the exact rung's fast path agrees with the ladder", () => {
    const big = Array.from({ length: 20000 }, (_, i) => `row ${i} = ${i * 7}`).join("\n") + "\n";
    const r = applied(big, "row 5 = 35\nrow 6 = 42\n", "six\n");
    expect(r).toMatchObject({ rung: "exact", startLine: 6, endLine: 6 });
    expect(r.content.split("\n").slice(4, 8)).toEqual(["row 4 = 28", "six", "row 7 = 49", "row 8 = 56"]);
    expect(matcher.replace(big + "row 5 = 35\n", "row 5 = 35\n", "x\n")).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(matcher.replace(big + "row 5 = 35", "row 5 = 35\n", "x\n")).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(matcher.replace(big, "ow 5 = 35\n", "x\n").status).toBe("failed"); // whole lines only: a line tail is no match
  });

  test("property: an exact SEARCH applies exactly where a naive line splice says, or is ambiguous", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const words = ["a", "b", "c", "  d", "", "\te", "f  ", "gg"];
    for (let t = 0; t < 400; t++) {
      const big = t % 10 === 0;
      const lines = Array.from({ length: big ? 30000 + rand(50) : 1 + rand(25) }, (_, i) => (big && i % 3 ? `row ${i}` : words[rand(words.length)]!));
      const crlf = t % 7 === 0;
      const content = lines.join(crlf ? "\r\n" : "\n") + (t % 5 ? (crlf ? "\r\n" : "\n") : "");
      const start = rand(lines.length);
      const len = 1 + rand(Math.min(4, lines.length - start));
      const search = lines.slice(start, start + len);
      if (search.every((l) => l.trim() === "")) continue;
      const replace = Array.from({ length: rand(3) }, (_, i) => `new ${t} ${i}`);
      const places = lines.map((_, i) => i).filter((i) => search.every((l, j) => lines[i + j] === l));
      const r = matcher.replace(content, search.join("\n") + "\n", replace.length ? replace.join("\n") + "\n" : "");
      if (places.length > 1) {
        expect(r).toMatchObject({ status: "failed", reason: "ambiguous" });
        continue;
      }
      const expected = [...lines.slice(0, start), ...replace, ...lines.slice(start + len)];
      expect(r.status).toBe("applied");
      if (r.status !== "applied") continue;
      expect(r.startLine).toBe(start + 1);
      const got = r.content.split(/\r?\n/);
      if (got[got.length - 1] === "") got.pop();
      expect(got).toEqual(expected);
      if (content.includes("\r\n")) expect(r.content.replace(/\r\n/g, "")).not.toContain("\n"); // CRLF files stay CRLF
    }
  });

  test("closestRegions is usable on its own", () => {
    expect(closestRegions("alpha\nbeta\ngamma\n", "betta\n")[0]?.startLine).toBe(2);
  });
});

describe("SharedMatcher: the user's uncommitted changes", () => {
  const head = 'HOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nRETRIES = 3\nLOG_LEVEL = "info"\n';
  const disk = head.replace("TIMEOUT = 30", "TIMEOUT = 60");
  const stale = head;
  const wanted = head.replace("RETRIES = 3", "RETRIES = 5");

  test("without a staged reply the fuzzy rung lands as ever", () => {
    const m = new SharedMatcher();
    expect(m.replace(disk, stale, wanted)).toMatchObject({ status: "applied", rung: "fuzzy" });
  });

  test("a SEARCH quoting the committed lines the user changed fails with the current lines; an exact quote of them lands", () => {
    const m = new SharedMatcher();
    const end = m.uncommitted.begin([{ path: "config.py", head, disk }]);
    const r = m.replace(disk, stale, wanted);
    expect(r).toMatchObject({ status: "failed", reason: "not-found", userChange: { path: "config.py", startLine: 1, endLine: 5 } });
    const text = m.explain(r as MatchFailure, stale, wanted, "config.py");
    expect(text).toContain("config.py as it was last committed (from line 1)");
    expect(text).toContain("TIMEOUT = 60");
    // A narrower SEARCH that does not quote the changed line lands; so does an exact quote of the new text.
    expect(m.replace(disk, "RETRIES = 3\n", "RETRIES = 5\n")).toMatchObject({ status: "applied", rung: "exact" });
    expect(m.replace(disk, "TIMEOUT = 60\n", "TIMEOUT = 30\n")).toMatchObject({ status: "applied", rung: "exact" });
    end();
    expect(m.replace(disk, stale, wanted)).toMatchObject({ status: "applied", rung: "fuzzy" });
  });

  test("lines the user deleted are said to be gone", () => {
    const m = new SharedMatcher();
    const end = m.uncommitted.begin([{ path: "a.py", head: "a\nb\nc\nd\ne\n", disk: "a\ne\n" }]);
    const r = m.replace("a\ne\n", "b\nc\nd\n", "B\n");
    expect(r.status === "failed" && r.userChange).toMatchObject({ startLine: 2, text: "" });
    expect(m.explain(r as MatchFailure, "b\nc\nd\n", "B\n", "a.py")).toContain("no longer in a.py (they were deleted after line 1)");
    end();
  });
});
