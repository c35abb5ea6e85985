// Driving the built binary for the safety e2e tests: a fake model server per run,
// one-shot runs through pipes, REPL runs through a pseudo-terminal (`script`), and
// a readiness probe so the tests skip with a reason while the engine is unfinished.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { type FakeStep, type RecordedRequest, startFakeServer } from "./support/fake-server.ts";
import { makeRepo } from "./git-helpers.ts";

/** The binary under test: dist/coder, or CODER_BIN (e.g. a private build while others rebuild dist/). */
export const BIN = process.env.CODER_BIN ?? join(import.meta.dir, "..", "dist", "coder");
const OPENAI_PLUGIN = join(import.meta.dir, "..", "plugins", "openai", "index.ts");
export const MODEL = "openai/gpt-4.1";

/** Extra arguments every run needs (the OpenAI adapter as --plugin while builtins.ts lacks it). */
let extraArgs: string[] = [];

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Chat-completion requests the model received, in order. */
  requests: RecordedRequest[];
}

/** One SEARCH/REPLACE block in the `diff` format. */
export function block(path: string, search: string, replace: string): string {
  return `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n\`\`\`\n`;
}

/** The text of the last user message of a request (a reflection carries the report there). */
export function lastUser(req: RecordedRequest | undefined): string {
  const msgs = (req?.body?.messages ?? []) as { role: string; content: unknown }[];
  const user = msgs.filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
}

/** Every message text of a request, joined. */
export function allText(req: RecordedRequest | undefined): string {
  return ((req?.body?.messages ?? []) as { content: unknown }[]).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
}

function chatRequests(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.path.endsWith("/chat/completions"));
}

/** Run `coder args` one-shot in `root` against a fake server scripted with `steps`. */
export async function runOnce(root: string, args: string[], steps: FakeStep[], env: Record<string, string> = {}): Promise<RunResult> {
  const server = await startFakeServer(steps);
  try {
    const proc = Bun.spawn([BIN, ...extraArgs, "--model", MODEL, "--api-base", server.url, "--api-key", "sk-test", "--no-pretty", ...args], { timeout: 90_000, killSignal: "SIGKILL",
      cwd: root,
      env: { ...process.env, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr, requests: chatRequests(server.requests) };
  } finally {
    await server.stop();
  }
}

const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
// biome-ignore lint: ANSI escapes are the point
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\r/g;

/** A REPL run in a pseudo-terminal: wait for output, type keys. */
export class PtyRun {
  private raw = "";
  private readonly proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  private readonly done: Promise<number>;

  private constructor(root: string, argv: string[], env: Record<string, string>) {
    // A real size: with 0 rows clack shows a single option of a menu.
    this.proc = Bun.spawn(["script", "-qfec", `stty rows 40 cols 120; exec ${argv.map(shq).join(" ")}`, "/dev/null"], { timeout: 90_000, killSignal: "SIGKILL",
      cwd: root,
      env: { ...process.env, TERM: "xterm", COLUMNS: "120", LINES: "40", ...env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const stdout = this.proc.stdout;
    const reader = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stdout) this.raw += decoder.decode(chunk, { stream: true });
    })();
    this.done = Promise.all([reader, this.proc.exited]).then(([, code]) => code);
  }

  static async start(root: string, args: string[], steps: FakeStep[], env: Record<string, string> = {}): Promise<{ pty: PtyRun; finish: () => Promise<RecordedRequest[]> }> {
    const server = await startFakeServer(steps);
    const pty = new PtyRun(root, [BIN, ...extraArgs, "--model", MODEL, "--api-base", server.url, "--api-key", "sk-test", ...args], env);
    return {
      pty,
      finish: async () => {
        await pty.exit();
        await server.stop();
        return chatRequests(server.requests);
      },
    };
  }

  /** Output so far, without terminal escapes. */
  get text(): string {
    return this.raw.replace(ANSI, "");
  }

  /** Wait until the output (after `from` characters) matches; throws with the output after `guardMs`. */
  async waitFor(pattern: RegExp | string, from = 0, guardMs = 30_000): Promise<number> {
    const started = Date.now();
    for (;;) {
      const text = this.text.slice(from);
      const at = typeof pattern === "string" ? text.indexOf(pattern) : (pattern.exec(text)?.index ?? -1);
      if (at >= 0) return from + at + 1;
      if (Date.now() - started > guardMs) throw new Error(`waited for ${pattern} in:\n${this.text.slice(-3000)}`);
      await Bun.sleep(25);
    }
  }

  type(keys: string): void {
    this.proc.stdin.write(keys);
    this.proc.stdin.flush();
  }

  /** Leave the REPL (Ctrl-D) and wait for the process. */
  async exit(): Promise<number> {
    try {
      this.type("\x04");
      this.proc.stdin.end();
    } catch {
      // already closed
    }
    return this.done;
  }
}

export const KEY = { down: "\x1b[B", up: "\x1b[A", enter: "\r" };

/**
 * Is the engine far enough along for end-to-end runs? Null when it is, else why not.
 * Tries a one-shot edit in a scratch repository (with the OpenAI adapter as --plugin if needed).
 */
export async function engineReadiness(): Promise<string | null> {
  if (!existsSync(BIN)) return `${BIN} is missing (run npm run build)`;
  if (!Bun.which("script")) return "the `script` command (util-linux) is missing";
  let last = "";
  for (const extra of [[], ["--plugin", OPENAI_PLUGIN]]) {
    extraArgs = extra;
    const root = makeRepo({ "probe.txt": "one\n" });
    try {
      const r = await runOnce(root, ["--yes-always", "-m", "change one to two", "probe.txt"], [{ text: block("probe.txt", "one\n", "two\n") }, { text: "feat: change one to two", repeat: true }]);
      const changed = (await Bun.file(join(root, "probe.txt")).text()) === "two\n";
      if (r.code === 0 && changed) return null;
      last = `probe run exited ${r.code}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`;
    } catch (error) {
      last = `probe run failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  extraArgs = [];
  return `the engine is not ready for e2e runs (${last})`;
}
