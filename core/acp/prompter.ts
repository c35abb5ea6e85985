// The gate's questions as `session/request_permission`: allow once, allow always
// (remembered for the session), reject once and reject always (the gate's "Don't ask
// again"). A cancelled prompt answers No; shell commands, config changes and merge
// conflicts are never allowed "always" (they keep their stricter rule). A plugin's
// `kit.ui.select` is a permission request whose options are its choices; `kit.ui.input`
// is an `elicitation/create` form when the client offers form elicitation.
import type * as acp from "@agentclientprotocol/sdk";
import type { Choice, ChooseOptions, Prompter } from "../gate/prompter.ts";
import type { CardView } from "./output.ts";

/** Sends one permission request to the client. */
export type AskClient = (request: Omit<acp.RequestPermissionRequest, "sessionId">) => Promise<acp.RequestPermissionResponse>;

/** Questions about these keys are asked every time: no "allow always". */
const ASK_EVERY_TIME = ["shell:", "config:", "conflict:"];

/** May an "allow always" for this key be remembered (for the session, and in its saved record)? */
export function mayAllowAlways(key: string): boolean {
  return !ASK_EVERY_TIME.some((prefix) => key.startsWith(prefix));
}

const OPTION_OF: Record<Choice, acp.PermissionOption> = {
  yes: { optionId: "allow", name: "Allow", kind: "allow_once" },
  all: { optionId: "allow-all", name: "Allow the rest of this reply", kind: "allow_once" },
  no: { optionId: "reject", name: "Reject", kind: "reject_once" },
  "skip-all": { optionId: "reject-all", name: "Reject the rest of this reply", kind: "reject_once" },
  never: { optionId: "reject-always", name: "Reject always (don't ask again)", kind: "reject_always" },
};
const ALLOW_ALWAYS: acp.PermissionOption = { optionId: "allow-always", name: "Allow always (this session)", kind: "allow_always" };

/** Sends one `elicitation/create` (a form) to the client. */
export type ElicitClient = (request: { message: string; requestedSchema: acp.ElicitationSchema }) => Promise<acp.CreateElicitationResponse>;

export class AcpPrompter implements Prompter {
  readonly interactive = true;
  /**
   * A plugin's `kit.ui.input`, as an `elicitation/create` form with one text field, when the
   * client offers form elicitation; absent otherwise (ACP has no other way to ask for free
   * text), and the gate then answers the declared default and says so in the thread.
   */
  readonly input?: (question: string, detail?: string, fallback?: string) => Promise<string | null>;
  /** Keys answered "allow always" in this session. */
  readonly allowed = new Set<string>();
  /** A prompt turn is running: there is someone to ask. */
  private active = false;
  private cancelled = false;
  private nextId = 1;

  constructor(
    private readonly ask: AskClient,
    private readonly log: (text: string) => void,
    /** Resolves once the updates sent before the question are out (the question must not overtake the reply). */
    private readonly settled: () => Promise<void> = () => Promise.resolve(),
    /** The tool call a question is about (an edit's pending card, with its diff), when there is one. */
    private readonly cardFor: (key: string) => CardView | null = () => null,
    /** A question about `key` was answered No (its card, if any, closes). */
    private readonly declined: (key: string) => void = () => {},
    /** The client's form elicitation, when it offers one. */
    elicit: ElicitClient | null = null,
  ) {
    if (elicit) this.input = (question, detail, fallback) => this.askText(elicit, question, detail, fallback);
  }

  /**
   * A plugin's `kit.ui.select` as a permission request whose options are the choices (the
   * default marked). A cancelled request is null; outside a prompt turn, the default.
   */
  async select(question: string, choices: readonly string[], detail?: string, fallback?: string): Promise<string | null> {
    if (!this.active || this.cancelled) {
      this.log(`${question} -> ${fallback === undefined ? "no answer" : JSON.stringify(fallback)} (${this.cancelled ? "the prompt was cancelled" : "asked outside a prompt turn"})`);
      return this.cancelled ? null : (fallback ?? null);
    }
    const options: acp.PermissionOption[] = choices.map((choice, i) => ({ optionId: `choice-${i + 1}`, name: choice === fallback ? `${choice} (default)` : choice, kind: "allow_once" }));
    const said: acp.ToolCallContent[] = [{ type: "content", content: { type: "text", text: question } }];
    if (detail) said.push({ type: "content", content: { type: "text", text: detail } });
    let response: acp.RequestPermissionResponse;
    try {
      await this.settled();
      response = await this.ask({
        toolCall: { toolCallId: `coder-ask-${this.nextId++}`, title: titleOf(question), kind: "other", status: "pending", content: said, rawInput: { question, choices: [...choices], ...(fallback !== undefined ? { default: fallback } : {}) } },
        options,
      });
    } catch (error) {
      this.log(`${question} -> no answer (the permission request failed: ${error instanceof Error ? error.message : String(error)})`);
      return null;
    }
    if (this.cancelled || response.outcome.outcome !== "selected") return null;
    const picked = response.outcome.optionId;
    const at = options.findIndex((o) => o.optionId === picked);
    if (at < 0) {
      this.log(`${question} -> no answer (the client answered "${picked}", which was not offered)`);
      return null;
    }
    return choices[at] ?? null;
  }

