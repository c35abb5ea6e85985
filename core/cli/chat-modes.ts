// The command line's chat modes (CLI.md): the interactive REPL, one-shot
// (`--message`, `--message-file`, piped stdin), --json, watch mode and the
// single steps. It picks the output (JSON, plain or the terminal renderer) and
// who answers the gate, builds the engine (core/chat/create.ts) and runs it;
// signals end a run here, never below.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { App } from "../kernel.ts";
import { exitCodeFor, Interrupted, UsageError } from "../errors.ts";
import { chatHistoryPath, createCoder, missingKeyLine } from "../chat/create.ts";
import { chooseModel } from "../chat/model-choice.ts";
import { loadTranscript } from "../chat/history.ts";
import { messageOf } from "../plugins/registry.ts";
import { CoderSession } from "../chat/session.ts";
import { runSteps, wantsStep } from "./steps.ts";
import { routeLog } from "./settings.ts";
import type { AiCommentWatch } from "../watch/index.ts";
import { NonInteractivePrompter } from "../gate/prompter.ts";
import { TerminalPrompter } from "../term/confirm.ts";
import { diffsShown, type Output, type Totals } from "../chat/events.ts";
import { JsonOutput } from "../term/json-output.ts";
import { PlainOutput } from "../term/render.ts";
import { colourlessTheme, wantsColour, type Theme } from "../term/style.ts";
import type { LiveBox } from "../term/live-box.ts";
import { setTracing, trace } from "../trace.ts";
import type { Coder } from "../chat/coder.ts";

const HANDLED_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
const SIGNAL_EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** Run a chat in the mode the settings ask for; returns the exit code. */
export async function runCoder(app: App): Promise<number> {
  const o = app.settings.options;
  setTracing(o.verbose);
  const screen = await chooseOutput(app);
  const out = screen.out;
  const totals: Totals = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cost: 0, requests: 0 };
  if (out instanceof PlainOutput) out.setTotals(totals);
  let coder: Coder | null = null;
  let exitCode = 0;
  // SIGTERM (CI cancel, timeout, docker stop) and SIGHUP (a closed terminal) are handled like
  // Ctrl-C: the write batch under way is finished and committed, then coder exits 143 / 129.
  let terminatedBy: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT_CODES[signal] ?? 130;
    if (signal !== "SIGINT") terminatedBy ??= code;
    if (coder?.inFlight) return coder.interrupt();
    if (!app.interactive || signal !== "SIGINT") {
      out.flush();
      out.emit({ type: "end", exitCode: code, totals });
      // Plugins close what they opened (bounded: a hung dispose cannot keep coder alive).
      void app.registry.hooks.dispose().finally(() => process.exit(code));
    }
  };
  for (const signal of HANDLED_SIGNALS) process.on(signal, onSignal);
  try {
    const step = wantsStep(app);
    // --watch-files without a terminal: the watched comments are the requests, not stdin.
    const watchOnly = o.watchFiles && !app.interactive && o.message === undefined && o.messageFile === undefined;
    const message = step || watchOnly ? null : await oneShotMessage(app);
    // The REPL and its line editor load only now (one-shot and --json runs never pay for them),
    // while the coder is built.
    const replModule = message === null && !step && !watchOnly ? import("../term/repl.ts") : null;
    await ensureKey(app, screen, { step, watchOnly, message });
    trace("runCoder: start");
    coder = await createCoder(app, {
      out,
      totals,
      // The bell goes to the terminal, never into --json's stdout or a pipe.
      bell: () => {
        if (process.stdout.isTTY && !o.json) process.stdout.write("\x07");
      },
      prompter: ({ transcript, out: recorded }) =>
        app.interactive
          ? new TerminalPrompter({ theme: screen.theme, settled: screen.settled, interrupted: (question) => transcript.note(`${question} No (Ctrl-C)`), live: screen.live })
          : new NonInteractivePrompter((text) => recorded.warn(text)),
    });
    trace("runCoder: coder ready");
    const files = [...coder.chat.editable];
    out.emit({ type: "start", version: app.version, model: coder.model, editFormat: coder.format.item.name, files });
    if (o.restoreChatHistory) await restoreHistory(app, coder, out);
    if (o.load !== undefined && !step) await new CoderSession(coder).runCommand(`/load ${o.load}`);
    // The binary starts with a raised JIT policy for short runs (scripts/build.ts JIT_POLICY);
    // a session that waits for more (the REPL, --watch-files, steps) gets the normal one back.
    if (message === null) Bun.unsafe.setJITPolicy(1);

    if (step) {
      exitCode = await runSteps(app, coder, out);
    } else if (watchOnly) {
      await (await startWatch(app, coder, out)).runForever();
    } else if (message !== null) {
      // On a terminal, Esc or Ctrl-C are keys: the stop is said in one line, with no ^C echoed into the reply.
      const unwatch = watchStopKeys(() => onSignal("SIGINT"));
      try {
        // CLI.md: a message that starts with / runs that slash command in every mode.
        if (message.trimStart().startsWith("/")) exitCode = await new CoderSession(coder).runOneShotCommand(message);
        else exitCode = (await coder.runOne(message)).ok ? 0 : 1;
      } finally {
        unwatch();
      }
    } else {
      const { runRepl } = await (replModule ?? import("../term/repl.ts"));
      trace("runCoder: repl loaded");
      const watch = o.watchFiles ? await startWatch(app, coder, out) : null;
      exitCode = await runRepl({ app, coder, out: coder.services.out, front: out instanceof PlainOutput ? out : null, screen, inputHistoryPath: inputHistoryPath(app), watch, terminatedBy: () => terminatedBy });
    }
  } catch (error) {
    exitCode = error instanceof Interrupted ? (terminatedBy ?? 130) : exitCodeFor(error);
    if (!(error instanceof Interrupted)) {
      // Typed errors are the user's news; anything else is a bug, with its stack under --verbose.
      if (o.verbose && error instanceof Error && !("exitCode" in error) && error.stack) process.stderr.write(`${error.stack}\n`);
      out.emit({ type: "error", message: messageOf(error), code: exitCode });
    } else if (out instanceof PlainOutput) out.stopped();
    else out.warn("Interrupted.");
  } finally {
    for (const signal of HANDLED_SIGNALS) process.off(signal, onSignal);
    coder?.cancelPings();
  }
  out.flush();
  out.emit({ type: "end", exitCode, totals });
  trace("runCoder: done");
  return exitCode;
}

