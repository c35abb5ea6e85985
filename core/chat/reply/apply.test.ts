import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "../../edit/files.ts";
import { Gate } from "../../gate/gate.ts";
import type { Edit, EditFormat, MatchFailure, ModelReply } from "../../plugin.ts";
import type { Registered } from "../../plugins/registry.ts";
import { guardUncommitted, lineDelta, parseReply, stageEdits } from "./apply.ts";
import { SharedMatcher } from "../../edit/matcher.ts";
import type { Choice } from "../../gate/prompter.ts";
import { ScriptedPrompter } from "../../../tests/support/scripted-prompter.ts";

interface LineEdit extends Edit {
  search: string;
  replace: string;
}

/** A minimal plugin format: one `path: search -> replace` per line of the reply. */
const lines: EditFormat<LineEdit> = {
  name: "lines",
  summary: "test format",
  prompts: () => ({ system: "", examples: [], reminder: "" }),
  parse(reply: ModelReply) {
    if (reply.text.includes("MALFORMED")) {
      const e = new Error("write path: search -> replace");
      e.name = "FormatError";
      throw e;
    }
    if (reply.text.includes("CRASH")) throw new TypeError("undefined is not a function");
    const edits = reply.text
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [path = "", rest = ""] = l.split(": ");
        const [search = "", replace = ""] = rest.split(" -> ");
        return { path, search, replace, source: l };
      });
    return { edits, shell: [] };
  },
  apply(edits, ws) {
    return edits.map((edit) => {
      const text = ws.read(edit.path);
      if (text === null || !text.includes(edit.search)) return { status: "failed", edit, path: edit.path, reason: "not-found", detail: "no match" };
      ws.write(edit.path, text.replace(edit.search, edit.replace));
      return { status: "applied", edit, path: edit.path };
    });
  },
  report: () => "",
};
const entry = { item: lines, plugin: "lines", origin: "test" } as unknown as Registered<EditFormat>;

function setup(yesAlways: boolean) {
  const root = mkdtempSync(join(tmpdir(), "coder-reply-"));
  writeFileSync(join(root, "a.txt"), "alpha\n");
  writeFileSync(join(root, "b.txt"), "beta\n");
  writeFileSync(join(root, "ro.txt"), "read only\n");
  const files = new FileStore(root);
  const gate = new Gate({ root, yesAlways, allowShellTrusted: false, prompter: new ScriptedPrompter([]) });
  return { root, files, gate };
}

const reply = (text: string): ModelReply => ({ text, toolCalls: [], finishReason: "stop" });
const base = { format: entry, fence: ["```", "```"] as const, chatFiles: ["a.txt"], resolvePath: (p: string) => p, diff: (path: string) => `diff of ${path}` };

describe("parseReply", () => {
  test("a FormatError is the model's to fix; any other throw is the plugin's bug", () => {
    expect(parseReply({ ...base, reply: reply("MALFORMED") })).toEqual({ ok: false, error: "write path: search -> replace", pluginError: false });
    const crash = parseReply({ ...base, reply: reply("CRASH") });
    expect(crash).toMatchObject({ ok: false, pluginError: true });
    expect(!crash.ok && crash.error).toContain("plugin lines (test): parse failed");
  });
});

