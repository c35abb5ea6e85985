// Lint and tests after applied edits (--lint-cmd / --test-cmd): the first
// failure becomes the reflection, with the command's output for the model.
import type { Kit } from "./plugin.ts";
import type { Output } from "./term/events.ts";

export interface CheckOptions {
  lintCmd?: string;
  autoLint: boolean;
  testCmd?: string;
  autoTest: boolean;
}

/** Lint the edited files, then run the tests; the reflection text of the first failure, or null. */
export async function lintAndTest(kit: Kit, out: Output, o: CheckOptions, paths: readonly string[]): Promise<string | null> {
  if (o.lintCmd && o.autoLint) {
    const command = `${o.lintCmd} ${paths.map(shellQuote).join(" ")}`;
    const r = await kit.run(command, { timeoutMs: 300_000 });
    const output = `${r.stdout}${r.stderr}`.trim();
    out.emit({ type: "lint", ok: r.code === 0, command, output });
    if (r.code !== 0) return `The linter (\`${command}\`) reports problems in the files you edited. Fix them:\n\n${clip(output)}`;
  }
  if (o.testCmd && o.autoTest) {
    const r = await kit.run(o.testCmd, { timeoutMs: 900_000 });
    const output = `${r.stdout}${r.stderr}`.trim();
    out.emit({ type: "test", ok: r.code === 0, command: o.testCmd, output });
    if (r.code !== 0) return `The tests (\`${o.testCmd}\`) fail after your edits. Fix the code so they pass:\n\n${clip(output)}`;
  }
  return null;
}

export function shellQuote(s: string): string {
  return /^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/** Long command output keeps its head and tail (where compilers and test runners put the news). */
export function clip(text: string, max = 8000): string {
  return text.length <= max ? text : `${text.slice(0, max / 2)}\n... (${text.length - max} characters cut) ...\n${text.slice(-max / 2)}`;
}
