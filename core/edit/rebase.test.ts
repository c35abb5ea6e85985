import { describe, expect, test } from "bun:test";
import type { Edit, Workspace } from "../plugin.ts";
import { keepUncommitted, keptLines, keptNote, mergedNote, rebaseWhole } from "./rebase.ts";
import { stageWhole } from "./search-replace.ts";
import { UncommittedChanges } from "./uncommitted.ts";

/** A workspace over `files` whose model was shown `shown`. */
/** `shown` null: a workspace that does not know what was shown (a plugin's own, or an older kernel's). */
function workspace(files: Record<string, string>, shown: Record<string, string | null> | null): Workspace & { files: Record<string, string> } {
  return {
    files,
    chatFiles: Object.keys(files),
    read: (p) => files[p] ?? null,
    exists: (p) => p in files,
    write: (p, c) => void (files[p] = c),
    remove: (p) => void delete files[p],
    ...(shown ? { shown: (p: string) => (p in shown ? shown[p] : undefined) } : {}),
  };
}

const edit: Edit = { path: "a.py", source: "a.py listing" };

describe("rebaseWhole: the model's whole text merged onto a change made while it answered", () => {
  test("changes to different lines both stay", () => {
    expect(rebaseWhole("a\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\ne\n")).toEqual({ text: "A\nb\nc\nd\nE\n" });
  });

  test("changes to adjacent lines (a conflict to git) both stay, each line taken from the side that changed it", () => {
    expect(rebaseWhole("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")).toEqual({ text: "a\nB\nC\n" });
  });

  test("a line both changed alike is no conflict", () => {
    expect(rebaseWhole("a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\nd\n")).toEqual({ text: "a\nB\nc\nd\n" });
  });

  test("a line both changed differently is a conflict naming the current lines and the shown line", () => {
    const r = rebaseWhole("a\nb\nc\nd\n", "a\nb\nX\nY\n", "a\nb\nZ\nd\n");
    expect(r).toEqual({ conflict: { startLine: 3, endLine: 4, text: "X\nY\n", shownLine: 3 } });
  });

  test("a file created while the model answered, and created by the model too, is a conflict", () => {
    expect("conflict" in rebaseWhole(null, "user's\n", "model's\n")).toBe(true);
    expect(rebaseWhole(null, "same\n", "same\n")).toEqual({ text: "same\n" });
  });

  test("a last line without a newline keeps its state", () => {
    expect(rebaseWhole("a\nb\nc", "a\nb\nC", "A\nb\nc")).toEqual({ text: "A\nb\nC" });
  });
});

describe("stageWhole (kit.formats.stage)", () => {
  test("unchanged since shown: the text is staged as written", () => {
    const ws = workspace({ "a.py": "x\n" }, { "a.py": "x\n" });
    expect(stageWhole(edit, ws, "a.py", "y\n")).toEqual({ status: "applied", edit, path: "a.py" });
    expect(ws.files["a.py"]).toBe("y\n");
  });

  test("what was shown unknown: staged as written", () => {
    const ws = workspace({ "a.py": "x\n" }, null);
    expect(stageWhole(edit, ws, "a.py", "y\n", "replaced")).toMatchObject({ status: "applied", note: "replaced" });
    expect(ws.files["a.py"]).toBe("y\n");
  });

  test("an existing file the request did not show (outside the chat): refused, nothing staged; a new or empty one is written", () => {
    const ws = workspace({ "a.py": "x\n", "empty.py": "" }, {});
    expect(stageWhole(edit, ws, "a.py", "y\n")).toMatchObject({ status: "failed", reason: "invalid", detail: expect.stringContaining("a.py already exists, but it is not in the chat") });
    expect(ws.files["a.py"]).toBe("x\n");
    expect(stageWhole(edit, ws, "empty.py", "e\n")).toMatchObject({ status: "applied" });
    expect(stageWhole(edit, ws, "new.py", "n\n")).toMatchObject({ status: "applied" });
    expect(ws.files).toEqual({ "a.py": "x\n", "empty.py": "e\n", "new.py": "n\n" });
  });

  test("changed meanwhile elsewhere: merged, with the merged note", () => {
    const ws = workspace({ "a.py": "a\nb\nc\nd\nE\n" }, { "a.py": "a\nb\nc\nd\ne\n" });
    expect(stageWhole(edit, ws, "a.py", "A\nb\nc\nd\ne\n")).toMatchObject({ status: "applied", note: mergedNote("a.py") });
    expect(ws.files["a.py"]).toBe("A\nb\nc\nd\nE\n");
  });

  test("changed meanwhile on the same lines: failed, nothing staged, the current lines quoted for the model", () => {
    const ws = workspace({ "a.py": "a\nb\nX\n" }, { "a.py": "a\nb\nc\n" });
    const outcome = stageWhole(edit, ws, "a.py", "a\nb\nZ\n");
    expect(outcome.status).toBe("failed");
    if (outcome.status !== "failed") return;
    expect(outcome.detail).toContain("changed while you were answering");
    expect(outcome.detail).toContain("line 3 of a.py");
    expect(outcome.detail).toContain("X\n");
    expect(outcome.match?.userChange).toEqual({ path: "a.py", startLine: 3, endLine: 3, text: "X\n", committedLine: 3, was: "shown" });
    expect(ws.files["a.py"]).toBe("a\nb\nX\n");
  });

  test("deleted meanwhile: failed, not brought back", () => {
    const ws = workspace({}, { "a.py": "a\n" });
    const outcome = stageWhole(edit, ws, "a.py", "a\nb\n");
    expect(outcome).toMatchObject({ status: "failed", reason: "missing-file" });
    expect(ws.files).toEqual({});
  });
});

