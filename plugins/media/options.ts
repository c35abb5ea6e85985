// Media's options (web pages, voice), declared apart from the plugin so builtins.ts can
// hand them to the kernel without loading it (`--help` stays cheap).
import type { PluginOption } from "../../core/plugin.ts";

export const DETECT_URLS = { key: "detectUrls", type: "boolean", negatable: true, group: "Context", help: "offer to add the web pages that URLs in your messages name (default: on in the REPL)" } as const satisfies PluginOption;
export const WEB_TIMEOUT = { key: "webTimeout", type: "number", arg: "SECONDS", default: 30, group: "Context", help: "give up fetching a page for /web after this many seconds" } as const satisfies PluginOption;
export const VOICE_FORMAT = { key: "voiceFormat", type: "enum", values: ["wav", "mp3", "webm"], default: "wav", arg: "FORMAT", group: "Request", help: "audio format /voice sends for transcription (mp3 and webm need ffmpeg)" } as const satisfies PluginOption;
export const VOICE_LANGUAGE = { key: "voiceLanguage", type: "string", arg: "LANG", group: "Request", help: "language of /voice speech as an ISO 639-1 code, e.g. en (default: detected)" } as const satisfies PluginOption;
export const VOICE_INPUT_DEVICE = { key: "voiceInputDevice", type: "string", arg: "DEVICE", group: "Request", help: "microphone /voice records from (default: the system's default input)" } as const satisfies PluginOption;

export const MEDIA_OPTIONS: readonly PluginOption[] = [DETECT_URLS, WEB_TIMEOUT, VOICE_FORMAT, VOICE_LANGUAGE, VOICE_INPUT_DEVICE];