/**
 * The chosen model needs a key that is not there: the REPL offers guided set-up (core/cli/init.ts,
 * loaded only then); a run nobody can answer exits 2 with the one line saying what to set.
 * Slash commands and --apply ask no model, so they need no key.
 */
async function ensureKey(app: App, screen: Screen, run: { step: boolean; watchOnly: boolean; message: string | null }): Promise<void> {
  const o = app.settings.options;
  if (o.apply !== undefined || run.message?.trimStart().startsWith("/")) return;
  let noKeyAtAll: string | null = null;
  const model = o.model ?? chooseModel(app, (text) => (noKeyAtAll = text));
  const missing = missingKeyLine(app, model);
  if (!missing) return;
  if (app.interactive && screen.lineEditor && !run.step && !run.watchOnly && run.message === null) {
    const { guidedSetup } = await import("./init.ts");
    const reason = noKeyAtAll ? "No API key found (environment, .env, an earlier set-up)." : `No API key for ${model}.`;
    if (await guidedSetup(app, `${reason}\nPick a provider and paste its key.`, true)) return;
    throw new UsageError(missing);
  }
  throw new UsageError(noKeyAtAll ?? missing);
}

/** While a one-shot request runs on a terminal: Esc and Ctrl-C stop it, Ctrl-Z suspends. Returns the undo. */
function watchStopKeys(stop: () => void): () => void {
  const stdin = process.stdin;
  if (!stdin.isTTY || !process.stdout.isTTY) return () => {};
  let active = true;
  const onData = (data: string) => {
    if (data === "\x03" || data === "\x1b") stop();
    else if (data === "\x1a") {
      process.kill(process.pid, "SIGTSTP");
      // Back from `fg` (or never stopped): the shell may have left its own mode; raw again.
      setTimeout(() => {
        if (!active) return;
        stdin.setRawMode(false);
        stdin.setRawMode(true);
      }, 50);
    }
  };
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.on("data", onData);
  stdin.resume();
  return () => {
    active = false;
    stdin.off("data", onData);
    stdin.setRawMode(false);
    stdin.pause();
  };
}

/** Where the engine's events go, and what the terminal needs to ask questions below them. */
export interface Screen {
  out: Output;
  /** The colours in use (the terminal renderer, the line editor, one-key prompts); null: plain text. */
  theme: Theme | null;
  /** Resolves once everything emitted is on the screen. */
  settled: () => Promise<void>;
  /** The REPL's input box while the model answers (a terminal that moves its cursor); null otherwise. */
  live: LiveBox | null;
  /** The REPL reads with the line editor (menu, Ctrl-R search), with or without colours. */
  lineEditor: boolean;
}

/**
 * JSON events with --json; the terminal renderer (loaded only then) when stdout is a terminal
 * with colours on; plain text for pipes, files, --no-pretty and NO_COLOR.
 */
