// Which clipboard tool each platform uses, what to install when none is there, and
// image-before-text reading. (The tools themselves run, as stubs, in tests/media-repl.test.ts.)
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGroup } from "../../core/proc/spawn.ts";
import type { Kit } from "../../core/plugin.ts";
import { ClipboardError, type ClipboardKit, findClipboard, readClipboard } from "./clipboard.ts";

const run = { run: async () => ({ code: 0, stdout: "", stderr: "" }), spawn: (argv: string[]) => spawnGroup(argv, { cwd: tmpdir() }) };
const has = (...tools: string[]) => (command: string) => (tools.includes(command) ? `/usr/bin/${command}` : null);

describe("findClipboard", () => {
  test("Wayland's wl-clipboard first when a Wayland session runs, then xclip, then xsel", () => {
    expect(findClipboard(run, has("wl-paste", "wl-copy", "xclip"), { WAYLAND_DISPLAY: "wayland-0" }, "linux").name).toBe("wl-paste");
    expect(findClipboard(run, has("wl-paste", "wl-copy", "xclip"), {}, "linux").name).toBe("xclip");
    expect(findClipboard(run, has("xsel"), { DISPLAY: ":0" }, "linux").name).toBe("xsel");
    expect(findClipboard(run, has("powershell.exe"), {}, "linux").name).toBe("powershell.exe");
  });

  test("pbpaste on macOS, PowerShell on Windows", () => {
    expect(findClipboard(run, has("pbpaste"), {}, "darwin").name).toBe("pbpaste");
    expect(findClipboard(run, has("pwsh"), {}, "win32").name).toBe("/usr/bin/pwsh");
  });

  test("no tool: a one-line error saying what to install", () => {
    expect(() => findClipboard(run, has(), {}, "linux")).toThrow(new ClipboardError("Cannot reach the clipboard: no clipboard tool was found: install wl-clipboard (Wayland), or xclip or xsel (X11)."));
    expect(() => findClipboard(run, has(), {}, "win32")).toThrow("PowerShell was not found");
  });
});

describe("readClipboard", () => {
  const tool = (image: Uint8Array | null, text: string) => ({ name: "t", readImage: async () => image, readText: async () => text, writeText: async () => {} });

  test("an image wins over text; text otherwise; blank text is empty", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    expect(await readClipboard(tool(png, "also text"))).toEqual({ kind: "image", png });
    expect(await readClipboard(tool(null, "def f(): pass\n"))).toEqual({ kind: "text", text: "def f(): pass\n" });
    expect(await readClipboard(tool(null, "  \n"))).toEqual({ kind: "empty" });
  });
});

describe("the clipboard tools through the kit (a stub xclip on PATH)", () => {
  /** The kit's own run and spawn, with `dir` first on PATH (as a real xclip would be found). */
  function kitWith(dir: string): ClipboardKit {
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}` };
    const spawn: NonNullable<Kit["spawn"]> = (argv, options) => spawnGroup(argv, { ...options, cwd: dir, env });
    return {
      spawn,
      run: async (command, options) => {
        const r = await spawn(typeof command === "string" ? ["sh", "-c", command] : command, { ...options });
        return { code: r.code, stdout: r.stdout, stderr: r.stderr };
      },
    };
  }

  test("an image is read as the bytes xclip wrote (kit.spawn with bytes), text through kit.run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-clip-"));
    // A PNG signature then bytes that are not UTF-8: decoding them as text would change them.
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe, 0x80]);
    writeFileSync(join(dir, "image.png"), png);
    writeFileSync(
      join(dir, "xclip"),
      `#!/bin/sh\ncase "$*" in\n  *TARGETS*) printf 'TARGETS\\nimage/png\\n' ;;\n  *image/png*) cat "${dir}/image.png" ;;\n  *) printf 'text' ;;\nesac\n`,
    );
    chmodSync(join(dir, "xclip"), 0o755);
    const tool = findClipboard(kitWith(dir), (c) => (c === "xclip" ? join(dir, c) : null), {}, "linux");
    expect(tool.name).toBe("xclip");
    const got = await readClipboard(tool);
    expect(got.kind).toBe("image");
    expect([...(got as { png: Uint8Array }).png]).toEqual([...png]);
    expect(await tool.readText()).toBe("text");
  });
});
