// onRequest: API keys and tokens are masked in every message before it leaves the machine
// (the chat's own history keeps the text as it was). The patterns are the common key shapes.
import type { ChatMessage, Plugin } from "../../core/plugin.ts";

const SECRETS = [/\bsk-[A-Za-z0-9_-]{16,}/g, /\bgh[pousr]_[A-Za-z0-9]{30,}/g, /\bAKIA[0-9A-Z]{16}\b/g, /\bxox[abpr]-[A-Za-z0-9-]{10,}/g];

function redact(text: string): string {
  return SECRETS.reduce((t, pattern) => t.replace(pattern, "[REDACTED]"), text);
}

function redactMessage(m: ChatMessage): ChatMessage {
  const parts = m.parts?.map((p) => (p.type === "text" ? { ...p, text: redact(p.text) } : p));
  return { ...m, content: redact(m.content), ...(parts ? { parts } : {}) };
}

export default ((kit) => ({
  apiVersion: 2,
  name: "redact-secrets",
  // "pre": before any other plugin sees (or logs) the messages.
  onRequest: {
    order: "pre",
    handler({ messages }) {
      const masked = messages.map(redactMessage);
      const count = masked.filter((m, i) => m.content !== messages[i]?.content).length;
      if (count) kit.log.info(`redact-secrets: masked secrets in ${count} message${count === 1 ? "" : "s"}`);
      return { messages: masked };
    },
  },
})) satisfies Plugin;
