// Plugins' lifecycle and event hooks, each run the way its kind says: sequential hooks
// (onRequest, onEdit, onCommit, onToolCall) hand each handler the previous one's result,
// parallel ones (onReply) run at once. Order: "pre" handlers, then the rest, then "post",
// each group in load order. Every call goes through the registry's one `guard`: a throwing
// handler is reported with its plugin's name and the hook, and counts as "no change".
// A hook nobody registered costs one Map lookup.
import type {
  ChatMessage,
  CommitChange,
  CommitEvent,
  EditEvent,
  EditVerdict,
  Hook,
  HookName,
  Logger,
  PluginObject,
  ReplyEvent,
  RequestChange,
  RequestEvent,
  ToolCallEvent,
  ToolCallVerdict,
} from "../plugin.ts";
import { guard, messageOf } from "./guard.ts";

type Handlers = {
  onRequest: (event: RequestEvent) => unknown;
  onReply: (event: ReplyEvent) => unknown;
  onEdit: (event: EditEvent) => unknown;
  onCommit: (event: CommitEvent) => unknown;
  onToolCall: (event: ToolCallEvent) => unknown;
};

interface Registered<H> {
  plugin: string;
  origin: string;
  handler: H;
}

const HOOK_NAMES: readonly HookName[] = ["onRequest", "onReply", "onEdit", "onCommit", "onToolCall"];
const RANK = { pre: 0, normal: 1, post: 2 } as const;

/** How long every plugin's `dispose` together may take at exit. */
export const DISPOSE_TIMEOUT_MS = 3000;

export class Hooks {
  readonly #hooks = new Map<HookName, (Registered<Handlers[HookName]> & { rank: number })[]>();
  readonly #setups: Registered<() => unknown>[] = [];
  readonly #disposes: Registered<() => unknown>[] = [];
  #disposed: Promise<void> | null = null;

  constructor(private readonly log: Logger) {}

  /** Take a registered plugin's hooks (the loader has checked their shapes). */
  add(plugin: PluginObject, origin: string): void {
    const owner = { plugin: plugin.name, origin };
    if (plugin.setup) this.#setups.push({ ...owner, handler: plugin.setup.bind(plugin) });
    if (plugin.dispose) this.#disposes.push({ ...owner, handler: plugin.dispose.bind(plugin) });
    for (const name of HOOK_NAMES) {
      const hook = plugin[name] as Hook<Handlers[HookName]> | undefined;
      if (!hook) continue;
      const { handler, order } = typeof hook === "function" ? { handler: hook, order: undefined } : hook;
      const list = this.#hooks.get(name) ?? [];
      list.push({ ...owner, handler, rank: RANK[order ?? "normal"] });
      // Stable: load order within each rank.
      list.sort((a, b) => a.rank - b.rank);
      this.#hooks.set(name, list);
    }
  }

  /** Does any plugin handle `name`? (The callers skip building an event otherwise.) */
  has(name: HookName): boolean {
    return this.#hooks.has(name);
  }

  /** Each handler in turn, its result (undefined when it threw, reported) handed to `step`; `step` returning true stops. */
  async #sequential<N extends HookName>(name: N, event: () => Parameters<Handlers[N]>[0], step: (result: unknown, plugin: string) => boolean): Promise<void> {
    for (const entry of this.#hooks.get(name) ?? []) {
      const result = await this.#call(entry, name, () => entry.handler(event() as never));
      if (step(result, entry.plugin)) return;
    }
  }

  async #call(owner: { plugin: string; origin: string }, name: string, fn: () => unknown): Promise<unknown> {
    try {
      return await guard(owner, name, fn);
    } catch (error) {
      this.log.error(messageOf(error));
      return undefined;
    }
  }

  /** onRequest: the messages to send, after every handler. */
  async request(model: string, messages: ChatMessage[]): Promise<ChatMessage[]> {
    let current = messages;
    await this.#sequential("onRequest", () => ({ model, messages: current }), (result) => {
      const change = result as RequestChange | undefined;
      if (Array.isArray(change?.messages)) current = change.messages;
      return false;
    });
    return current;
  }

  /** onReply: every handler at once. */
  async reply(event: ReplyEvent): Promise<void> {
    const list = this.#hooks.get("onReply") ?? [];
    await Promise.all(list.map((entry) => this.#call(entry, "onReply", () => (entry.handler as Handlers["onReply"])(event))));
  }

  /** onEdit: the content to write, or the first veto with the plugin that gave it. */
  async edit(event: EditEvent): Promise<{ after: string | null } | { veto: string; plugin: string }> {
    let after = event.after;
    let vetoed: { veto: string; plugin: string } | null = null;
    await this.#sequential("onEdit", () => ({ ...event, after }), (result, plugin) => {
      const verdict = result as EditVerdict | undefined;
      if (verdict && "veto" in verdict && typeof verdict.veto === "string") {
        vetoed = { veto: verdict.veto, plugin };
        return true;
      }
      if (verdict && "content" in verdict && typeof verdict.content === "string" && after !== null) after = verdict.content;
      return false;
    });
    return vetoed ?? { after };
  }

  /** onCommit: the message as the handlers changed it and every trailer they added (git joins them to its own), or the first veto. */
  async commit(event: CommitEvent): Promise<{ message: string; trailers: string[] } | { veto: string; plugin: string }> {
    let message = event.message;
    const trailers: string[] = [];
    let vetoed: { veto: string; plugin: string } | null = null;
    await this.#sequential("onCommit", () => ({ ...event, message }), (result, plugin) => {
      const change = result as CommitChange | undefined;
      if (typeof change?.veto === "string") {
        vetoed = { veto: change.veto, plugin };
        return true;
      }
      if (typeof change?.message === "string" && change.message.trim()) message = change.message;
      for (const t of change?.trailers ?? []) if (typeof t === "string" && /^[A-Za-z0-9-]+: \S/.test(t.trim()) && !trailers.includes(t.trim())) trailers.push(t.trim());
      return false;
    });
    return vetoed ?? { message, trailers };
  }

  /** onToolCall: the first veto, or null to run the call. */
  async toolCall(event: ToolCallEvent): Promise<{ veto: string; plugin: string } | null> {
    let vetoed: { veto: string; plugin: string } | null = null;
    await this.#sequential("onToolCall", () => event, (result, plugin) => {
      const verdict = result as ToolCallVerdict | undefined;
      if (typeof verdict?.veto !== "string") return false;
      vetoed = { veto: verdict.veto, plugin };
      return true;
    });
    return vetoed;
  }

  /** Every plugin's `setup`, in load order. */
  async setup(): Promise<void> {
    for (const entry of this.#setups) await this.#call(entry, "setup", entry.handler);
  }

  /**
   * Every plugin's `dispose` at once, within `timeoutMs` all told; a plugin still running then is
   * reported by name. Runs once: later calls wait for the first.
   */
  dispose(timeoutMs = DISPOSE_TIMEOUT_MS): Promise<void> {
    this.#disposed ??= this.#disposeAll(timeoutMs);
    return this.#disposed;
  }

  async #disposeAll(timeoutMs: number): Promise<void> {
    if (!this.#disposes.length) return;
    const pending = new Set(this.#disposes.map((d) => d.plugin));
    const all = Promise.all(this.#disposes.map(async (entry) => {
      await this.#call(entry, "dispose", entry.handler);
      pending.delete(entry.plugin);
    }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([all, late]);
    clearTimeout(timer);
    if (pending.size) this.log.error(`plugin ${[...pending].join(", ")}: dispose did not finish within ${timeoutMs / 1000} s; left behind`);
  }
}
