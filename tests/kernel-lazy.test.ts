// Start-up discipline: `--version`, `--help` and `config` load no grammar, no
// openai client, no tokenizer tables and no built-in plugin module; listing
// plugins loads the built-ins but still none of those heavy packages. One-shot and
// `--json` runs never load the REPL's terminal library, line editor or markdown lexer.
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { startFakeServer } from "./support/fake-server.ts";
import { sandbox, tempDir } from "./support/kernel.ts";

// The binary runs many times per test; slow CI machines need more than the 5 s default.
setDefaultTimeout(60_000);

const MAIN = join(import.meta.dir, "..", "main.ts");
const PROBE = `
const { main } = await import(${JSON.stringify(MAIN)});
const code = await main(process.argv.slice(2));
console.error("\\n@@" + JSON.stringify({ code, modules: Object.keys(require.cache) }));
process.exit(0);
`;

async function modulesFor(args: string[], stdin?: string, s = sandbox()): Promise<string[]> {
  const probe = join(tempDir(), "probe.ts");
  writeFileSync(probe, PROBE);
  const proc = Bun.spawn([process.execPath, probe, ...args], { cwd: s.repo, env: s.env, stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "ignore", stderr: "pipe" });
  const stderr = await new Response(proc.stderr).text();
  await proc.exited;
  const line = stderr.split("\n").find((l) => l.startsWith("@@"));
  if (!line) throw new Error(`no probe output: ${stderr}`);
  const { code, modules } = JSON.parse(line.slice(2)) as { code: number; modules: string[] };
  expect(code).toBe(0);
  return modules;
}

// The rank tables are imported as file paths (`type: "file"`, core/chat/tokens.ts): listed, never read until a count.
const HEAVY = /node_modules\/(js-tiktoken(?!\/dist\/ranks\/\w+\.cjs$)|openai|web-tree-sitter|tree-sitter-|@tree-sitter-grammars)|grammars\/(embedded|runtime)\.ts|\.wasm$/;
/** What only images, /web and /voice need: the image codecs, the HTML parser and converters. */
const MEDIA = /node_modules\/(@jimp\/|image-size|linkedom|@mozilla\/readability|turndown|@joplin\/turndown-plugin-gfm)/;
// core/plugins/ is the kernel's registry, not plugin code; builtins.ts and a built-in's options.ts are
// what it declares to the command line (its options and subcommands, as data), which --help and config need.
const PLUGIN_CODE = /(?<!\/core)\/(formats|plugins)\/(?![a-z]+\/options\.ts$)/;

for (const args of [["--version"], ["--help"], ["--verbose", "--version"], ["config", "show"], ["config", "schema"]]) {
  test(`coder ${args.join(" ")} loads nothing heavy and no plugin`, async () => {
    const modules = await modulesFor(args);
    expect(modules.filter((m) => HEAVY.test(m) || MEDIA.test(m) || PLUGIN_CODE.test(m))).toEqual([]);
  });
}

test("coder plugins loads the built-ins but not the heavy packages", async () => {
  const modules = await modulesFor(["plugins"]);
  expect(modules.some((m) => m.endsWith("builtins.ts"))).toBe(true);
  expect(modules.filter((m) => HEAVY.test(m) || MEDIA.test(m))).toEqual([]);
});

test("a plain one-shot request loads the media plugin but none of its libraries", async () => {
  const server = await startFakeServer([{ text: "Nothing to change." }]);
  try {
    const s = sandbox();
    writeFileSync(join(s.repo, "app.py"), "print('hi')\n");
    const modules = await modulesFor(["--model", "openai/gpt-4.1", "--api-base", server.url, "--api-key", "k", "--map-tokens", "0", "--no-pretty", "-m", "hello", "app.py"], undefined, s);
    expect(server.chatBodies()).toHaveLength(1);
    expect(modules.some((m) => m.endsWith("plugins/media/index.ts"))).toBe(true);
    expect(modules.filter((m) => MEDIA.test(m))).toEqual([]);
  } finally {
    await server.stop();
  }
});

/** What only the REPL needs: the line editor and its library, the markdown lexer, the terminal renderer. */
const REPL_ONLY = /node_modules\/(@mariozechner\/pi-tui|marked)\/|core\/term\/(repl|line-editor|tty-output|markdown|highlight|completions|vi-keys|history-search)\.ts$/;

for (const mode of [["-m", "hello"], ["--json", "-m", "hello"], ["piped"]]) {
  test(`a one-shot run (${mode.join(" ")}) does not load the terminal library or the markdown renderer`, async () => {
    const server = await startFakeServer([{ text: "Hello." }]);
    try {
      const base = ["--model", "openai/gpt-4.1", "--api-base", server.url, "--api-key", "sk-test", "--map-tokens", "0"];
      const modules = mode[0] === "piped" ? await modulesFor(base, "hello") : await modulesFor([...base, ...mode]);
      expect(server.chatBodies().length).toBe(1);
      expect(modules.some((m) => m.endsWith("core/chat/coder.ts"))).toBe(true);
      expect(modules.filter((m) => REPL_ONLY.test(m))).toEqual([]);
    } finally {
      await server.stop();
    }
  });
}
