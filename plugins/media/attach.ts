// The chat's images and PDFs as message parts: read from disk, measured, downscaled to
// what the model's provider keeps (jimp, pure JavaScript, loaded on first need), and
// cached per file (path, size, mtime) and provider rules.
import { statSync } from "node:fs";
import type { DocumentPart, ImageMediaType, ImagePart, ImageRules, Kit } from "../../core/plugin.ts";

/** The largest PDF sent inline (OpenAI's and Gemini's request limits are near this). */
export const MAX_PDF_BYTES = 32_000_000;
/**
 * The most pixels an image may have: it is refused, from its header, before anything decodes
 * it (a small PNG can claim 20,000 × 20,000 pixels, gigabytes once decoded). 50 MP covers
 * today's largest phone photos.
 */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** JPEG quality when a downscaled image is still too large as PNG. */
const JPEG_QUALITY = 80;

export type MediaPart = ImagePart | DocumentPart;
export type Attached = { ok: true; part: MediaPart; note?: string } | { ok: false; problem: string };

type JimpModule = Awaited<ReturnType<typeof loadJimp>>;
let jimp: Promise<JimpModule> | undefined;

async function loadJimp() {
  const [{ createJimp }, png, jpeg, gif, resize] = await Promise.all([
    import("@jimp/core"),
    import("@jimp/js-png"),
    import("@jimp/js-jpeg"),
    import("@jimp/js-gif"),
    import("@jimp/plugin-resize"),
  ]);
  return createJimp({ formats: [png.default, jpeg.default, gif.default], plugins: [resize.methods] });
}

/** Width and height from the image's header (no decoding). */
export async function imageDimensions(bytes: Uint8Array): Promise<{ width: number; height: number } | null> {
  const { imageSize } = await import("image-size");
  try {
    const size = imageSize(bytes);
    return size.width && size.height ? { width: size.width, height: size.height } : null;
  } catch {
    return null;
  }
}

/**
 * The image as the provider should get it: as it is when it fits the rules, else downscaled
 * (and re-encoded as JPEG when PNG stays too large). WebP cannot be re-encoded here: it is
 * sent as it is when its size is accepted (the provider scales it itself), refused otherwise.
 */
