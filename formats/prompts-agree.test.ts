// Issue 22: what each edit format teaches is what its parser does. Each format's own
// examples go through its parser onto the files they were written for; plausible
// deviations of a real model each have a stated outcome (applied, a repair message, or
// ignored as prose), never a silent wrong write; and one test per numbered item.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assembleChunks, chatFilesBlock, systemText } from "../core/chat/chunks.ts";
import { withoutNegatedClauses, fileMentions } from "../core/chat/mentions.ts";
import { FormatError } from "../core/errors.ts";
import type { EditFormat, Fence, ModelReply, Plugin, PromptContext } from "../core/plugin.ts";
import { loadFormat, runReply, tempRepo, textReply } from "../tests/support/format-kit.ts";
import editblock from "./editblock/index.ts";
import patch from "./patch/index.ts";
import { shellBlocks } from "../core/edit/shell-fence.ts";
import tool from "./tool/index.ts";
import udiff from "./udiff/index.ts";
import wholefile from "./wholefile/index.ts";

const GREET = 'def greet():\n    return "Hello, world"\n\n\nif __name__ == "__main__":\n    print(greet())\n';
const GREET_AFTER = 'def greet(name):\n    return f"Hello, {name}"\n\n\nif __name__ == "__main__":\n    print(greet("Ada"))\n';
const VIEWS = 'import re\n\nfrom app.models import Post\n\n\ndef slugify(title):\n    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n\n\ndef show(post):\n    return f"{post.title} ({slugify(post.title)})"\n';
const VIEWS_AFTER = 'from app.models import Post\nfrom app.text import slugify\n\n\ndef show(post):\n    return f"{post.title} ({slugify(post.title)})"\n';
const TEXT_AFTER = 'import re\n\n\ndef slugify(title):\n    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n';

const FORMATS: [string, Plugin][] = [["diff", editblock], ["diff-fenced", editblock], ["whole", wholefile], ["udiff", udiff], ["patch", patch], ["tool", tool]];
const FENCES: Fence[] = [["```", "```"], ["````", "````"], ["<source>", "</source>"]];

const ctxFor = (fence: Fence, over: Partial<PromptContext> = {}): PromptContext => ({ fence, editorOnly: false, platform: "linux x64, bash", chatFiles: ["greet.py", "app/views.py"], shellSuggestions: true, ...over });

/** A format's example replies, in order, as the model would send them. */
function exampleReplies(fmt: EditFormat, ctx: PromptContext): ModelReply[] {
  return fmt
    .prompts(ctx)
    .examples.filter((m) => m.role === "assistant")
    .map((m) => ({ text: m.content, toolCalls: m.toolCalls ?? [], finishReason: m.toolCalls?.length ? "tool_calls" : "stop" }));
}

describe("each format's own examples, through its own parser, apply to the files they were written for", () => {
  for (const [name, plugin] of FORMATS) {
    for (const fence of FENCES) {
      test(`${name} under ${fence[0]}`, async () => {
        const repo = tempRepo({ "greet.py": GREET, "app/views.py": VIEWS, "README.md": "" }, ["greet.py", "app/views.py", "README.md"]);
        repo.ctx.fence = fence;
        const fmt = await loadFormat(plugin, name, repo.kit);
        const replies = exampleReplies(fmt, ctxFor(fence));
        expect(replies.length).toBe(2);
        for (const reply of replies) {
          const { outcomes } = await runReply(fmt, reply, repo);
          expect(outcomes.length).toBeGreaterThan(0);
          expect(outcomes.every((o) => o.status === "applied")).toBe(true);
        }
        const read = (p: string) => readFileSync(join(repo.root, p), "utf8");
        expect(read("greet.py")).toBe(GREET_AFTER);
        if (name !== "whole" && name !== "tool") {
          expect(read("app/views.py")).toBe(VIEWS_AFTER);
          expect(read("app/text.py")).toBe(TEXT_AFTER);
        }
      });
    }
  }

  test("the rules show the fence the examples use: a tag fence never carries a language (item 13)", async () => {
    for (const [name, plugin] of FORMATS.filter(([n]) => n !== "tool")) {
      const fmt = await loadFormat(plugin, name);
      const p = fmt.prompts(ctxFor(["<source>", "</source>"]));
      expect(p.system).not.toContain("<source>python");
      for (const m of p.examples) expect(m.content).not.toMatch(/<source>\w/);
    }
  });

  test("patch examples keep about three kept lines around each change (item 7)", async () => {
    const fmt = await loadFormat(patch, "patch");
    const first = fmt.prompts(ctxFor(["```", "```"])).examples[1]!.content;
    const kept = first.split("\n").filter((l) => l.startsWith(" "));
    expect(kept.length).toBeGreaterThanOrEqual(3);
    const second = fmt.prompts(ctxFor(["```", "```"])).examples[3]!.content;
    expect(second.split("\n").filter((l) => l.startsWith(" ")).length).toBeGreaterThanOrEqual(4);
  });
});

