// The system clipboard through the platform's own tools: wl-clipboard on Wayland, xclip or
// xsel on X11, pbcopy/pbpaste and osascript on macOS, PowerShell on Windows (and WSL).
// /paste reads an image (as PNG) or text; /copy and /copy-context write text.
import { join } from "node:path";
import type { Kit } from "../../core/plugin.ts";

export type ClipboardContent = { kind: "image"; png: Uint8Array } | { kind: "text"; text: string } | { kind: "empty" };

/** One platform's way to reach the clipboard. */
interface ClipboardTool {
  name: string;
  /** The clipboard's PNG image, or null when it holds none. */
  readImage(): Promise<Uint8Array | null>;
  readText(): Promise<string>;
  writeText(text: string): Promise<void>;
}

type Run = Kit["run"];
/**
 * What the clipboard tools run through: kit.run for text, kit.spawn for an image's bytes; on
 * macOS, osascript writes the image into a kit.tempFolder, read back through kit.files.readBytes.
 */
export type ClipboardKit = Pick<Kit, "run" | "spawn"> & Partial<Pick<Kit, "tempFolder">> & { files?: Pick<Kit["files"], "readBytes"> };
type Which = (command: string) => string | null;

const TIMEOUT_MS = 10_000;
/** The largest clipboard image read back from osascript's file (a full-resolution screenshot fits). */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

/** What to install, per platform, when no tool is found. */
function missingTools(platform: NodeJS.Platform): string {
  if (platform === "darwin") return "pbpaste and osascript were not found (they come with macOS)";
  if (platform === "win32") return "PowerShell was not found";
  return "no clipboard tool was found: install wl-clipboard (Wayland), or xclip or xsel (X11)";
}

export class ClipboardError extends Error {}

/** Bytes of a command's stdout through kit.spawn (kit.run decodes text; images need the raw bytes). */
async function runBytes(kit: ClipboardKit, argv: string[]): Promise<{ code: number; bytes: Uint8Array }> {
  const r = await kit.spawn(argv, { timeoutMs: TIMEOUT_MS, bytes: true });
  return { code: r.code, bytes: r.stdoutBytes ?? new Uint8Array() };
}

const isPng = (bytes: Uint8Array) => PNG_SIGNATURE.every((b, i) => bytes[i] === b);

/** Run a tool; a non-zero exit becomes a ClipboardError with its first line of stderr. */
async function checked(run: Run, tool: string, argv: string[] | string, input?: string): Promise<string> {
  const r = await run(argv, { timeoutMs: TIMEOUT_MS, ...(input !== undefined ? { input } : {}) });
  if (r.code !== 0) throw new ClipboardError(`${tool} failed (exit ${r.code})${r.stderr.trim() ? `: ${r.stderr.trim().split("\n")[0]}` : ""}`);
  return r.stdout;
}

function wayland(kit: ClipboardKit): ClipboardTool {
  const run = kit.run;
  return {
    name: "wl-paste",
    async readImage() {
      const types = await run(["wl-paste", "--list-types"], { timeoutMs: TIMEOUT_MS });
      if (!types.stdout.split("\n").includes("image/png")) return null;
      const r = await runBytes(kit, ["wl-paste", "--no-newline", "--type", "image/png"]);
      return r.code === 0 && isPng(r.bytes) ? r.bytes : null;
    },
    readText: () => checked(run, "wl-paste", ["wl-paste", "--no-newline"]),
    writeText: async (text) => void (await checked(run, "wl-copy", ["wl-copy"], text)),
  };
}

function xclip(kit: ClipboardKit): ClipboardTool {
  const run = kit.run;
  return {
    name: "xclip",
    async readImage() {
      const targets = await run(["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"], { timeoutMs: TIMEOUT_MS });
      if (!targets.stdout.split("\n").includes("image/png")) return null;
      const r = await runBytes(kit, ["xclip", "-selection", "clipboard", "-t", "image/png", "-o"]);
      return r.code === 0 && isPng(r.bytes) ? r.bytes : null;
    },
    readText: () => checked(run, "xclip", ["xclip", "-selection", "clipboard", "-o"]),
    // xclip stays in the background to serve the selection: it must not hold our pipes open.
    writeText: async (text) => void (await checked(run, "xclip", "xclip -selection clipboard >/dev/null 2>&1", text)),
  };
}

