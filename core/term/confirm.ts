// How a confirmation question reaches a person: a @clack/prompts select in a
// terminal, or a non-interactive answer ("no", said out loud) everywhere else.
// The gate (core/gate.ts) decides what to ask; this module only asks.
import { Interrupted } from "../errors.ts";
import { terminalSafe } from "./render.ts";

/**
 * The answers every confirmation offers. `all` / `skip-all` answer the rest of
 * a group of questions too; `never` ("Don't ask again") answers no and is
 * remembered per repository by the gate.
 */
export type Choice = "yes" | "no" | "all" | "skip-all" | "never";

/** Menu labels, in the order they are shown. */
export const CHOICE_LABELS: Record<Choice, string> = {
  yes: "Yes",
  no: "No",
  all: "All",
  "skip-all": "Skip all",
  never: "Don't ask again",
};

/**
 * Asks one question and returns one of `choices`.
 *
 * @example
 * const answer = await prompter.choose("Edit src/app.ts (not in the chat)?", ["yes", "no", "never"]);
 */
export interface Prompter {
  /** True when a person answers (a terminal); false when answers are automatic. */
  readonly interactive: boolean;
  /** `initial`: the answer Enter takes (default "yes"; the shell question's is "no"). */
  choose(question: string, choices: readonly Choice[], detail?: string, initial?: Choice): Promise<Choice>;
}

/** Where a prompter may say things (stderr by default, so `--json` stdout stays clean). */
export type Say = (text: string) => void;

const sayOnStderr: Say = (text) => {
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
};

/**
 * A terminal prompt (arrow keys + enter). Esc answers "no"; Ctrl-C throws `Interrupted`
 * (the request stops, as Ctrl-C does while a reply streams; at start-up coder exits 130).
 * `@clack/prompts` is loaded on first use so start-up does not pay for it.
 */
export class ClackPrompter implements Prompter {
  readonly interactive = true;

  async choose(question: string, choices: readonly Choice[], detail?: string, initial: Choice = "yes"): Promise<Choice> {
    const clack = await import("@clack/prompts");
    // Questions carry model-chosen text (paths, commands): no escape sequence reaches the terminal.
    if (detail) clack.log.message(terminalSafe(detail));
    // clack reports Esc and Ctrl-C alike as a cancel; tell them apart by the key.
    let ctrlC = false;
    const onKey = (s: string | undefined, key?: { ctrl?: boolean; name?: string }) => {
      if (s === "\x03" || (key?.ctrl && key.name === "c")) ctrlC = true;
    };
    process.stdin.on("keypress", onKey);
    let answer: Choice | symbol;
    try {
      answer = await clack.select<Choice>({
        message: terminalSafe(question),
        options: choices.map((value) => ({ value, label: CHOICE_LABELS[value] })),
        initialValue: choices.includes(initial) ? initial : choices[0],
      });
    } finally {
      process.stdin.off("keypress", onKey);
    }
    if (clack.isCancel(answer)) {
      // Ctrl-C stops the whole request, as it does while the reply streams (no reflection is sent).
      if (ctrlC) throw new Interrupted();
      return "no";
    }
    return answer as Choice;
  }
}

/**
 * No one to ask (piped, `--message`, `--json`, CI): every question is answered
 * "no", and the question and the answer are said (on stderr by default) so a
 * log shows why nothing happened.
 */
export class NonInteractivePrompter implements Prompter {
  readonly interactive = false;

  constructor(private readonly say: Say = sayOnStderr) {}

  async choose(question: string, choices: readonly Choice[]): Promise<Choice> {
    this.say(`${question} -> no (not interactive: nobody to ask; see --yes-always)`);
    return choices.includes("no") ? "no" : "skip-all";
  }
}

/** A prompter that answers from a script, for tests: one answer per question, "no" when exhausted. */
export class ScriptedPrompter implements Prompter {
  readonly interactive = true;
  readonly asked: string[] = [];

  constructor(private readonly answers: Choice[]) {}

  async choose(question: string, choices: readonly Choice[]): Promise<Choice> {
    this.asked.push(question);
    const next = this.answers.shift() ?? "no";
    if (!choices.includes(next)) throw new Error(`scripted answer ${next} is not offered for: ${question}`);
    return next;
  }
}
