// /web and --detect-urls: a page fetched (fetch.ts), turned into Markdown (markdown.ts),
// saved under .coder/web/ and added to the chat read-only, so /ls lists it, /drop removes
// it, and its token count is known before the next request.
import type { Kit, Session } from "../../core/plugin.ts";
import { fetchPage, httpUrl } from "./fetch.ts";
import { htmlToMarkdown } from "./markdown.ts";

/** URLs in a message, without the punctuation that ends a sentence around them. */
export function findUrls(text: string): string[] {
  const found = text.match(/\bhttps?:\/\/[^\s<>"'`]+/g) ?? [];
  const trimmed = found.map((url) => {
    let u = url.replace(/[.,;:!?]+$/, "");
    // A closing bracket belongs to the URL only when the URL opened one.
    for (const [open, close] of [["(", ")"], ["[", "]"]] as const) {
      while (u.endsWith(close) && u.split(open).length < u.split(close).length) u = u.slice(0, -1);
    }
    return u;
  });
  return [...new Set(trimmed)];
}

/** The file a page is saved in: host and path, made safe, under .coder/web/. */
export function pageFileName(url: string): string {
  const u = new URL(url);
  const slug = `${u.host}${u.pathname}${u.search}`
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 120);
  return `${slug || "page"}.md`;
}

export interface WebOptions {
  timeoutMs: number;
  userAgent: string;
}

/** Fetch `url` and add it to the chat read-only; false (with the reason warned) when it cannot. */
export async function addWebPage(kit: Kit, session: Session, url: string, options: WebOptions): Promise<boolean> {
  const checked = httpUrl(url);
  if (typeof checked === "string") {
    session.warn(checked);
    return false;
  }
  session.print(`Fetching ${url} ...`);
  const fetched = await fetchPage(url, options);
  if (!fetched.ok) {
    session.warn(fetched.problem);
    return false;
  }
  let title = "";
  let markdown = fetched.text.trim();
  if (fetched.html) {
    try {
      ({ title, markdown } = await htmlToMarkdown(fetched.text, fetched.url));
    } catch (error) {
      session.warn(`${fetched.url} could not be read as HTML: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }
  if (!markdown) {
    session.warn(`${fetched.url} has no readable text.`);
    return false;
  }
  const text = `${title ? `# ${title}\n\n` : ""}Source: ${fetched.url}\n\n${markdown}\n`;
  let file: string;
  try {
    // Through the kit's state writer: a page file a cloned repository linked elsewhere is refused, never written through.
    file = kit.state.write(`web/${pageFileName(fetched.url)}`, text);
  } catch (error) {
    session.warn(`${fetched.url} was not saved: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
  const added = await session.addReadOnly([file]);
  const rel = added[0] ?? `.coder/web/${pageFileName(fetched.url)}`;
  const tokens = kit.tokens.count(text, kit.tokens.encoding?.(session.model));
  session.print(`Added ${fetched.url} to the chat as read-only text: ${rel}, ${tokens.toLocaleString("en-US")} tokens.`);
  return true;
}