function xsel(kit: ClipboardKit): ClipboardTool {
  const run = kit.run;
  return {
    name: "xsel",
    readImage: async () => null,
    readText: () => checked(run, "xsel", ["xsel", "--clipboard", "--output"]),
    writeText: async (text) => void (await checked(run, "xsel", ["xsel", "--clipboard", "--input"], text)),
  };
}

function macos(kit: ClipboardKit): ClipboardTool {
  const run = kit.run;
  return {
    name: "pbpaste",
    async readImage() {
      if (!kit.tempFolder || !kit.files) throw new ClipboardError("Cannot read an image from the clipboard: this coder's kit has no temp folder");
      const folder = kit.tempFolder("paste");
      try {
        const file = join(folder.path, "clipboard.png");
        const script = [
          "try",
          "set png to (the clipboard as «class PNGf»)",
          "on error",
          'return "none"',
          "end try",
          `set f to open for access (POSIX file "${file}") with write permission`,
          "write png to f",
          "close access f",
          'return "ok"',
        ];
        const r = await run(["osascript", ...script.flatMap((line) => ["-e", line])], { timeoutMs: TIMEOUT_MS });
        if (r.stdout.trim() !== "ok") return null;
        const read = kit.files.readBytes(file, { maxBytes: MAX_IMAGE_BYTES });
        return read.ok ? read.bytes : null;
      } finally {
        folder.remove();
      }
    },
    readText: () => checked(run, "pbpaste", ["pbpaste"]),
    writeText: async (text) => void (await checked(run, "pbcopy", ["pbcopy"], text)),
  };
}

function powershell(kit: ClipboardKit, exe: string): ClipboardTool {
  const run = kit.run;
  const ps = (script: string) => [exe, "-NoProfile", "-NonInteractive", "-Command", `[Console]::OutputEncoding = [Text.Encoding]::UTF8; ${script}`];
  return {
    name: exe,
    async readImage() {
      const script =
        "Add-Type -AssemblyName System.Windows.Forms; $i = [System.Windows.Forms.Clipboard]::GetImage(); " +
        "if ($i) { $m = New-Object System.IO.MemoryStream; $i.Save($m, [System.Drawing.Imaging.ImageFormat]::Png); [Convert]::ToBase64String($m.ToArray()) }";
      const r = await run(ps(script), { timeoutMs: TIMEOUT_MS });
      const base64 = r.stdout.trim();
      return r.code === 0 && base64 ? new Uint8Array(Buffer.from(base64, "base64")) : null;
    },
    readText: async () => (await checked(run, exe, ps("Get-Clipboard -Raw"))).replace(/\r\n/g, "\n").replace(/\n$/, ""),
    writeText: async (text) => void (await checked(run, exe, ps("Set-Clipboard -Value ([Console]::In.ReadToEnd())"), text)),
  };
}

/** The clipboard tool this machine has, or a ClipboardError saying what to install. */
export function findClipboard(kit: ClipboardKit, which: Which, env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): ClipboardTool {
  if (platform === "darwin" && which("pbpaste")) return macos(kit);
  if (platform === "win32") {
    const exe = which("powershell") ?? which("pwsh");
    if (exe) return powershell(kit, exe);
  } else if (platform !== "darwin") {
    if (env.WAYLAND_DISPLAY && which("wl-paste") && which("wl-copy")) return wayland(kit);
    if (which("xclip")) return xclip(kit);
    if (which("xsel")) return xsel(kit);
    // WSL: the Windows clipboard through the Windows PowerShell.
    if (which("powershell.exe")) return powershell(kit, "powershell.exe");
  }
  throw new ClipboardError(`Cannot reach the clipboard: ${missingTools(platform)}.`);
}

/** The clipboard's image (as PNG), else its text. */
export async function readClipboard(tool: ClipboardTool): Promise<ClipboardContent> {
  const png = await tool.readImage();
  if (png?.length) return { kind: "image", png };
  const text = await tool.readText();
  return text.trim() ? { kind: "text", text } : { kind: "empty" };
}
