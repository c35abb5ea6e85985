// Test fixtures made on the spot: real PNG and JPEG images (through jimp), a WAV
// recording (a 440 Hz tone, 16 kHz mono PCM) and a small PDF with real page objects.
import { createJimp } from "@jimp/core";
import jpegFormat from "@jimp/js-jpeg";
import pngFormat from "@jimp/js-png";

const Jimp = createJimp({ formats: [pngFormat, jpegFormat] });

/** A width × height image with a pattern (so it does not compress to nothing), or noise (so it hardly compresses). */
async function pattern(width: number, height: number, mime: "image/png" | "image/jpeg", noise: boolean): Promise<Uint8Array> {
  const image = new Jimp({ width, height, color: 0xffffffff });
  const data = image.bitmap.data;
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16) & 0xff;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      data[i] = noise ? random() : (x * 7) & 0xff;
      data[i + 1] = noise ? random() : (y * 3) & 0xff;
      data[i + 2] = noise ? random() : ((x >> 4) ^ (y >> 4)) & 1 ? 0x30 : 0xd0;
    }
  }
  return new Uint8Array(mime === "image/png" ? await image.getBuffer("image/png") : await image.getBuffer("image/jpeg", { quality: 90 }));
}

export const png = (width: number, height: number, noise = false) => pattern(width, height, "image/png", noise);
export const jpeg = (width: number, height: number, noise = false) => pattern(width, height, "image/jpeg", noise);

/** A WAV file: `seconds` of a 440 Hz tone, 16-bit mono at 16 kHz. */
export function wav(seconds = 0.5): Uint8Array {
  const rate = 16_000;
  const samples = Math.round(rate * seconds);
  const out = new DataView(new ArrayBuffer(44 + samples * 2));
  const text = (at: number, s: string) => [...s].forEach((c, i) => out.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF");
  out.setUint32(4, 36 + samples * 2, true);
  text(8, "WAVEfmt ");
  out.setUint32(16, 16, true);
  out.setUint16(20, 1, true);
  out.setUint16(22, 1, true);
  out.setUint32(24, rate, true);
  out.setUint32(28, rate * 2, true);
  out.setUint16(32, 2, true);
  out.setUint16(34, 16, true);
  text(36, "data");
  out.setUint32(40, samples * 2, true);
  for (let i = 0; i < samples; i++) out.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), true);
  return new Uint8Array(out.buffer);
}

/** A minimal PDF with `pages` page objects (enough for page counting and sniffing). */
export function pdf(pages = 2): Uint8Array {
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(" ");
  const objects = [
    "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
    `2 0 obj << /Type /Pages /Kids [${kids}] /Count ${pages} >> endobj`,
    ...Array.from({ length: pages }, (_, i) => `${3 + i} 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj`),
  ];
  return new TextEncoder().encode(`%PDF-1.4\n${objects.join("\n")}\ntrailer << /Root 1 0 R >>\n%%EOF\n`);
}
