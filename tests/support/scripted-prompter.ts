// A prompter for tests: answers from a script, one answer per question, "no" once it runs out.
import type { Choice, Prompter } from "../../core/gate/prompter.ts";

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
