// The fixed prompt of every built-in format in tokens (system message, examples, reminder, tools),
// computed from the sources of a coder tree: `bun scripts/prompt-tokens.ts [ROOT]`. Measures a tree
// that predates `coder prompts` too (issue 22 compared main before and after with it). Scenario: one
// chat file (a.py), shell suggestions on, the ``` fence, o200k_base (gpt-4.1's encoding).
import { getEncoding } from "js-tiktoken";
const root = process.argv[2] ?? new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const enc = getEncoding("o200k_base");
const count = (t: string) => enc.encode(t).length;
const { assembleChunks, countMessageTokens, systemText } = await import(`${root}/core/chat/chunks.ts`);
const { testKit } = await import(`${root}/tests/support/format-kit.ts`);
const plugins: Record<string, string> = { diff: "editblock", "diff-fenced": "editblock", whole: "wholefile", udiff: "udiff", patch: "patch", tool: "tool", ask: "ask", architect: "architect", context: "context" };
const rows: string[] = [];
for (const [name, dir] of Object.entries(plugins)) {
  const mod = (await import(`${root}/formats/${dir}/index.ts`)).default;
  const obj = typeof mod === "function" ? await mod(testKit()) : mod;
  const fmt = obj.formats.find((f: any) => f.name === name);
  const p = fmt.prompts({ fence: ["```", "```"], editorOnly: false, platform: "linux x64, shell bash", chatFiles: ["a.py"], shellSuggestions: true });
  const chunks = assembleChunks({ system: systemText(p.system, "linux x64, shell bash", ["```", "```"], !!fmt.tools), examples: p.examples, staticBlocks: [], sessionBlocks: [], history: [], chatFiles: null, turnBlocks: [], current: [{ role: "user", content: "(your request)" }], reminder: p.reminder, systemRole: true, breakpoints: false });
  const by = (n: string) => countMessageTokens(chunks.find((c: any) => c.name === n)?.messages ?? [], count);
  const tools = fmt.tools ? count(JSON.stringify(fmt.tools)) : 0;
  const reminder = count(p.reminder);
  rows.push(`${name.padEnd(12)} system ${String(by("system")).padStart(5)}  examples ${String(by("examples")).padStart(5)}  reminder ${String(reminder).padStart(4)}  tools ${String(tools).padStart(4)}  total ${String(by("system") + by("examples") + reminder + tools).padStart(5)}`);
}
console.log(rows.join("\n"));