describe("framing: which files, new files, no contradictions (items 2, 5, 8, 12, 13)", () => {
  const variants = (over: Partial<PromptContext>) => FORMATS.map(async ([name, plugin]) => [name, (await loadFormat(plugin, name)).prompts(ctxFor(["```", "```"], over))] as const);

  test("new files need no asking; the 'check which file the user means' rule is gone (item 2)", async () => {
    for (const [name, p] of await Promise.all(variants({}))) {
      expect(`${name}: ${p.system}`).toMatch(/[Cc]reate new files (freely|without asking)|no need to ask/);
      expect(p.system).not.toContain("Check which file the user means");
    }
  });

  test("the system message and the reminder say which files may be edited (item 12)", async () => {
    for (const [name, p] of await Promise.all(variants({}))) {
      expect(`${name}: ${p.system}`).toContain("Only edit files in the chat");
      expect(`${name}: ${p.reminder}`).toContain("Edit only greet.py, app/views.py (the files in the chat)");
    }
    for (const [name, p] of await Promise.all(variants({ chatFiles: [] }))) expect(`${name}: ${p.reminder}`).toContain("No files are in the chat yet");
  });

  test("the reminder names the fence when it is not three backticks (item 12)", async () => {
    for (const [name, plugin] of FORMATS.filter(([n]) => n === "diff" || n === "whole" || n === "diff-fenced")) {
      const p = (await loadFormat(plugin, name)).prompts(ctxFor(["````", "````"]));
      expect(`${name}: ${p.reminder}`).toContain("Wrap file content in ```` ... ````");
    }
  });

  test("the editor step and --no-suggest-shell-commands carry no contradiction (item 5)", async () => {
    for (const [name, p] of await Promise.all(variants({ editorOnly: true, shellSuggestions: false }))) {
      expect(`${name}: ${p.system}`).not.toMatch(/ask the user|and stop/i);
      expect(p.system).not.toMatch(/suggest the (shell|`git)/);
      expect(p.system).toContain("Do not suggest shell commands.");
    }
    for (const [name, p] of await Promise.all(variants({ shellSuggestions: false }))) expect(`${name}: ${p.system}`).not.toMatch(/suggest the (shell|`git)/);
  });

  test("the diff-fenced path step says 'no decoration' too (item 13)", async () => {
    const p = (await loadFormat(editblock, "diff-fenced")).prompts(ctxFor(["```", "```"]));
    expect(p.system).toContain("alone on the next line, exactly as shown to you (relative to the repository root), with no decoration");
  });

  test("formats that copy file text state the rule for escaped text (item 13)", async () => {
    for (const [name, p] of await Promise.all(variants({}))) if (name !== "whole") expect(`${name}: ${p.system}`).toMatch(/escap/i);
  });

  test("no files in the chat: a block says so; 'You may edit them' only for formats that edit (items 8, 13)", () => {
    const none = chatFilesBlock([], ["```", "```"]);
    expect(none.text).toContain("No files are in the chat yet");
    expect(none.text).toContain("To create a new file, just write it");
    const read = chatFilesBlock([{ path: "a.py", content: "x\n" }], ["```", "```"], "read");
    expect(read.text).not.toContain("You may edit them");
    expect(chatFilesBlock([{ path: "a.py", content: "x\n" }], ["```", "```"], "edit").text).toContain("You may edit them");
  });

  test("the tool format is never told to put fences in file content (item 4)", () => {
    expect(systemText("rules", "linux", ["```", "```"], true)).not.toContain("use the same fence when you write file content");
    expect(systemText("rules", "linux", ["```", "```"], true)).toContain("tool arguments carry the file's text without it");
    expect(systemText("rules", "linux", ["```", "```"], false)).toContain("use the same fence when you write file content");
  });

  test("a system-role reminder follows the request as a system message; without a system role it stays in the request (per-model settings)", () => {
    const base = { system: "S", examples: [], staticBlocks: [], sessionBlocks: [], history: [], chatFiles: null, turnBlocks: [], current: [{ role: "user" as const, content: "do it" }], reminder: "R", breakpoints: false };
    const sys = assembleChunks({ ...base, systemRole: true, reminderRole: "system" }).at(-1)!.messages;
    expect(sys.map((m) => [m.role, m.content])).toEqual([["user", "do it"], ["system", "R"]]);
    const noSystemRole = assembleChunks({ ...base, systemRole: false, reminderRole: "system" }).at(-1)!.messages;
    expect(noSystemRole.map((m) => [m.role, m.content])).toEqual([["user", "do it\n\nR"]]);
    const user = assembleChunks({ ...base, systemRole: true }).at(-1)!.messages;
    expect(user.map((m) => [m.role, m.content])).toEqual([["user", "do it\n\nR"]]);
  });
});

describe("shell blocks: one rule taught, the same fence read, in every format (item 11)", () => {
  for (const fence of FENCES) {
    test(`under ${fence[0]}, each format teaches a \`\`\`bash block and reads one`, async () => {
      for (const [name, plugin] of FORMATS) {
        const repo = tempRepo({ "greet.py": GREET });
        repo.ctx.fence = fence;
        const fmt = await loadFormat(plugin, name, repo.kit);
        expect(`${name}: ${fmt.prompts(ctxFor(fence)).system}`).toContain("go in a ```bash block");
        const parsed = fmt.parse(textReply("Run the tests afterwards:\n\n```bash\npython -m pytest\n```\n"), repo.ctx);
        expect(`${name}: ${parsed.shell.map((s) => s.command).join("|")}`).toBe(`${name}: python -m pytest`);
        expect(parsed.edits).toEqual([]);
      }
    });
  }

  test("a four-backtick bash fence is read as well (what the diff prompt used to teach)", () => {
    expect(shellBlocks("````bash\nnpm test\n````\n")).toEqual(["npm test"]);
  });
});

describe("whole: deviations with a stated outcome (items 1, 3)", () => {
  const UTIL = "def slugify(s):\n    s = s.strip().lower()\n    return s.replace(' ', '-')\n\n\ndef title(s):\n    return s.title()\n";

  test("item 1: a snippet inside a question is read as prose: nothing written, no repair message", async () => {
    const repo = tempRepo({ "util.py": UTIL });
    const fmt = await loadFormat(wholefile, "whole", repo.kit);
    const { outcomes, written } = await runReply(fmt, textReply("I'd rename it like this:\n\n```python\ndef make_slug(s):\n    return slugify(s)\n```\n\nShould I rename both?"), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["skipped"]);
    expect(written).toMatchObject({ written: [] });
    expect(readFileSync(join(repo.root, "util.py"), "utf8")).toBe(UTIL);
  });

  test("item 1: with two chat files, a snippet after a backticked mention in a question lands nowhere", async () => {
    const repo = tempRepo({ "util.py": UTIL, "lib/strings.js": "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n" });
    const fmt = await loadFormat(wholefile, "whole", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("In `lib/strings.js` I would add:\n\n```python\ndef make_slug(s):\n    return slugify(s)\n```\n\nDo you want that?"), repo);
    expect(outcomes.every((o) => o.status !== "applied")).toBe(true);
    expect(readFileSync(join(repo.root, "lib/strings.js"), "utf8")).toBe("export const a = 1;\nexport const b = 2;\nexport const c = 3;\n");
  });

  test("a snippet after a backticked mention (no question) that is not the whole file: a repair message, nothing written", async () => {
    const repo = tempRepo({ "util.py": UTIL });
    const fmt = await loadFormat(wholefile, "whole", repo.kit);
    const { outcomes, report } = await runReply(fmt, textReply("Here is how `util.py` could look:\n\n```python\ndef make_slug(s):\n    return slugify(s)\n```\n"), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["failed"]);
    expect(report).toContain("put that file's path alone on the line before the opening fence");
    expect(readFileSync(join(repo.root, "util.py"), "utf8")).toBe(UTIL);
  });

  test("two path-less blocks are both prose; a path-less block that is plausibly the whole only chat file is applied", async () => {
    const repo = tempRepo({ "util.py": UTIL });
    const fmt = await loadFormat(wholefile, "whole", repo.kit);
    const two = await runReply(fmt, textReply("Either\n\n```python\nx = 1\n```\n\nor\n\n```python\nx = 2\n```\n"), repo);
    expect(two.outcomes).toEqual([]);
    const next = UTIL.replace("s.title()", "s.title().strip()");
    const one = await runReply(fmt, textReply(`Here it is:\n\n\`\`\`python\n${next}\`\`\`\n`), repo);
    expect(one.outcomes.map((o) => [o.status, o.path])).toEqual([["applied", "util.py"]]);
    expect(readFileSync(join(repo.root, "util.py"), "utf8")).toBe(next);
  });

  test("item 3: a ``` listing under the ```` fence is applied when the file has no ``` line", async () => {
    const repo = tempRepo({ "notes.md": "# Notes\n\n- one\n", "README.md": "Use:\n\n```\nrun\n```\n" });
    repo.ctx.fence = ["````", "````"];
    const fmt = await loadFormat(wholefile, "whole", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("notes.md\n```markdown\n# Notes\n\n- one\n- two\n```\n"), repo);
    expect(outcomes.map((o) => [o.status, o.path])).toEqual([["applied", "notes.md"]]);
    expect(readFileSync(join(repo.root, "notes.md"), "utf8")).toBe("# Notes\n\n- one\n- two\n");
  });

  test("item 3: a ``` listing under the ```` fence of a file with ``` lines gets a repair message naming ````, nothing written", async () => {
    const README = "Use:\n\n```\nrun\n```\n\nDone.\n";
    const repo = tempRepo({ "README.md": README });
    repo.ctx.fence = ["````", "````"];
    const fmt = await loadFormat(wholefile, "whole", repo.kit);
    const { outcomes, report } = await runReply(fmt, textReply("README.md\n```markdown\nUse:\n\n```bash\nrun --fast\n```\n\nDone.\n```\n"), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["failed"]);
    expect(report).toContain("wrapped in ````");
    expect(readFileSync(join(repo.root, "README.md"), "utf8")).toBe(README);
  });
});

describe("tool: fences inside the arguments are stripped or refused, never written (item 4)", () => {
  const call = (name: string, args: Record<string, string>): ModelReply => ({ text: "", finishReason: "tool_calls", toolCalls: [{ id: "c1", name, arguments: JSON.stringify(args) }] });

  test("create_file content wrapped in a fence: written without it", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n" });
    const fmt = await loadFormat(tool, "tool", repo.kit);
    const { outcomes } = await runReply(fmt, call("create_file", { path: "b.py", content: "```python\ny = 2\n```\n" }), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["applied"]);
    expect(readFileSync(join(repo.root, "b.py"), "utf8")).toBe("y = 2\n");
  });

  test("edit_file search and replace wrapped in fences: applied without them", async () => {
    const repo = tempRepo({ "a.py": "x = 1\ny = 2\n" });
    const fmt = await loadFormat(tool, "tool", repo.kit);
    const { outcomes } = await runReply(fmt, call("edit_file", { path: "a.py", search: "```python\ny = 2\n```", replace: "```python\ny = 3\n```" }), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["applied"]);
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("x = 1\ny = 3\n");
  });

  test("a README's own fenced block is edited as written (the file holds the fence)", async () => {
    const repo = tempRepo({ "README.md": "Install:\n\n```bash\nnpm i a\n```\n" });
    const fmt = await loadFormat(tool, "tool", repo.kit);
    await runReply(fmt, call("edit_file", { path: "README.md", search: "```bash\nnpm i a\n```\n", replace: "```bash\nnpm i b\n```\n" }), repo);
    expect(readFileSync(join(repo.root, "README.md"), "utf8")).toBe("Install:\n\n```bash\nnpm i b\n```\n");
  });

  test("a new Markdown file that is one fenced block cannot be told from a wrapper: refused with a repair message", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n" });
    const fmt = await loadFormat(tool, "tool", repo.kit);
    expect(() => fmt.parse(call("create_file", { path: "USAGE.md", content: "```bash\nnpm i\n```\n" }), repo.ctx)).toThrow(FormatError);
  });

  test("bash blocks in the text of a tool reply are shell suggestions (item 11)", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n" });
    const fmt = await loadFormat(tool, "tool", repo.kit);
    const parsed = fmt.parse({ ...call("create_file", { path: "b.py", content: "y = 2\n" }), text: "Then run:\n\n```bash\npython b.py\n```\n" }, repo.ctx);
    expect(parsed.shell).toEqual([{ command: "python b.py" }]);
  });
});

