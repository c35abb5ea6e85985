// The gathering step: tool providers' tools (MCP servers', plugins') are offered with the
// request; when the model calls them, each call goes through the gate, its result (capped)
// goes back as a `tool` message, and the model is asked again, until it answers in the
// edit format or the `--max-tool-calls` budget is spent (then it is told to answer now).
// The turn loop (core/chat/coder.ts) asks `wants(reply)` after each reply and `answer(reply)` to run the calls.
import { Interrupted } from "../errors.ts";
import type { Gate } from "../gate/gate.ts";
import type { ChatMessage, ProvidedTool, ToolCall, ToolProvider, ToolSpec, TurnContext } from "../plugin.ts";
import { guard, messageOf, type Registered } from "../plugins/registry.ts";
import type { Output } from "./events.ts";
import type { Hooks } from "../plugins/hooks.ts";
import { untilAborted } from "./abortable.ts";
import { callTool, toolName, toolSpec } from "./tool-schema.ts";

/** The most characters of one tool result sent to the model (about 10k tokens); the rest is cut with a note. */
export const TOOL_OUTPUT_CAP = 40_000;

/** A tool name as the Chat Completions protocol takes it. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface Offered {
  tool: ProvidedTool;
  /** What the model is sent (a typed tool's JSON Schema made from its declaration). */
  spec: ToolSpec;
  /** The provider's `runUnasked`. */
  runUnasked?: string;
  provider: string;
  /** The plugin that offered it, for the guard. */
  owner: { plugin: string; origin: string };
}

export interface GatheringDeps {
  out: Output;
  gate: Gate;
  /** Warnings about a provider (a failed listing, a bad tool name), said once each. */
  warn(text: string): void;
  /** Plugins' onToolCall hooks (none: every call goes to the gate). */
  hooks?: Pick<Hooks, "has" | "toolCall">;
}

/** One user request's gathering: the tools on offer and the calls made so far (the budget spans its reflections). */
export class ToolGathering {
  private readonly offered = new Map<string, Offered>();
  private calls = 0;
  /** The model was told to answer now: further tool calls are not run. */
  private closed = false;

  constructor(
    private readonly deps: GatheringDeps,
    /** `--max-tool-calls`. */
    readonly maxCalls: number,
  ) {}

  /**
   * Ask every provider for its tools, for this request. Tools whose name is invalid, taken by the
   * edit format or by another provider are left out with a warning. Returns the specs to send.
   */
  async offer(providers: readonly Registered<ToolProvider>[], turn: TurnContext, formatTools: readonly ToolSpec[]): Promise<ToolSpec[]> {
    this.offered.clear();
    if (this.maxCalls <= 0) return [];
    const taken = new Set(formatTools.map((t) => t.name));
    const lists = await Promise.all(
      providers.map(async (entry) => {
        try {
          // A server still starting is not waited for once the turn is cancelled.
          return { entry, tools: await untilAborted(Promise.resolve(guard(entry, "tools", () => entry.item.tools(turn))), turn.signal) };
        } catch (error) {
          if (error instanceof Interrupted || turn.signal.aborted) throw new Interrupted();
          this.deps.warn(messageOf(error));
          return { entry, tools: [] as ProvidedTool[] };
        }
      }),
    );
    for (const { entry, tools } of lists) {
      for (const tool of tools) {
        const name = toolName(tool);
        if (!TOOL_NAME.test(name)) this.deps.warn(`tool provider ${entry.item.name}: tool name "${name}" is not 1-64 letters, digits, _ and -; not offered`);
        else if (taken.has(name) || this.offered.has(name)) this.deps.warn(`tool provider ${entry.item.name}: tool "${name}" is offered twice; the second is left out`);
        else {
          let spec: ToolSpec;
          try {
            spec = await toolSpec(tool);
          } catch (error) {
            this.deps.warn(`tool provider ${entry.item.name}: tool "${name}" is not offered: ${messageOf(error)}`);
            continue;
          }
          this.offered.set(name, { tool, spec, provider: entry.item.name, owner: { plugin: entry.plugin, origin: entry.origin }, ...(entry.item.runUnasked ? { runUnasked: entry.item.runUnasked } : {}) });
        }
      }
    }
    return [...this.offered.values()].map((o) => o.spec);
  }

  /** Is this reply a gathering step (it calls offered tools, and the budget is not closed)? */
  wants(reply: { toolCalls: readonly ToolCall[] }): boolean {
    return !this.closed && reply.toolCalls.some((c) => this.offered.has(c.name));
  }

