// Media sniffing, image token counts by the providers' published rules, and the check
// that a model takes the parts of a request.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { checkModelTakesParts, fittedSize, imageTokens, mediaTokens, mediaTypeOfFile, OPENAI_IMAGE_RULES, partsText, PDF_PAGE_TOKENS, sniffMedia } from "./parts.ts";
import type { ChatMessage, ImageRules, ModelInfo } from "../plugin.ts";
import { defaultModelInfo } from "../plugins/registry.ts";

const ANTHROPIC: ImageRules = { tokens: "area", maxEdge: 1568, maxPixels: 1_192_464, maxBytes: 3_750_000 };
const GEMINI: ImageRules = { tokens: "gemini-tiles", maxEdge: 3072, maxBytes: 15_000_000 };
const bytes = (...values: (number | string)[]) => new Uint8Array(values.flatMap((v) => (typeof v === "string" ? [...v].map((c) => c.charCodeAt(0)) : [v])));

describe("sniffMedia", () => {
  test("tells the five formats apart by their first bytes", () => {
    expect(sniffMedia(bytes(0x89, "PNG", 0x0d, 0x0a, 0x1a, 0x0a, 0, 0))).toBe("image/png");
    expect(sniffMedia(bytes(0xff, 0xd8, 0xff, 0xe0))).toBe("image/jpeg");
    expect(sniffMedia(bytes("GIF89a"))).toBe("image/gif");
    expect(sniffMedia(bytes("GIF87a"))).toBe("image/gif");
    expect(sniffMedia(bytes("RIFF", 1, 2, 3, 4, "WEBPVP8 "))).toBe("image/webp");
    expect(sniffMedia(bytes("%PDF-1.7"))).toBe("application/pdf");
  });

  test("anything else, a WAV in a RIFF box or a truncated header included, is no media", () => {
    expect(sniffMedia(bytes("RIFF", 1, 2, 3, 4, "WAVEfmt "))).toBeNull();
    expect(sniffMedia(bytes(0x89, "PN"))).toBeNull();
    expect(sniffMedia(bytes("x = 1\n"))).toBeNull();
    expect(sniffMedia(new Uint8Array())).toBeNull();
  });

  test("reads a file's head; a missing file is no media", () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-parts-"));
    writeFileSync(join(dir, "logo.dat"), bytes(0x89, "PNG", 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13));
    writeFileSync(join(dir, "notes.png"), "just text\n");
    expect(mediaTypeOfFile(join(dir, "logo.dat"))).toBe("image/png");
    expect(mediaTypeOfFile(join(dir, "notes.png"))).toBeNull();
    expect(mediaTypeOfFile(join(dir, "gone.png"))).toBeNull();
  });
});

describe("image tokens follow the providers' published examples", () => {
  test("OpenAI: 512-pixel tiles after fitting 2048 and scaling the short side to 768", () => {
    // OpenAI's worked examples: 1024×1024 → 768×768 → 4 tiles → 765; 2048×4096 → 768×1536 → 6 tiles → 1105.
    expect(imageTokens(1024, 1024, OPENAI_IMAGE_RULES)).toBe(765);
    expect(imageTokens(2048, 4096, OPENAI_IMAGE_RULES)).toBe(1105);
    expect(fittedSize(2048, 4096, OPENAI_IMAGE_RULES)).toEqual({ width: 768, height: 1536 });
    // Small images are never scaled up.
    expect(imageTokens(100, 100)).toBe(255);
  });

  test("Anthropic: width × height / 750, after scaling to 1568 pixels and about 1.19 megapixels", () => {
    expect(imageTokens(200, 200, ANTHROPIC)).toBe(54);
    expect(imageTokens(1000, 1000, ANTHROPIC)).toBe(1334);
    expect(imageTokens(1092, 1092, ANTHROPIC)).toBe(1590);
    // A 4000×3000 photo is scaled down first: never more than ~1590 tokens.
    expect(imageTokens(4000, 3000, ANTHROPIC)).toBeLessThanOrEqual(1590);
    expect(fittedSize(3000, 1000, ANTHROPIC)).toEqual({ width: 1568, height: 522 });
  });

  test("Gemini: 258 tokens up to 384 × 384, else 258 per 768-pixel tile", () => {
    expect(imageTokens(384, 384, GEMINI)).toBe(258);
    expect(imageTokens(1000, 500, GEMINI)).toBe(516);
    expect(imageTokens(1536, 1536, GEMINI)).toBe(1032);
  });

  test("an image of unknown size counts as the largest the provider keeps", () => {
    expect(imageTokens(undefined, undefined, OPENAI_IMAGE_RULES)).toBe(imageTokens(768, 768, OPENAI_IMAGE_RULES));
    expect(imageTokens(undefined, undefined, ANTHROPIC)).toBe(1590);
  });

  test("a message's media: images by the rules, PDFs by their pages; text parts count nothing here", () => {
    const parts = [
      { type: "text" as const, text: "look" },
      { type: "image" as const, mediaType: "image/png" as const, data: "", width: 200, height: 200 },
      { type: "document" as const, mediaType: "application/pdf" as const, data: "", name: "spec.pdf", pages: 3 },
    ];
    expect(mediaTokens(parts, ANTHROPIC)).toBe(54 + 3 * PDF_PAGE_TOKENS);
    expect(mediaTokens(undefined, ANTHROPIC)).toBe(0);
    expect(partsText([...parts, { type: "text", text: "again" }])).toBe("look\n\nagain");
  });
});

describe("checkModelTakesParts", () => {
  const image: ChatMessage = {
    role: "user",
    content: "shot.png:",
    parts: [{ type: "text", text: "shot.png:" }, { type: "image", mediaType: "image/png", data: "iVBO", width: 10, height: 10, name: "shot.png" }],
  };
  const pdf: ChatMessage = { role: "user", content: "", parts: [{ type: "document", mediaType: "application/pdf", data: "JVBE", name: "docs/spec.pdf" }] };
  const model = (name: string, caps: Partial<ModelInfo["capabilities"]>, unknown = false): ModelInfo => {
    const info = defaultModelInfo(name, "diff");
    return { ...info, capabilities: { ...info.capabilities, ...caps }, unknown };
  };

  test("a text-only model refuses an image, naming the file and the ways out", () => {
    const run = () => checkModelTakesParts([{ role: "user", content: "hi" }, image], model("openai/gpt-3.5-turbo", {}));
    expect(run).toThrow(UsageError);
    expect(run).toThrow("openai/gpt-3.5-turbo does not take images, and shot.png is in the chat: drop it (/drop shot.png), or use a model that takes images (--model, /model)");
  });

  test("a model that takes images but not PDFs refuses the PDF only", () => {
    const claude = model("anthropic/claude-sonnet-4-5", { images: true });
    expect(() => checkModelTakesParts([image], claude)).not.toThrow();
    expect(() => checkModelTakesParts([image, pdf], claude)).toThrow("does not take PDF documents, and docs/spec.pdf is in the chat");
  });

  test("for a model missing from the table, the hint is the config key that says it does", () => {
    expect(() => checkModelTakesParts([image], model("ollama/llava", {}, true))).toThrow('set "capabilities": { "images": true } for ollama/llava under "models" in .coder.json');
  });

  test("plain text messages pass any model", () => {
    expect(() => checkModelTakesParts([{ role: "user", content: "hi" }], model("x/y", {}))).not.toThrow();
  });
});
