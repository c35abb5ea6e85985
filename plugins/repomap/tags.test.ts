import { expect, test } from "bun:test";
import { EMBEDDED_ASSETS } from "../../grammars/embedded.ts";
import { languageFor } from "../../grammars/languages.ts";
import { GrammarLoader } from "../../grammars/runtime.ts";
import { extractTags } from "./tags.ts";

const loader = new GrammarLoader(EMBEDDED_ASSETS);

async function refsOf(path: string, text: string) {
  const tags = extractTags(await loader.load(languageFor(path)!), text)!;
  return Object.fromEntries([...tags.refs].map(([name, count]) => [name, [count.plain, count.member]]));
}

test("a call on an unknown receiver is a member reference; a plain call and a capitalised qualified name are not", async () => {
  expect(await refsOf("a.ts", "store.get(1);\nget(2);\nerrors.HTTPError(3);\nthis.cache.update(4);\nnew Client();\n")).toEqual({
    get: [1, 1],
    HTTPError: [1, 0],
    update: [0, 1],
    Client: [1, 0],
  });
  expect(await refsOf("a.py", "self.items.append(1)\nload_config()\nmodels.User(2)\n")).toEqual({
    append: [0, 1],
    load_config: [1, 0],
    User: [1, 0],
  });
  // Go: a package-qualified call is capitalised (exported); an unexported method call is a member.
  expect(await refsOf("a.go", "package a\n\nfunc f() {\n\tconfig.Load()\n\tc.flush()\n\trun()\n}\n")).toEqual({
    Load: [1, 0],
    flush: [0, 1],
    run: [1, 0],
  });
});

test("a parse that takes far too long is stopped (null), and the parser is ready for the next file", async () => {
  const grammar = await loader.load(languageFor("a.py")!);
  // tree-sitter-python is quadratic on comment lines after an indented block.
  const slow = `def head():\n    return 1\n\n${"# comment line\n".repeat(12_000)}`;
  expect(extractTags(grammar, slow)).toBeNull();
  expect(extractTags(grammar, "def after():\n    return 2\n")!.defs.map((d) => d.name)).toEqual(["after"]);
});
