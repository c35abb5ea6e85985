// A documentation page with navigation chrome, a code block and a table, turned into
// Markdown: the article alone, the code fenced with its language, the table as a pipe table.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { htmlToMarkdown } from "./markdown.ts";

const PAGE = await Bun.file(join(import.meta.dir, "testdata", "widgets.html")).text();

test("a docs page becomes clean Markdown: no chrome, fenced code, a pipe table, absolute links", async () => {
  const { title, markdown } = await htmlToMarkdown(PAGE, "https://docs.example.com/docs/widgets");
  expect(title).toBe("Widget API · Widget Docs");
  expect(markdown).toBe(
    [
      "The widget API creates and configures widgets. Every widget has a `name` and a `size`, and lives until the process that made it ends or it is closed explicitly.",
      "",
      "## Creating a widget",
      "",
      "Call `create_widget` with the options below. Widgets are cheap: make as many as you need and close them when you are done, so the pool they come from stays small.",
      "",
      "```python",
      "from widgets import create_widget",
      "",
      'gear = create_widget(name="gear", size=3)',
      "print(gear.size * 2)",
      "```",
      "",
      "## Options",
      "",
      "| Option | Type | Default |",
      "| --- | --- | --- |",
      "| name | str | required |",
      "| size | int | 1   |",
      "",
      "Widgets compose with gadgets: see [the gadgets guide](https://docs.example.com/gadgets) for the details of how the two share a pool.",
    ].join("\n"),
  );
  for (const chrome of ["Log in", "Pricing", "Getting started", "cookies", "Privacy", "analytics", "font-family", "Search the docs"]) expect(markdown).not.toContain(chrome);
});

test("a short page with no article is converted whole, minus its navigation and footer", async () => {
  const { markdown } = await htmlToMarkdown("<html><body><nav><a href='/'>Home</a></nav><p>Only <b>this</b>.</p><footer>© us</footer></body></html>", "http://x.test/");
  expect(markdown).toBe("Only **this**.");
});

test("a fragment without <html> or <head> still gets its links resolved", async () => {
  const { markdown } = await htmlToMarkdown('<p>See <a href="b/c">the next page</a> for more about this short fragment.</p>', "http://x.test/a/");
  expect(markdown).toBe("See [the next page](http://x.test/a/b/c) for more about this short fragment.");
});