describe("stageEdits", () => {
  test("gates every edit, applies the allowed ones to a staged workspace, writes nothing", async () => {
    const { root, files, gate } = setup(false);
    const parsed = parseReply({ ...base, reply: reply("a.txt: alpha -> ALPHA\nb.txt: beta -> BETA\nro.txt: read -> write\n../x.txt: a -> b") });
    if (!parsed.ok) throw new Error(parsed.error);
    const staged = await stageEdits({ ...base, reply: reply(""), readOnlyFiles: ["ro.txt"], files, gate }, parsed.parsed.edits);
    expect(staged.outcomes.map((o) => [o.path, o.status])).toEqual([
      ["a.txt", "applied"],
      ["b.txt", "skipped"], // not in the chat, and nobody said yes: declined, not a failure to repair
      ["ro.txt", "failed"],
      ["../x.txt", "failed"],
    ]);
    expect(staged.outcomes.slice(2).every((o) => o.status === "failed" && o.reason === "refused")).toBe(true);
    expect([...staged.changes]).toEqual([["a.txt", "ALPHA\n"]]);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
  });

  test("a file outside the chat joins it when its edit applies (--yes-always), and is reported when it fails", async () => {
    const { files, gate } = setup(true);
    const parsed = parseReply({ ...base, reply: reply("b.txt: beta -> BETA\nro.txt: nope -> x") });
    if (!parsed.ok) throw new Error(parsed.error);
    const staged = await stageEdits({ ...base, reply: reply(""), readOnlyFiles: [], files, gate }, parsed.parsed.edits);
    expect(staged.joined).toEqual(["b.txt"]);
    expect(staged.failedOutside).toEqual(["ro.txt"]);
    expect(staged.before.get("b.txt")).toBe("beta\n");
  });
});

describe("stageEdits: every path an edit writes is gated", () => {
  /** A format whose edits move a file: `from => to` (declared in `paths` unless the line ends with " undeclared"). */
  const mover: EditFormat = {
    ...lines,
    parse: (r) => ({
      edits: r.text
        .split("\n")
        .filter(Boolean)
        .map((l) => {
          const [from = "", to = ""] = l.replace(/ undeclared$/, "").split(" => ");
          return { path: from, source: l, ...(l.endsWith(" undeclared") ? {} : { paths: [from, to] }), to } as Edit;
        }),
      shell: [],
    }),
    apply: (edits, ws) =>
      edits.map((edit) => {
        const to = (edit as Edit & { to: string }).to;
        ws.write(to, ws.read(edit.path) ?? "");
        ws.remove(edit.path);
        return { status: "applied", edit, path: to };
      }),
  };
  const moverEntry = { item: mover, plugin: "mover", origin: "test" } as unknown as Registered<EditFormat>;

  async function stage(text: string, yesAlways: boolean, answers: Choice[] = []) {
    const { root, files } = setup(yesAlways);
    const prompter = new ScriptedPrompter(answers);
    const gate = new Gate({ root, yesAlways, allowShellTrusted: false, prompter });
    const parsed = parseReply({ ...base, format: moverEntry, reply: reply(text) });
    if (!parsed.ok) throw new Error(parsed.error);
    const staged = await stageEdits({ ...base, format: moverEntry, reply: reply(""), readOnlyFiles: ["ro.txt"], files, gate }, parsed.parsed.edits);
    return { staged, asked: prompter.asked };
  }

  test("a declared second path is asked about like the first, and a no skips the edit", async () => {
    const { staged, asked } = await stage("a.txt => moved/a.txt", false, ["no"]);
    expect(asked).toEqual(["Create new file moved/a.txt?"]);
    expect(staged.outcomes[0]).toMatchObject({ status: "skipped", path: "a.txt" });
    expect(staged.changes.size).toBe(0);
  });

  test("a declared read-only second path is refused without a question", async () => {
    const { staged, asked } = await stage("a.txt => ro.txt", true);
    expect(asked).toEqual([]);
    expect(staged.outcomes[0]).toMatchObject({ status: "failed", reason: "refused" });
    expect(staged.outcomes[0]!.status === "failed" && staged.outcomes[0]!.detail).toContain("ro.txt is read-only");
    expect(staged.changes.size).toBe(0);
  });

  test("allowed: the new path joins the chat, and its before-content is known", async () => {
    const { staged } = await stage("a.txt => moved/a.txt", true);
    expect([...staged.changes]).toEqual([
      ["moved/a.txt", "alpha\n"],
      ["a.txt", null],
    ]);
    expect(staged.joined).toEqual(["moved/a.txt"]);
    expect(staged.before.get("moved/a.txt")).toBeNull();
    expect(staged.before.get("a.txt")).toBe("alpha\n");
  });

  test("a move to a declined protected path keeps its source, and an edit sharing a path with it is dropped too", async () => {
    // b.txt => .coder.json is declined (nobody to ask): its source b.txt stays, and so does a.txt,
    // which the first move also wrote (the chain of one-unit edits).
    const { staged } = await stage("a.txt => b.txt\nb.txt => .coder.json", true);
    expect(staged.outcomes.map((o) => o.status)).toEqual(["skipped", "skipped"]);
    expect(staged.changes.size).toBe(0);
    expect(staged.outcomes[0]!.status === "skipped" && staged.outcomes[0]!.detail).toContain("so this edit (which also writes b.txt) was not made either");
  });

  test("a write the edits did not declare is gated after apply; declined, nothing from the reply is kept", async () => {
    const refused = await stage("a.txt => b.txt undeclared", false, ["no"]);
    expect(refused.asked).toEqual(["Allow edits to b.txt, which is not in the chat?"]);
    expect(refused.staged.changes.size).toBe(0);
    expect(refused.staged.outcomes[0]).toMatchObject({ status: "skipped" });
    expect(refused.staged.outcomes[0]!.status === "skipped" && refused.staged.outcomes[0]!.detail).toContain("did not name");
    const allowed = await stage("a.txt => b.txt undeclared", false, ["yes"]);
    expect([...allowed.staged.changes.keys()].sort()).toEqual(["a.txt", "b.txt"]);
    expect(allowed.staged.before.get("b.txt")).toBe("beta\n");
    expect(allowed.staged.joined).toEqual(["b.txt"]);
  });
});

