// The build's settings that keep a short run's resident memory down (issue 26): the bytecode laid
// out by the recorded start-up profiles, and a raised JIT policy the REPL lowers again.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { BYTECODE_PROFILES, compileOptions, JIT_POLICY, profilePath } from "./build.ts";

test("the binary's bytecode is laid out by the recorded start-up profiles, the one-shot task's first", () => {
  const options = compileOptions("/tmp/coder-test-out");
  expect(options.bytecodeOrder).toEqual(BYTECODE_PROFILES.map(profilePath));
  expect(BYTECODE_PROFILES[0]).toBe("task");
  for (const name of BYTECODE_PROFILES) {
    const lines = readFileSync(profilePath(name), "utf8").split("\n");
    // Bun's profile format: a version line, then a line per function or code block the run used.
    expect(lines[0]).toBe("v2");
    expect(lines.filter((l) => /^[A-Z] [0-9a-f]+/.test(l)).length).toBeGreaterThan(1000);
  }
});

test("the binary starts with a raised JIT policy, and a session that waits for input (the REPL, coder acp) restores the normal one", () => {
  expect(compileOptions("/tmp/coder-test-out").jitPolicy).toBe(JIT_POLICY);
  expect(JIT_POLICY).toBeGreaterThan(1);
  const modes = readFileSync(new URL("../core/cli/chat-modes.ts", import.meta.url), "utf8");
  expect(modes).toContain("if (message === null) Bun.unsafe.setJITPolicy(1);");
  // coder acp serves an editor for hours.
  expect(readFileSync(new URL("../core/acp/agent.ts", import.meta.url), "utf8")).toContain("Bun.unsafe.setJITPolicy(1);");
});
