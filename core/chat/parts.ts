// Message parts beyond text: which files are images or PDFs (by their first bytes),
// what an image or a document costs in prompt tokens by the provider's published
// rules, and whether a model takes the parts of a request. Pure but for one file read.
import { readHead } from "../edit/read.ts";
import { UsageError } from "../errors.ts";
import type { ChatMessage, ContentPart, ImageMediaType, ImageRules, ModelInfo } from "../plugin.ts";

export type MediaType = ImageMediaType | "application/pdf";

/** OpenAI's rules: what a model without its own rules is counted by. */
export const OPENAI_IMAGE_RULES: ImageRules = { tokens: "tiles", maxEdge: 2048, maxShortEdge: 768, maxBytes: 20_000_000 };

/** A rough cost of one PDF page (its text plus the page image providers add), in tokens. */
export const PDF_PAGE_TOKENS = 1_500;

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) => signature.every((b, i) => bytes[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** The media type of a file's first bytes (PNG, JPEG, GIF, WebP, PDF), or null for anything else. */
export function sniffMedia(head: Uint8Array): MediaType | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(head, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return "image/gif";
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(head, ascii("%PDF-"))) return "application/pdf";
  return null;
}

/** The media type of the file at `abs` (read from its first bytes), or null when it is none or unreadable. */
export function mediaTypeOfFile(abs: string): MediaType | null {
  const head = readHead(abs, 16);
  return head ? sniffMedia(head) : null;
}

/** The size the provider scales an image to before it looks at it (never larger than the original). */
export function fittedSize(width: number, height: number, rules: ImageRules = OPENAI_IMAGE_RULES): { width: number; height: number } {
  let scale = Math.min(1, rules.maxEdge / Math.max(width, height));
  if (rules.maxShortEdge) scale = Math.min(scale, rules.maxShortEdge / Math.min(width, height));
  if (rules.maxPixels) scale = Math.min(scale, Math.sqrt(rules.maxPixels / (width * height)));
  // The epsilon keeps 3000 × (1568 / 3000) at 1568, not 1567.
  return { width: Math.max(1, Math.floor(width * scale + 1e-9)), height: Math.max(1, Math.floor(height * scale + 1e-9)) };
}

/** Prompt tokens of a `width` × `height` image by the provider's rules (an unknown size counts as the largest kept). */
export function imageTokens(width: number | undefined, height: number | undefined, rules: ImageRules = OPENAI_IMAGE_RULES): number {
  const size = width && height ? fittedSize(width, height, rules) : fittedSize(rules.maxEdge, rules.maxEdge, rules);
  switch (rules.tokens) {
    case "area":
      return Math.ceil((size.width * size.height) / 750);
    case "gemini-tiles":
      if (size.width <= 384 && size.height <= 384) return 258;
      return 258 * Math.ceil(size.width / 768) * Math.ceil(size.height / 768);
    default:
      return 85 + 170 * Math.ceil(size.width / 512) * Math.ceil(size.height / 512);
  }
}

/** Prompt tokens of the non-text parts of a message (text parts are counted with its `content`). */
export function mediaTokens(parts: readonly ContentPart[] | undefined, rules: ImageRules | undefined): number {
  let total = 0;
  for (const part of parts ?? []) {
    if (part.type === "image") total += imageTokens(part.width, part.height, rules);
    else if (part.type === "document") total += PDF_PAGE_TOKENS * Math.max(1, part.pages ?? Math.ceil((part.data.length * 3) / 4 / 100_000));
  }
  return total;
}

/** The text of a list of parts (what `ChatMessage.content` holds for them). */
export function partsText(parts: readonly ContentPart[]): string {
  return parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n");
}

/**
 * Throws a one-line UsageError when a message carries an image or a document the model
 * does not take, naming the file and the way out; before any request is made.
 */
export function checkModelTakesParts(messages: readonly ChatMessage[], model: ModelInfo): void {
  for (const m of messages) {
    for (const part of m.parts ?? []) {
      if (part.type === "text") continue;
      const [what, capability] = part.type === "image" ? (["images", "images"] as const) : (["PDF documents", "pdf"] as const);
      if (model.capabilities[capability]) continue;
      const name = part.name ?? (part.type === "image" ? "an image" : "a PDF");
      const drop = part.name ? `drop it (/drop ${part.name})` : "drop it";
      const how = model.unknown
        ? `if the model does, set "capabilities": { "${capability}": true } for ${model.name} under "models" in .coder.json`
        : `use a model that takes ${what} (--model, /model)`;
      throw new UsageError(`${model.name} does not take ${what}, and ${name} is in the chat: ${drop}, or ${how}`);
    }
  }
}
