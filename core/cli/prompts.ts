// `coder prompts [FILE ...] [--edit-format F] [--model M] [-m MESSAGE]`: exactly the messages
// a request would carry (system, examples, context blocks, chat files, the request and its
// reminder) and the format's tool definitions, each with its token count; nothing is sent.
import type { App } from "../kernel.ts";
import { createCoder } from "../chat/create.ts";
import { countMessageTokens } from "../chat/chunks.ts";
import { NonInteractivePrompter } from "../gate/prompter.ts";
import type { Output } from "../chat/events.ts";

/** What stands for the user's request when no -m MESSAGE is given. */
export const PLACEHOLDER_REQUEST = "(your request)";

export async function printPrompts(app: App, files: readonly string[]): Promise<number> {
  const out: Output = { emit() {}, print() {}, warn: (text) => process.stderr.write(`${text}\n`), flush() {} };
  // Nothing is asked or written: not interactive, no --yes-always (no .gitignore update), no transcript.
  const settings = { ...app.settings, positionals: [...files], options: { ...app.settings.options, yesAlways: false } };
  const inspected: App = { ...app, interactive: false, settings };
  const coder = await createCoder(inspected, {
    inspectOnly: true,
    out,
    totals: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 },
    prompter: () => new NonInteractivePrompter((text) => out.warn(text)),
  });
  const message = app.settings.options.message ?? PLACEHOLDER_REQUEST;
  const { chunks, tools } = await coder.previewRequest(message);
  const count = (text: string) => app.kit.tokens.count(text);
  const lines: string[] = [`model: ${coder.model}   edit format: ${coder.format.item.name}   chat files: ${coder.chat.editable.join(", ") || "none"}`, ""];
  const rows: [string, number][] = [];
  for (const chunk of chunks) {
    for (const m of chunk.messages) {
      const tokens = countMessageTokens([m], count, coder.modelInfo.imageRules);
      const calls = m.toolCalls?.length ? ` + ${m.toolCalls.length} tool call${m.toolCalls.length === 1 ? "" : "s"}` : "";
      lines.push(`──── ${m.role} · ${chunk.label} · ${tokens} tokens${calls}`);
      lines.push(m.content);
      for (const c of m.toolCalls ?? []) lines.push(`[tool call ${c.name}] ${c.arguments}`);
      lines.push("");
    }
    rows.push([chunk.label, countMessageTokens(chunk.messages, count, coder.modelInfo.imageRules)]);
  }
  if (tools.length) {
    const json = JSON.stringify(tools);
    lines.push(`──── tools · ${tools.map((t) => t.name).join(", ")} · ${count(json)} tokens`, JSON.stringify(tools, null, 2), "");
    rows.push([`tools (${tools.length})`, count(json)]);
  }
  const width = Math.max(...rows.map(([, n]) => String(n).length), 5);
  const total = rows.reduce((s, [, n]) => s + n, 0);
  lines.push("Tokens:", ...rows.map(([label, n]) => `  ${String(n).padStart(width)}  ${label}`), `  ${String(total).padStart(width)}  total`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
