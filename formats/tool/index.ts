// The `tool` edit format: the same edits as `diff`, carried by native tool calls
// (edit_file, create_file) and applied through the same matcher. Each edit keeps
// its call id so the engine can answer every call with a tool message.
import type { ChatMessage, EditFormat, EditOutcome, Kit, Plugin, PromptContext, SearchReplaceEdit, ToolCall, ToolSpec, Workspace } from "../../core/plugin.ts";
import { editableClause, filesRule } from "../prompting.ts";
import { shellRule } from "../shell.ts";

export interface ToolEdit extends SearchReplaceEdit {
  kind: "edit" | "create";
  /** edit_file arguments wrapped in a fence: the texts without it, used unless the file holds the fenced text itself. */
  unwrapped?: { search: string; replace: string };
}

export const TOOLS: ToolSpec[] = [
  {
    name: "edit_file",
    description:
      "Replace a run of whole lines in a file. `search` must be copied exactly from the current file (every character and indentation) and match exactly one place; `replace` is what goes there. An empty `search` on a file that does not exist creates it with `replace` as its content.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path relative to the repository root" },
        search: { type: "string", description: "the exact existing lines to replace (whole lines, ending with a newline)" },
        replace: { type: "string", description: "the new lines" },
      },
      required: ["path", "search", "replace"],
      additionalProperties: false,
    },
  },
  {
    name: "create_file",
    description: "Create a new file with this content, or replace the whole content of a file that is in the chat.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path relative to the repository root" },
        content: { type: "string", description: "the complete file content" },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
  },
];

function system(ctx: PromptContext): string {
  const intro = ctx.editorOnly
    ? "You are an expert software developer applying a change that has already been planned. Make the change by calling the tools; write no other text."
    : `You are an expert software developer. Follow the user's request in the style the code already uses; ask when the request is ambiguous.

Make the change by calling the tools, with at most a sentence or two of explanation.`;
  return `${intro}

# How to write edits: tool calls

Edit files only by calling the functions you are given; never write code changes in your text.
- \`edit_file\` replaces lines: \`search\` must be a verbatim copy of lines in the file as it is now (whitespace, comments and blank lines included) and must match exactly one place; add surrounding lines to make it unique. Keep each call small: the changed lines and a line or two around them. Call it once per change; calls are applied in order.
- \`create_file\` writes a whole new file (or the whole content of a file in the chat).
- Arguments hold the file's text itself: no fences around it, no line numbers. JSON escaping is the only escaping: a file line \`"a\\n"\` is written \`"\\"a\\\\n\\""\` in the argument.
- Paths are relative to the repository root. ${filesRule(ctx, true)}
- You may make several calls in one reply.
${shellRule(ctx, "in your text")}`;
}

/** A fence line: three or more backticks (and a language), or a tag fence. */
const FENCE_LINE = /^(`{3,}|~{3,})[\w+.-]*\s*$|^<(source|code|pre|codeblock|sourcecode)>$/;
const MARKDOWN = /\.(md|markdown|mdx)$/i;
const CLOSING_LINE = /^(`{3,}|~{3,})\s*$|^<\/(source|code|pre|codeblock|sourcecode)>$/;

/** The lines inside `text` when its first and last lines are a fence's opening and closing lines, else null. */
function insideFence(text: string): string[] | null {
  const lines = text.replace(/\n$/, "").split("\n");
  if (lines.length < 2 || !FENCE_LINE.test(lines[0]!.trim()) || !CLOSING_LINE.test(lines.at(-1)!.trim())) return null;
  return lines.slice(1, -1);
}

const joined = (lines: readonly string[]) => (lines.length ? `${lines.join("\n")}\n` : "");

/** `text` without a fence wrapped around it. */
function stripOuterFence(text: string): string {
  const inner = insideFence(text);
  return inner ? joined(inner) : text;
}

/**
 * An edit_file call's texts as they are meant: as written when the file holds the fenced SEARCH
 * itself, or (in Markdown) when only the replacement is a fenced block; else without the fences.
 */
function asMeant(edit: ToolEdit, ws: Workspace): ToolEdit {
  if (!edit.unwrapped) return edit;
  const searchWrapped = edit.unwrapped.search !== edit.search;
  const content = ws.read(edit.path);
  if (searchWrapped && content !== null && content.includes(edit.search)) return edit;
  if (!searchWrapped && MARKDOWN.test(edit.path)) return edit;
  return { ...edit, ...edit.unwrapped };
}

/**
 * An argument's text with a fence the model wrapped it in taken off (the first line opens a
 * fence, the last closes it), or an error when the text holds more fence lines and which of
 * them wrap it cannot be told. The file's own text is never written with a stray fence.
 */
