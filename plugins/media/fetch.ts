// Fetching a page for /web: http(s) only, one time bound over the whole fetch, a size cap
// applied while the body streams, a few redirects at most (each one checked again), and
// the text decoded by its charset. Bun's fetch honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY.

import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { byteSize } from "./attach.ts";

export const MAX_PAGE_BYTES = 5_000_000;
export const MAX_REDIRECTS = 5;

/** What /web reads: HTML, and plain text or Markdown as it is. */
const READABLE = /^(text\/html|application\/xhtml\+xml|text\/plain|text\/markdown|text\/x-markdown)$/;

export type Fetched = { ok: true; url: string; html: boolean; text: string } | { ok: false; problem: string };

export interface FetchOptions {
  timeoutMs: number;
  maxBytes?: number;
  userAgent: string;
  signal?: AbortSignal;
}

/** The page at `address`, or why not (one line naming the URL). */
export async function fetchPage(address: string, options: FetchOptions): Promise<Fetched> {
  const maxBytes = options.maxBytes ?? MAX_PAGE_BYTES;
  const first = httpUrl(address);
  if (typeof first === "string") return { ok: false, problem: first };
  const signals = [AbortSignal.timeout(options.timeoutMs), ...(options.signal ? [options.signal] : [])];
  const signal = AbortSignal.any(signals);
  let url = first;
  // A page may not send coder to the user's own machine or network unless the user went there first.
  const userWentLocal = (await localAddress(first)) !== null;
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await fetch(url, {
        redirect: "manual",
        signal,
        headers: { "user-agent": options.userAgent, accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1" },
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        if (redirects >= MAX_REDIRECTS) return { ok: false, problem: `${address} redirects more than ${MAX_REDIRECTS} times` };
        const next = httpUrl(new URL(location, url).href);
        if (typeof next === "string") return { ok: false, problem: `${url.href} redirects to something coder does not fetch: ${next}` };
        const local = userWentLocal ? null : await localAddress(next);
        if (local) {
          return {
            ok: false,
            problem: `${url.href} redirects to ${next.href}, ${local}; coder follows a redirect onto this machine or its network only when the URL you gave is there too (give that URL yourself if you mean it)`,
          };
        }
        url = next;
        continue;
      }
      return await readBody(response, url.href, maxBytes);
    }
  } catch (error) {
    if (options.signal?.aborted) return { ok: false, problem: `fetching ${url.href} was interrupted` };
    if (signal.aborted) return { ok: false, problem: `${url.href} did not answer within ${Number((options.timeoutMs / 1000).toFixed(1))} s (--web-timeout)` };
    return { ok: false, problem: `could not fetch ${url.href}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * Why the URL's host is on this machine or a private network (a loopback, private, link-local
 * or unique-local address, by name or once resolved), or null when it is not (or does not resolve).
 */
export async function localAddress(url: URL): Promise<string | null> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const named = privateRange(host);
  if (named) return `a ${named} address`;
  if (isIP(host)) return null;
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback address";
  let found: { address: string }[];
  try {
    found = await lookup(host, { all: true });
  } catch {
    return null; // unresolvable here (a proxy may still reach it): nothing local to refuse
  }
  for (const { address } of found) {
    const range = privateRange(address);
    if (range) return `which resolves to ${address}, a ${range} address`;
  }
  return null;
}

/** The kind of a private, loopback or link-local IP address, or null (also for a name). */
export function privateRange(address: string): string | null {
  const kind = isIP(address);
  if (kind === 4) return privateV4(address);
  if (kind !== 6) return null;
  const a = address.toLowerCase();
  const mapped = /^(?:0*:)*(?:0*:)?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)?.[1] ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)?.[1];
  if (mapped) return privateV4(mapped);
  const words = expandV6(a);
  if (!words) return null;
  if (words.slice(0, 7).every((w) => w === 0) && (words[7] === 1 || words[7] === 0)) return words[7] === 1 ? "loopback" : "unspecified";
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return privateV4(`${words[6]! >> 8}.${words[6]! & 255}.${words[7]! >> 8}.${words[7]! & 255}`);
  if ((words[0]! & 0xfe00) === 0xfc00) return "unique-local (private)";
  if ((words[0]! & 0xffc0) === 0xfe80) return "link-local";
  return null;
}

function privateV4(address: string): string | null {
  const [a, b] = address.split(".").map(Number) as [number, number];
  if (a === 127) return "loopback";
  if (a === 0) return "unspecified";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 169 && b === 254) return "link-local";
  if (a === 100 && b >= 64 && b <= 127) return "shared (carrier-grade NAT)";
  return null;
}

/** The eight 16-bit words of an IPv6 address, or null. */
function expandV6(address: string): number[] | null {
  const [head, tail] = address.split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":").map((w) => Number.parseInt(w, 16)) : []);
  const h = part(head);
  const t = part(tail);
  const words = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/** A URL coder fetches, or why not. */
export function httpUrl(address: string): URL | string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return `${address} is not a URL (give one like https://example.com/page)`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${address} is not an http(s) URL; /web fetches only web pages`;
  return url;
}

async function readBody(response: Response, url: string, maxBytes: number): Promise<Fetched> {
  if (!response.ok) {
    await response.body?.cancel();
    return { ok: false, problem: `${url} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}` };
  }
  const contentType = response.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  if (!READABLE.test(mediaType)) {
    await response.body?.cancel();
    return { ok: false, problem: `${url} is ${mediaType || "of no stated type"}, not a web page: /web reads HTML and plain-text pages` };
  }
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    return { ok: false, problem: `${url} is ${byteSize(declared)}, more than the ${byteSize(maxBytes)} /web reads` };
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body ?? []) {
    total += chunk.length;
    if (total > maxBytes) {
      await response.body?.cancel().catch(() => {});
      return { ok: false, problem: `${url} is more than the ${byteSize(maxBytes)} /web reads` };
    }
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  const html = mediaType !== "text/plain" && !mediaType.includes("markdown");
  return { ok: true, url, html, text: decode(bytes, charsetOf(contentType, html ? bytes : null)) };
}

/** The charset from the Content-Type header, else from an HTML page's own `<meta charset>`. */
function charsetOf(contentType: string, head: Uint8Array | null): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (declared) return declared;
  if (head) {
    const start = Buffer.from(head.subarray(0, 2048)).toString("latin1");
    const meta = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(start)?.[1];
    if (meta) return meta;
  }
  return "utf-8";
}

function decode(bytes: Uint8Array, charset: string): string {
  try {
    return new TextDecoder(charset as ConstructorParameters<typeof TextDecoder>[0]).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}
