import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guessProjectCommands } from "./init.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "coder-init-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test("lint and test commands are guessed from the project's manifest", () => {
  expect(guessProjectCommands(project({ "package.json": JSON.stringify({ scripts: { lint: "eslint .", test: "vitest" } }) }))).toEqual({ from: "package.json", lintCmd: "npm run lint", testCmd: "npm test" });
  expect(guessProjectCommands(project({ "package.json": JSON.stringify({ scripts: { test: "bun test" } }), "bun.lock": "" }))).toEqual({ from: "package.json", testCmd: "bun run test" });
  expect(guessProjectCommands(project({ "pyproject.toml": "[tool.ruff]\nline-length = 100\n" }))).toEqual({ from: "pyproject.toml", lintCmd: "ruff check", testCmd: "pytest" });
  expect(guessProjectCommands(project({ "go.mod": "module x\n" }))).toEqual({ from: "go.mod", lintCmd: "go vet", testCmd: "go test ./..." });
  expect(guessProjectCommands(project({ "Cargo.toml": "[package]\n" }))).toEqual({ from: "Cargo.toml", lintCmd: "cargo clippy", testCmd: "cargo test" });
  expect(guessProjectCommands(project({ "README.md": "hi" }))).toEqual({});
  expect(guessProjectCommands(project({ "package.json": "{ not json" }))).toEqual({ from: "package.json" });
});

test("a manifest the repository made a link to /dev/zero, or a pipe, is read as none: no endless read, no hang", () => {
  const zero = project({});
  symlinkSync("/dev/zero", join(zero, "package.json"));
  expect(guessProjectCommands(zero)).toEqual({ from: "package.json" });
  const pipe = project({});
  expect(Bun.spawnSync(["mkfifo", join(pipe, "pyproject.toml")]).exitCode).toBe(0);
  expect(guessProjectCommands(pipe)).toEqual({ from: "pyproject.toml", testCmd: "pytest" });
});
