// Fetching pages from the fake server on 127.0.0.1: the limits (time, size, redirects,
// schemes, content types) each refuse clearly, and charsets decode.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeServer, startFakeServer } from "../../tests/support/fake-server.ts";
import { fetchPage, MAX_REDIRECTS } from "./fetch.ts";
import { findUrls, pageFileName } from "./web.ts";

let server: FakeServer;
const options = { timeoutMs: 5_000, userAgent: "coder-test" };

beforeAll(async () => {
  const hops: Record<string, { status: number; location: string }> = {};
  for (let i = 0; i <= MAX_REDIRECTS + 1; i++) hops[`/hop/${i}`] = { status: 302, location: `/hop/${i + 1}` };
  server = await startFakeServer([], {
    pages: {
      "/page": { body: "<html><body><p>hello</p></body></html>" },
      "/moved": { status: 301, location: "/page" },
      "/to-ftp": { status: 302, location: "ftp://files.example.com/x" },
      ...hops,
      "/slow": { body: "<p>late</p>", delayMs: 3_000 },
      "/huge": { bytes: 6_000_000 },
      "/report.pdf": { body: "%PDF-1.4", contentType: "application/pdf" },
      "/missing": { status: 404, body: "nope" },
      "/latin1": { body: new Uint8Array([0x63, 0x61, 0x66, 0xe9]), contentType: "text/plain; charset=iso-8859-1" },
      "/meta-charset": { body: new Uint8Array([...new TextEncoder().encode('<meta charset="windows-1252"><p>'), 0x80, 0x39]), contentType: "text/html" },
      "/readme.md": { body: "# Title\n\ntext\n", contentType: "text/markdown" },
    },
  });
});
afterAll(() => server.stop());

describe("fetchPage", () => {
  test("an HTML page, and one reached through a redirect", async () => {
    expect(await fetchPage(`${server.origin}/page`, options)).toEqual({ ok: true, url: `${server.origin}/page`, html: true, text: "<html><body><p>hello</p></body></html>" });
    const moved = await fetchPage(`${server.origin}/moved`, options);
    expect(moved).toMatchObject({ ok: true, url: `${server.origin}/page` });
    expect(server.requests.some((r) => r.headers["user-agent"] === "coder-test")).toBe(true);
  });

  test("plain text and Markdown pages are read as they are", async () => {
    expect(await fetchPage(`${server.origin}/readme.md`, options)).toMatchObject({ ok: true, html: false, text: "# Title\n\ntext\n" });
  });

  test("text is decoded by the charset the header names, else the page's own <meta charset>", async () => {
    expect(await fetchPage(`${server.origin}/latin1`, options)).toMatchObject({ ok: true, text: "caf\u00e9" });
    expect(await fetchPage(`${server.origin}/meta-charset`, options)).toMatchObject({ ok: true, text: '<meta charset="windows-1252"><p>\u20ac9' });
  });

  test(`more than ${MAX_REDIRECTS} redirects, or a redirect off http(s), are refused`, async () => {
    expect(await fetchPage(`${server.origin}/hop/0`, options)).toEqual({ ok: false, problem: `${server.origin}/hop/0 redirects more than ${MAX_REDIRECTS} times` });
    expect(await fetchPage(`${server.origin}/to-ftp`, options)).toEqual({
      ok: false,
      problem: `${server.origin}/to-ftp redirects to something coder does not fetch: ftp://files.example.com/x is not an http(s) URL; /web fetches only web pages`,
    });
  });

  test("a slow page runs into the time bound", async () => {
    expect(await fetchPage(`${server.origin}/slow`, { ...options, timeoutMs: 300 })).toEqual({ ok: false, problem: `${server.origin}/slow did not answer within 0.3 s (--web-timeout)` });
  });

  test("a huge page is cut off at the size cap", async () => {
    expect(await fetchPage(`${server.origin}/huge`, options)).toEqual({ ok: false, problem: `${server.origin}/huge is more than the 5.0 MB /web reads` });
    expect(await fetchPage(`${server.origin}/page`, { ...options, maxBytes: 10 })).toEqual({ ok: false, problem: `${server.origin}/page is 38 bytes, more than the 10 bytes /web reads` });
  });

  test("a PDF, a 404, a non-URL and a file: URL are refused, each saying why", async () => {
    expect(await fetchPage(`${server.origin}/report.pdf`, options)).toEqual({ ok: false, problem: `${server.origin}/report.pdf is application/pdf, not a web page: /web reads HTML and plain-text pages` });
    expect(await fetchPage(`${server.origin}/missing`, options)).toEqual({ ok: false, problem: `${server.origin}/missing answered 404 Not Found` });
    expect(await fetchPage("docs.example.com", options)).toEqual({ ok: false, problem: "docs.example.com is not a URL (give one like https://example.com/page)" });
    expect(await fetchPage("file:///etc/passwd", options)).toEqual({ ok: false, problem: "file:///etc/passwd is not an http(s) URL; /web fetches only web pages" });
  });

  test("a closed port is a one-line failure naming the URL", async () => {
    const dead = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const url = `http://127.0.0.1:${dead.port}/x`;
    await dead.stop(true);
    const result = await fetchPage(url, options);
    expect(result.ok ? "" : result.problem).toStartWith(`could not fetch ${url}: `);
  });
});

describe("URLs in a message", () => {
  test("found without the punctuation around them, once each", () => {
    expect(findUrls("See https://docs.example.com/a, and (https://example.com/b). Also https://docs.example.com/a!")).toEqual(["https://docs.example.com/a", "https://example.com/b"]);
    expect(findUrls("the wiki https://en.wikipedia.org/wiki/Foo_(bar) says")).toEqual(["https://en.wikipedia.org/wiki/Foo_(bar)"]);
    expect(findUrls("no links here, just example.com")).toEqual([]);
  });

  test("a page's file name comes from its host and path", () => {
    expect(pageFileName("https://docs.example.com/guide/widgets?v=2")).toBe("docs.example.com-guide-widgets-v-2.md");
    expect(pageFileName("http://127.0.0.1:8080/")).toBe("127.0.0.1-8080.md");
  });
});

describe("private addresses", () => {
  test("loopback, private, link-local and unique-local addresses are recognised; public ones are not", async () => {
    const { privateRange } = await import("./fetch.ts");
    for (const a of ["127.0.0.1", "127.9.8.7", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "::ffff:127.0.0.1", "0.0.0.0"]) {
      expect({ a, range: privateRange(a) !== null }).toEqual({ a, range: true });
    }
    for (const a of ["8.8.8.8", "172.32.0.1", "192.169.0.1", "2001:db8::1", "example.com"]) expect({ a, range: privateRange(a) }).toEqual({ a, range: null });
  });
});
