// core/gate/gate.ts: edit and shell permissions, group answers, --yes-always, the
// non-interactive answer, and "Don't ask again" remembered across Gate instances.

import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { containmentProblem, forgetAnswers, Gate, type GateEvent, rememberedAnswers } from "../core/gate/gate.ts";
import { NonInteractivePrompter, type Prompter } from "../core/gate/prompter.ts";
import { ScriptedPrompter } from "./support/scripted-prompter.ts";

function tempRoot(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-gate-")));
  mkdirSync(join(root, ".git/hooks"), { recursive: true });
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "src/a.ts"), "a\n");
  writeFileSync(join(root, "src/b.ts"), "b\n");
  return root;
}

function gate(root: string, prompter: Prompter, extra: Partial<ConstructorParameters<typeof Gate>[0]> = {}) {
  const events: GateEvent[] = [];
  const g = new Gate({ root, yesAlways: false, allowShellTrusted: false, prompter, events: (e) => events.push(e), ...extra });
  return { g, events };
}

const ctx = (over: Partial<{ chatFiles: string[]; readOnlyFiles: string[]; existsInRepo: boolean }> = {}) => ({
  chatFiles: ["src/a.ts"],
  readOnlyFiles: ["CONVENTIONS.md"],
  existsInRepo: true,
  ...over,
});

describe("edit permission", () => {
  test("chat files are pre-authorised without asking", async () => {
    const root = tempRoot();
    const p = new ScriptedPrompter([]);
    expect(await gate(root, p).g.editPermission("src/a.ts", ctx())).toEqual({ ok: true });
    expect(p.asked).toEqual([]);
  });

  test("a repo file not in the chat asks; no is the user's decision (declined), not a rule for the model", async () => {
    const root = tempRoot();
    const p = new ScriptedPrompter(["yes", "no"]);
    const { g } = gate(root, p);
    expect(await g.editPermission("src/b.ts", ctx())).toEqual({ ok: true });
    const no = await g.editPermission("src/b.ts", ctx());
    expect(no.ok).toBe(false);
    expect(no).toEqual({ ok: false, declined: true, reason: "edits to src/b.ts (not in the chat) were not allowed" });
    expect(p.asked[0]).toContain("src/b.ts");
  });

  test("a new file asks to create it", async () => {
    const p = new ScriptedPrompter(["no"]);
    const res = await gate(tempRoot(), p).g.editPermission("src/new.ts", ctx({ existsInRepo: false }));
    expect(p.asked[0]).toBe("Create new file src/new.ts?");
    expect(res.ok).toBe(false);
  });

  test("read-only files are never edited, not even under --yes-always", async () => {
    const p = new ScriptedPrompter(["yes"]);
    const { g, events } = gate(tempRoot(), p, { yesAlways: true });
    const res = await g.editPermission("CONVENTIONS.md", ctx({ chatFiles: ["CONVENTIONS.md"] }));
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.reason).toContain("read-only");
    expect(p.asked).toEqual([]);
    expect(events.some((e) => e.type === "refused")).toBe(true);
  });

  test("--yes-always allows repo files not in the chat", async () => {
    const p = new ScriptedPrompter([]);
    expect(await gate(tempRoot(), p, { yesAlways: true }).g.editPermission("src/b.ts", ctx())).toEqual({ ok: true });
  });

  test("outside paths, .git/, absolute paths and symlinks out are refused whatever the answers", async () => {
    const root = tempRoot();
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "coder-outside-")));
    writeFileSync(join(outside, "secret.txt"), "s\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    symlinkSync(outside, join(root, "linkdir"));
    symlinkSync(join(root, ".git"), join(root, "gitlink"));
    const p = new ScriptedPrompter(["yes", "yes", "yes", "yes", "yes", "yes", "yes", "yes"]);
    const { g } = gate(root, p, { yesAlways: true });
    symlinkSync(join(root, ".coder"), join(root, "coderlink"));
    mkdirSync(join(root, ".coder"));
    for (const rel of ["../x.txt", "src/../../x.txt", `${outside}/secret.txt`, ".git/hooks/pre-commit", ".GIT/config", "src/.git/config", "link.txt", "linkdir/new.txt", "gitlink/hooks/pre-commit", ".coder/commits.json", "coderlink/gate.json"]) {
      const res = await g.editPermission(rel, ctx({ chatFiles: [rel], existsInRepo: false }));
      expect(res.ok, rel).toBe(false);
      if (!res.ok) expect(res.reason).toContain("Refused");
    }
    expect(p.asked).toEqual([]);
  });

  test("the file store's check is consulted too (defence in depth)", async () => {
    const seen: string[] = [];
    const check = (rel: string) => (seen.push(rel), rel.endsWith(".env") ? "it is git-ignored" : null);
    const { g } = gate(tempRoot(), new ScriptedPrompter([]), { check, yesAlways: true });
    const res = await g.editPermission(".env", ctx({ chatFiles: [".env"] }));
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.reason).toContain("git-ignored");
    expect(seen).toEqual([".env"]);
  });

  test("group answers: All says yes to the rest, Skip all says no to the rest", async () => {
    const p = new ScriptedPrompter(["all", "skip-all"]);
    const { g } = gate(tempRoot(), p);
    const group = g.group(3);
    for (const f of ["x1.ts", "x2.ts", "x3.ts"]) expect((await g.editPermission(f, { ...ctx(), existsInRepo: false, group })).ok).toBe(true);
    const skip = g.group(2);
    expect((await g.editPermission("y1.ts", { ...ctx(), existsInRepo: false, group: skip })).ok).toBe(false);
    expect((await g.editPermission("y2.ts", { ...ctx(), existsInRepo: false, group: skip })).ok).toBe(false);
    expect(p.asked.length).toBe(2);
  });

  test("All / Skip all are offered only for groups of several questions", async () => {
    const offered: string[][] = [];
    const p: Prompter = { interactive: true, choose: async (_q, choices) => (offered.push([...choices]), "no") };
    const { g } = gate(tempRoot(), p);
    await g.confirm("one?");
    await g.confirm("two?", g.group(2));
    expect(offered).toEqual([
      ["yes", "no", "never"],
      ["yes", "no", "all", "skip-all", "never"],
    ]);
  });
});

