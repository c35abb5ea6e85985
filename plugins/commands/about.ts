// /settings, /report and /help QUESTION: what this session is set to, a bug-report
// template to paste into an issue, and answers from coder's own documentation (embedded
// in the binary, documentation.ts, loaded for a question; sent in ask mode).
import { arch, platform, release } from "node:os";
import type { Kit, Session, SlashCommand } from "../../core/plugin.ts";
import { usageLabel } from "./layout.ts";

/** `/settings`: every setting, its value and where it came from; then the model of each role. */
export function settingsText(s: Session): string {
  const rows = s.settings().filter((r) => r.value !== undefined && !(Array.isArray(r.value) && r.value.length === 0));
  const width = Math.max(0, ...rows.map((r) => r.key.length));
  const shown = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  const roles = `Models: main ${s.modelFor("main")}, weak ${s.modelFor("weak")}, editor ${s.modelFor("editor")}; edit format ${s.editFormat}.`;
  return [roles, "", ...rows.map((r) => `${r.key.padEnd(width)}  ${shown(r.value)}  (${r.source})`)].join("\n");
}

/** `/report`: what an issue needs to be acted on; nothing is sent anywhere. */
export function reportText(s: Session, version: string): string {
  const error = s.lastError();
  return [
    "## Bug report",
    "",
    "(Paste this into a new issue on the issue tracker of the project you installed coder from, with the steps filled in. coder has sent nothing anywhere; check that the text holds nothing private.)",
    "",
    `- coder: ${version}`,
    `- platform: ${platform()} ${release()} ${arch()}, Bun ${process.versions.bun ?? "?"}`,
    `- model: ${s.model.name}${s.model.unknown ? " (not in the model table)" : ""}; weak ${s.modelFor("weak")}; editor ${s.modelFor("editor")}`,
    `- edit format: ${s.editFormat}`,
    `- files in the chat: ${s.chatFiles().length}, read-only: ${s.readOnlyFiles().length}`,
    `- last error: ${error ?? "(none in this session)"}`,
    "",
    "### What I did",
    "",
    "### What happened",
    "",
    "### What I expected",
    "",
  ].join("\n");
}

/** The request `/help QUESTION` sends in ask mode: the question over coder's documentation. */
export async function helpRequest(question: string, commands: readonly { name: string; usage?: string; summary: string }[]): Promise<string> {
  const { readme, fromAider } = await import("./documentation.ts");
  const list = commands.map((c) => `${usageLabel(c)}: ${c.summary}`).join("\n");
  return [
    "Answer my question about using coder (an AI pair programmer for the terminal) from its documentation below. Quote the exact commands, flags and config keys; if the documentation does not say, tell me so instead of guessing.",
    "",
    "<documentation>",
    readme.trim(),
    "",
    fromAider.trim(),
    "",
    "## Slash commands",
    list,
    "</documentation>",
    "",
    `My question: ${question}`,
  ].join("\n");
}

export function aboutCommands(kit: Kit): SlashCommand[] {
  return [
    { name: "settings", summary: "show every setting with where it came from, and the model of each role", run: (_arg, s) => s.print(settingsText(s)) },
    { name: "report", summary: "print a bug-report template (version, platform, model, last error) to paste into an issue; sends nothing", run: (_arg, s) => s.print(reportText(s, kit.version)) },
  ];
}