describe("stageEdits: a front end's amendment", () => {
  test("joins a reply that changed something, for chat files only; a reply that changed nothing gets none", async () => {
    const { files, gate } = setup(false);
    const amend = () =>
      new Map([
        ["b.txt", "beta, amended\n"],
        ["ro.txt", "not a chat file\n"],
      ]);
    const inputs = { ...base, chatFiles: ["a.txt", "b.txt"], reply: reply(""), readOnlyFiles: [], files, gate, amend };
    const parsed = parseReply({ ...base, reply: reply("a.txt: alpha -> ALPHA") });
    if (!parsed.ok) throw new Error(parsed.error);
    const staged = await stageEdits(inputs, parsed.parsed.edits);
    expect([...staged.changes]).toEqual([
      ["a.txt", "ALPHA\n"],
      ["b.txt", "beta, amended\n"],
    ]);
    expect(staged.before.get("b.txt")).toBe("beta\n");
    const none = parseReply({ ...base, reply: reply("a.txt: missing -> x") });
    if (!none.ok) throw new Error(none.error);
    expect((await stageEdits(inputs, none.parsed.edits)).changes.size).toBe(0);
  });
});

describe("guardUncommitted", () => {
  test("an editor's unsaved change is kept like an uncommitted one: a SEARCH quoting the saved file lands only on the buffer's exact lines", async () => {
    const saved = 'HOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nRETRIES = 3\nLOG_LEVEL = "info"\n';
    const buffer = saved.replace("TIMEOUT = 30", "TIMEOUT = 60");
    const root = mkdtempSync(join(tmpdir(), "coder-guard-"));
    writeFileSync(join(root, "c.py"), saved);
    const files = new FileStore(root, { editor: { text: (rel) => (rel === "c.py" ? buffer : undefined) } });
    const matcher = new SharedMatcher();
    const end = await guardUncommitted({ matcher, git: null, files }, ["c.py"]);
    const r = matcher.replace(buffer, saved, saved.replace("RETRIES = 3", "RETRIES = 5"));
    expect(r).toMatchObject({ status: "failed", userChange: { path: "c.py", was: "saved", startLine: 1, endLine: 5 } });
    expect(matcher.explain(r as MatchFailure, saved, "", "c.py")).toContain("as it was last saved");
    end();
    expect(matcher.replace(buffer, saved, saved.replace("RETRIES = 3", "RETRIES = 5"))).toMatchObject({ status: "applied", rung: "fuzzy" });
  });
});

test("lineDelta counts added and removed lines", () => {
  expect(lineDelta("a\nb\nc\n", "a\nB\nc\nd\n")).toEqual({ added: 2, removed: 1 });
  expect(lineDelta(null, "x\n")).toEqual({ added: 2, removed: 0 });
});
