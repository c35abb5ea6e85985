// Images and PDFs in the chat, through the built binary against the fake server: an image
// reaches the request as an image part, is downscaled to the provider's limit, a model
// that cannot take it refuses before any request, a PDF travels as a document, and the
// model can never edit them.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { imageDimensions } from "../plugins/media/attach.ts";
import { pdf, png } from "../plugins/media/testdata/make.ts";
import { BINARY, block, mainRequests, makeRepo, runCoder, serverPerTest } from "./engine-harness.ts";

const server = serverPerTest();

/** Every content part of the user messages of a request body. */
function partsOf(body: any): any[] {
  return (body.messages as any[]).filter((m) => m.role === "user" && Array.isArray(m.content)).flatMap((m) => m.content);
}

const dataOf = (url: string) => Buffer.from(url.slice(url.indexOf(",") + 1), "base64");

describe.skipIf(!existsSync(BINARY))("images and PDFs in the chat (dist/coder)", () => {
  test("a PNG named on the command line reaches the request as an image part, byte for byte", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    const shot = await png(320, 200);
    writeFileSync(join(repo.root, "shot.png"), shot);
    const s = await server([{ model: "gpt-4.1", text: "The dialog's button is cut off." }]);
    const r = await runCoder(repo, s, ["--map-tokens", "0", "-m", "what is wrong in the screenshot?", "shot.png", "app.py"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const parts = partsOf(mainRequests(s)[0]);
    const at = parts.findIndex((p) => p.type === "image_url");
    expect(parts[at - 1]).toEqual({ type: "text", text: "shot.png:" });
    expect(parts[at].image_url.url).toStartWith("data:image/png;base64,");
    expect(dataOf(parts[at].image_url.url)).toEqual(Buffer.from(shot));
    // The image is context, never an edit target: the chat files block lists app.py alone.
    const text = JSON.stringify(mainRequests(s)[0].messages);
    expect(text).toContain("These files are in the chat. You may edit them");
    expect(text).not.toContain("shot.png\\n```");
  });

  test("a text-only model refuses the image before any request is made", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    writeFileSync(join(repo.root, "shot.png"), await png(32, 32));
    const s = await server([{ model: "gpt-3.5-turbo", text: "never sent" }]);
    const r = await runCoder(repo, s, ["--model", "openai/gpt-3.5-turbo", "--map-tokens", "0", "-m", "what is this?", "shot.png"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      "coder: openai/gpt-3.5-turbo does not take images, and shot.png is in the chat: drop it (/drop shot.png), or use a model that takes images (--model, /model)",
    );
    expect(s.chatBodies()).toHaveLength(0);
  });

  test("a large screenshot is downscaled to the provider's limit before it is sent (Anthropic: 1568 px, 1.19 MP)", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    writeFileSync(join(repo.root, "wide.png"), await png(3000, 1500));
    const s = await server([{ model: "claude-sonnet-4-5", text: "ok" }]);
    const r = await runCoder(repo, s, ["--model", "anthropic/claude-sonnet-4-5", "--map-tokens", "0", "-m", "look", "wide.png"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("wide.png: 3000×1500 downscaled to 1544×772 for the model");
    const image = partsOf(mainRequests(s)[0]).find((p) => p.type === "image_url");
    expect(await imageDimensions(dataOf(image.image_url.url))).toEqual({ width: 1544, height: 772 });
  });

  test("a read-only PDF reaches OpenAI as a file part; Anthropic's compatible endpoint refuses it before any request", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    const spec = pdf(2);
    writeFileSync(join(repo.root, "spec.pdf"), spec);
    const s = await server([{ model: "gpt-4.1", text: "Section 2 says so." }]);
    const r = await runCoder(repo, s, ["--read", "spec.pdf", "--map-tokens", "0", "-m", "what does the spec say?"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const file = partsOf(mainRequests(s)[0]).find((p) => p.type === "file");
    expect(file.file.filename).toBe("spec.pdf");
    expect(dataOf(file.file.file_data)).toEqual(Buffer.from(spec));

    const refused = await runCoder(repo, s, ["--model", "anthropic/claude-sonnet-4-5", "--read", "spec.pdf", "--map-tokens", "0", "-m", "and now?"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("anthropic/claude-sonnet-4-5 does not take PDF documents, and spec.pdf is in the chat");
    expect(mainRequests(s)).toHaveLength(1);
  });

  test("an edit to an image is refused and reflected; the image is never written", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    const shot = await png(16, 16);
    writeFileSync(join(repo.root, "shot.png"), shot);
    const s = await server([
      { model: "gpt-4.1", text: `Recolouring it.\n\n${block("shot.png", "PNG\n", "JPG\n")}` },
      { model: "gpt-4.1", text: "Understood: I cannot edit images." },
    ]);
    const r = await runCoder(repo, s, ["--yes-always", "--map-tokens", "0", "-m", "make it blue", "shot.png"]);
    expect(readFileSync(join(repo.root, "shot.png"))).toEqual(Buffer.from(shot));
    const second = mainRequests(s)[1];
    expect(JSON.stringify(second.messages.at(-1).content)).toContain("Refused to edit shot.png: shot.png is a binary file");
    expect(r.code).toBe(0);
  });

  test("a plugin's onMessage sees each typed request once (not its reflections) and may add to the chat first", async () => {
    const repo = makeRepo({ "app.py": "x = 1\n", "TODO.md": "- rename x\n" });
    const plugin = join(repo.home, "todo-plugin.ts");
    writeFileSync(
      plugin,
      `export default (kit) => ({ apiVersion: 1, name: "todo", context: [{ name: "todo", stability: "turn", provide: () => null,
        async onMessage(message, session) {
          require("node:fs").appendFileSync(${JSON.stringify(join(repo.home, "seen.log"))}, message + "\\n");
          if (message.includes("TODO")) await session.addReadOnly(["TODO.md"]);
        } }] });\n`,
    );
    const s = await server([
      { model: "gpt-4.1", text: block("app.py", "y = 1\n", "z = 1\n") },
      { model: "gpt-4.1", text: block("app.py", "x = 1\n", "renamed = 1\n") },
    ]);
    const r = await runCoder(repo, s, ["--plugin", plugin, "--yes-always", "--map-tokens", "0", "-m", "do the TODO", "app.py"]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(repo.home, "seen.log"), "utf8")).toBe("do the TODO\n");
    const [first, second] = mainRequests(s);
    expect(JSON.stringify(first.messages)).toContain("- rename x");
    expect(JSON.stringify(second.messages)).toContain("- rename x");
    expect(repo.read("app.py")).toBe("renamed = 1\n");
  });
});
