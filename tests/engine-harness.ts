// Shared set-up of the engine's end-to-end tests: a temporary git repository,
// the fake OpenAI-compatible server in this process, and the built binary
// (dist/coder) run against it.
import { afterEach } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type FakeScript, type FakeServer, startFakeServer } from "./support/fake-server.ts";

export const BINARY = join(import.meta.dir, "..", "dist", "coder");

export interface Repo {
  root: string;
  home: string;
  git(...args: string[]): string;
  write(path: string, content: string): void;
  read(path: string): string;
}

const made: string[] = [];

/** Remove every repository made so far (call from afterEach). */
export function removeRepos(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A temporary repository with `files` committed, and a HOME of its own (no global config). */
export function makeRepo(files: Record<string, string>): Repo {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "coder-e2e-")));
  made.push(base);
  const root = join(base, "repo");
  const home = join(base, "home");
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true });
  const git = (...args: string[]) => {
    const r = Bun.spawnSync(["git", ...args], { cwd: root, env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" } });
    if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
    return r.stdout.toString();
  };
  const write = (path: string, content: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  git("init", "-q", "-b", "main");
  git("config", "user.name", "Test User");
  git("config", "user.email", "test@example.com");
  git("config", "commit.gpgsign", "false");
  for (const [path, content] of Object.entries(files)) write(path, content);
  write(".gitignore", ".coder/\n");
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  return { root, home, git, write, read: (path) => readFileSync(join(root, path), "utf8") };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run dist/coder in `repo` against `server` with a test model; `args` follow the defaults. */
export async function runCoder(
  repo: Repo,
  server: FakeServer,
  args: string[],
  opts: { stdin?: string; env?: Record<string, string>; cwd?: string; onStart?: (proc: ReturnType<typeof Bun.spawn>) => void } = {},
): Promise<RunResult> {
  const proc = Bun.spawn(
    [BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", server.url, "--api-key", "sk-test", "--no-pretty", ...args],
    {
      // A run that hangs is killed, not left to burn a core after its test gave up.
      timeout: 90_000,
      killSignal: "SIGKILL",
      cwd: opts.cwd ?? repo.root,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: repo.home,
        XDG_CONFIG_HOME: join(repo.home, ".config"),
        GIT_CONFIG_NOSYSTEM: "1",
        ...opts.env,
      },
      stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  opts.onStart?.(proc);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A fake server whose weak model answers every commit-message request. */
export async function serverWith(steps: NonNullable<Exclude<FakeScript, unknown[]>>["steps"] | FakeScript): Promise<FakeServer> {
  const list = Array.isArray(steps) ? steps : steps.steps;
  // Weak-model steps go first: main-model requests skip them (model filter), so the main script's order holds.
  const weak = list.filter((s) => s.model === "weak-model");
  const main = list.filter((s) => s.model !== "weak-model");
  return startFakeServer([...weak, { model: "weak-model", text: "feat: apply the requested change", repeat: true }, ...main]);
}

/**
 * Per test file: a `server(steps)` whose fake servers stop, and whose temporary
 * repositories are removed, after each test.
 */
export function serverPerTest(): (steps: Parameters<typeof serverWith>[0]) => Promise<FakeServer> {
  const servers: FakeServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop();
    removeRepos();
  });
  return async (steps) => {
    const s = await serverWith(steps);
    servers.push(s);
    return s;
  };
}

/** The chat requests sent to the main model (not the weak model's). */
export function mainRequests(server: FakeServer): any[] {
  return server.chatBodies().filter((b) => !String(b.model).endsWith("weak-model"));
}

export function weakRequests(server: FakeServer): any[] {
  return server.chatBodies().filter((b) => String(b.model).endsWith("weak-model"));
}

/** A SEARCH/REPLACE block for the `diff` format. */
export function block(path: string, search: string, replace: string): string {
  return `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n\`\`\`\n`;
}

export function lastUser(body: any): string {
  const users = (body.messages as any[]).filter((m) => m.role === "user");
  const last = users.at(-1);
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
}
