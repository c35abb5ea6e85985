// The file store with an editor's buffers (`coder acp`): reads see the editor's text, writes
// go through the editor (or to the disk when it does not take them), deletes tell it, and
// the store's own rules still decide what may be written.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EditorFiles, FileStore } from "./files.ts";

/** An editor that holds `buffers` and, when `saves`, writes what it is given to disk as an editor saving a buffer would. */
function editor(root: string, buffers: Record<string, string>, saves: boolean) {
  const calls: string[] = [];
  const files: EditorFiles = {
    text: (rel) => buffers[rel],
    write: async (rel, text) => {
      calls.push(`write ${rel}`);
      buffers[rel] = text;
      if (saves) writeFileSync(join(root, rel), text);
      return saves;
    },
    removed: (rel) => {
      calls.push(`removed ${rel}`);
      delete buffers[rel];
    },
  };
  return { files, calls };
}

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "coder-editor-files-"));
  for (const [p, c] of Object.entries(files)) writeFileSync(join(root, p), c);
  return root;
}

describe("FileStore with an editor's buffers", () => {
  test("reads the unsaved buffer, and writes through the editor", async () => {
    const root = repo({ "a.py": "x = 1\n" });
    const e = editor(root, { "a.py": "x = 1\ny = 2\n" }, true);
    const store = new FileStore(root, { editor: e.files, fsync: false });
    expect(store.read("a.py")).toBe("x = 1\ny = 2\n");
    const report = await store.writeAll(new Map([["a.py", "x = 1\ny = 3\n"]]), { expected: new Map([["a.py", "x = 1\ny = 2\n"]]) });
    expect(report.written.map((w) => w.path)).toEqual(["a.py"]);
    expect(e.calls).toEqual(["write a.py"]);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\ny = 3\n");
  });

  test("an editor that does not take the write leaves it to the disk", async () => {
    const root = repo({ "a.py": "x = 1\n" });
    const e = editor(root, {}, false);
    const store = new FileStore(root, { editor: e.files, fsync: false });
    await store.writeAll(new Map([["a.py", "x = 2\n"]]));
    expect(e.calls).toEqual(["write a.py"]);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 2\n");
  });

  test("a delete goes to the disk and the editor hears of it; refused paths never reach the editor", async () => {
    const root = repo({ "a.py": "x = 1\n", "b.py": "b\n" });
    const e = editor(root, { "a.py": "x = 1\n" }, true);
    const store = new FileStore(root, { editor: e.files, fsync: false, readOnly: () => ["b.py"] });
    const report = await store.writeAll(
      new Map<string, string | null>([
        ["a.py", null],
        ["b.py", "changed\n"],
        ["../outside.py", "x\n"],
      ]),
    );
    expect(existsSync(join(root, "a.py"))).toBe(false);
    expect(store.read("a.py")).toBeNull();
    expect(report.refused.map((r) => r.path).sort()).toEqual(["../outside.py", "b.py"]);
    expect(e.calls).toEqual(["removed a.py"]);
  });
});
