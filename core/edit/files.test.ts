import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { chooseFence, FileStore, resolveModelPath } from "./files.ts";

function repo(files: Record<string, string | Uint8Array> = {}) {
  const root = mkdtempSync(join(tmpdir(), "coder-files-"));
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(root, p, ".."), { recursive: true });
    writeFileSync(join(root, p), c);
  }
  return root;
}

describe("FileStore path safety", () => {
  const outside = mkdtempSync(join(tmpdir(), "coder-outside-"));
  writeFileSync(join(outside, "secret.txt"), "secret\n");
  const root = repo({ "a.txt": "a\n", "bin.dat": new Uint8Array([1, 0, 2, 3]), ".git/config": "[core]\n", "ign/x.log": "x\n" });
  symlinkSync(outside, join(root, "out"));
  symlinkSync(join(root, "a.txt"), join(root, "inside-link.txt"));
  const store = new FileStore(root, { isIgnored: (rel) => rel.startsWith("ign/"), readOnly: () => ["CONVENTIONS.md"] });

  test("refuses .., absolute, .git, symlink out, binary, ignored, read-only", () => {
    expect(store.check("../x.txt")).toContain("outside the repository");
    expect(store.check("sub/../../x.txt")).toContain("outside the repository");
    expect(store.check("/etc/passwd")).toContain("absolute path");
    expect(store.check("C:\\Windows\\x")).toContain("absolute path");
    expect(store.check(".git/config")).toContain(".git/");
    expect(store.check("out/secret.txt")).toContain("symlink");
    expect(store.check("out/new.txt")).toContain("symlink");
    expect(store.check("bin.dat")).toContain("binary");
    expect(store.check("ign/x.log")).toContain("ignored");
    expect(store.check("CONVENTIONS.md")).toContain("read-only");
    expect(store.check("a.txt")).toBeNull();
    expect(store.check("new/dir/file.ts")).toBeNull();
    expect(store.check("inside-link.txt")).toBeNull();
  });

  test("a path under a file is refused before anything is written, naming the file in the way", async () => {
    const root = repo({ "a.py": "x = 1\n", "pkg/mod.py": "y = 2\n" });
    const store = new FileStore(root);
    expect(store.check("a.py/inner.py")).toBe("a.py/inner.py cannot be created: a.py is a file, not a folder");
    expect(store.check("pkg/mod.py/deep/x.py")).toBe("pkg/mod.py/deep/x.py cannot be created: pkg/mod.py is a file, not a folder");
    const report = await store.writeAll(new Map([["b.py", "z = 3\n"], ["a.py/inner.py", "w = 4\n"]]));
    expect(report.refused).toEqual([{ path: "a.py/inner.py", reason: "a.py/inner.py cannot be created: a.py is a file, not a folder" }]);
    expect(readFileSync(join(root, "a.py"), "utf8")).toBe("x = 1\n");
    expect(readFileSync(join(root, "b.py"), "utf8")).toBe("z = 3\n");
  });

  test("reads nothing outside", () => {
    expect(store.read("out/secret.txt")).toBeNull();
    expect(store.read("../" + outside.split("/").pop() + "/secret.txt")).toBeNull();
    expect(store.read("a.txt")).toBe("a\n");
    expect(store.read("bin.dat")).toBeNull();
  });

  test("writeAll refuses unsafe paths and writes the rest", async () => {
    const r = await store.writeAll(new Map([["out/secret.txt", "pwned\n"], ["../escape.txt", "x"], ["ok.txt", "ok\n"]]));
    expect(r.refused.map((x) => x.path).sort()).toEqual(["../escape.txt", "out/secret.txt"]);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expect(readFileSync(join(root, "ok.txt"), "utf8")).toBe("ok\n");
  });

  test("workspace.write throws on unsafe paths; check explains", () => {
    const ws = store.workspace(["a.txt"]);
    expect(() => ws.write("../x", "x")).toThrow("outside");
    expect(ws.check("../x")).toContain("outside");
  });

  test("workspace.shown: the request's texts; a file this reply wrote, as written; any other file, not shown; without the request's texts, the disk", () => {
    const ws = store.workspace(["a.txt"], new Map([["a.txt", "shown a\n"]]));
    expect(ws.shown("a.txt")).toBe("shown a\n");
    expect(ws.shown("inside-link.txt")).toBe("shown a\n"); // a link, by the path it lands on
    expect(ws.shown("new.txt")).toBeUndefined();
    ws.write("new.txt", "written\n");
    expect(ws.shown("new.txt")).toBe("written\n");
    expect(ws.shown("bin.dat")).toBeUndefined();
    expect(store.workspace(["a.txt"]).shown("a.txt")).toBe("a\n");
  });

  test("toRelative: inside ok, outside is a UsageError", () => {
    expect(store.toRelative("a.txt", root)).toBe("a.txt");
    expect(store.toRelative(join(root, "sub/new.ts"))).toBe("sub/new.ts");
    expect(() => store.toRelative("../x", root)).toThrow(UsageError);
    expect(() => store.toRelative("/etc/passwd")).toThrow(UsageError);
    expect(() => store.toRelative("out/secret.txt", root)).toThrow(UsageError);
  });
});

