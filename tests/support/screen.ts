// The real dist/coder in a pseudo-terminal (util-linux `script`), its output fed to a
// headless xterm: tests read the screen a person would see (text and colours), type keys,
// and paste with bracketed paste as a terminal does.
import { existsSync } from "node:fs";
import { join } from "node:path";
import xterm from "@xterm/headless";
import type { FakeServer } from "./fake-server.ts";

export const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));
const BINARY = join(import.meta.dir, "..", "..", "dist", "coder");

export interface ScreenOptions {
  cwd: string;
  home: string;
  server: FakeServer;
  args: string[];
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  /** Only `args`: no test model, key or server flags (a first run without a key). */
  bare?: boolean;
  /** Run this instead of dist/coder (e.g. a shell with job control, to start coder in). */
  command?: string[];
}

export interface Screen {
  proc: ReturnType<typeof Bun.spawn>;
  /** Everything written to the terminal, escape sequences included. */
  readonly raw: string;
  /** The screen's lines as text (trailing spaces trimmed). */
  lines(): string[];
  text(): string;
  /** Resolves once `text` is on the screen (or in the scrollback); rejects after `ms`. */
  waitFor(text: string | RegExp, ms?: number): Promise<void>;
  /** Resolves once the last line written is an empty prompt ("> ", "ask > ", "... "): typed keys go to it. */
  waitForPrompt(ms?: number): Promise<void>;
  /** The distinct foreground colours of the cells of the lines that contain `text`. */
  coloursOf(text: string): Set<string>;
  send(bytes: string): void;
  type(line: string): void;
  /** A bracketed paste, as a terminal sends it once the program asked for bracketed paste. */
  paste(text: string): void;
  /** Resolves once nothing has been written for `quietMs` (a draw in progress has ended); rejects after `ms`. */
  settle(quietMs?: number, ms?: number): Promise<void>;
  /**
   * Resize the terminal as a window manager would: the pseudo-terminal's size changes (the
   * kernel signals SIGWINCH to the program) and the headless xterm reflows its lines.
   */
  resize(cols: number, rows: number): void;
  exited: Promise<number>;
}

/** dist/coder and its arguments for a test: the test model and the fake server unless `bare`. */
export function coderArgv(opts: Pick<ScreenOptions, "bare" | "server" | "args">): string[] {
  return opts.bare ? [BINARY, ...opts.args] : [BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", opts.server.url, "--api-key", "sk-test", ...opts.args];
}

export function startScreen(opts: ScreenOptions): Screen {
  const cols = opts.cols ?? 120;
  const rows = opts.rows ?? 45;
  const argv = opts.command ?? coderArgv(opts);
  const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const proc = Bun.spawn([SCRIPT as string, "-qfec", `stty cols ${cols} rows ${rows}; exec ${command}`, "/dev/null"], {
    cwd: opts.cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: opts.home,
      XDG_CONFIG_HOME: join(opts.home, ".config"),
      TERM: "xterm-256color",
      GIT_CONFIG_NOSYSTEM: "1",
      ...opts.env,
    },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const term = new xterm.Terminal({ cols, rows, scrollback: 2000, allowProposedApi: true });
  let raw = "";
  const waiters: (() => void)[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      const text = decoder.decode(chunk, { stream: true });
      raw += text;
      term.write(text, () => {
        for (const wake of waiters.splice(0)) wake();
      });
    }
  })();
  const buffer = () => term.buffer.active;
  const lines = () => {
    const all: string[] = [];
    for (let i = 0; i < buffer().length; i++) all.push(buffer().getLine(i)?.translateToString(true) ?? "");
    return all;
  };
  const until = (found: () => boolean, what: string, ms: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; the screen:\n${screen.text().trimEnd()}`)), ms);
      const check = () => {
        if (found()) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  const screen: Screen = {
    proc,
    get raw() {
      return raw;
    },
    lines,
    text: () => lines().join("\n"),
    waitFor(text, ms = 15_000) {
      const found = () => (typeof text === "string" ? screen.text().includes(text) : text.test(screen.text()));
      return until(found, String(text), ms);
    },
    waitForPrompt(ms = 15_000) {
      const last = () => lines().filter((l) => l.trim()).at(-1) ?? "";
      return until(() => /^((\w+ )?>|\.\.\.) *$/.test(last()), "an empty prompt", ms);
    },
    coloursOf(text) {
      const colours = new Set<string>();
      const cell = buffer().getNullCell();
      for (let i = 0; i < buffer().length; i++) {
        const line = buffer().getLine(i);
        if (!line || !line.translateToString(true).includes(text)) continue;
        for (let x = 0; x < line.length; x++) {
          line.getCell(x, cell);
          if (!cell.getChars().trim()) continue;
          colours.add(cell.isFgDefault() ? "default" : `${cell.getFgColorMode()}:${cell.getFgColor()}`);
        }
      }
      return colours;
    },
    send(bytes) {
      const stdin = proc.stdin as import("bun").FileSink;
      stdin.write(bytes);
      stdin.flush();
    },
    type(line) {
      screen.send(`${line}\r`);
    },
    paste(text) {
      screen.send(`\x1b[200~${text}\x1b[201~`);
    },
    settle(quietMs = 300, ms = 15_000) {
      return new Promise<void>((resolve, reject) => {
        const started = Date.now();
        let seen = raw.length;
        let lastChange = started;
        const tick = setInterval(() => {
          if (raw.length !== seen) {
            seen = raw.length;
            lastChange = Date.now();
          } else if (Date.now() - lastChange >= quietMs) {
            clearInterval(tick);
            resolve();
          }
          if (Date.now() - started > ms) {
            clearInterval(tick);
            reject(new Error(`the screen kept changing for ${ms} ms`));
          }
        }, 25);
      });
    },
    resize(cols, rows) {
      term.resize(cols, rows);
      // The program is script's child (sh exec'd it); its stdin is the pseudo-terminal.
      const child = Bun.spawnSync(["pgrep", "-P", String(proc.pid)]).stdout.toString().trim().split("\n")[0];
      Bun.spawnSync(["sh", "-c", `stty cols ${cols} rows ${rows} < /proc/${child}/fd/0`]);
    },
    exited: proc.exited,
  };
  return screen;
}