describe("keepUncommitted: a whole text that has the last commit's lines where the user changed them", () => {
  const head = "def f():\n    return 1\n\n\ndef g():\n    return 2\n";
  // The user's uncommitted change: a guard in g.
  const now = "def f():\n    return 1\n\n\ndef g():\n    if x:\n        return 0\n    return 2\n";

  test("a text written from the committed file (plus the model's change) keeps the user's lines and names them", () => {
    const next = '"""Module."""\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n';
    expect(keepUncommitted(head, now, next)).toEqual({ text: `"""Module."""\n${now}`, kept: [[7, 8]] });
  });

  test("a text written from the current file is left alone", () => {
    expect(keepUncommitted(head, now, `"""Module."""\n${now}`)).toBeNull();
  });

  test("the model's own change to the user's lines is the model's", () => {
    const next = now.replace("return 0", "return -1");
    expect(keepUncommitted(head, now, next)).toBeNull();
  });

  test("the model's change on the line next to the user's (a conflict to git) and the user's line both stay", () => {
    expect(keepUncommitted("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")).toEqual({ text: "a\nB\nC\n", kept: [[2, 2]] });
  });

  test("a line the user deleted stays deleted; the lines around the gap are named", () => {
    const h = "a\nb\nc\nd\n";
    expect(keepUncommitted(h, "a\nc\nd\n", "a\nb\nc\nd\nE\n")).toEqual({ text: "a\nc\nd\nE\n", kept: [[1, 2]] });
  });

  test("the note names the lines and is told from any other", () => {
    expect(keptLines(keptNote("a.py", [[7, 8], [12, 12]]))).toBe("lines 7-8, line 12");
    expect(keptLines(mergedNote("a.py"))).toBeNull();
  });
});

describe("stageWhole under the uncommitted-change guard", () => {
  const head = "x = 1\ny = 1\nz = 1\n";
  const now = "x = 1\ny = 1\nz = 99\n";

  test("a listing that drops the user's uncommitted line is staged with the user's line kept and a kept note", () => {
    const guard = new UncommittedChanges();
    const end = guard.begin([{ path: "a.py", head, disk: now }]);
    const ws = workspace({ "a.py": now }, { "a.py": now });
    const outcome = stageWhole(edit, ws, "a.py", "x = 2\ny = 1\nz = 1\n", undefined, guard);
    expect(guard.committed("./a.py")).toBe(head);
    end();
    expect(guard.committed("a.py")).toBeUndefined();
    expect(ws.files["a.py"]).toBe("x = 2\ny = 1\nz = 99\n");
    expect(outcome).toMatchObject({ status: "applied", note: keptNote("a.py", [[3, 3]]) });
  });

  test("outside a staged reply, or for a file that only differs from the saved one, the listing is written as it is", () => {
    const guard = new UncommittedChanges();
    const ws = workspace({ "a.py": now }, { "a.py": now });
    stageWhole(edit, ws, "a.py", "x = 2\ny = 1\nz = 1\n", undefined, guard);
    expect(ws.files["a.py"]).toBe("x = 2\ny = 1\nz = 1\n");
    const end = guard.begin([{ path: "a.py", head, disk: now, was: "saved" }]);
    const ws2 = workspace({ "a.py": now }, { "a.py": now });
    stageWhole(edit, ws2, "a.py", "x = 2\ny = 1\nz = 1\n", undefined, guard);
    end();
    expect(ws2.files["a.py"]).toBe("x = 2\ny = 1\nz = 1\n");
  });
});
