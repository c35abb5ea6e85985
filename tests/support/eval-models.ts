// Scripted models for `coder eval` tests, served by the fake server's `respond`: a "perfect"
// model that replays each commit's real change in the requested edit format (SEARCH/REPLACE,
// unified diff or tool calls), and variations of it that make known mistakes.
// Run standalone to serve the perfect model of a repository:
//   bun tests/support/eval-models.ts REPO   (prints the base URL, serves until killed)
import { isTaskFile, logArgs, parseLog } from "../../plugins/eval/history.ts";
import { type FakeStep, startFakeServer } from "./fake-server.ts";

export interface Change {
  sha: string;
  message: string;
  files: { path: string; before: string; after: string }[];
}

function gitText(repo: string, args: string[]): string | null {
  const r = Bun.spawnSync(["git", ...args], { cwd: repo });
  return r.exitCode === 0 ? r.stdout.toString() : null;
}

/** Every non-merge commit of `repo` with the before and after text of its task files. */
export function changesOf(repo: string): Change[] {
  const log = gitText(repo, logArgs()) ?? "";
  return parseLog(log).map((c) => ({
    sha: c.sha,
    message: c.message,
    files: c.files.filter(isTaskFile).map((path) => ({ path, before: gitText(repo, ["show", `${c.parent}:${path}`]) ?? "", after: gitText(repo, ["show", `${c.sha}:${path}`]) ?? "" })),
  }));
}

type Format = "diff" | "udiff" | "tool" | "patch" | "whole";

/** The edit format a request asks for, from its tools and system prompt. */
export function formatOf(body: any): Format {
  if (Array.isArray(body?.tools) && body.tools.some((t: any) => t?.function?.name === "edit_file")) return "tool";
  const system = (body?.messages ?? []).filter((m: any) => m.role === "system").map((m: any) => text(m.content)).join("\n");
  // The format's rules, in the system prompt (chat files, which may quote any of them, are not there).
  if (system.includes("How to write edits: the patch format")) return "patch";
  if (system.includes("How to write edits: file listings")) return "whole";
  return system.includes("How to write edits: unified diffs") ? "udiff" : "diff";
}

const text = (content: unknown): string => (typeof content === "string" ? content : Array.isArray(content) ? content.map((p: any) => p?.text ?? "").join("") : "");

/** The change whose message the conversation's user messages carry (the longest, so a message that prefixes another is not taken for it). */
export function changeFor(changes: readonly Change[], body: any): Change | undefined {
  const asked = (body?.messages ?? []).filter((m: any) => m.role === "user").map((m: any) => text(m.content)).join("\n");
  return changes.filter((c) => c.message && asked.includes(c.message)).sort((a, b) => b.message.length - a.message.length)[0];
}

/** The one region of a file that changed: before/after lines with `context` lines around it, widened until its before-text is unique. */
export function region(before: string, after: string): { search: string; replace: string; start: number } {
  const a = before.split(/(?<=\n)/);
  const b = after.split(/(?<=\n)/);
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  for (let context = 1; ; context++) {
    const from = Math.max(0, p - context);
    const search = a.slice(from, Math.min(a.length, a.length - s + context)).join("");
    const replace = b.slice(from, Math.min(b.length, b.length - s + context)).join("");
    const unique = search === "" || before.indexOf(search) === before.lastIndexOf(search);
    if (unique || (from === 0 && a.length - s + context >= a.length)) return { search, replace, start: from };
  }
}

const fence = (body: string) => (body.endsWith("\n") || body === "" ? body : `${body}\n`);

/** A reply making `files`' changes in `format`. */
export function replyFor(files: Change["files"], format: Format): FakeStep {
  if (format === "tool") {
    return { toolCalls: files.map((f) => ({ name: "edit_file", arguments: { path: f.path, ...(({ search, replace }) => ({ search, replace }))(region(f.before, f.after)) } })) };
  }
  if (format === "whole") return { text: files.map((f) => `${f.path}\n\`\`\`\n${fence(f.after)}\`\`\`\n`).join("\n") };
  if (format === "patch") {
    const sections = files.map((f) => {
      if (!f.before) return `*** Add File: ${f.path}\n${f.after.replace(/\n$/, "").split("\n").map((l) => `+${l}`).join("\n")}\n`;
      const { search, replace } = region(f.before, f.after);
      const lines = (t: string, mark: string) => (t ? t.replace(/\n$/, "").split("\n").map((l) => `${mark}${l}`) : []);
      const atEnd = f.before.endsWith(search) ? "*** End of File\n" : "";
      return `*** Update File: ${f.path}\n@@\n${[...lines(search, "-"), ...lines(replace, "+")].join("\n")}\n${atEnd}`;
    });
    return { text: `*** Begin Patch\n${sections.join("")}*** End Patch\n` };
  }
  if (format === "udiff") {
    const hunks = files.map((f) => {
      const { search, replace } = region(f.before, f.after);
      const minus = search ? search.replace(/\n$/, "").split("\n").map((l) => `-${l}`) : [];
      const plus = replace ? replace.replace(/\n$/, "").split("\n").map((l) => `+${l}`) : [];
      return `--- ${f.before ? f.path : "/dev/null"}\n+++ ${f.path}\n@@ ... @@\n${[...minus, ...plus].join("\n")}\n`;
    });
    return { text: `Here is the change.\n\n\`\`\`diff\n${hunks.join("")}\`\`\`\n` };
  }
  const blocks = files.map((f) => {
    const { search, replace } = region(f.before, f.after);
    return `${f.path}\n\`\`\`\n<<<<<<< SEARCH\n${fence(search)}=======\n${fence(replace)}>>>>>>> REPLACE\n\`\`\`\n`;
  });
  return { text: `Here is the change.\n\n${blocks.join("\n")}` };
}

/** The perfect model: every commit's real change, in the format asked for. */
export function perfectModel(changes: readonly Change[], usage: FakeStep["usage"] = { promptTokens: 1000, completionTokens: 100 }): (body: any) => FakeStep | undefined {
  return (body) => {
    const change = changeFor(changes, body);
    // coder added files the request mentions and asks to go on: the change is already made.
    const last = body?.messages?.[body.messages.length - 1];
    if (change && last?.role === "user" && /^I added .* to the chat/.test(text(last.content))) return { text: "The change is complete.", usage };
    return change ? { ...replyFor(change.files, formatOf(body)), usage } : undefined;
  };
}

if (import.meta.main) {
  const repo = Bun.argv[2] ?? process.cwd();
  const server = await startFakeServer([], { respond: perfectModel(changesOf(repo)) });
  process.stdout.write(`${server.url}\n`);
  const shutdown = () => void server.stop().then(() => process.exit(0));
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}
