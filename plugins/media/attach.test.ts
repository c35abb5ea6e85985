// Chat media as parts: images kept as they are when they fit, downscaled (for real, by
// jimp) when they do not, PDFs counted by page, and the per-file cache.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ImageRules } from "../../core/plugin.ts";
import { testKit } from "../../tests/support/format-kit.ts";
import { fitImage, imageDimensions, MediaParts, pdfPages } from "./attach.ts";
import { jpeg, pdf, png } from "./testdata/make.ts";

const kit = testKit();
const ANTHROPIC: ImageRules = { tokens: "area", maxEdge: 1568, maxPixels: 1_192_464, maxBytes: 3_750_000 };

describe("fitImage", () => {
  test("an image within the provider's limits is sent byte for byte", async () => {
    const bytes = await png(640, 480);
    const fitted = await fitImage(kit, bytes, "image/png", "small.png", undefined);
    expect(fitted).toMatchObject({ ok: true, mediaType: "image/png", width: 640, height: 480 });
    expect(fitted.ok && fitted.bytes).toBe(bytes);
    expect(fitted.ok && fitted.note).toBeUndefined();
  });

  test("a large PNG is downscaled to what OpenAI keeps (short side 768) and stays a PNG", async () => {
    const fitted = await fitImage(kit, await png(3000, 2000), "image/png", "big.png", undefined);
    if (!fitted.ok) throw new Error(fitted.problem);
    expect([fitted.width, fitted.height]).toEqual([1152, 768]);
    expect(await imageDimensions(fitted.bytes)).toEqual({ width: 1152, height: 768 });
    expect(fitted.mediaType).toBe("image/png");
    expect(fitted.note).toBe("big.png: 3000×2000 downscaled to 1152×768 for the model");
  });

  test("a large JPEG is downscaled to Anthropic's 1568 pixels and stays a JPEG", async () => {
    const fitted = await fitImage(kit, await jpeg(2400, 1200), "image/jpeg", "photo.jpg", ANTHROPIC);
    if (!fitted.ok) throw new Error(fitted.problem);
    expect(fitted.mediaType).toBe("image/jpeg");
    expect(Math.max(fitted.width, fitted.height)).toBeLessThanOrEqual(1568);
    expect(fitted.width * fitted.height).toBeLessThanOrEqual(1_192_464);
    expect(await imageDimensions(fitted.bytes)).toEqual({ width: fitted.width, height: fitted.height });
  });

  test("a PNG still too heavy after resizing is re-encoded as JPEG; beyond that it is refused", async () => {
    const bytes = await png(600, 400, true);
    const tight = { tokens: "tiles", maxEdge: 2048, maxBytes: Math.floor(bytes.length / 2) } as const;
    const fitted = await fitImage(kit, bytes, "image/png", "noisy.png", tight);
    if (!fitted.ok) throw new Error(fitted.problem);
    expect(fitted.mediaType).toBe("image/jpeg");
    expect(fitted.bytes.length).toBeLessThanOrEqual(tight.maxBytes);
    const refused = await fitImage(kit, bytes, "image/png", "noisy.png", { ...tight, maxBytes: 100 });
    expect(refused).toEqual({ ok: false, problem: expect.stringMatching(/^noisy\.png is still \d+ kB after shrinking, more than the 100 bytes the model takes$/) });
  });

  test("WebP cannot be re-encoded: sent as is when its size is accepted, refused with the way out when not", async () => {
    // A lossless 1×1 WebP is enough for the header reader; its pixel limit is not ours to enforce.
    const webp = Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");
    const bytes = new Uint8Array(webp);
    expect(await fitImage(kit, bytes, "image/webp", "a.webp", { tokens: "tiles", maxEdge: 2048, maxBytes: 1_000 })).toMatchObject({ ok: true, width: 1, height: 1 });
    const refused = await fitImage(kit, bytes, "image/webp", "a.webp", { tokens: "tiles", maxEdge: 2048, maxBytes: 10 });
    expect(refused.ok ? "" : refused.problem).toContain("coder cannot shrink WebP images: convert it to PNG or JPEG");
  });

  test("bytes that are no image are a clear problem, not a crash", async () => {
    const fitted = await fitImage(kit, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), "image/png", "broken.png", undefined);
    expect(fitted).toEqual({ ok: false, problem: "broken.png is not a readable PNG image" });
  });
});

describe("MediaParts", () => {
  test("a PDF becomes a document part named by its chat path, with its pages counted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-media-"));
    writeFileSync(join(dir, "spec.pdf"), pdf(3));
    const attached = await new MediaParts(kit).load(join(dir, "spec.pdf"), "docs/spec.pdf", undefined);
    expect(attached).toMatchObject({ ok: true, part: { type: "document", mediaType: "application/pdf", name: "docs/spec.pdf", pages: 3 } });
    expect(attached.ok && Buffer.from(attached.part.data, "base64").toString("latin1")).toStartWith("%PDF-1.4");
    expect(pdfPages(new TextEncoder().encode("%PDF-1.5 compressed"))).toBeUndefined();
  });

  test("a file's part is cached until the file changes; the downscale note is given once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-media-"));
    const file = join(dir, "shot.png");
    writeFileSync(file, await png(2000, 1000));
    const parts = new MediaParts(kit);
    const first = await parts.load(file, "shot.png", undefined);
    const again = await parts.load(file, "shot.png", undefined);
    expect(first.ok && first.note).toBe("shot.png: 2000×1000 downscaled to 1536×768 for the model");
    expect(again.ok && again.note).toBeUndefined();
    if (!first.ok || !again.ok) throw new Error("expected both loads to succeed");
    expect(again.part).toBe(first.part);
    writeFileSync(file, await png(50, 40));
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    const changed = await parts.load(file, "shot.png", undefined);
    expect(changed).toMatchObject({ ok: true, part: { width: 50, height: 40 } });
  });

  test("for a model that takes no images (the request will be refused), the image is not downscaled", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-media-"));
    const bytes = await png(2000, 1000);
    writeFileSync(join(dir, "big.png"), bytes);
    const attached = await new MediaParts(kit).load(join(dir, "big.png"), "big.png", undefined, false);
    expect(attached).toMatchObject({ ok: true, part: { type: "image", width: 2000, height: 1000, name: "big.png" } });
    expect(attached.ok && attached.note).toBeUndefined();
    expect(attached.ok && attached.part.data).toBe(Buffer.from(bytes).toString("base64"));
  });

  test("a file that is gone, or is not media, is a problem naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coder-media-"));
    writeFileSync(join(dir, "notes.png"), "text\n");
    const parts = new MediaParts(kit);
    expect(await parts.load(join(dir, "gone.png"), "gone.png", undefined)).toEqual({ ok: false, problem: "gone.png no longer exists" });
    expect(await parts.load(join(dir, "notes.png"), "notes.png", undefined)).toEqual({ ok: false, problem: "notes.png is not an image or a PDF" });
  });
});
