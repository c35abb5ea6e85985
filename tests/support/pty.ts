// A program in a pseudo-terminal (util-linux `script`), for tests of the REPL as a
// person uses it: write keys, wait for text to appear in what the terminal shows.
import { existsSync } from "node:fs";

/** util-linux `script`, or undefined where it is missing (pseudo-terminal tests skip then). */
export const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));

export interface Terminal {
  proc: ReturnType<typeof Bun.spawn>;
  /** Everything shown so far, colour and cursor sequences removed. */
  readonly output: string;
  /** Resolves when `text` appears after everything waited for so far. */
  waitFor(text: string): Promise<void>;
  /** Everything in one write, as a paste or fast typing delivers it. */
  send(text: string): void;
}

/** Run `argv` in a `cols` × `rows` pseudo-terminal in `cwd`, with exactly `env`. */
export function inTerminal(argv: readonly string[], options: { cwd: string; env: Record<string, string>; cols?: number; rows?: number }): Terminal {
  const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  // A pseudo-terminal starts 0 columns wide: give it a size. `exec`: no shell stays between script and the program.
  const proc = Bun.spawn([SCRIPT as string, "-qfec", `stty cols ${options.cols ?? 120} rows ${options.rows ?? 40}; exec ${command}`, "/dev/null"], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: options.cwd,
    env: options.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  let seen = 0;
  const waiters: { text: string; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const at = output.indexOf(w.text, seen);
      if (at >= 0) {
        waiters.splice(waiters.indexOf(w), 1);
        seen = at + w.text.length;
        w.resolve();
      }
    }
  };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      output += decoder.decode(chunk).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
      check();
    }
  })();
  return {
    proc,
    get output() {
      return output;
    },
    waitFor(text) {
      return new Promise((resolve, reject) => {
        // A wait that never ends says what the terminal showed instead.
        const timer = setTimeout(() => {
          waiters.splice(waiters.findIndex((w) => w.text === text), 1);
          reject(new Error(`waited 30 s for ${JSON.stringify(text)}; the terminal shows:\n${output.slice(-2000)}`));
        }, 30_000);
        waiters.push({ text, resolve: () => (clearTimeout(timer), resolve()) });
        check();
      });
    },
    send(text) {
      const stdin = proc.stdin as import("bun").FileSink;
      stdin.write(text);
      stdin.flush();
    },
  };
}
