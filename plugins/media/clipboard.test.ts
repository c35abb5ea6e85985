// Which clipboard tool each platform uses, what to install when none is there, and
// image-before-text reading. (The tools themselves run, as stubs, in tests/media-repl.test.ts.)
import { describe, expect, test } from "bun:test";
import { ClipboardError, findClipboard, readClipboard } from "./clipboard.ts";

const run = async () => ({ code: 0, stdout: "", stderr: "" });
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
