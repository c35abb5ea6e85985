// The repo map inside the compiled binary (dist/coder): `coder map` in a fresh git
// repository with the binary copied alone (no node_modules anywhere up the tree)
// parses with its worker pool and embedded grammars, needs no model or API key,
// and the second run is served from the cache.
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateRepo } from "../scripts/gen-repo.ts";

const BINARY = process.env.CODER_BIN ?? join(import.meta.dir, "..", "dist", "coder");
const base = realpathSync(mkdtempSync(join(tmpdir(), "coder-repomap-bin-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function run(bin: string, args: string[], cwd: string) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(base, "home"), NO_COLOR: "1" };
  const r = Bun.spawnSync([bin, ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test.skipIf(!existsSync(BINARY))("coder map works from the compiled binary alone, with workers and a warm cache", () => {
  mkdirSync(join(base, "home"), { recursive: true });
  const bin = join(base, "bin", "coder");
  mkdirSync(join(base, "bin"));
  copyFileSync(BINARY, bin);
  Bun.spawnSync(["chmod", "+x", bin]);
  const root = join(base, "repo");
  generateRepo(root, 120, 7);
  writeFileSync(join(root, "notes.kt"), "class Notebook {\n  fun addNote(text: String) = text\n}\n");
  const git = (...args: string[]) => Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd: root });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "init");

  const cold = run(bin, ["map"], root);
  expect(cold.stderr).not.toContain("worker pool failed");
  if (cold.code !== 0) console.error(cold.stderr.slice(-3000));
  expect(cold.code).toBe(0);
  expect(cold.stdout).toContain("Map of this repository");
  expect(cold.stdout).toMatch(/│(export function|def|func|pub fn|  static int) /);
  expect(existsSync(join(root, ".coder", "cache", "repomap", "cache.sqlite"))).toBe(true);

  const warm = run(bin, ["--show-repo-map"], root);
  expect(warm.code).toBe(0);
  expect(warm.stdout).toBe(cold.stdout);

  const withChat = run(bin, ["map", "notes.kt"], root);
  expect(withChat.code).toBe(0);
  expect(withChat.stdout).toContain("Map of the other files");
  expect(withChat.stdout).not.toContain("notes.kt");

  // A chat file's imports through tsconfig.json `paths` (JSON with comments) come first.
  writeFileSync(join(root, "tsconfig.json"), '{\n  // aliases\n  "compilerOptions": { "paths": { "@billing/*": ["billing/*"] } },\n}\n');
  mkdirSync(join(root, "billing"));
  writeFileSync(join(root, "billing", "ledger.ts"), "export class LedgerBook {\n  post(amount: number) {\n    return amount;\n  }\n}\n");
  writeFileSync(join(root, "checkout.ts"), 'import { LedgerBook } from "@billing/ledger";\n\nexport const book = new LedgerBook();\n');
  git("add", "-A");
  git("commit", "-q", "-m", "billing");
  const imported = run(bin, ["map", "checkout.ts"], root);
  expect(imported.code).toBe(0);
  expect(imported.stdout).toContain("billing/ledger.ts:\n│export class LedgerBook {");
}, 120_000);