export async function fitImage(
  kit: Kit,
  bytes: Uint8Array,
  mediaType: ImageMediaType,
  name: string,
  rules: ImageRules | undefined,
): Promise<{ ok: true; bytes: Uint8Array; mediaType: ImageMediaType; width: number; height: number; note?: string } | { ok: false; problem: string }> {
  const size = await imageDimensions(bytes);
  if (!size) return { ok: false, problem: `${name} is not a readable ${mediaType.slice(6).toUpperCase()} image` };
  const tooMany = pixelProblem(name, size);
  if (tooMany) return { ok: false, problem: tooMany };
  const maxBytes = rules?.maxBytes ?? 20_000_000;
  const target = kit.media.fit(size.width, size.height, rules);
  const tooLarge = target.width < size.width || target.height < size.height;
  if (!tooLarge && bytes.length <= maxBytes) return { ok: true, bytes, mediaType, ...size };
  if (mediaType === "image/webp") {
    if (bytes.length <= maxBytes) return { ok: true, bytes, mediaType, ...size };
    return { ok: false, problem: `${name} is ${byteSize(bytes.length)}, more than the ${byteSize(maxBytes)} the model takes, and coder cannot shrink WebP images: convert it to PNG or JPEG` };
  }
  const Jimp = await (jimp ??= loadJimp());
  let image: Awaited<ReturnType<JimpModule["fromBuffer"]>>;
  try {
    image = await Jimp.fromBuffer(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    return { ok: false, problem: `${name} could not be decoded to shrink it: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (tooLarge) image.resize({ w: target.width, h: target.height });
  const outType: ImageMediaType = mediaType === "image/jpeg" ? "image/jpeg" : "image/png";
  let out: Uint8Array = outType === "image/jpeg" ? await image.getBuffer("image/jpeg", { quality: JPEG_QUALITY }) : await image.getBuffer("image/png");
  let finalType = outType;
  if (out.length > maxBytes && outType === "image/png") {
    out = await image.getBuffer("image/jpeg", { quality: JPEG_QUALITY });
    finalType = "image/jpeg";
  }
  if (out.length > maxBytes) return { ok: false, problem: `${name} is still ${byteSize(out.length)} after shrinking, more than the ${byteSize(maxBytes)} the model takes` };
  const note = `${name}: ${size.width}×${size.height} downscaled to ${image.bitmap.width}×${image.bitmap.height} for the model`;
  return { ok: true, bytes: out, mediaType: finalType, width: image.bitmap.width, height: image.bitmap.height, note };
}

/** Why an image of this size is refused before decoding (over MAX_IMAGE_PIXELS), or null. */
export function pixelProblem(name: string, size: { width: number; height: number }): string | null {
  const pixels = size.width * size.height;
  if (pixels <= MAX_IMAGE_PIXELS) return null;
  return `${name} is ${size.width}×${size.height} pixels (${Math.round(pixels / 1e6)} megapixels), over the ${MAX_IMAGE_PIXELS / 1e6} megapixel limit coder decodes; scale it down first`;
}

/** "3.2 MB", "240 kB" below a megabyte, "38 bytes" below a kilobyte. */
export const byteSize = (n: number) => (n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)} MB` : n >= 1000 ? `${Math.ceil(n / 1000)} kB` : `${n} bytes`);

/** Pages of a PDF, counted from its page objects; undefined when they are compressed out of sight. */
export function pdfPages(bytes: Uint8Array): number | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  return pages > 0 ? pages : undefined;
}

/** Loads chat media as parts, remembering each file's part until the file or the rules change. */
export class MediaParts {
  private readonly cache = new Map<string, Attached>();

  constructor(private readonly kit: Kit) {}

  /**
   * The part for the file at `abs` (named `name` in the chat), fitted to `rules`; with
   * `fit: false` (a model that takes no images: the request will be refused) as it is.
   */
  async load(abs: string, name: string, rules: ImageRules | undefined, fit = true): Promise<Attached> {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(abs);
    } catch {
      return { ok: false, problem: `${name} no longer exists` };
    }
    const key = `${abs}\0${stat.size}\0${stat.mtimeMs}\0${fit ? JSON.stringify(rules ?? null) : "as-is"}`;
    const cached = this.cache.get(key);
    if (cached) return cached.ok ? { ok: true, part: cached.part } : cached;
    const attached = await this.read(abs, name, fit ? rules : null);
    for (const k of this.cache.keys()) if (k.startsWith(`${abs}\0`)) this.cache.delete(k);
    this.cache.set(key, attached);
    return attached;
  }

  /** `rules` null: the image as it is (only its size read). */
  private async read(abs: string, name: string, rules: ImageRules | undefined | null): Promise<Attached> {
    const type = this.kit.media.typeOf(abs);
    if (!type) return { ok: false, problem: `${name} is not an image or a PDF` };
    // Through the kit's capped reader: a regular file within --max-file-size, or a reason.
    const read = this.kit.files.readBytes(abs);
    if (!read.ok) return { ok: false, problem: read.missing ? `${name} no longer exists` : read.problem.replace(abs, name) };
    const bytes = read.bytes;
    if (type === "application/pdf") {
      if (bytes.length > MAX_PDF_BYTES) return { ok: false, problem: `${name} is ${byteSize(bytes.length)}, more than the ${byteSize(MAX_PDF_BYTES)} a request can carry` };
      const part: DocumentPart = { type: "document", mediaType: type, data: Buffer.from(bytes).toString("base64"), name };
      const pages = pdfPages(bytes);
      if (pages) part.pages = pages;
      return { ok: true, part };
    }
    if (rules === null) {
      const size = await imageDimensions(bytes);
      const tooMany = size && pixelProblem(name, size);
      if (tooMany) return { ok: false, problem: tooMany };
      return { ok: true, part: { type: "image", mediaType: type, data: Buffer.from(bytes).toString("base64"), ...size, name } };
    }
    const fitted = await fitImage(this.kit, bytes, type, name, rules);
    if (!fitted.ok) return fitted;
    const part: ImagePart = { type: "image", mediaType: fitted.mediaType, data: Buffer.from(fitted.bytes).toString("base64"), width: fitted.width, height: fitted.height, name };
    return fitted.note ? { ok: true, part, note: fitted.note } : { ok: true, part };
  }
}