describe("shell permission", () => {
  test("needs an explicit yes", async () => {
    const p = new ScriptedPrompter(["yes", "no"]);
    const { g } = gate(tempRoot(), p);
    expect(await g.shellPermission("make test")).toBe(true);
    expect(await g.shellPermission("make test")).toBe(false);
  });
  test("--yes-always without a trusted allowShell does not run, and says why", async () => {
    const p = new ScriptedPrompter(["yes"]);
    const { g, events } = gate(tempRoot(), p, { yesAlways: true });
    expect(await g.shellPermission("rm -rf build")).toBe(false);
    expect(p.asked).toEqual([]);
    expect(events.find((e) => e.type === "notice")).toMatchObject({ text: expect.stringContaining("allowShell") });
  });
  test("--yes-always with a trusted allowShell runs", async () => {
    expect(await gate(tempRoot(), new ScriptedPrompter([]), { yesAlways: true, allowShellTrusted: true }).g.shellPermission("ls")).toBe(true);
  });
});

describe("non-interactive and remembered answers", () => {
  test("without a terminal and without --yes-always: answers no and says so", async () => {
    const said: string[] = [];
    const { g, events } = gate(tempRoot(), new NonInteractivePrompter((t) => said.push(t)));
    expect(await g.confirm("Add .coder/ to .gitignore?")).toBe(false);
    expect(await g.shellPermission("ls")).toBe(false);
    expect(said[0]).toContain("Add .coder/ to .gitignore? -> no (not interactive");
    expect(events[0]).toMatchObject({ type: "answer", answer: false, how: "not-interactive" });
  });

  test("Don't ask again persists per repository across Gate instances, is listable and forgettable", async () => {
    const root = tempRoot();
    const first = new ScriptedPrompter(["never", "never"]);
    expect((await gate(root, first).g.editPermission("src/b.ts", ctx())).ok).toBe(false);
    expect(await gate(root, first).g.shellPermission("npm publish")).toBe(false);
    const listed = rememberedAnswers(root);
    expect(listed.map((a) => a.key)).toEqual(["edit:src/b.ts", "shell:npm publish"]);
    expect(Gate.remembered(root)).toEqual(listed);

    const second = new ScriptedPrompter(["yes"]);
    const { g, events } = gate(root, second, { yesAlways: true, allowShellTrusted: true });
    const res = await g.editPermission("src/b.ts", ctx());
    expect(res.ok).toBe(false);
    expect(await g.shellPermission("npm publish")).toBe(false);
    expect(second.asked).toEqual([]);
    expect(events.filter((e) => e.type === "answer").every((e) => e.type === "answer" && e.how === "remembered")).toBe(true);
    // Other questions are still asked.
    expect(await gate(root, new ScriptedPrompter(["yes"])).g.shellPermission("npm test")).toBe(true);

    expect(forgetAnswers(root, "npm publish")).toBe(1);
    expect(rememberedAnswers(root).map((a) => a.key)).toEqual(["edit:src/b.ts"]);
    expect(g.forget()).toBe(1);
    expect(g.remembered()).toEqual([]);
    expect((await g.editPermission("src/b.ts", ctx())).ok).toBe(true);
  });

  test("remembered answers of one repository do not leak into another", async () => {
    const a = tempRoot();
    const b = tempRoot();
    await gate(a, new ScriptedPrompter(["never"])).g.confirm("Q?");
    const p = new ScriptedPrompter(["yes"]);
    expect(await gate(b, p).g.confirm("Q?")).toBe(true);
    expect(p.asked).toEqual(["Q?"]);
  });
});

