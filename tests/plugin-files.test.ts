// kit.files.glob and kit.files.ignored end to end, through a user's plugin
// in `dist/coder --plugin FILE`: the same listing and ignore rules coder itself uses (tracked
// files, .gitignore, .coderignore, --ignore-file).
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeServer } from "./support/fake-server.ts";
import { coder, committedSandbox, requireBinary } from "./support/kernel.ts";

setDefaultTimeout(60_000);
beforeAll(requireBinary);

const FILES_PLUGIN = `export default (kit) => ({
  apiVersion: 2,
  name: "files-probe",
  commands: [{
    name: "probe",
    summary: "glob and ignored",
    async run(arg, s) {
      s.print("ts: " + JSON.stringify(await kit.files.glob("**/*.ts")));
      const asked = [".env", "notes/todo.md", "src/app.ts", "build/out.js", "new.log"];
      const ignored = [];
      for (const path of asked) if (await kit.files.ignored(path)) ignored.push(path);
      s.print("ignored: " + JSON.stringify(ignored));
    },
  }],
});
`;

test("a plugin's glob and ignore questions get coder's own answers; --ignore-file replaces .coderignore", async () => {
  const s = committedSandbox(
    { ".gitignore": ".env\nbuild/\n*.log\n", ".coderignore": "notes/\n", "src/app.ts": "x\n", "src/lib/util.ts": "y\n", "notes/todo.md": "t\n", "vendor.ts": "v\n" },
    { "probe.ts": FILES_PLUGIN },
  );
  writeFileSync(join(s.repo, ".env"), "KEY=1\n");
  writeFileSync(join(s.repo, "other-ignore"), "vendor.ts\n");
  const server = await startFakeServer([]);
  try {
    const args = ["--plugin", s.plugin("probe.ts"), "--model", "openai/gpt-4.1", "--api-base", server.url, "--api-key", "sk-test", "--map-tokens", "0", "--no-pretty"];
    const r = await coder([...args, "-m", "/probe"], { cwd: s.repo, env: s.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ts: ["src/app.ts","src/lib/util.ts","vendor.ts"]');
    expect(r.stdout).toContain('ignored: [".env","notes/todo.md","build/out.js","new.log"]');
    const other = await coder([...args, "--ignore-file", "other-ignore", "-m", "/probe"], { cwd: s.repo, env: s.env });
    expect(other.stdout).toContain('ts: ["src/app.ts","src/lib/util.ts"]');
    expect(other.stdout).toContain('ignored: [".env","build/out.js","new.log"]');
  } finally {
    await server.stop();
  }
});