describe("an empty-SEARCH 'create' of a file the model never saw (item 8)", () => {
  test("is refused with a repair message, even where the gate let the file in; in a chat file it still appends", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n", "notes.txt": "keep me\n" }, ["a.py"]);
    const fmt = await loadFormat(editblock, "diff", repo.kit);
    const parsed = fmt.parse(textReply("notes.txt\n```\n<<<<<<< SEARCH\n=======\nnew notes\n>>>>>>> REPLACE\n```\n\na.py\n```\n<<<<<<< SEARCH\n=======\ny = 2\n>>>>>>> REPLACE\n```\n"), repo.ctx);
    // The kernel's workspace holds the chat files and the outside files the gate allowed.
    const ws = repo.store.workspace(["a.py", "notes.txt"]);
    const outcomes = await fmt.apply(parsed.edits, ws);
    expect(outcomes.map((o) => [o.status, o.path])).toEqual([["failed", "notes.txt"], ["applied", "a.py"]]);
    expect(fmt.report(outcomes, { fence: ["```", "```"], appliedCount: 1 })).toContain("it was not in the chat, so you have not seen its content");
    await repo.store.writeAll(ws.changes());
    expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toBe("keep me\n");
    expect(readFileSync(join(repo.root, "a.py"), "utf8")).toBe("x = 1\ny = 2\n");
  });
});