describe("containmentProblem", () => {
  test("inside paths pass, including new nested files and in-repo symlinks", () => {
    const root = tempRoot();
    symlinkSync(join(root, "src/a.ts"), join(root, "alias.ts"));
    for (const rel of ["src/a.ts", "src/new/deep/file.ts", "alias.ts", "./src/b.ts", "src/x/../b.ts", ".github/workflows/ci.yml"]) expect(containmentProblem(root, rel), rel).toBeNull();
  });
  test("the root itself and empty paths are refused", () => {
    const root = tempRoot();
    for (const rel of ["", ".", "./", "src/.."]) expect(containmentProblem(root, rel), rel).not.toBeNull();
  });
    test("a dangling symlink is refused", () => {
    const root = tempRoot();
    symlinkSync("/nonexistent/target/file", join(root, "dangling.txt"));
    expect(containmentProblem(root, "dangling.txt")).not.toBeNull();
  });
});

describe("select and input (a plugin's kit.ui.select / kit.ui.input)", () => {
  /** A person who picks `pick` and types `typed`, recording what each question offered. */
  const person = (pick: string | null, typed: string | null) => {
    const seen: { question: string; choices?: readonly string[]; fallback?: string; detail?: string }[] = [];
    const p: Prompter = {
      interactive: true,
      choose: async () => "no",
      select: async (question, choices, detail, fallback) => (seen.push({ question, choices: [...choices], fallback, detail }), pick),
      input: async (question, detail, fallback) => (seen.push({ question, fallback, detail }), typed),
    };
    return { p, seen };
  };

  test("a person's pick and text are returned; a pick that is not a choice is null", async () => {
    const { p, seen } = person("thorough", "Fix the cart");
    const { g } = gate(tempRoot(), p);
    expect(await g.select("Depth?", ["quick", "thorough"], { default: "quick", detail: "how hard to look" })).toBe("thorough");
    expect(await g.input("Title?", { default: "Update" })).toBe("Fix the cart");
    expect(seen).toEqual([
      { question: "Depth?", choices: ["quick", "thorough"], fallback: "quick", detail: "how hard to look" },
      { question: "Title?", fallback: "Update", detail: undefined },
    ]);
    const { g: g2 } = gate(tempRoot(), person("rm -rf", null).p);
    expect(await g2.select("Depth?", ["quick", "thorough"])).toBeNull();
    expect(await g2.input("Title?")).toBeNull();
  });

  test("--yes-always answers the declared default (null without one) without asking or saying it", async () => {
    const { p, seen } = person("thorough", "typed");
    const { g, events } = gate(tempRoot(), p, { yesAlways: true });
    expect(await g.select("Depth?", ["quick", "thorough"], { default: "quick" })).toBe("quick");
    expect(await g.select("Depth?", ["quick", "thorough"])).toBeNull();
    expect(await g.input("Title?", { default: "Update" })).toBe("Update");
    expect(await g.input("Title?")).toBeNull();
    expect(seen).toEqual([]);
    expect(events).toEqual([]);
  });

  test("nobody to ask, or a front end that cannot ask: the default, and the question said", async () => {
    const said: string[] = [];
    const { g, events } = gate(tempRoot(), new NonInteractivePrompter((t) => said.push(t)));
    expect(await g.select("Depth?", ["quick", "thorough"], { default: "thorough" })).toBe("thorough");
    expect(await g.input("Title?")).toBeNull();
    expect(events).toEqual([
      { type: "notice", text: 'Depth? -> "thorough" (not interactive: nobody to ask; the default)' },
      { type: "notice", text: "Title? -> no answer (not interactive: nobody to ask; the default)" },
    ]);
    // An interactive front end with only yes/no questions (no select/input).
    const { g: g2, events: e2 } = gate(tempRoot(), { interactive: true, choose: async () => "yes" });
    expect(await g2.select("Depth?", ["quick", "thorough"], { default: "quick" })).toBe("quick");
    expect(e2).toEqual([{ type: "notice", text: 'Depth? -> "quick" (this front end cannot ask it; the default)' }]);
  });

  test("a default that is not one of the choices is the plugin's error, named", async () => {
    const { g } = gate(tempRoot(), person("quick", null).p);
    await expect(g.select("Depth?", ["quick"], { default: "deep" })).rejects.toThrow('the default "deep" is not one of the choices (quick)');
  });
});
