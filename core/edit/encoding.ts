// Text encodings of repository files: decode what is on disk (BOMs, UTF-8 when
// valid, else latin-1, which round-trips every byte) and encode it back the same way.

export type Encoding = "utf-8" | "latin-1" | "windows-1252" | "utf-16le" | "utf-16be";

/** How a file was stored on disk, so a write gives it back the same shape. */
export interface FileShape {
  encoding: Encoding;
  bom: boolean;
  /** "crlf": every line ended in CRLF (read() folds them to LF, writes restore them). */
  eol: "lf" | "crlf";
  mode: number | null;
}

/** Bytes sniffed for a NUL to call a file binary. */
export const SNIFF_BYTES = 8000;

/**
 * Decode bytes: BOMs first, then UTF-8 when valid, else `fallback`: latin-1 or windows-1252
 * (`--encoding`), single-byte encodings that round-trip any byte.
 */
export function decodeBytes(bytes: Uint8Array, fallback: "latin-1" | "windows-1252" = "latin-1"): { text: string; shape: Omit<FileShape, "mode" | "eol"> } | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    const body = bytes.subarray(3);
    const utf8 = tryUtf8(body);
    return utf8 === null ? { text: latin1(body), shape: { encoding: "latin-1", bom: true } } : { text: utf8, shape: { encoding: "utf-8", bom: true } };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: new TextDecoder("utf-16le").decode(bytes.subarray(2)), shape: { encoding: "utf-16le", bom: true } };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: new TextDecoder("utf-16be").decode(bytes.subarray(2)), shape: { encoding: "utf-16be", bom: true } };
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return null; // binary
  const utf8 = tryUtf8(bytes);
  if (utf8 !== null) return { text: utf8, shape: { encoding: "utf-8", bom: false } };
  if (fallback === "windows-1252") return { text: new TextDecoder("windows-1252").decode(bytes), shape: { encoding: "windows-1252", bom: false } };
  return { text: latin1(bytes), shape: { encoding: "latin-1", bom: false } };
}

function tryUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

/** Encode text back into a file's shape; null when the encoding cannot hold some character. */
export function encodeText(text: string, shape: FileShape): Uint8Array | null {
  // A lone surrogate has no encoding; writing U+FFFD instead would silently change the text.
  if (!text.isWellFormed()) return null;
  const body = shape.eol === "crlf" ? text.replace(/\r?\n/g, "\r\n") : text;
  switch (shape.encoding) {
    case "utf-8": {
      const data = new TextEncoder().encode(body);
      if (!shape.bom) return data;
      const out = new Uint8Array(data.length + 3);
      out.set([0xef, 0xbb, 0xbf]);
      out.set(data, 3);
      return out;
    }
    case "latin-1": {
      const out = new Uint8Array(body.length + (shape.bom ? 3 : 0));
      let k = 0;
      if (shape.bom) out.set([0xef, 0xbb, 0xbf], (k += 3) - 3);
      for (let i = 0; i < body.length; i++) {
        const c = body.charCodeAt(i);
        if (c > 0xff) return null;
        out[k++] = c;
      }
      return out;
    }
    case "windows-1252": {
      const out = new Uint8Array(body.length);
      for (let i = 0; i < body.length; i++) {
        const byte = windows1252Byte(body.charCodeAt(i));
        if (byte === undefined) return null;
        out[i] = byte;
      }
      return out;
    }
    case "utf-16le":
    case "utf-16be": {
      const out = new Uint8Array(2 + body.length * 2);
      const view = new DataView(out.buffer);
      const le = shape.encoding === "utf-16le";
      view.setUint16(0, 0xfeff, le);
      for (let i = 0; i < body.length; i++) view.setUint16(2 + i * 2, body.charCodeAt(i), le);
      return out;
    }
  }
}

/** Can a file of this shape hold `text`? (The cheap test behind encodeText's null.) */
export function canHold(text: string, shape: FileShape): boolean {
  if (!text.isWellFormed()) return false;
  if (shape.encoding === "windows-1252") return [...text].every((c) => windows1252Byte(c.charCodeAt(0)) !== undefined);
  return shape.encoding !== "latin-1" || !/[^\u0000-\u00ff]/.test(text);
}

let windows1252: Map<number, number> | undefined;

/** The windows-1252 byte of a UTF-16 code unit (the decoder's table, reversed), or undefined. */
function windows1252Byte(code: number): number | undefined {
  if (!windows1252) {
    windows1252 = new Map();
    const decoder = new TextDecoder("windows-1252");
    for (let b = 0; b < 256; b++) windows1252.set(decoder.decode(Uint8Array.of(b)).charCodeAt(0), b);
  }
  return windows1252.get(code);
}
