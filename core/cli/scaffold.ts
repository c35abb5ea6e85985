// `coder plugin new NAME --kind KIND`: a typed, working template plugin beside
// `coder-plugin.d.ts`, the plugin API types (core/plugin.ts, embedded at build
// time) so the template type-checks with no coder sources or node_modules.
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { UsageError } from "../errors.ts";
import { replaceNamedFile } from "../edit/state.ts";
import { KERNEL_TABLE, type Options } from "../config/options.ts";
import { pluginApiText } from "./plugin-api.ts";

/** core/plugin.ts as a declaration file. */
export function pluginDeclarations(version: string): string {
  // AbortSignal comes from the DOM library (part of TypeScript), so the file checks without @types/node or bun.
  return `/// <reference lib="dom" />\n// coder-plugin.d.ts: the coder plugin API (version 1), written by coder ${version}.\n// Import its types with \`import type\`; nothing is imported from coder at run time.\n\n${pluginApiText()}`;
}

/** The template kinds: the values of the `--kind` option in the option table. */
export type TemplateKind = NonNullable<Options["kind"]>;
export const KINDS = KERNEL_TABLE.byKey.get("kind")!.values as readonly TemplateKind[];

export function pluginTemplate(name: string, kind: TemplateKind): string {
  const types = { format: "Edit, EditFormat, Kit, Plugin", context: "Plugin", model: "ModelInfo, Plugin", command: "Plugin", tool: "Plugin" }[kind];
  const head = `// ${name}: a coder plugin (${kind}). Load it with \`coder --plugin ./${name}.ts\`, or list it under
// "plugins" in .coder.json. Types come from ./coder-plugin.d.ts (\`coder plugin new\` wrote it).
import type { ${types} } from "./coder-plugin";
`;
  switch (kind) {
    case "format":
      return `${head}
// An edit format: each line "WRITE path: text" in the reply replaces that file's content with "text".
interface LineEdit extends Edit {
  content: string;
}

function format(kit: Kit): EditFormat<LineEdit> {
  return {
    name: ${JSON.stringify(name)},
    summary: "one WRITE line per file",
    prompts: () => ({
      system: "To change a file, answer with one line per file: the word WRITE, the path, a colon, the new content.",
      examples: [],
      reminder: "Use WRITE lines for every file you change.",
    }),
    parse(reply, ctx) {
      const edits: LineEdit[] = [];
      for (const line of reply.text.split("\\n")) {
        const m = /^WRITE (\\S+): (.*)$/.exec(line);
        if (m) edits.push({ path: ctx.resolvePath(m[1]!), source: line, content: \`\${m[2]}\\n\` });
        else if (line.startsWith("WRITE")) throw new kit.FormatError("Write each edit as: WRITE path: content");
      }
      return { edits, shell: [] };
    },
    apply: (edits, ws) =>
      edits.map((edit) => {
        ws.write(edit.path, edit.content);
        return { status: "applied" as const, edit, path: edit.path };
      }),
    report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
  };
}

export default ((kit) => ({
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  formats: [format(kit)],
})) satisfies Plugin;
`;
    case "context":
      return `${head}
// A context provider: tells the model the current git branch on every request.
export default ((kit) => ({
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  context: [
    {
      name: ${JSON.stringify(name)},
      stability: "session",
      async provide() {
        const r = await kit.run(["git", "branch", "--show-current"]);
        const branch = r.stdout.trim();
        return branch ? { text: \`The current git branch is \${branch}.\`, label: "git branch" } : null;
      },
    },
  ],
})) satisfies Plugin;
`;
    case "model":
      return `${head}
// A model adapter: the model "${name}/echo" answers every request with the last user message.
const info: ModelInfo = {
  name: "${name}/echo",
  contextWindow: 32_000,
  maxOutput: 4_096,
  prices: { input: 0, output: 0 },
  editFormat: "whole",
  capabilities: { tools: false, systemPrompt: true, temperature: false, reasoningEffort: false, prefill: false, cache: "none" },
};

export default {
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  models: [
    {
      name: ${JSON.stringify(name)},
      matches: (model) => model === info.name,
      info: (model) => (model === info.name ? info : undefined),
      list: () => [info],
      async *stream(request) {
        const last = [...request.messages].reverse().find((m) => m.role === "user");
        const text = last?.content ?? "";
        yield { type: "text", text };
        yield { type: "usage", promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
        yield { type: "finish", reason: "stop" };
      },
    },
  ],
} satisfies Plugin;
`;
    case "command":
      return `${head}
// A slash command: /${name} [NAME] greets, and shows how many files are in the chat.
export default ((kit) => ({
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  commands: [
    {
      name: ${JSON.stringify(name)},
      summary: "say hello",
      usage: "[NAME]",
      run(arg, session) {
        session.print(\`hello \${arg || "there"} from coder \${kit.version}: \${session.chatFiles().length} file(s) in the chat\`);
      },
    },
  ],
})) satisfies Plugin;
`;
    case "tool":
      return `${head}
// A tool provider: the model may call ${name.replace(/-/g, "_")}_grep to search the repository before it answers.
// Each call is asked first (confirm: "ask"); "auto" runs it without a question.
export default ((kit) => ({
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  tools: [
    {
      name: ${JSON.stringify(name)},
      tools: () => [
        {
          spec: {
            name: ${JSON.stringify(`${name.replace(/-/g, "_")}_grep`)},
            description: "Search the repository's tracked files for a fixed string; returns matching lines as path:line:text.",
            parameters: { type: "object", properties: { text: { type: "string", description: "the text to look for" } }, required: ["text"] },
          },
          origin: "plugin ${name}",
          confirm: "ask",
          async call(args) {
            const text = typeof args.text === "string" ? args.text : "";
            if (!text) return { text: "Give the text to look for.", isError: true };
            const r = await kit.run(["git", "grep", "-n", "-F", "-e", text]);
            return { text: r.stdout || "No match." };
          },
        },
      ],
    },
  ],
})) satisfies Plugin;
`;
  }
}

/** Write NAME.ts and coder-plugin.d.ts in the current directory (or beside NAME's path). */
export function writePluginTemplate(args: string[], kind: string | undefined, cwd: string, version: string): number {
  const [target, ...extra] = args;
  if (!target) throw new UsageError("usage: coder plugin new NAME --kind format|context|model|command|tool");
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}" (usage: coder plugin new NAME --kind KIND)`);
  if (!kind) throw new UsageError("coder plugin new needs --kind: format, context, model, command or tool");
  if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind expects one of ${KINDS.join(", ")}, got "${kind}"`);
  const file = resolve(cwd, target.endsWith(".ts") ? target : `${target}.ts`);
  const name = basename(file, ".ts");
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) throw new UsageError(`plugin name "${name}" must start with a letter and hold only letters, digits, - and _`);
  if (existsSync(file)) throw new UsageError(`${target} already exists; choose another name`);
  const folder = dirname(file);
  // `coder plugin new tools/branch`: the folder is made when it is missing; a file in its way is an error.
  if (existsSync(folder) && !statSync(folder).isDirectory()) throw new UsageError(`cannot write ${target}: ${folder} is a file, not a folder`);
  mkdirSync(folder, { recursive: true });
  const declarations = resolve(folder, "coder-plugin.d.ts");
  replaceNamedFile(declarations, pluginDeclarations(version));
  replaceNamedFile(file, pluginTemplate(name, kind as TemplateKind));
  process.stdout.write(`wrote ${file} and ${declarations}\ntry it: coder --plugin ${file} plugins\n`);
  return 0;
}
