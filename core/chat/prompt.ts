// The prompt of one request: the edit format's prompts, the context providers' blocks,
// the chat files and the history, assembled into chunks (core/chat/chunks.ts); the
// TurnContext the providers see; the prompt's size against the context window.
import { arch, platform } from "node:os";
import { basename, isAbsolute } from "node:path";
import type { ChatFiles } from "./chat-files.ts";
import { assembleChunks, chatFilesBlock, type Chunk, type ContextText, contextOverflow, readOnlyBlock, systemText, tokenRows } from "./chunks.ts";
import { Interrupted, RuntimeFailure } from "../errors.ts";
import { chooseFence } from "../edit/fence.ts";
import type { ChatHistory } from "./history.ts";
import { fileMentions, identMentions } from "./mentions.ts";
import type { Options } from "../config/options.ts";
import { mediaTokens } from "./parts.ts";
import type { ChatMessage, ContextBudget, ContextProvider, EditFormat, Fence, ModelInfo, TurnContext } from "../plugin.ts";
import { shareContextWindow } from "./budget.ts";
import { guard, messageOf, type Registered } from "../plugins/registry.ts";
import type { Output } from "./events.ts";
import { untilAborted } from "./abortable.ts";
import type { CoderServices, CoderSetup } from "./types.ts";

/** What a prompt is made of: one coder's services, setup, history, format and model. */
export interface PromptSource {
  readonly services: CoderServices;
  readonly setup: CoderSetup;
  readonly history: ChatHistory;
  readonly format: Registered<EditFormat>;
  readonly modelInfo: ModelInfo;
  readonly options: Options;
  readonly chat: ChatFiles;
}

/** The machine the commands will run on, as the system prompt tells the model. */
export function platformLine(env: Readonly<Record<string, string | undefined>>): string {
  return `${platform()} ${arch()}, shell ${basename(env.SHELL ?? (platform() === "win32" ? "cmd" : "sh"))}`;
}

/**
 * The chunks of the next request. `turn` gives the TurnContext for the context providers;
 * an editor coder asks none of them (it sees the read-only files, though).
 */
export async function buildChunks(src: PromptSource, turn: () => Promise<TurnContext>, providers: ContextProviders): Promise<{ chunks: Chunk[]; fence: Fence; shown: Map<string, string | null> }> {
  const { app, files } = src.services;
  const chatFiles = [...src.chat.editable];
  const fileTexts = chatFiles.map((path) => ({ path, content: files.read(path) }));
  // A read-only file may live outside the repository (`--read ~/CONVENTIONS.md`): kept by its absolute path.
  const readOnly = src.chat.readOnly.map((path) => ({ path, content: isAbsolute(path) ? files.readOutside(path) : files.read(path) }));
  const fence = chooseFence([...fileTexts, ...readOnly].map((f) => f.content ?? ""));

  const platform = platformLine(app.env);
  const prompts = formatPrompts(src, fence, chatFiles, platform);
  // Read-only files (conventions, AGENTS.md) reach the editor step too: its edits must follow them.
  const staticBlocks: ContextText[] = readOnly.filter((f) => f.content !== null).map((f) => readOnlyBlock(f.path, f.content as string, fence));
  const sessionBlocks: ContextText[] = [];
  const turnBlocks: ContextText[] = [];
  if (!src.setup.editor) {
    const context = await turn();
    const entries = [...app.registry.context.values()];
    // What the rest of the prompt takes, at about four characters a token: the providers share the remainder.
    const rest = [prompts.system, ...prompts.examples.map((m) => m.content), ...fileTexts.map((f) => f.content ?? ""), ...readOnly.map((f) => f.content ?? ""), ...src.history.done.map((m) => m.content), ...src.history.cur.map((m) => m.content)];
    const used = Math.ceil(rest.reduce((n, text) => n + text.length, 0) / 4);
    const budgets = shareContextWindow(
      entries.map((e) => e.item),
      src.modelInfo,
      src.options as Readonly<Record<string, unknown>>,
      used,
    );
    for (const [i, entry] of entries.entries()) {
      const block = await providers.provide(entry, context, budgets[i]!);
      if (!block) continue;
      const target = entry.item.stability === "static" ? staticBlocks : entry.item.stability === "session" ? sessionBlocks : turnBlocks;
      target.push(block);
    }
  }
  const language = src.options.chatLanguage?.trim();
  const mode = src.format.item.mode ?? "edit";
  const addendum = mode === "edit" || mode === "editor" ? ADDENDA[src.modelInfo.prompting?.addendum ?? "none"] : "";
  const rules = [prompts.system, addendum, language ? `Always reply to the user in ${language}.` : ""].filter(Boolean).join("\n\n");
  const chunks = assembleChunks({
    system: systemText(rules, platform, fence, (src.format.item.tools?.length ?? 0) > 0),
    examples: prompts.examples,
    staticBlocks,
    sessionBlocks,
    history: src.history.done,
    chatFiles: chatFilesBlock(fileTexts, fence, mode === "edit" ? "edit" : "read"),
    turnBlocks,
    current: src.history.cur,
    reminder: prompts.reminder,
    reminderRole: src.modelInfo.prompting?.reminder ?? "user",
    systemRole: src.modelInfo.capabilities.systemPrompt,
    breakpoints: src.modelInfo.capabilities.cache === "breakpoints",
  });
  // What the model is shown of each repository file: its edits are written from these texts.
  const shown = new Map<string, string | null>([...fileTexts, ...readOnly.filter((f) => !isAbsolute(f.path))].map((f) => [f.path, f.content]));
  return { chunks, fence, shown };
}

