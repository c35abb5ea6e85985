// A REPL session of dist/coder in a pseudo-terminal (util-linux `script`): type lines,
// wait for text to appear on the screen (escape sequences stripped).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BINARY, type Repo } from "../engine-harness.ts";
import type { FakeServer } from "./fake-server.ts";

/** util-linux `script`, or undefined where it is missing (the REPL tests skip then). */
export const SCRIPT = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));

/** A REPL session in a pseudo-terminal: type lines, wait for text to appear. */
export function startRepl(repo: Repo, server: FakeServer, args: string[]) {
  const argv = [BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", server.url, "--api-key", "sk-test", ...args];
  const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  // `exec`: no shell stays between script and coder (a shell that saw the Ctrl-C would exit 130 itself).
  const proc = Bun.spawn([SCRIPT as string, "-qfec", `exec ${command}`, "/dev/null"], { timeout: 90_000, killSignal: "SIGKILL",
    cwd: repo.root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), TERM: "dumb", GIT_CONFIG_NOSYSTEM: "1" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  let seen = 0;
  const waiters: { text: string; from: number; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (output.indexOf(w.text, w.from) >= 0) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      output += decoder.decode(chunk).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
      check();
    }
  })();
  return {
    proc,
    get output() {
      return output;
    },
    /** Resolves when `text` appears after everything waited for so far. */
    waitFor(text: string): Promise<void> {
      return new Promise((resolve) => {
        waiters.push({
          text,
          from: seen,
          resolve: () => {
            seen = output.indexOf(text, seen) + text.length;
            resolve();
          },
        });
        check();
      });
    },
    type(line: string) {
      proc.stdin.write(`${line}\r`);
      proc.stdin.flush();
    },
    key(bytes: string) {
      proc.stdin.write(bytes);
      proc.stdin.flush();
    },
  };
}