  /** One text field in a form; declined or cancelled is null, an empty answer the default. */
  private async askText(elicit: ElicitClient, question: string, detail: string | undefined, fallback: string | undefined): Promise<string | null> {
    if (!this.active || this.cancelled) {
      this.log(`${question} -> ${fallback === undefined ? "no answer" : JSON.stringify(fallback)} (${this.cancelled ? "the prompt was cancelled" : "asked outside a prompt turn"})`);
      return this.cancelled ? null : (fallback ?? null);
    }
    const field: acp.ElicitationPropertySchema = { type: "string", title: question, ...(detail ? { description: detail } : {}), ...(fallback !== undefined ? { default: fallback } : {}) };
    let response: acp.CreateElicitationResponse;
    try {
      await this.settled();
      response = await elicit({ message: question, requestedSchema: { type: "object", properties: { answer: field }, required: ["answer"] } });
    } catch (error) {
      this.log(`${question} -> no answer (the elicitation failed: ${error instanceof Error ? error.message : String(error)})`);
      return null;
    }
    if (this.cancelled || response.action !== "accept") return null;
    const answer = (response as { content?: Record<string, unknown> | null }).content?.answer;
    if (typeof answer !== "string") return fallback ?? null;
    return answer === "" && fallback !== undefined ? fallback : answer;
  }

  /** A prompt turn starts: questions go to the client until it ends or is cancelled. */
  begin(): void {
    this.active = true;
    this.cancelled = false;
  }

  end(): void {
    this.active = false;
  }

  /** `session/cancel`: the question asked now (and any later one) answers No. */
  cancel(): void {
    this.cancelled = true;
  }

  async choose(question: string, choices: readonly Choice[], detail?: string, options: ChooseOptions = {}): Promise<Choice> {
    const choice = await this.askClient(question, choices, detail, options);
    if (choice !== "yes" && choice !== "all") this.declined(options.key ?? question);
    return choice;
  }

  private async askClient(question: string, choices: readonly Choice[], detail: string | undefined, options: ChooseOptions): Promise<Choice> {
    const no: Choice = choices.includes("no") ? "no" : "skip-all";
    // Outside a prompt turn (while a session is set up) the client knows no session to show a question in.
    if (!this.active || this.cancelled) {
      this.log(`${question} -> no (${this.cancelled ? "the prompt was cancelled" : "asked outside a prompt turn"})`);
      return no;
    }
    const key = options.key ?? question;
    if (this.allowed.has(key) && mayAllowAlways(key) && choices.includes("yes")) return "yes";
    const offered = choices.map((c) => OPTION_OF[c]);
    if (choices.includes("yes") && mayAllowAlways(key)) offered.splice(1, 0, ALLOW_ALWAYS);
    // The question is about a card the editor already shows (an edit, with its diff): the same tool call.
    const card = this.cardFor(key);
    const said: acp.ToolCallContent[] = [{ type: "content", content: { type: "text", text: question } }];
    if (detail && !card) said.push({ type: "content", content: { type: "text", text: detail } });
    const toolCall: acp.ToolCallUpdate = {
      toolCallId: card?.toolCallId ?? `coder-ask-${this.nextId++}`,
      title: card?.title ?? titleOf(question),
      kind: kindOf(key),
      status: "pending",
      content: [...(card?.content ?? []), ...said],
      ...(card ? { locations: card.locations } : {}),
      rawInput: { question, key },
    };
    let response: acp.RequestPermissionResponse;
    try {
      await this.settled();
      response = await this.ask({ toolCall, options: offered });
    } catch (error) {
      this.log(`${question} -> no (the permission request failed: ${error instanceof Error ? error.message : String(error)})`);
      return no;
    }
    if (this.cancelled || response.outcome.outcome !== "selected") return no;
    const picked = response.outcome.optionId;
    // Only an option this question offered counts: "allow always" for a shell command was never offered.
    if (!offered.some((o) => o.optionId === picked)) {
      this.log(`${question} -> no (the client answered "${picked}", which was not offered)`);
      return no;
    }
    if (picked === ALLOW_ALWAYS.optionId) {
      this.allowed.add(key);
      return "yes";
    }
    return choices.find((c) => OPTION_OF[c].optionId === picked) ?? no;
  }
}

/** A question as a tool call's title: a statement of what would happen ("Allow edits to a.py?" reads twice as "Allow Allow ..." in clients). */
function titleOf(question: string): string {
  return question.replace(/\?\s*$/, "");
}

function kindOf(key: string): acp.ToolKind {
  if (key.startsWith("edit:") || key.startsWith("create:") || key.startsWith("config:") || key.startsWith("conflict:")) return "edit";
  if (key.startsWith("shell:")) return "execute";
  return "other";
}