/** The per-model addenda (ModelInfo.prompting.addendum), added to the system message of formats that change code. */
export const ADDENDA: Record<"lazy" | "overeager" | "none", string> = {
  lazy: "Write every change in full. Never leave a comment such as \"rest of the code here\" or \"... unchanged\" in place of code, and never stop before the change is complete.",
  overeager: "Change only what the request asks for. Do not reformat, rename, refactor, fix or comment on other code, even where you see room for improvement: mention it in a sentence instead.",
  none: "",
};

function formatPrompts(src: PromptSource, fence: Fence, chatFiles: readonly string[], platform: string) {
  const { format, setup } = src;
  return guard(format, "prompts", () => format.item.prompts({ fence, editorOnly: setup.editor, platform, chatFiles, shellSuggestions: !setup.editor && src.options.suggestShellCommands }));
}

/** Asks the context providers for their blocks; a failing provider is warned about once per coder, then skipped quietly. */
export class ContextProviders {
  private readonly warned = new Set<string>();

  constructor(private readonly out: Output) {}

  async provide(entry: Registered<ContextProvider>, turn: TurnContext, budget: ContextBudget): Promise<ContextText | null> {
    // No room, or the user turned the provider off (its budget option is 0): it is not asked.
    if (budget.tokens <= 0) return null;
    try {
      const block = await untilAborted(Promise.resolve(guard(entry, "provide", () => entry.item.provide(turn, budget))), turn.signal);
      if (!block || !block.text) return null;
      const text: ContextText = { label: block.label ?? entry.item.name, text: block.text };
      if (block.parts?.length) text.parts = block.parts;
      return text;
    } catch (error) {
      if (error instanceof Interrupted || turn.signal.aborted) throw new Interrupted();
      if (!this.warned.has(entry.item.name)) {
        this.warned.add(entry.item.name);
        this.out.warn(messageOf(error));
      }
      return null;
    }
  }
}

/** What the context providers see of this request: files, mentions in the turn's prose, model, options. */
export async function turnContext(src: PromptSource, message: string, signal: AbortSignal, repoFiles: () => Promise<string[]>): Promise<TurnContext> {
  const { chat } = src;
  const prose = [...src.history.cur.filter((m) => m.role === "user").map((m) => m.content), message].join("\n");
  const all = await repoFiles();
  return {
    root: src.services.app.root,
    chatFiles: [...chat.editable],
    readOnlyFiles: [...chat.readOnly],
    message,
    mentionedFiles: fileMentions(prose, all, chat.editable, chat.readOnly),
    mentionedIdents: identMentions(prose),
    model: src.modelInfo,
    options: src.options as Readonly<Record<string, unknown>>,
    interactive: src.services.app.interactive,
    signal,
  };
}

/**
 * Prompt tokens: a cheap estimate when the prompt clearly fits, an exact count (and check) otherwise.
 * Throws RuntimeFailure when the prompt leaves too little room for the reply.
 */
export function checkContextWindow(chunks: Chunk[], messages: ChatMessage[], modelInfo: ModelInfo, count: (text: string) => number): { promptTokens: number; estimated: boolean } {
  const window = modelInfo.contextWindow;
  const reserve = Math.min(modelInfo.maxOutput, Math.floor(window / 4));
  const chars = messages.reduce((s, m) => s + m.content.length + (m.toolCalls?.reduce((t, c) => t + c.arguments.length, 0) ?? 0), 0);
  const media = messages.reduce((s, m) => s + mediaTokens(m.parts, modelInfo.imageRules), 0);
  // At worst about one token per character: below that the exact count cannot overflow.
  if (chars + media + reserve < window) return { promptTokens: Math.ceil(chars / 4) + media + 4 * messages.length, estimated: true };
  const rows = tokenRows(chunks, count, modelInfo.imageRules);
  const overflow = contextOverflow(rows, window, reserve);
  if (overflow) throw new RuntimeFailure(overflow);
  return { promptTokens: rows.reduce((s, r) => s + r.tokens, 0), estimated: false };
}