describe("FileStore encodings and writes", () => {
  test("CRLF stays CRLF; read folds it", async () => {
    const root = repo({ "w.txt": "one\r\ntwo\r\n" });
    const store = new FileStore(root);
    expect(store.read("w.txt")).toBe("one\ntwo\n");
    const ws = store.workspace(["w.txt"]);
    ws.write("w.txt", "one\n2\nthree\n");
    await store.writeAll(ws.changes());
    expect(readFileSync(join(root, "w.txt"), "utf8")).toBe("one\r\n2\r\nthree\r\n");
  });

  test("mixed line endings: read as LF text; a surviving or replaced line keeps its ending, a new line takes the previous line's", async () => {
    const root = repo({ "m.txt": "a\r\nb\nc\r\nd\n" });
    const store = new FileStore(root);
    const text = store.read("m.txt")!;
    expect(text).toBe("a\nb\nc\nd\n");
    await store.writeAll(new Map([["m.txt", "a\nB\nb2\nc\nc2\nd\n"]]));
    expect(readFileSync(join(root, "m.txt"), "utf8")).toBe("a\r\nB\nb2\nc\r\nc2\r\nd\n");
    // The edited LF line of the issue stays LF when it survives.
    const again = repo({ "m.txt": "one\r\ntwo\nthree\r\n" });
    const store2 = new FileStore(again);
    await store2.writeAll(new Map([["m.txt", store2.read("m.txt")!.replace("two", "TWO")]]));
    expect(readFileSync(join(again, "m.txt"), "utf8")).toBe("one\r\nTWO\nthree\r\n");
  });

  test("BOM kept", async () => {
    const root = repo({ "b.txt": new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a]) });
    const store = new FileStore(root);
    expect(store.read("b.txt")).toBe("hi\n");
    await store.writeAll(new Map([["b.txt", "ho\n"]]));
    expect([...readFileSync(join(root, "b.txt"))]).toEqual([0xef, 0xbb, 0xbf, 0x68, 0x6f, 0x0a]);
  });

  test("latin-1 round-trips byte for byte outside the edited line", async () => {
    const bytes = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x78, 0x0a, 0xff, 0xfe, 0x0a]); // "café\nx\nÿþ\n" in latin-1
    const root = repo({ "l.txt": bytes });
    const store = new FileStore(root);
    const text = store.read("l.txt")!;
    expect(text).toBe("café\nx\nÿþ\n");
    await store.writeAll(new Map([["l.txt", text.replace("x\n", "y\n")]]));
    const out = readFileSync(join(root, "l.txt"));
    expect([...out]).toEqual([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x79, 0x0a, 0xff, 0xfe, 0x0a]);
    expect(() => store.workspace(["l.txt"]).write("l.txt", "snowman ☃\n")).toThrow("latin-1");
    expect(() => store.workspace(["l.txt"]).write("new.txt", "nul \0 byte\n")).toThrow("NUL");
    const bad = await store.writeAll(new Map([["l.txt", "snowman ☃\n"]]));
    expect(bad.refused[0]?.reason).toContain("latin-1");
    expect([...readFileSync(join(root, "l.txt"))]).toEqual([...out]);
  });

  test("UTF-16 with BOM round-trips", async () => {
    const root = repo({ "u.txt": new Uint8Array([0xff, 0xfe, 0x61, 0x00, 0x0a, 0x00]) });
    const store = new FileStore(root);
    expect(store.read("u.txt")).toBe("a\n");
    await store.writeAll(new Map([["u.txt", "b\n"]]));
    expect([...readFileSync(join(root, "u.txt"))]).toEqual([0xff, 0xfe, 0x62, 0x00, 0x0a, 0x00]);
  });

  test("file mode kept, no temp files left, new dirs created", async () => {
    const root = repo({ "run.sh": "#!/bin/sh\necho hi\n" });
    chmodSync(join(root, "run.sh"), 0o755);
    const store = new FileStore(root);
    store.read("run.sh");
    const r = await store.writeAll(new Map([["run.sh", "#!/bin/sh\necho ho\n"], ["deep/new/file.ts", "export {};\n"]]));
    expect(r.written.map((w) => w.action).sort()).toEqual(["create", "update"]);
    expect(statSync(join(root, "run.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(root, "deep/new/file.ts"), "utf8")).toBe("export {};\n");
    expect(readdirSync(root).filter((f) => f.includes(".coder-"))).toEqual([]);
  });

  test("writes through an in-repo symlink land in its target; deleting removes the link only", async () => {
    const root = repo({ "real.txt": "r\n" });
    symlinkSync(join(root, "real.txt"), join(root, "link.txt"));
    const store = new FileStore(root);
    await store.writeAll(new Map([["link.txt", "via link\n"]]));
    expect(readFileSync(join(root, "real.txt"), "utf8")).toBe("via link\n");
    await store.writeAll(new Map([["link.txt", null]]));
    expect(existsSync(join(root, "link.txt"))).toBe(false);
    expect(readFileSync(join(root, "real.txt"), "utf8")).toBe("via link\n");
  });

  test("delete, unchanged and dry run", async () => {
    const root = repo({ "gone.txt": "x\n", "same.txt": "s\n" });
    const store = new FileStore(root);
    const dry = await store.writeAll(new Map([["gone.txt", null], ["same.txt", "s\n"], ["new.txt", "n\n"]]), { dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.written.map((w) => `${w.action}:${w.path}`).sort()).toEqual(["create:new.txt", "delete:gone.txt"]);
    expect(dry.unchanged).toEqual(["same.txt"]);
    expect(existsSync(join(root, "gone.txt"))).toBe(true);
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    await store.writeAll(new Map([["gone.txt", null]]));
    expect(existsSync(join(root, "gone.txt"))).toBe(false);
  });

  test("staged workspace: reads see staged writes; changes() lists only differences", () => {
    const root = repo({ "a.txt": "a\n" });
    const ws = new FileStore(root).workspace(["a.txt"]);
    ws.write("a.txt", "a\n");
    ws.write("./b.txt", "b\n");
    expect(ws.read("b.txt")).toBe("b\n");
    expect(ws.exists("b.txt")).toBe(true);
    ws.remove("a.txt");
    expect(ws.exists("a.txt")).toBe(false);
    expect(Object.fromEntries(ws.changes())).toEqual({ "a.txt": null, "b.txt": "b\n" });
  });
});

describe("FileStore: one edit's paths together", () => {
  test("a move whose destination is refused keeps its source; deletions are written last", async () => {
    const root = repo({ "cart.py": "x = 1\n", "bin.dat": new Uint8Array([1, 0, 2]) });
    const store = new FileStore(root);
    // The destination is a binary file (refused): the source's deletion is not written either.
    const refused = await store.writeAll(new Map<string, string | null>([["cart.py", null], ["bin.dat", "x = 2\n"]]), { together: [["bin.dat", "cart.py"]] });
    expect(refused.written).toEqual([]);
    expect(refused.refused.map((r) => r.path).sort()).toEqual(["bin.dat", "cart.py"]);
    expect(refused.refused.find((r) => r.path === "cart.py")?.reason).toContain("which the same edit writes");
    expect(readFileSync(join(root, "cart.py"), "utf8")).toBe("x = 1\n");
    // Allowed, the deletion comes after the destination's write, whatever the order given.
    const moved = await store.writeAll(new Map<string, string | null>([["cart.py", null], ["shop/cart.py", "x = 2\n"]]), { together: [["shop/cart.py", "cart.py"]] });
    expect(moved.written.map((w) => w.path)).toEqual(["shop/cart.py", "cart.py"]);
    expect(existsSync(join(root, "cart.py"))).toBe(false);
  });
});

describe("resolveModelPath", () => {
  const chat = ["file1.py", "file2.py", "dir/file3.py", "src/app/main.ts", "\\windows\\__init__.py"];
  test("exact, decorated, suffix, bogus prefix, close match, as written", () => {
    expect(resolveModelPath("file1.py", chat)).toBe("file1.py");
    expect(resolveModelPath("`file1.py`:", chat)).toBe("file1.py");
    expect(resolveModelPath("**file2.py**", chat)).toBe("file2.py");
    expect(resolveModelPath("### dir/file3.py", chat)).toBe("dir/file3.py");
    expect(resolveModelPath("file3.py", chat)).toBe("dir/file3.py");
    expect(resolveModelPath("app/main.ts", chat)).toBe("src/app/main.ts");
    expect(resolveModelPath("path/to/file1.py", chat)).toBe("file1.py");
    expect(resolveModelPath("file1_py", chat)).toBe("file1.py");
    expect(resolveModelPath("\\windows__init__.py", chat)).toBe("\\windows\\__init__.py");
    expect(resolveModelPath("./new/thing.py", chat)).toBe("new/thing.py");
    expect(resolveModelPath("dir/file4.py", chat)).toBe("dir/file4.py");
    expect(resolveModelPath("README.md", chat, ["README.md"])).toBe("README.md");
    expect(resolveModelPath("/home/me/repo/src/app/main.ts", chat)).toBe("src/app/main.ts");
    expect(resolveModelPath("src\\new\\mod.ts", chat)).toBe("src/new/mod.ts");
    expect(resolveModelPath("/etc/passwd", chat)).toBe("/etc/passwd");
    expect(resolveModelPath("path/to/a/file2.txt", ["path/to/a/file1.txt"])).toBe("path/to/a/file2.txt");
  });
});

describe("chooseFence", () => {
  test("triple, then quadruple, then tags", () => {
    expect(chooseFence(["plain\n"])).toEqual(["```", "```"]);
    expect(chooseFence(["x\n```py\ny\n```\n"])).toEqual(["````", "````"]);
    expect(chooseFence(["```\n", "  ````\n"])).toEqual(["<source>", "</source>"]);
  });
});
