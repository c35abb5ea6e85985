// What the gate asks and what it can hear back: the choices of a confirmation, the
// Prompter a front end implements to ask a person (the terminal's one-key prompt,
// an editor's permission request), and the answer when nobody is there to ask.

/**
 * The answers every confirmation offers. `all` / `skip-all` answer the rest of
 * a group of questions too; `never` ("Don't ask again") answers no and is
 * remembered per repository by the gate.
 */
export type Choice = "yes" | "no" | "all" | "skip-all" | "never";

/** Labels, in the order they are shown; the capital letter is the key. */
export const CHOICE_LABELS: Record<Choice, string> = {
  yes: "Yes",
  no: "No",
  all: "All",
  "skip-all": "Skip all",
  never: "Don't ask again",
};

export const CHOICE_KEYS: Record<Choice, string> = { yes: "y", no: "n", all: "a", "skip-all": "s", never: "d" };

export interface ChooseOptions {
  /** What Enter answers (default: yes when offered). */
  default?: Choice;
  /** What the question is about (`edit:<path>`, `shell:<command>`, ...), as the gate remembers it. */
  key?: string;
}

/**
 * Asks one question and returns one of `choices`.
 *
 * @example
 * const answer = await prompter.choose("Edit src/app.ts (not in the chat)?", ["yes", "no", "never"]);
 */
export interface Prompter {
  /** True when a person answers (a terminal); false when answers are automatic. */
  readonly interactive: boolean;
  choose(question: string, choices: readonly Choice[], detail?: string, options?: ChooseOptions): Promise<Choice>;
  /**
   * One of `choices` (a plugin's `kit.ui.select`), null when the person cancels. `fallback` is
   * what an empty answer picks. A front end without it: the gate answers with the default.
   */
  select?(question: string, choices: readonly string[], detail?: string, fallback?: string): Promise<string | null>;
  /** A line of text (a plugin's `kit.ui.input`), null when the person cancels; an empty answer is `fallback` when given. */
  input?(question: string, detail?: string, fallback?: string): Promise<string | null>;
}

/** Where a prompter may say things (stderr by default, so `--json` stdout stays clean). */
export type Say = (text: string) => void;

/** "(Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: " for these choices. */
export function choiceLine(choices: readonly Choice[], fallback: Choice): string {
  const labels = choices.map((c) => `(${CHOICE_LABELS[c][0]})${CHOICE_LABELS[c].slice(1)}`);
  return `${labels.join("/")} [${CHOICE_LABELS[fallback]}]: `;
}

/** The choice a typed answer names ("y", "Yes", "skip all"), the default for an empty one; null when it names none. */
export function choiceOf(typed: string, choices: readonly Choice[], fallback: Choice): Choice | null {
  const t = typed.trim().toLowerCase();
  if (!t) return fallback;
  return choices.find((c) => CHOICE_KEYS[c] === t[0] && (t.length === 1 || CHOICE_LABELS[c].toLowerCase().startsWith(t))) ?? null;
}

/**
 * No one to ask (piped, `--message`, `--json`, CI): every question is answered
 * "no", and the question and the answer are said (through `say`) so a
 * log shows why nothing happened.
 */
export class NonInteractivePrompter implements Prompter {
  readonly interactive = false;

  constructor(private readonly say: Say) {}

  async choose(question: string, choices: readonly Choice[]): Promise<Choice> {
    this.say(`${question} -> no (not interactive: nobody to ask; see --yes-always)`);
    return choices.includes("no") ? "no" : "skip-all";
  }
}