test("udiff: `--- /dev/null` over an existing file is refused, never appended (item 8)", async () => {
  const repo = tempRepo({ "notes.txt": "keep me\n" });
  const fmt = await loadFormat(udiff, "udiff", repo.kit);
  const { outcomes, report } = await runReply(fmt, textReply("```diff\n--- /dev/null\n+++ notes.txt\n@@ ... @@\n+new notes\n```\n"), repo);
  expect(outcomes.map((o) => o.status)).toEqual(["failed"]);
  expect(report).toContain("already exists");
  expect(readFileSync(join(repo.root, "notes.txt"), "utf8")).toBe("keep me\n");
});

describe("diff-fenced repair messages teach the diff-fenced layout (item 9)", () => {
  test("a block without a path: the message puts the path after the opening fence", async () => {
    const repo = tempRepo({ "a.py": "x = 1\n", "b.py": "y\n" });
    const fenced = await loadFormat(editblock, "diff-fenced", repo.kit);
    let message = "";
    try {
      fenced.parse(textReply("```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n"), repo.ctx);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("alone on the line after the opening fence");
    expect(message).toContain("the opening fence, the file path alone on the next line");
    expect(message).not.toContain("alone on the line before the opening fence");
  });
});

describe("context: a path named only to say it needs no change is not added (item 10)", () => {
  const repoFiles = ["README.md", "client/retry.py", "client/config.py"];
  const added = (reply: string) => fileMentions(withoutNegatedClauses(reply), repoFiles);

  test("negated mentions are dropped, listed files and reasons with 'not' kept", () => {
    expect(added("- `client/retry.py`: the delay is not configurable yet.\n\nNo need to touch `README.md`.")).toEqual(["client/retry.py"]);
    expect(added("`client/config.py` gets the setting; `README.md` doesn't need changes.")).toEqual(["client/config.py"]);
    expect(added("Change `client/retry.py`, but leave `README.md` alone.")).toEqual(["client/retry.py"]);
    expect(added("- `README.md`: document the new setting")).toEqual(["README.md"]);
  });
});

describe("plausible deviations in every format, each with its stated outcome (never a silent write)", () => {
  const A = 'def greet():\n    return "Hello, world"\n\n\nif __name__ == "__main__":\n    print(greet())\n';
  const A2 = A.replace('"Hello, world"', '"Hi"');
  const fenced = (body: string, tag = "") => `\`\`\`${tag}\n${body}\`\`\`\n`;
  const SNIPPET = "For example:\n\n```python\nprint(greet())\n```\n\nWant me to add that?";
  type Case = [format: string, plugin: Plugin, deviation: string, reply: string, outcome: "applied" | "repair" | "prose"];
  const CASES: Case[] = [
    ["diff", editblock, "decorated path line", `**greet.py**\n${fenced('<<<<<<< SEARCH\n    return "Hello, world"\n=======\n    return "Hi"\n>>>>>>> REPLACE\n', "python")}`, "applied"],
    ["diff", editblock, "SEARCH retyped wrongly", `greet.py\n${fenced('<<<<<<< SEARCH\n    return "Hello world!"\n    pass\n=======\n    return "Hi"\n>>>>>>> REPLACE\n')}`, "repair"],
    ["diff", editblock, "a snippet in a question", SNIPPET, "prose"],
    ["diff-fenced", editblock, "the path before the fence (diff's layout)", `greet.py\n${fenced('<<<<<<< SEARCH\n    return "Hello, world"\n=======\n    return "Hi"\n>>>>>>> REPLACE\n', "python")}`, "applied"],
    ["diff-fenced", editblock, "a snippet in a question", SNIPPET, "prose"],
    ["udiff", udiff, "a diff without a fence", '--- greet.py\n+++ greet.py\n@@ -1,2 +1,2 @@\n def greet():\n-    return "Hello, world"\n+    return "Hi"\n', "applied"],
    // The hunk's changed lines match one place on their own: applied by them (udiff's split hunks).
    ["udiff", udiff, "a kept line that is not in the file", fenced('--- greet.py\n+++ greet.py\n@@ ... @@\n def hello():\n-    return "Hello, world"\n+    return "Hi"\n', "diff"), "applied"],
    ["udiff", udiff, "removed lines that are not in the file", fenced('--- greet.py\n+++ greet.py\n@@ ... @@\n def greet():\n-    return "Hello world!"\n+    return "Hi"\n', "diff"), "repair"],
    ["udiff", udiff, "a snippet in a question", SNIPPET, "prose"],
    ["patch", patch, "the patch inside a fence", fenced('*** Begin Patch\n*** Update File: greet.py\n@@\n def greet():\n-    return "Hello, world"\n+    return "Hi"\n \n \n if __name__ == "__main__":\n*** End Patch\n'), "applied"],
    ["patch", patch, "a patch cut off", '*** Begin Patch\n*** Update File: greet.py\n@@\n def greet():\n-    return "Hello, world"\n', "repair"],
    ["patch", patch, "a snippet in a question", SNIPPET, "prose"],
    ["whole", wholefile, "a snippet in a question", SNIPPET, "prose"],
    ["whole", wholefile, "the listing cut off", `greet.py\n\`\`\`python\n${A2.slice(0, 30)}`, "repair"],
    ["tool", tool, "code in the text instead of a call", SNIPPET, "prose"],
  ];
  for (const [name, plugin, deviation, reply, expected] of CASES) {
    test(`${name}: ${deviation} → ${expected}`, async () => {
      const repo = tempRepo({ "greet.py": A, "other.py": "x = 1\n" });
      const fmt = await loadFormat(plugin, name, repo.kit);
      let got: string;
      try {
        const { outcomes } = await runReply(fmt, textReply(reply), repo);
        got = outcomes.length === 0 || outcomes.every((o) => o.status === "skipped") ? "prose" : outcomes.every((o) => o.status === "applied") ? "applied" : "repair";
      } catch (error) {
        if (!(error instanceof FormatError)) throw error;
        got = "repair";
      }
      expect(got).toBe(expected);
      const now = readFileSync(join(repo.root, "greet.py"), "utf8");
      expect(now).toBe(expected === "applied" ? A2 : A);
      expect(readFileSync(join(repo.root, "other.py"), "utf8")).toBe("x = 1\n");
    });
  }
});