async function chooseOutput(app: App): Promise<Screen> {
  const o = app.settings.options;
  const settled = () => Promise.resolve();
  if (o.json) return { out: new JsonOutput(), theme: null, settled, live: null, lineEditor: false };
  const showDiffs = diffsShown(o, app.interactive);
  const interactive = app.interactive;
  // The line editor (and the live box while the model answers) needs a terminal that moves its cursor.
  const lineEditor = interactive && Boolean(process.stdin.isTTY && process.stdout.isTTY) && app.env.TERM !== "dumb";
  let live: LiveBox | null = null;
  const out = (t: string) => (live ? live.write(t) : process.stdout.write(t));
  // Warnings go to stderr; on the same terminal they pass the box like the rest.
  const err = (t: string) => (live && process.stderr.isTTY ? live.write(t) : process.stderr.write(t));
  const liveHooks = { show: () => live?.show(), hide: () => live?.hide() };
  // With the live box, plugins' and the kernel's log lines pass through the renderer, which ends the reply's line and redraws the box.
  const ownLog = (renderer: Output) => routeLog({ line: (text) => renderer.print(text), warn: (message) => renderer.warn(message) });
  if (!wantsColour(app.env, o.pretty, Boolean(process.stdout.isTTY))) {
    const plain = lineEditor ? new PlainOutput(out, err, true, { showDiffs, interactive, live: liveHooks }) : new PlainOutput(undefined, undefined, undefined, { showDiffs, interactive });
    if (lineEditor) {
      live = new (await import("../term/live-box.ts")).LiveBox(colourlessTheme());
      ownLog(plain);
    }
    return { out: plain, theme: null, settled, live, lineEditor };
  }
  const { TtyOutput } = await import("../term/tty-output.ts");
  const tty = new TtyOutput({ showDiffs, interactive, light: o.lightMode && !o.darkMode, codeTheme: o.codeTheme, ...(lineEditor ? { out, err, live: liveHooks } : {}) });
  if (lineEditor) {
    live = new (await import("../term/live-box.ts")).LiveBox(tty.theme);
    ownLog(tty);
  }
  return { out: tty, theme: tty.theme, settled: () => tty.settled(), live, lineEditor };
}

/** The message of a one-shot run (`--message`, `--message-file`, or piped stdin); null for the REPL. */
async function oneShotMessage(app: App): Promise<string | null> {
  const o = app.settings.options;
  if (o.message !== undefined && o.messageFile !== undefined) {
    throw new UsageError("--message and --message-file both give the request; pass only one of them");
  }
  if (o.message !== undefined) {
    if (!o.message.trim()) throw new UsageError("--message is empty");
    return o.message;
  }
  if (o.messageFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.messageFile, "utf8");
    } catch (error) {
      throw new UsageError(`cannot read --message-file ${o.messageFile}: ${messageOf(error)}`);
    }
    if (!text.trim()) throw new UsageError(`--message-file ${o.messageFile} is empty`);
    return text;
  }
  if (app.interactive) return null;
  if (process.stdin.isTTY) throw new UsageError("no message: pass --message TEXT or --message-file FILE (or pipe the request on stdin)");
  const text = await new Response(Bun.stdin.stream()).text();
  if (!text.trim()) throw new UsageError("no message: stdin was empty");
  return text;
}

function inputHistoryPath(app: App): string {
  const o = app.settings.options;
  return o.inputHistoryFile ? resolve(app.root, o.inputHistoryFile) : join(app.root, ".coder", "input.history");
}

/** `--restore-chat-history`: the previous transcript becomes the done history, summarised if it is too long. */
async function restoreHistory(app: App, coder: Coder, out: Output): Promise<void> {
  const all = loadTranscript(chatHistoryPath(app));
  // A transcript grows over every session: only its newest part (about a quarter of the
  // window, at ~4 characters a token) is worth summarising, and fits the summariser.
  const room = Math.min(coder.modelInfo.contextWindow / 4, 50_000) * 4;
  let start = all.length;
  for (let used = 0; start > 0 && used + (all[start - 1]?.content.length ?? 0) <= room; start--) used += all[start - 1]?.content.length ?? 0;
  while (start < all.length && all[start]?.role !== "user") start++;
  const messages = all.slice(start);
  if (!messages.length) return;
  coder.history.done = messages;
  try {
    if (await coder.summariseNow()) out.print(`Restored the chat history (${messages.length} messages, summarised).`);
    else out.print(`Restored the chat history (${messages.length} messages).`);
  } catch (error) {
    out.warn(`Could not summarise the restored history: ${messageOf(error)}; keeping its last messages.`);
    coder.history.done = messages.slice(-8);
  }
}

/** Start watching the repository for AI comments (--watch-files). */
async function startWatch(app: App, coder: Coder, out: Output): Promise<AiCommentWatch> {
  const { AiCommentWatch } = await import("../watch/index.ts");
  const watch = new AiCommentWatch(app, coder, out);
  await watch.start();
  return watch;
}
