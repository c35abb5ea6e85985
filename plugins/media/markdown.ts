// A web page as Markdown: Mozilla's Readability (over linkedom's DOM) keeps the article and
// drops the navigation, sidebars and footers; turndown with the GFM plugin writes it as
// Markdown with fenced, language-tagged code blocks and pipe tables. Loaded on first use.

type Libraries = Awaited<ReturnType<typeof loadLibraries>>;
let libraries: Promise<Libraries> | undefined;

async function loadLibraries() {
  const [{ parseHTML }, { Readability }, { default: TurndownService }, { gfm }] = await Promise.all([
    import("linkedom"),
    import("@mozilla/readability"),
    import("turndown"),
    import("@joplin/turndown-plugin-gfm"),
  ]);
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*" });
  turndown.use(gfm);
  // Scripts, styles and forms carry nothing a reader needs.
  turndown.remove(["script", "style", "noscript", "iframe", "form", "button"]);
  return { parseHTML, Readability, turndown };
}

export interface PageMarkdown {
  title: string;
  markdown: string;
}

/**
 * The readable part of `html` as Markdown, links made absolute against `url`: the page's
 * navigation, sidebars, header and footer go first, then Readability picks the article
 * (a page it finds none in is converted whole).
 */
export async function htmlToMarkdown(html: string, url: string): Promise<PageMarkdown> {
  const { parseHTML, Readability, turndown } = await (libraries ??= loadLibraries());
  // A <base> lets Readability resolve relative links and image sources against the page's URL.
  const { document } = parseHTML(withBase(html, url));
  const title = document.querySelector("title")?.textContent?.trim() ?? "";
  dropChrome(document);
  // keepClasses: the fenced-code rule reads a block's language from its "language-x" class.
  const article = new Readability(document as never, { keepClasses: true }).parse();
  const body = article?.content ?? document.body?.innerHTML ?? "";
  return { title: (article?.title || title).trim(), markdown: tidy(turndown.turndown(body)) };
}

/** Navigation, sidebars, and the page's own header and footer (not an article's). */
function dropChrome(document: ReturnType<Libraries["parseHTML"]>["document"]): void {
  for (const element of document.querySelectorAll("nav, aside, header, footer, [role=navigation], [role=banner], [role=contentinfo]")) {
    const tag = element.tagName.toLowerCase();
    if ((tag === "header" || tag === "footer") && element.parentElement?.closest("article, main")) continue;
    element.remove();
  }
}

/** The page with a <base href> in its head, however much of the document it spells out. */
function withBase(html: string, url: string): string {
  const base = `<base href="${url.replace(/"/g, "&quot;")}">`;
  if (/<head[\s>]/i.test(html)) return html.replace(/<head[^>]*>/i, (head) => `${head}${base}`);
  if (/<html[\s>]/i.test(html)) return html.replace(/<html[^>]*>/i, (open) => `${open}<head>${base}</head>`);
  return `<!doctype html><html><head>${base}</head><body>${html}</body></html>`;
}

/** No runs of blank lines, no trailing spaces. */
function tidy(markdown: string): string {
  return markdown
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
