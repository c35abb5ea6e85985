// End to end on dist/coder: the `patch` format's `*** Move to:` target is gated like
// any edited path (Edit.paths): in the chat → allowed; not in the chat → asked (no
// without a terminal, yes under --yes-always); read-only, outside the repository or
// in .git/ → refused. A refusal leaves both files alone and reaches the model.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, lastUser, mainRequests, makeRepo, runCoder, serverPerTest } from "./engine-harness.ts";

const server = serverPerTest();

const UNDERSTOOD = { model: "gpt-4.1", text: "Understood; I will leave it.", repeat: true };

/** A patch that changes x in cart.py and moves the file to `to`. */
function move(to: string): string {
  return `Moving it.\n\n*** Begin Patch\n*** Update File: cart.py\n*** Move to: ${to}\n@@\n-x = 1\n+x = 2\n*** End Patch\n`;
}

describe.skipIf(!existsSync(BINARY))("patch *** Move to: the target is gated", () => {
  test("a target not in the chat is asked about: without a terminal the answer is no, nothing moves, no repair request", async () => {
    const repo = makeRepo({ "cart.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: move("shop/cart.py") }, UNDERSTOOD]);
    const r = await runCoder(repo, s, ["--edit-format", "patch", "-m", "move cart.py to shop/", "cart.py"]);
    expect(r.stderr).toContain("Create new file shop/cart.py?");
    expect(r.stderr).toContain("not interactive");
    expect(repo.read("cart.py")).toBe("x = 1\n");
    expect(existsSync(join(repo.root, "shop/cart.py"))).toBe(false);
    expect(mainRequests(s).length).toBe(1);
    expect(r.code).toBe(0);
    expect(repo.git("log", "--format=%s")).toBe("initial\n");
  });

  test("--yes-always allows a new target: the file moves with its change, in one commit", async () => {
    const repo = makeRepo({ "cart.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: move("shop/cart.py") }]);
    const r = await runCoder(repo, s, ["--yes-always", "--edit-format", "patch", "-m", "move cart.py to shop/", "cart.py"]);
    expect(r.code).toBe(0);
    expect(existsSync(join(repo.root, "cart.py"))).toBe(false);
    expect(repo.read("shop/cart.py")).toBe("x = 2\n");
    expect(repo.git("show", "--name-status", "--format=", "HEAD").trim().split("\n").sort()).toEqual(["A\tshop/cart.py", "D\tcart.py"]);
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("a target in the chat needs no question", async () => {
    const repo = makeRepo({ "cart.py": "x = 1\n" });
    const s = await server([{ model: "gpt-4.1", text: move("shop/cart.py") }]);
    // shop/cart.py does not exist yet, but the user put it in the chat: pre-authorised.
    const r = await runCoder(repo, s, ["--edit-format", "patch", "-m", "move cart.py to shop/", "cart.py", "shop/cart.py"]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("Create new file");
    expect(repo.read("shop/cart.py")).toBe("x = 2\n");
    expect(existsSync(join(repo.root, "cart.py"))).toBe(false);
  });

  test("a read-only target is refused whatever the answers, with the read-only report", async () => {
    const repo = makeRepo({ "cart.py": "x = 1\n", "NOTES.md": "notes\n" });
    const s = await server([{ model: "gpt-4.1", text: move("NOTES.md") }, UNDERSTOOD]);
    await runCoder(repo, s, ["--yes-always", "--read", "NOTES.md", "--edit-format", "patch", "-m", "move it", "cart.py"]);
    expect(repo.read("cart.py")).toBe("x = 1\n");
    expect(repo.read("NOTES.md")).toBe("notes\n");
    expect(lastUser(mainRequests(s)[1])).toContain("NOTES.md is read-only");
  });

  test("a target outside the repository or in .git/ is refused whatever the answers", async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "coder-outside-")));
    writeFileSync(join(outside, "keep.txt"), "secret\n");
    for (const target of [join(outside, "moved.py"), "../moved.py", ".git/hooks/pre-commit"]) {
      const repo = makeRepo({ "cart.py": "x = 1\n" });
      const s = await server([{ model: "gpt-4.1", text: move(target) }, UNDERSTOOD]);
      await runCoder(repo, s, ["--yes-always", "--edit-format", "patch", "-m", "move it", "cart.py"]);
      expect(repo.read("cart.py")).toBe("x = 1\n");
      expect(existsSync(join(outside, "moved.py"))).toBe(false);
      expect(existsSync(join(repo.root, "..", "moved.py"))).toBe(false);
      expect(existsSync(join(repo.root, ".git/hooks/pre-commit"))).toBe(false);
      const report = lastUser(mainRequests(s)[1]);
      expect(report).toContain("Refused to edit");
      expect(report).toMatch(/absolute path|outside the repository|inside \.git\//);
    }
    expect(readFileSync(join(outside, "keep.txt"), "utf8")).toBe("secret\n");
  });
});
