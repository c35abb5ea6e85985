// /test and /lint: run the check, show its output as it comes, and on failure offer
// to have the model fix what it reports.
import type { Kit, Session, SlashCommand } from "../../core/plugin.ts";

/** Hands complete lines to `print` as text arrives; `flush` prints the unfinished last one. */
export function lineSink(print: (line: string) => void): { write(text: string): void; flush(): void } {
  let pending = "";
  return {
    write(text) {
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) print(line);
    },
    flush() {
      if (pending) print(pending);
      pending = "";
    },
  };
}

export function checkCommands(kit: Kit, expand: (arg: string, s: Session) => Promise<string[]>, editFormat: (s: Session) => string): SlashCommand[] {
  const test: SlashCommand = {
    name: "test",
    summary: "run the tests (--test-cmd, or the command given); on failure, offer to have the model fix them",
    usage: "/test [COMMAND]",
    async run(arg, s) {
      const configured = typeof s.options.testCmd === "string" ? s.options.testCmd : "";
      const command = arg.trim() || configured;
      if (!command) return s.warn("No test command: type /test COMMAND, or set --test-cmd (testCmd in .coder.json).");
      // The session shows the run as the tests after an edit (its own line says they passed).
      const r = await s.runTests(command);
      if (r.stopped || r.code === 0) return;
      s.warn(`The tests fail (exit code ${r.code}).`);
      await s.offerOutput(command, r);
    },
  };

  const lint: SlashCommand = {
    name: "lint",
    summary: "check the syntax of files and run --lint-cmd on them (the chat's files by default); offer to fix what they report",
    usage: "/lint [FILE|GLOB ...]",
    async run(arg, s) {
      const paths = arg.trim() ? await expand(arg, s) : [...s.chatFiles()];
      if (!paths.length) return s.warn(arg.trim() ? "No file to lint." : "No files in the chat: type /lint FILE ..., or /add some first.");
      const sink = lineSink((line) => s.print(line));
      const result = await s.lint(paths, (t) => sink.write(t));
      sink.flush();
      if (result.stopped && !result.output) return;
      if (result.ok) return s.print(`No problems in ${paths.join(", ")}.`);
      const failed = result.failed?.length ? result.failed : paths;
      s.warn(`Lint found problems in ${failed.length === 1 ? failed[0] : `${failed.length} files`}${paths.length > 1 ? ` (of ${paths.length} checked)` : ""}.`);
      if (!(await s.confirm("Ask the model to fix them?"))) return;
      const missing = paths.filter((p) => !s.chatFiles().includes(p));
      if (missing.length) await s.addFiles(missing);
      await s.send(`Fix the problems the checks report:\n\n${result.output}`, editFormat(s));
    },
  };

  return [test, lint];
}