  /** The reply without calls to offered tools (the answer after the budget: those calls are dropped, not run). */
  withoutToolCalls<R extends { toolCalls: ToolCall[] }>(reply: R): R {
    return { ...reply, toolCalls: reply.toolCalls.filter((c) => !this.offered.has(c.name)) };
  }

  /**
   * Run the reply's calls (within the budget, through the gate) and return the messages that
   * continue the conversation: the assistant's message with its calls, one `tool` message per
   * call, and, once the budget is spent, a user message telling the model to answer now.
   */
  async answer(reply: { text: string; toolCalls: ToolCall[] }, signal: AbortSignal): Promise<ChatMessage[]> {
    const messages: ChatMessage[] = [{ role: "assistant", content: reply.text, toolCalls: reply.toolCalls }];
    for (const call of reply.toolCalls) {
      if (signal.aborted) {
        messages.push({ role: "tool", toolCallId: call.id, content: "Not run: the request was interrupted." });
        continue;
      }
      messages.push({ role: "tool", toolCallId: call.id, content: await this.runCall(call, signal) });
    }
    if (this.calls >= this.maxCalls) {
      this.closed = true;
      messages.push({
        role: "user",
        content: `You have made ${this.calls} tool call${this.calls === 1 ? "" : "s"}, the most allowed for one request. Do not call tools again: answer now with what you have, in the edit format.`,
      });
    }
    return messages;
  }

  private async runCall(call: ToolCall, signal: AbortSignal): Promise<string> {
    const offered = this.offered.get(call.name);
    const origin = offered?.tool.origin ?? offered?.provider ?? "unknown";
    const report = (status: "ok" | "error" | "declined" | "not-run", full: string): string => {
      const sent = capOutput(full);
      this.deps.out.emit({ type: "tool", name: call.name, origin, arguments: call.arguments, status, output: sent, chars: full.length });
      return sent;
    };
    if (!offered) return report("not-run", `Not run: there is no tool "${call.name}" now. Edits go in the edit format, after you have gathered what you need.`);
    if (this.calls >= this.maxCalls) return report("not-run", "Not run: the tool-call budget for this request is spent.");
    this.calls++;
    const args = parseArguments(call.arguments);
    if (typeof args === "string") return report("not-run", `Not run: ${args}`);
    const hooks = this.deps.hooks;
    const vetoed = hooks?.has("onToolCall") ? await hooks.toolCall({ name: call.name, arguments: call.arguments, origin }) : null;
    if (vetoed) {
      this.deps.out.warn(`plugin ${vetoed.plugin} refused the tool call ${call.name}: ${vetoed.veto}`);
      return report("declined", `Not run: ${vetoed.veto}`);
    }
    // A typed tool's arguments are checked against its declaration before anyone is asked.
    const prepared = await callTool(offered.tool, args, signal);
    if (!prepared.ok) return report("not-run", `Not run: ${prepared.problem}`);
    const shownCall = { name: call.name, origin, arguments: call.arguments };
    if ((offered.tool.confirm ?? "ask") === "ask") {
      this.deps.out.toolCall?.(shownCall, "pending");
      const shown = call.arguments.length > 400 ? `${call.arguments.slice(0, 399)}…` : call.arguments;
      // --yes-always does not answer a tool call (gate.toolPermission): it is asked, or declined with nobody to ask.
      const yes = await this.deps.gate.toolPermission(`Run tool ${call.name} (${origin}) with ${shown || "{}"}?`, `tool:${call.name}`, offered.runUnasked);
      if (!yes) return report("declined", "Not run: the user declined this call. Do without it, or ask the user.");
    }
    this.deps.out.toolCall?.(shownCall, "running");
    try {
      const result = await guard(offered.owner, `tool ${call.name}`, prepared.run);
      return report(result.isError ? "error" : "ok", result.text);
    } catch (error) {
      return report("error", `The tool failed: ${messageOf(error)}`);
    }
  }
}

/** The arguments object, or why the JSON is not one. */
function parseArguments(raw: string): Record<string, unknown> | string {
  if (!raw.trim()) return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
    return "the arguments must be a JSON object.";
  } catch (error) {
    return `the arguments are not valid JSON (${messageOf(error)}).`;
  }
}

/** At most TOOL_OUTPUT_CAP characters, with a note saying how much was cut. */
export function capOutput(text: string, cap = TOOL_OUTPUT_CAP): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}\n\n[Output cut: the tool returned ${text.length.toLocaleString("en-US")} characters; these are the first ${cap.toLocaleString("en-US")}. Ask for less (a narrower query, a range) if you need the rest.]`;
}
