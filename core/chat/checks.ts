// Checks after applied edits: the built-in syntax check (tree-sitter, no configuration),
// then --lint-cmd (one command, or one per language), then --test-cmd. The first failure
// becomes the reflection, with the report or the command's output for the model.
import type { Output } from "./events.ts";
import type { CommandRunner, ShownResult } from "./types.ts";

/** How long a test run may take before it is stopped (and a lint run). */
export const TEST_TIMEOUT_MS = 900_000;
const LINT_TIMEOUT_MS = 300_000;

export interface CheckOptions {
  lintCmd?: string | Record<string, string>;
  autoLint: boolean;
  testCmd?: string;
  autoTest: boolean;
}

/** A file a reply wrote: its content before (null: created) and after (null: deleted). */
export interface EditedFile {
  path: string;
  before: string | null;
  after: string | null;
}

/** What a check found: ok, or the text to show (and to send the model). */
export interface CheckResult {
  ok: boolean;
  output: string;
  /** A command was stopped (a cancel) or refused by the editor: nothing was found, nor checked. */
  stopped?: boolean;
}

type Grammars = Awaited<ReturnType<typeof loadGrammars>>;
let grammars: Promise<Grammars> | undefined;

/** web-tree-sitter and the embedded grammars, loaded on the first check (never for a reply that edits nothing). */
async function loadGrammars() {
  const [{ GrammarLoader }, { EMBEDDED_ASSETS }, syntax] = await Promise.all([import("../../grammars/runtime.ts"), import("../../grammars/embedded.ts"), import("../../grammars/syntax.ts")]);
  return { loader: new GrammarLoader(EMBEDDED_ASSETS), syntax };
}

/**
 * Start loading the parsers of these files' languages, so the syntax check after the write
 * finds them ready (the load overlaps writing and committing).
 */
export function warmSyntaxCheck(paths: readonly string[]): void {
  grammars ??= loadGrammars();
  void grammars.then(async ({ loader }) => {
    const { languageFor } = await import("../../grammars/languages.ts");
    for (const path of paths) {
      const spec = languageFor(path);
      if (spec) loader.parser(spec).catch(() => {});
    }
  });
}

/**
 * Syntax problems in these files, as one report; null when there are none. With `before`,
 * only the problems the edit introduced count.
 */
export async function syntaxCheck(files: readonly EditedFile[], compare: boolean, failed?: string[]): Promise<string | null> {
  const reports: string[] = [];
  for (const file of files) {
    if (file.after === null) continue;
    grammars ??= loadGrammars();
    const { loader, syntax } = await grammars;
    let found: Awaited<ReturnType<typeof syntax.syntaxProblems>>;
    try {
      found = await syntax.syntaxProblems(loader, file.path, file.after);
    } catch {
      continue; // a grammar that fails to load is `coder doctor`'s news, not the model's
    }
    if (!found?.problems.length) continue;
    let problems = found.problems;
    if (compare && file.before !== null) {
      const old = await syntax.syntaxProblems(loader, file.path, file.before).catch(() => null);
      problems = syntax.introducedProblems(file.after, problems, file.before, old?.problems ?? []);
    }
    if (problems.length) {
      reports.push(syntax.renderSyntaxReport(file.path, found.language, file.after, problems));
      failed?.push(file.path);
    }
  }
  return reports.length ? reports.join("\n\n") : null;
}

/** The lint command for each file: `lintCmd` as one command, or per language (`*` for the rest). */
export function lintCommands(lintCmd: CheckOptions["lintCmd"], paths: readonly string[], languageOf: (path: string) => string | null): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  if (!lintCmd) return groups;
  for (const path of paths) {
    const language = languageOf(path);
    const command = typeof lintCmd === "string" ? lintCmd : ((language ? lintCmd[language] : undefined) ?? lintCmd["*"]);
    if (!command) continue;
    groups.set(command, [...(groups.get(command) ?? []), path]);
  }
  return groups;
}

/** Run each lint command on its files (where `run` runs shown commands); the combined output of the failing ones. */
export async function runLinters(run: CommandRunner, out: Output, lintCmd: CheckOptions["lintCmd"], paths: readonly string[], onOutput?: (text: string) => void, signal?: AbortSignal, failed?: string[]): Promise<CheckResult> {
  const { languageFor } = await import("../../grammars/languages.ts");
  const failures: string[] = [];
  for (const [lint, files] of lintCommands(lintCmd, paths, (p) => languageFor(p)?.name ?? null)) {
    const command = `${lint} ${files.map(shellQuote).join(" ")}`;
    const r = await runCheck(run, out, "lint", command, LINT_TIMEOUT_MS, signal, onOutput);
    // Cancelled, or refused by the editor whose terminal it was to run in: no finding to report.
    if (r.stopped || r.refused !== undefined) return { ok: true, output: "", stopped: true };
    if (r.code !== 0) {
      failures.push(`\`${command}\` reports:\n\n${clip(r.output)}`);
      // The files the output names have problems; a linter that names none failed on all it checked.
      const named = files.filter((f) => r.output.includes(f));
      failed?.push(...(named.length ? named : files));
    }
  }
  return { ok: failures.length === 0, output: failures.join("\n\n") };
}

/**
 * One lint or test command, shown as it runs (its `command` event, its output, its `lint` or
 * `test` event with the result). Its output is stdout then stderr, trimmed; a command the
 * editor refused to run reports the editor's reason as its output.
 */
export async function runCheck(run: CommandRunner, out: Output, purpose: "lint" | "test", command: string, timeoutMs: number, signal?: AbortSignal, onOutput?: (text: string) => void): Promise<ShownResult & { output: string }> {
  out.emit({ type: "command", command, purpose });
  const r = await run({ command, purpose, timeoutMs, ...(signal ? { signal } : {}), onOutput: onOutput ?? ((text) => out.emit({ type: "output", text })) });
  const output = r.refused ?? `${r.stdout}${r.stderr}`.trim();
  out.emit({ type: purpose, ok: r.code === 0 && r.refused === undefined, command, output });
  return { ...r, stopped: r.stopped || signal?.aborted === true, output };
}

/** Lint the edited files (syntax first), then run the tests; the reflection text of the first failure, or null. Ctrl-C (`signal`) ends a running command's whole process group. */
export async function lintAndTest(run: CommandRunner, out: Output, o: CheckOptions, edited: readonly EditedFile[], signal?: AbortSignal): Promise<string | null> {
  if (o.autoLint) {
    const syntax = await syntaxCheck(edited, true);
    if (syntax) {
      out.emit({ type: "lint", ok: false, command: "syntax check", output: syntax });
      return `Your edit left syntax errors. Fix them:\n\n${syntax}`;
    }
    const lint = await runLinters(run, out, o.lintCmd, edited.filter((f) => f.after !== null).map((f) => f.path), undefined, signal);
    if (signal?.aborted) return null;
    if (!lint.ok) return `The linter reports problems in the files you edited. Fix them:\n\n${lint.output}`;
  }
  if (o.testCmd && o.autoTest) {
    const r = await runCheck(run, out, "test", o.testCmd, TEST_TIMEOUT_MS, signal);
    if (r.stopped || r.refused !== undefined) return null;
    if (r.code !== 0) return `The tests (\`${o.testCmd}\`) fail after your edits. Fix the code so they pass:\n\n${clip(r.output)}`;
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
