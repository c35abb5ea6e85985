// The run modes that do one step of the loop and exit with its status, as Aider's flags
// do: --apply FILE (a saved reply's edits, no model), --lint, --test and --commit.
import { readFileSync } from "node:fs";
import type { App } from "../kernel.ts";
import { UsageError } from "../errors.ts";
import { messageOf } from "../plugins/registry.ts";
import { CoderSession } from "../chat/session.ts";
import { fixRequest } from "../chat/shell-output.ts";
import type { Output } from "../chat/events.ts";
import type { Coder } from "../chat/coder.ts";

/** Does this run do a step instead of a chat? */
export function wantsStep(app: App): boolean {
  const o = app.settings.options;
  return o.apply !== undefined || o.lint === true || o.test === true || o.commit === true;
}

/** Run the steps asked for (--apply, then --lint, --test, --commit); the exit code of the first that fails, else 0. */
export async function runSteps(app: App, coder: Coder, out: Output): Promise<number> {
  const o = app.settings.options;
  if (o.message !== undefined || o.messageFile !== undefined) {
    throw new UsageError("--apply, --lint, --test and --commit run on their own and exit: leave out --message / --message-file");
  }
  if (o.apply !== undefined && !(await applyFile(coder, o.apply))) return 1;
  if (o.lint && !(await lintStep(coder, out))) return 1;
  if (o.test && !(await testStep(app, coder, out))) return 1;
  if (o.commit && !(await commitStep(coder, out))) return 1;
  return 0;
}

/** `--apply FILE`: the reply saved in FILE, parsed and applied in the current format. */
async function applyFile(coder: Coder, file: string): Promise<boolean> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --apply ${file}: ${messageOf(error)}`);
  }
  return coder.applySavedReply(text, file);
}

/** The files to lint: the chat's, else those with pending changes. */
async function lintTargets(coder: Coder): Promise<string[]> {
  if (coder.chat.editable.length) return [...coder.chat.editable];
  return coder.services.git ? coder.services.git.dirtyFiles() : [];
}

/** `--lint`: check the files; when they fail, offer the fix to the model, then check again. */
async function lintStep(coder: Coder, out: Output): Promise<boolean> {
  const session = new CoderSession(coder);
  const paths = await lintTargets(coder);
  if (!paths.length) {
    out.print("Nothing to lint: no files named and no pending changes.");
    return true;
  }
  const first = await session.lint(paths, (text) => out.emit({ type: "output", text }));
  if (first.ok) {
    out.print(`No problems in ${paths.join(", ")}.`);
    return true;
  }
  if (!(await coder.services.gate.confirm("Ask the model to fix them?"))) return false;
  for (const path of paths) coder.chat.add(path);
  await coder.runOne(`Fix the problems the checks report:\n\n${first.output}`);
  const again = await session.lint(paths);
  if (!again.ok) out.warn("The checks still report problems.");
  return again.ok;
}

/** `--test`: run --test-cmd; when it fails, offer the fix to the model, then run it again. */
async function testStep(app: App, coder: Coder, out: Output): Promise<boolean> {
  const command = app.settings.options.testCmd;
  if (!command) throw new UsageError("--test needs a test command: pass --test-cmd CMD (or set testCmd in .coder.json)");
  const run = async () => {
    // The output as it comes, chunks unbroken (pytest's progress dots stay on one line).
    out.emit({ type: "command", command, purpose: "test" });
    const r = await app.kit.run(command, { timeoutMs: 900_000, onOutput: (text) => out.emit({ type: "output", text }) });
    out.emit({ type: "test", ok: r.code === 0, command, output: `${r.stdout}${r.stderr}`.trim() });
    return r;
  };
  const first = await run();
  if (first.code === 0) return true;
  if (!(await coder.services.gate.confirm(`Ask the model to fix what \`${command}\` reports?`))) return false;
  await coder.runOne(fixRequest(command, first.code, `${first.stdout}${first.stderr}`));
  return (await run()).code === 0;
}

/** `--commit`: the pending changes in one commit, its message written by the weak model. */
async function commitStep(coder: Coder, out: Output): Promise<boolean> {
  const git = coder.services.git;
  if (!git) throw new UsageError("--commit needs a git repository (and not --no-git)");
  const result = await git.commitPending();
  // A clean work tree is not a failure of --commit: there was simply nothing to do.
  const nothing = !result.ok && result.message.startsWith("Nothing to commit");
  if (result.ok || nothing) out.print(result.message);
  else out.warn(result.message);
  return result.ok || nothing;
}
