// kit.formats: the SEARCH/REPLACE application the built-in formats share, as a user's
// format gets it, over a real SharedMatcher (and so under its uncommitted-change guard).
import { describe, expect, test } from "bun:test";
import { FormatError } from "../errors.ts";
import type { SearchReplaceEdit, Workspace } from "../plugin.ts";
import { SharedMatcher } from "./matcher.ts";
import { formatHelpers } from "./search-replace.ts";

/** A staged workspace over a map of files (the chat files are the map's keys unless given). */
function workspace(files: Record<string, string>, chatFiles = Object.keys(files)): Workspace & { files: Record<string, string> } {
  return {
    files,
    chatFiles,
    read: (path) => files[path] ?? null,
    exists: (path) => path in files,
    write: (path, content) => void (files[path] = content),
    remove: (path) => void delete files[path],
    check: (path) => (path.startsWith("../") ? `${path} is outside the repository` : null),
  };
}

const edit = (path: string, search: string, replace: string, extra: Partial<SearchReplaceEdit> = {}): SearchReplaceEdit => ({ path, search, replace, source: `${path}\n${search}=======\n${replace}`, ...extra });

describe("kit.formats.applySearchReplace", () => {
  test("lands on the ladder, creates from an empty SEARCH, and moves to the chat file that holds the SEARCH", () => {
    const f = formatHelpers(new SharedMatcher());
    const ws = workspace({ "a.py": "if ok:\n    a = 1\n    b = 2\n", "b.py": "x = 1\n" });
    const out = f.applySearchReplace(
      [
        edit("a.py", "a = 1\nb = 2\n", "a = 1\nb = 3\n"), // indentation rung
        edit("new.py", "", "print('hi')"),
        edit("a.py", "x = 1\n", "x = 2\n"), // not in a.py: b.py is edited instead
      ],
      ws,
    );
    expect(out.map((o) => o.status)).toEqual(["applied", "applied", "applied"]);
    expect(out[0]).toMatchObject({ rung: "indentation" });
    expect(ws.files["a.py"]).toBe("if ok:\n    a = 1\n    b = 3\n");
    expect(ws.files["new.py"]).toBe("print('hi')\n");
    expect(out[2]).toMatchObject({ path: "b.py", note: expect.stringContaining("matched in b.py") });
    expect(ws.files["b.py"]).toBe("x = 2\n");
  });

  test("a SEARCH not in the named file that matches in two other chat files is refused, nothing staged", () => {
    const f = formatHelpers(new SharedMatcher());
    const ws = workspace({ "a/utils.py": "X = 1\n", "b/utils.py": "X = 1\n", "stats.py": "Y = 1\n" });
    const [missing, elsewhere] = f.applySearchReplace([edit("utils.py", "X = 1\n", "X = 2\n"), edit("stats.py", "X = 1\n", "X = 3\n")], ws);
    expect(missing).toMatchObject({ status: "failed", reason: "ambiguous", detail: expect.stringContaining("utils.py does not exist, and the SEARCH text matches in 2 files in the chat (a/utils.py, b/utils.py)") });
    expect(elsewhere).toMatchObject({ status: "failed", reason: "ambiguous", detail: expect.stringContaining("stats.py does not contain the SEARCH text") });
    expect(ws.files).toEqual({ "a/utils.py": "X = 1\n", "b/utils.py": "X = 1\n", "stats.py": "Y = 1\n" });
  });

  test("an ambiguous SEARCH lands where the hints point, and fails with the places when nothing points", () => {
    const f = formatHelpers(new SharedMatcher());
    const text = "class Cart:\n    def go(self):\n        pass\n\nclass Wish:\n    def go(self):\n        pass\n";
    const hinted = workspace({ "m.py": text });
    const hints = f.hintsFromProse("Change `go` in class `Wish` so it returns 2.");
    expect(hints.scopes).toContain("Wish");
    const [ok] = f.applySearchReplace([edit("m.py", "    def go(self):\n        pass\n", "    def go(self):\n        return 2\n", { hints })], hinted);
    expect(ok).toMatchObject({ status: "applied", note: expect.stringContaining("inside `Wish`") });
    expect(hinted.files["m.py"]).toBe(text.replace(/pass\n$/, "return 2\n"));

    const bare = workspace({ "m.py": text });
    const [no] = f.applySearchReplace([edit("m.py", "    def go(self):\n        pass\n", "    def go(self):\n        return 2\n")], bare);
    expect(no).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(bare.files["m.py"]).toBe(text);
  });

  test("keeps the matcher's guard: a SEARCH quoting committed lines the user changed is refused, nothing staged", () => {
    const matcher = new SharedMatcher();
    const f = formatHelpers(matcher);
    const head = 'HOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nRETRIES = 3\n';
    const disk = head.replace("TIMEOUT = 30", "TIMEOUT = 60");
    const ws = workspace({ "config.py": disk });
    const end = matcher.uncommitted.begin([{ path: "config.py", head, disk }]);
    const [r] = f.applySearchReplace([edit("config.py", head, head.replace("RETRIES = 3", "RETRIES = 5"))], ws);
    end();
    expect(r).toMatchObject({ status: "failed", reason: "not-found", match: { userChange: { path: "config.py" } } });
    expect(r!.status === "failed" && r!.detail).toContain("TIMEOUT = 60");
    expect(ws.files["config.py"]).toBe(disk);
  });

  test("stage turns a workspace refusal into a refused outcome", () => {
    const f = formatHelpers(new SharedMatcher());
    const ws = workspace({});
    ws.write = () => {
      throw new Error("../x is outside the repository");
    };
    const e = edit("../x", "", "y");
    expect(f.stage(e, ws, "../x", "y\n")).toEqual({ status: "failed", edit: e, path: "../x", reason: "refused", detail: "../x is outside the repository" });
    expect(f.hintsFromHunkHeader("@@ -40,7 +40,8 @@ class Cart:")).toEqual({ lines: [40], scopes: ["Cart"] });
  });
});

