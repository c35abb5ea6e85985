// Beyond text: the chat's images and PDFs go to the model as message parts (the "media"
// context provider), /paste takes the clipboard's image or text, /web adds a page as
// Markdown (and --detect-urls offers the pages a message names), /voice dictates, and
// /copy and /copy-context fill the clipboard. Heavy libraries load on first use only, and so do
// the clipboard, voice and web modules: a run that uses none of these commands (a one-shot task)
// evaluates none of them, nor the Node modules only they use (node:readline, node:net, node:dns).
import { isAbsolute, join } from "node:path";
import type { ContentPart, ContextProvider, Kit, PluginObject, Session, SlashCommand, TurnContext } from "../../core/plugin.ts";
import { imageDimensions, MediaParts } from "./attach.ts";
import type { WebOptions } from "./web.ts";
import { DETECT_URLS, MEDIA_OPTIONS, VOICE_FORMAT, VOICE_INPUT_DEVICE, VOICE_LANGUAGE, WEB_TIMEOUT } from "./options.ts";

/** A fence longer than any run of backticks in `text`. */
function fenceFor(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(longest + 1);
}

/** A name typed for /paste, as a safe file name ending in .png. */
function pasteName(typed: string, now: Date = new Date()): string {
  const base = typed.trim().replace(/\.png$/i, "").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "");
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${base || `paste-${stamp}`}.png`;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

export default function mediaPlugin(kit: Kit): PluginObject {
  const parts = new MediaParts(kit);
  const warned = new Set<string>();
  const warnOnce = (text: string) => {
    if (warned.has(text)) return;
    warned.add(text);
    kit.log.warn(text);
  };
  const absolute = (path: string) => (isAbsolute(path) ? path : join(kit.root, path));
  /** URLs offered once per session, whatever the answer. */
  const offered = new Set<string>();
  const webOptions = (): WebOptions => ({
    timeoutMs: kit.options.get(WEB_TIMEOUT) * 1000,
    userAgent: `Mozilla/5.0 (compatible; coder/${kit.version})`,
  });

  const media: ContextProvider = {
    name: "media",
    stability: "static",
    async provide(turn: TurnContext) {
      const files = turn.readOnlyFiles.filter((path) => kit.media.typeOf(absolute(path)) !== null);
      if (!files.length) return null;
      const list: ContentPart[] = [];
      const names: string[] = [];
      for (const path of files) {
        // A model that takes no images refuses the request anyway: do not spend a downscale on it.
        const attached = await parts.load(absolute(path), path, turn.model.imageRules, turn.model.capabilities.images === true);
        if (!attached.ok) {
          warnOnce(`${attached.problem}; it is left out of the request.`);
          continue;
        }
        if (attached.note) kit.log.info(attached.note);
        list.push({ type: "text", text: `${path}:` }, attached.part);
        names.push(path);
      }
      if (!list.length) return null;
      return {
        label: `images and documents: ${names.join(", ")}`,
        text: "These images and documents are in the chat for reference. They are not text files: never try to edit them.",
        parts: list,
      };
    },
    async onMessage(message, s) {
      if (!(kit.options.get(DETECT_URLS) ?? s.interactive)) return;
      const { addWebPage, findUrls } = await import("./web.ts");
      for (const url of findUrls(message)) {
        if (offered.has(url)) continue;
        offered.add(url);
        // One "Don't ask again" stops the offers for every URL, as --no-detect-urls does.
        if (await s.confirm(`Add ${url} to the chat?`, { key: "detect-urls" })) await addWebPage(kit, s, url, webOptions());
      }
    },
  };

  const paste: SlashCommand = {
    name: "paste",
    summary: "add the clipboard's image (saved under .coder/pastes/) or its text to the chat",
    usage: "/paste [NAME]",
    async run(arg, s) {
      const { ClipboardError, findClipboard, readClipboard } = await import("./clipboard.ts");
      let content: Awaited<ReturnType<typeof readClipboard>>;
      try {
        content = await readClipboard(findClipboard(kit, kit.which));
      } catch (error) {
        if (error instanceof ClipboardError) return s.warn(error.message);
        throw error;
      }
      if (content.kind === "empty") return s.warn("The clipboard is empty.");
      if (content.kind === "text") {
        const fence = fenceFor(content.text);
        s.addToChat(`I pasted this from the clipboard:\n\n${fence}\n${content.text.replace(/\n$/, "")}\n${fence}`);
        const lines = content.text.replace(/\n$/, "").split("\n").length;
        return s.print(`Added the clipboard's text to the chat (${lines} line${lines === 1 ? "" : "s"}, ${kit.tokens.count(content.text, kit.tokens.encoding?.(s.model))} tokens).`);
      }
      const name = pasteName(arg);
      let file: string;
      try {
        // Through the kit's state writer: never through a link a cloned repository planted under .coder/pastes/.
        file = kit.state.write(`pastes/${name}`, content.png);
      } catch (error) {
        return s.warn(`The clipboard's image was not saved: ${error instanceof Error ? error.message : String(error)}`);
      }
      const size = await imageDimensions(content.png);
      await s.addReadOnly([file]);
      s.print(`Pasted the clipboard's image as .coder/pastes/${name}${size ? ` (${size.width}×${size.height})` : ""}; it is in the chat, read-only.`);
    },
  };

  const web: SlashCommand = {
    name: "web",
    summary: "fetch a web page, turn it into Markdown and add it to the chat read-only",
    usage: "/web URL",
    async run(arg, s) {
      const url = arg.trim();
      if (!url) return s.warn("Usage: /web URL");
      offered.add(url);
      const { addWebPage } = await import("./web.ts");
      await addWebPage(kit, s, url, webOptions());
    },
  };

  /** Write `text` to the clipboard; false (with the reason warned) when there is no way to. */
  const copyText = async (s: Session, text: string): Promise<boolean> => {
    const { ClipboardError, findClipboard } = await import("./clipboard.ts");
    try {
      await findClipboard(kit, kit.which).writeText(text);
      return true;
    } catch (error) {
      if (!(error instanceof ClipboardError)) throw error;
      // No clipboard tool (a server over SSH, a container): ask the terminal itself, by OSC 52.
      const osc = osc52(text);
      if (process.stdout.isTTY && osc) {
        process.stdout.write(osc);
        s.print("No clipboard tool here: the text went to the terminal's clipboard by OSC 52 (most terminals take it, over SSH too; in tmux, `set -g set-clipboard on`).");
        return true;
      }
      s.warn(error.message);
      return false;
    }
  };

  const copy: SlashCommand = {
    name: "copy",
    summary: "copy the model's last reply to the clipboard",
    async run(_arg, s) {
      const reply = s.lastReply();
      if (!reply?.trim()) return s.warn("There is no reply to copy yet.");
      if (await copyText(s, reply)) s.print(`Copied the last reply to the clipboard (${reply.length.toLocaleString("en-US")} characters).`);
    },
  };

  const copyContext: SlashCommand = {
    name: "copy-context",
    summary: "copy the chat's context (files, read-only files, repo map) as Markdown, to paste into a web chat",
    async run(_arg, s) {
      const chunks = (await s.promptChunks()).filter((c) => c.kind === "static" || c.kind === "session" || c.kind === "chat-files");
      // Blocks carrying images or documents are left out whole: their text only introduces them.
      const texts = chunks.flatMap((c) => c.messages.filter((m) => m.role === "user" && !m.parts).map((m) => m.content.trim()));
      const left = chunks.flatMap((c) => c.messages.flatMap((m) => m.parts ?? [])).flatMap((p) => (p.type === "text" ? [] : [p.name ?? "an attachment"]));
      if (!texts.length) return s.warn("The chat has no context to copy yet: /add some files.");
      const text = [...texts, "Answer with the changes to make to these files, as edits (not whole files)."].join("\n\n");
      if (!(await copyText(s, `${text}\n`))) return;
      s.print(`Copied the chat context to the clipboard (${kit.tokens.count(text, kit.tokens.encoding?.(s.model)).toLocaleString("en-US")} tokens).`);
      if (left.length) s.print(`Images and documents cannot be copied as text: ${left.join(", ")} left out.`);
    },
  };

  const voice: SlashCommand = {
    name: "voice",
    summary: "record your voice (Enter stops) and put the transcription in the input line",
    async run(_arg, s) {
      if (!s.interactive) return s.warn("/voice needs the interactive REPL (Enter stops the recording).");
      const { convert, findRecorder, MAX_RECORDING_BYTES, NO_RECORDER, record, waitForEnter } = await import("./voice.ts");
      const device = kit.options.get(VOICE_INPUT_DEVICE);
      const recorder = findRecorder(device, kit.which);
      if (!recorder) return s.warn(NO_RECORDER);
      const folder = kit.tempFolder("voice");
      try {
        const wav = join(folder.path, "recording.wav");
        s.print(`Recording with ${recorder.name}: speak, then press Enter to stop (Ctrl-C cancels).`);
        const enter = waitForEnter();
        const recording = await record(kit, recorder, wav, enter.done);
        enter.cancel();
        if (!recording.ok) return recording.cancelled ? s.print(recording.problem) : s.warn(recording.problem);
        const format = kit.options.get(VOICE_FORMAT);
        let file = wav;
        if (format !== "wav") {
          file = join(folder.path, `recording.${format}`);
          const problem = await convert(kit, wav, file);
          if (problem) return s.warn(problem);
        }
        s.print("Transcribing ...");
        const language = kit.options.get(VOICE_LANGUAGE);
        const audio = kit.files.readBytes(file, { maxBytes: MAX_RECORDING_BYTES });
        if (!audio.ok) return s.warn(audio.problem);
        let text: string;
        try {
          text = await kit.transcribe({ model: s.model.name, audio: audio.bytes, fileName: `recording.${format}`, ...(language ? { language } : {}) });
        } catch (error) {
          return s.warn(errorText(error));
        }
        if (!text) return s.warn("Nothing was heard in the recording.");
        s.setInput(text);
      } finally {
        folder.remove();
      }
    },
  };

  return { apiVersion: 2, name: "media", options: MEDIA_OPTIONS, context: [media], commands: [paste, web, copy, copyContext, voice] };
}

/** Terminals cap what an OSC 52 sequence may carry; past this the copy goes no further. */
const OSC52_MAX_BASE64 = 100_000;

/** The OSC 52 sequence that puts `text` on the terminal's clipboard, or null when it is too long for terminals to take. */
export function osc52(text: string): string | null {
  const data = Buffer.from(text, "utf8").toString("base64");
  return data.length > OSC52_MAX_BASE64 ? null : `\x1b]52;c;${data}\x07`;
}