export function unfenced(text: string, path: string): { text: string } | { error: string } {
  const inner = insideFence(text);
  if (!inner) return { text };
  // A Markdown file may itself be one fenced block: only a wrapper that says "markdown" is surely a wrapper.
  if (MARKDOWN.test(path) && !/^`{3,}\s*(markdown|md)\s*$/i.test(text.trimStart().split("\n")[0]!.trim())) {
    return { error: "starts and ends with a fence line, and in a Markdown file that may be the file's own text or a wrapper; send the file's text without a fence around it (a fence that is part of the file stays)" };
  }
  if (inner.some((l) => FENCE_LINE.test(l.trim()) || CLOSING_LINE.test(l.trim()))) {
    return { error: "starts and ends with a fence line and holds more fence lines, so which of them belong to the file cannot be told; send the file's text without a fence around it" };
  }
  return { text: joined(inner) };
}

const call = (id: string, name: string, args: Record<string, string>): ToolCall => ({ id, name, arguments: JSON.stringify(args) });

function examples(ctx: PromptContext): ChatMessage[] {
  return [
    { role: "user", content: "Make greet() in greet.py take a name." },
    {
      role: "assistant",
      content: ctx.editorOnly ? "" : "greet() takes a `name`; the caller passes one.",
      toolCalls: [
        call("call_ex1", "edit_file", { path: "greet.py", search: 'def greet():\n    return "Hello, world"\n', replace: 'def greet(name):\n    return f"Hello, {name}"\n' }),
        call("call_ex2", "edit_file", { path: "greet.py", search: "    print(greet())\n", replace: '    print(greet("Ada"))\n' }),
      ],
    },
    { role: "tool", toolCallId: "call_ex1", content: "applied" },
    { role: "tool", toolCallId: "call_ex2", content: "applied" },
    { role: "user", content: "Add a README.md saying how to run it." },
    {
      role: "assistant",
      content: ctx.editorOnly ? "" : "A short README.",
      toolCalls: [call("call_ex3", "create_file", { path: "README.md", content: "# greet\n\nRun it with `python greet.py`.\n" })],
    },
    { role: "tool", toolCallId: "call_ex3", content: "applied" },
  ];
}

/** The edits of a reply's tool calls; a malformed call throws kit.FormatError naming it. */
function parseCalls(kit: Kit, calls: readonly ToolCall[], resolve: (raw: string) => string, chatFiles: readonly string[]): ToolEdit[] {
  const edits: ToolEdit[] = [];
  for (const c of calls) {
    const problem = (what: string) =>
      new kit.FormatError(`Your ${c.name || "unnamed"} tool call (id ${c.id || "?"}) ${what}. No edits from this reply were applied; call the tools again with valid arguments.`);
    if (c.name !== "edit_file" && c.name !== "create_file") throw problem(`names an unknown function; use edit_file or create_file`);
    let args: unknown;
    try {
      args = JSON.parse(c.arguments || "{}");
    } catch {
      throw problem("has arguments that are not valid JSON (was the reply cut off?)");
    }
    if (!args || typeof args !== "object" || Array.isArray(args)) throw problem("must have a JSON object as its arguments");
    const a = args as Record<string, unknown>;
    const str = (k: string) => {
      if (typeof a[k] !== "string") throw problem(`is missing the string argument "${k}"`);
      return a[k] as string;
    };
    const raw = str("path");
    if (raw.trim() === "") throw problem(`has an empty "path"`);
    const path = resolve(raw) || raw;
    const bare = (k: string) => {
      const r = unfenced(str(k), raw);
      if ("error" in r) throw problem(`has a "${k}" that ${r.error}`);
      return r.text;
    };
    if (c.name === "edit_file") {
      const search = str("search");
      const replace = str("replace");
      const edit: ToolEdit = { kind: "edit", path, search, replace, toolCallId: c.id, source: "" };
      if (search.trim() === "" && !chatFiles.includes(path)) edit.unseen = true;
      const unwrapped = { search: stripOuterFence(search), replace: stripOuterFence(replace) };
      if (unwrapped.search !== search || unwrapped.replace !== replace) edit.unwrapped = unwrapped;
      edits.push({ ...edit, source: `edit_file ${path}\n<<<<<<< SEARCH\n${search}${search.endsWith("\n") || !search ? "" : "\n"}=======\n${replace}${replace.endsWith("\n") || !replace ? "" : "\n"}>>>>>>> REPLACE` });
    } else {
      const content = bare("content");
      edits.push({ kind: "create", path, search: "", replace: content, toolCallId: c.id, source: `create_file ${path} (${content.split("\n").length} lines)` });
    }
  }
  return edits;
}

function applyCreate(kit: Kit, edit: ToolEdit, ws: Workspace): EditOutcome<ToolEdit> {
  const { path } = edit;
  const refused = ws.check?.(path);
  if (refused) return { status: "failed", edit, path, reason: "refused", detail: refused };
  const before = ws.read(path);
  if (before !== null && before !== "" && !ws.chatFiles.includes(path)) {
    return { status: "failed", edit, path, reason: "invalid", detail: `${path} already exists and is not in the chat. Use edit_file to change it, or ask the user to add it to the chat first.` };
  }
  const text = edit.replace === "" || edit.replace.endsWith("\n") ? edit.replace : `${edit.replace}\n`;
  return kit.formats.stage(edit, ws, path, text, before === null ? "created" : "replaced");
}

const plugin: Plugin = (kit: Kit) => {
  const tool: EditFormat<ToolEdit> = {
    name: "tool",
    summary: "edits as native tool calls (edit_file, create_file); needs a model with function calling",
    tools: TOOLS,
    prompts: (ctx) => ({
      system: system(ctx),
      examples: examples(ctx),
      reminder: `Reminder: make every change with edit_file / create_file calls; \`search\` copied exactly and matching one place; no fences in the arguments. ${editableClause(ctx)}${ctx.editorOnly ? " No text besides the calls." : ""}`,
    }),
    parse: (reply, ctx) => ({ edits: parseCalls(kit, reply.toolCalls, ctx.resolvePath, ctx.chatFiles), shell: kit.formats.shellBlocks(reply.text).map((command) => ({ command })) }),
    apply(edits, ws) {
      // Creates and edits keep their order: a later edit sees an earlier create.
      const out: EditOutcome<ToolEdit>[] = [];
      for (const e of edits) out.push(e.kind === "create" ? applyCreate(kit, e, ws) : kit.formats.applySearchReplace([asMeant(e, ws)], ws)[0]!);
      return out;
    },
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
  return { apiVersion: 1, name: "tool", formats: [tool] };
};

export default plugin;
