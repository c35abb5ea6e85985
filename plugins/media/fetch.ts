// Fetching a page for /web: http(s) only, one time bound over the whole fetch, a size cap
// applied while the body streams, a few redirects at most (each one checked again), and
// the text decoded by its charset. Bun's fetch honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY.

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
