// How a confirmation question reaches a person at a terminal: Aider's one-keystroke
// prompt ("Allow edits to a.py? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: "),
// or a plain line prompt with --no-pretty or NO_COLOR. The gate (core/gate/gate.ts)
// decides what to ask; core/gate/prompter.ts has the choices and the non-interactive answer.
import { Interrupted } from "../errors.ts";
import { CHOICE_KEYS, CHOICE_LABELS, type Choice, type ChooseOptions, choiceLine, choiceOf, type Prompter } from "../gate/prompter.ts";
import { terminalSafe } from "./safe.ts";
import type { Theme } from "./style.ts";

export interface TerminalPrompterOptions {
  /** Colours for the question; null: a plain line prompt (--no-pretty, NO_COLOR). */
  theme: Theme | null;
  /** Waits until what was emitted before the question is on the screen. */
  settled?: () => Promise<void>;
  /** Where the question is written (stdout; the trust question uses stderr). */
  stream?: NodeJS.WriteStream;
  /** Ctrl-C answered No and is about to stop the request (the transcript records the No). */
  interrupted?: (question: string) => void;
  /** The REPL's live input box: it gives the terminal up while the question is asked. */
  live?: { show(): void; hide(): void } | null;
}

/**
 * Questions on the terminal. With colours, one keystroke answers (y n a s d; Enter takes
 * the default); keys typed before the question are thrown away first, so type-ahead never
 * answers. Esc answers No; Ctrl-C answers No and stops the request (Interrupted). Without
 * colours, a plain line is read and its first letter answers.
 */
export class TerminalPrompter implements Prompter {
  readonly interactive = true;

  constructor(private readonly opts: TerminalPrompterOptions) {}

  async choose(question: string, choices: readonly Choice[], detail?: string, options: ChooseOptions = {}): Promise<Choice> {
    await this.opts.settled?.();
    this.opts.live?.hide();
    try {
      return await this.ask(question, choices, detail, options);
    } finally {
      this.opts.live?.show();
    }
  }

  private async ask(question: string, choices: readonly Choice[], detail: string | undefined, options: ChooseOptions): Promise<Choice> {
    const stream = this.opts.stream ?? process.stdout;
    const fallback = options.default && choices.includes(options.default) ? options.default : choices.includes("yes") ? "yes" : (choices[0] as Choice);
    // Questions carry model-chosen text (paths, commands): no escape sequence reaches the terminal.
    if (detail) stream.write(`${terminalSafe(detail).trimEnd()}\n`);
    const text = `${terminalSafe(question)} ${choiceLine(choices, fallback)}`;
    const { answer, ctrlC } = this.opts.theme ? await askKey(stream, this.opts.theme.bold(text), choices, fallback) : await askLine(stream, text, choices, fallback);
    if (ctrlC) {
      this.opts.interrupted?.(question);
      throw new Interrupted();
    }
    return answer;
  }
}

interface Answer {
  answer: Choice;
  /** Ctrl-C answered (No): the caller stops the request too. */
  ctrlC: boolean;
}

/** Type-ahead is read and dropped until the keyboard is quiet this long (at most DRAIN_MAX_MS). */
const DRAIN_QUIET_MS = 40;
const DRAIN_MAX_MS = 400;

/** One keystroke in raw mode; the answer's label is echoed after the question. */
async function askKey(stream: NodeJS.WriteStream, text: string, choices: readonly Choice[], fallback: Choice): Promise<Answer> {
  const stdin = process.stdin;
  stdin.setRawMode?.(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  try {
    await drainTypeahead(stdin);
    stream.write(text);
    const result = await new Promise<Answer>((resolve) => {
      const onData = (data: string) => {
        const answer = keyAnswer(data, choices, fallback);
        if (!answer) {
          stream.write("\x07");
          return;
        }
        stdin.off("data", onData);
        resolve(answer);
      };
      stdin.on("data", onData);
    });
    stream.write(`${CHOICE_LABELS[result.answer]}${result.ctrlC ? " (Ctrl-C)" : ""}\n`);
    return result;
  } finally {
    stdin.setRawMode?.(false);
    stdin.pause();
  }
}

/** The answer one key gives: a choice's letter, Enter, Esc or Ctrl-C; null for any other key. */
export function keyAnswer(data: string, choices: readonly Choice[], fallback: Choice): Answer | null {
  if (data === "\x03") return { answer: "no", ctrlC: true };
  if (data === "\x1b") return { answer: "no", ctrlC: false };
  if (data === "\r" || data === "\n") return { answer: fallback, ctrlC: false };
  // "y⏎" typed fast arrives as one chunk: the habit of line prompts answers by its letter.
  const key = data.length === 2 && (data[1] === "\r" || data[1] === "\n") ? data.slice(0, 1) : data;
  if (key.length !== 1) return null;
  const choice = choices.find((c) => CHOICE_KEYS[c] === key.toLowerCase());
  return choice ? { answer: choice, ctrlC: false } : null;
}

function drainTypeahead(stdin: NodeJS.ReadStream): Promise<void> {
  return new Promise((resolve) => {
    const started = Date.now();
    let last = Date.now();
    const drop = () => {
      last = Date.now();
    };
    stdin.on("data", drop);
    const tick = () => {
      const now = Date.now();
      if (now - last >= DRAIN_QUIET_MS || now - started >= DRAIN_MAX_MS) {
        stdin.off("data", drop);
        resolve();
      } else setTimeout(tick, DRAIN_QUIET_MS / 2);
    };
    setTimeout(tick, DRAIN_QUIET_MS / 2);
  });
}

/** A plain line prompt: the first letter answers, an empty line takes the default; asked again otherwise. */
async function askLine(stream: NodeJS.WriteStream, text: string, choices: readonly Choice[], fallback: Choice): Promise<Answer> {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, output: stream, terminal: false });
  try {
    for (;;) {
      stream.write(text);
      const line = await new Promise<string | null>((resolve) => {
        rl.once("line", resolve);
        rl.once("close", () => resolve(null));
        rl.once("SIGINT", () => resolve(null));
      });
      if (line === null) return { answer: "no", ctrlC: true };
      const answer = choiceOf(line, choices, fallback);
      if (answer) return { answer, ctrlC: false };
    }
  } finally {
    rl.close();
  }
}

/** The trust question and other start-up yes/no questions, in the same style (default No). */
export async function askYesNoOnTerminal(question: string, theme: Theme | null, stream: NodeJS.WriteStream = process.stderr): Promise<boolean> {
  const prompter = new TerminalPrompter({ theme, stream });
  try {
    return (await prompter.choose(question, ["yes", "no"], undefined, { default: "no" })) === "yes";
  } catch (error) {
    if (error instanceof Interrupted) return false;
    throw error;
  }
}

