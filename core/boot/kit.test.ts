import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { completeRequest, plainFiles, runCommand } from "./kit.ts";
import type { ModelEvent } from "../plugin.ts";

test("completeRequest assembles text and tool calls; a retry voids what came before", async () => {
  const events: ModelEvent[] = [
    { type: "text", text: "lost" },
    { type: "retry", attempt: 1, delayMs: 0, reason: "429" },
    { type: "text", text: "Hel" },
    { type: "text", text: "lo" },
    { type: "tool-call", index: 1, id: "b", name: "create_file", argumentsDelta: '{"p"' },
    { type: "tool-call", index: 0, id: "a", name: "edit_file", argumentsDelta: "{}" },
    { type: "tool-call", index: 1, argumentsDelta: ":1}" },
    { type: "finish", reason: "tool_calls" },
  ];
  const adapter = { async *stream() { yield* events; } };
  const reply = await completeRequest(adapter, { model: "m", messages: [], stream: true, env: {} }, new AbortController().signal);
  expect(reply).toEqual({
    text: "Hello",
    toolCalls: [
      { id: "a", name: "edit_file", arguments: "{}" },
      { id: "b", name: "create_file", arguments: '{"p":1}' },
    ],
    finishReason: "tool_calls",
  });
});

test("runCommand: argv or shell, input, exit codes, no throw for a missing program", async () => {
  const cwd = tmpdir();
  expect(await runCommand(["sh", "-c", "cat; exit 3"], { cwd, input: "in" })).toEqual({ code: 3, stdout: "in", stderr: "" });
  expect((await runCommand("echo $((1+2))", { cwd })).stdout.trim()).toBe("3");
  expect((await runCommand(["/no/such/program"], { cwd })).code).not.toBe(0);
});

test("plainFiles refuses paths outside the root and symlinks out", async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-")));
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "coder-kit-out-")));
  writeFileSync(join(root, "a.txt"), "A");
  writeFileSync(join(outside, "secret"), "S");
  symlinkSync(join(outside, "secret"), join(root, "link"));
  const files = plainFiles(root, async () => ["a.txt"]);
  expect(await files.read("a.txt")).toBe("A");
  expect(await files.read("../secret")).toBeNull();
  expect(await files.read("link")).toBeNull();
  expect(() => files.absolute("../x")).toThrow("outside the repository");
  expect(existsSync(files.absolute("a.txt"))).toBe(true);
});