describe("kit.formats fence parsing", () => {
  const f = formatHelpers(new SharedMatcher());

  test("parseBlocks reads blocks with the path before or inside the fence and shell fences, the path matched to a chat file", () => {
    const reply = "Rename it.\n\napp.py\n```python\n<<<<<<< SEARCH\nold()\n=======\nnew()\n>>>>>>> REPLACE\n```\n\n```bash\npython app.py\n```\n";
    expect(f.parseBlocks(reply, ["```", "```"], ["src/app.py"])).toEqual({
      blocks: [{ filename: "src/app.py", search: "old()\n", replace: "new()\n", line: 4, end: 8 }],
      shell: ["python app.py"],
    });
    const fenced = "```\nsrc/app.py\n<<<<<<< SEARCH\nold()\n=======\nnew()\n>>>>>>> REPLACE\n```\n";
    expect(f.parseBlocks(fenced, ["```", "```"], [], "in-fence").blocks[0]).toMatchObject({ filename: "src/app.py", search: "old()\n" });
    // A block with two divider-shaped lines keeps both readings for the file to decide.
    const twice = "a.md\n```\n<<<<<<< SEARCH\nTitle\n=======\n=======\nTitle\n>>>>>>> REPLACE\n```\n";
    expect(f.parseBlocks(twice, ["```", "```"]).blocks[0]!.splits?.length).toBe(2);
  });

  test("a malformed block is a FormatError whose message tells the model what is missing", () => {
    const cut = "app.py\n```\n<<<<<<< SEARCH\nold()\n=======\nnew()\n";
    expect(() => f.parseBlocks(cut, ["```", "```"])).toThrow(FormatError);
    expect(() => f.parseBlocks(cut, ["```", "```"])).toThrow("Expected `>>>>>>> REPLACE`");
    expect(() => f.parseBlocks("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", ["```", "```"])).toThrow("Bad or missing filename");
  });

  test("shell fences: tagged ones only, any backtick run", () => {
    expect(f.shellBlocks("```python\nx = 1\n```\n````sh\nnpm test\n````\n```bash\n\n```\n")).toEqual(["npm test"]);
    expect(f.isShellFence("```console")).toBe(true);
    expect(f.isShellFence("```ts")).toBe(false);
    expect(f.readShellBlock(["```bash", "ls", "pwd", "```", "after"], 0)).toEqual({ command: "ls\npwd", next: 4 });
  });
});
