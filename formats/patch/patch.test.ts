import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "../../core/errors.ts";
import { loadFormat, runReply, tempRepo, textReply } from "../../tests/support/format-kit.ts";
import plugin from "./index.ts";

const CART = "class Cart:\n    def total(self):\n        return 0\n\n\nclass Wishlist:\n    def total(self):\n        return 0\n";

describe("patch", () => {
  test("Add File works, also over an empty file (a gate may have created it)", async () => {
    const repo = tempRepo({ "empty.py": "" });
    const fmt = await loadFormat(plugin, "patch", repo.kit);
    const reply = "*** Begin Patch\n*** Add File: pkg/new.py\n+def f():\n+    return 1\n*** Add File: empty.py\n+x = 1\n*** End Patch\n";
    const { outcomes } = await runReply(fmt, textReply(reply), repo);
    expect(outcomes.map((o) => o.status)).toEqual(["applied", "applied"]);
    expect(readFileSync(join(repo.root, "pkg/new.py"), "utf8")).toBe("def f():\n    return 1\n");
    expect(readFileSync(join(repo.root, "empty.py"), "utf8")).toBe("x = 1\n");
  });

  test("@@ scope picks between otherwise ambiguous places; Move to; Delete File", async () => {
    const repo = tempRepo({ "cart.py": CART, "gone.py": "x\n" });
    const fmt = await loadFormat(plugin, "patch", repo.kit);
    const reply =
      "```\n*** Begin Patch\n*** Update File: cart.py\n*** Move to: shop/cart.py\n@@ class Wishlist:\n     def total(self):\n-        return 0\n+        return len(self.items)\n*** Delete File: gone.py\n*** End Patch\n```\n";
    const { outcomes } = await runReply(fmt, textReply(reply), repo);
    expect(outcomes.map((o) => [o.status, o.path])).toEqual([["applied", "shop/cart.py"], ["applied", "gone.py"]]);
    expect(readFileSync(join(repo.root, "shop/cart.py"), "utf8")).toBe(CART.replace(/return 0\n$/, "return len(self.items)\n"));
    expect(existsSync(join(repo.root, "cart.py"))).toBe(false);
    expect(existsSync(join(repo.root, "gone.py"))).toBe(false);
  });

  test("without a scope the same chunk is ambiguous; a file's chunks apply all or nothing", async () => {
    const repo = tempRepo({ "cart.py": CART });
    const fmt = await loadFormat(plugin, "patch", repo.kit);
    const reply = "*** Begin Patch\n*** Update File: cart.py\n@@\n-class Cart:\n+class Basket:\n@@\n     def total(self):\n-        return 0\n+        return 1\n*** End Patch";
    const { outcomes, report } = await runReply(fmt, textReply(reply), repo);
    expect(outcomes[0]).toMatchObject({ status: "failed", reason: "ambiguous" });
    expect(report).toContain("Chunk 2 of 2");
    expect(readFileSync(join(repo.root, "cart.py"), "utf8")).toBe(CART);
  });

  test("consecutive @@ lines narrow the scope", async () => {
    const repo = tempRepo({ "cart.py": CART });
    const fmt = await loadFormat(plugin, "patch", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("*** Begin Patch\n*** Update File: cart.py\n@@ class Wishlist:\n@@     def total(self):\n-        return 0\n+        return 9\n*** End Patch"), repo);
    expect(outcomes[0]!.status).toBe("applied");
    expect(readFileSync(join(repo.root, "cart.py"), "utf8")).toBe(CART.replace(/return 0\n$/, "return 9\n"));
  });

  test("End of File anchors at the end", async () => {
    const repo = tempRepo({ "cart.py": CART });
    const fmt = await loadFormat(plugin, "patch", repo.kit);
    const { outcomes } = await runReply(fmt, textReply("*** Begin Patch\n*** Update File: cart.py\n@@\n-        return 0\n+        return 2\n*** End of File\n*** End Patch"), repo);
    expect(outcomes[0]!.status).toBe("applied");
    expect(readFileSync(join(repo.root, "cart.py"), "utf8")).toBe(CART.replace(/return 0\n$/, "return 2\n"));
  });

  test("a cut-off patch is a FormatError", async () => {
    const repo = tempRepo({ "cart.py": CART });
    const fmt = await loadFormat(plugin, "patch", repo.kit);
    expect(() => fmt.parse(textReply("*** Begin Patch\n*** Update File: cart.py\n@@\n-        return 0\n"), repo.ctx)).toThrow(FormatError);
    expect(() => fmt.parse(textReply("*** Begin Patch\n*** Add File: x.py\nno plus\n*** End Patch"), repo.ctx)).toThrow("must start with +");
  });

  test("examples parse back", async () => {
    const fmt = await loadFormat(plugin, "patch");
    const p = fmt.prompts({ fence: ["```", "```"], platform: "linux", chatFiles: [], shellSuggestions: true, editorOnly: true });
    const counts = p.examples.filter((m) => m.role === "assistant").map((m) => fmt.parse(textReply(m.content), { fence: ["```", "```"], chatFiles: [], resolvePath: (r) => r }).edits.length);
    expect(counts).toEqual([1, 2]);
  });
});
