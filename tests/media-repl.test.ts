// /add of an image, /web, --detect-urls, /voice, /paste, /copy and /copy-context in the
// REPL of the built binary (a pseudo-terminal through util-linux `script`), with stub
// clipboard and recorder tools on PATH and the fake server serving pages on 127.0.0.1.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pdf, png, wav } from "../plugins/media/testdata/make.ts";
import { type FakePage, type FakeServer, type FakeStep, startFakeServer } from "./support/fake-server.ts";
import { BINARY, lastUser, mainRequests, makeRepo, removeRepos, type Repo } from "./engine-harness.ts";
import { inTerminal, SCRIPT } from "./support/pty.ts";

const WIDGETS = readFileSync(join(import.meta.dir, "..", "plugins", "media", "testdata", "widgets.html"), "utf8");
const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  removeRepos();
});

async function serve(steps: FakeStep[], pages: Record<string, FakePage> = {}): Promise<FakeServer> {
  const s = await startFakeServer([{ model: "weak-model", text: "chore: update", repeat: true }, ...steps], { pages });
  servers.push(s);
  return s;
}

/** A folder for PATH: stub tools (`xclip` over $CLIP_DIR, `rec` that records $VOICE_FIXTURE) and the few real tools they and the REPL use. */
function stubTools(tools: ("xclip" | "rec")[]): string {
  const dir = mkdtempSync(join(tmpdir(), "coder-stubs-"));
  const scripts = {
    xclip: [
      "#!/bin/sh",
      "# A stub xclip over the files in $CLIP_DIR: targets, image.png, text; what is copied lands in copied.",
      'case "$*" in',
      '  *"-t TARGETS -o"*) cat "$CLIP_DIR/targets" 2>/dev/null ;;',
      '  *"-t image/png -o"*) cat "$CLIP_DIR/image.png" ;;',
      '  *"-o"*) cat "$CLIP_DIR/text" ;;',
      '  *) cat > "$CLIP_DIR/copied" ;;',
      "esac",
    ],
    rec: [
      "#!/bin/sh",
      "# A stub sox rec: the last argument is the output file; SIGINT finishes it with the fixture.",
      `trap 'cp "$VOICE_FIXTURE" "$last"; exit 0' INT TERM`,
      "for last; do :; done",
      'echo "$@" > "$VOICE_ARGS"',
      "while :; do sleep 0.05; done",
    ],
  };
  for (const tool of tools) {
    writeFileSync(join(dir, tool), `${scripts[tool].join("\n")}\n`);
    chmodSync(join(dir, tool), 0o755);
  }
  // Only what the REPL needs besides the stubs, so no real clipboard tool or recorder is found.
  for (const tool of ["git", "sh", "stty", "cat", "cp", "sleep"]) symlinkSync(Bun.which(tool)!, join(dir, tool));
  return dir;
}

/** The REPL of dist/coder in a pseudo-terminal, with `env` over a minimal environment. */
function startRepl(repo: Repo, server: FakeServer, args: string[], env: Record<string, string> = {}) {
  // The plain line prompt (--no-pretty): these tests are about media, and wait for its "> ".
  const argv = [BINARY, "--model", "openai/gpt-4.1", "--weak-model", "openai/weak-model", "--api-base", server.url, "--api-key", "sk-test", "--map-tokens", "0", "--no-pretty", ...args];
  const terminal = inTerminal(argv, {
    cwd: repo.root,
    env: { PATH: "/usr/bin:/bin", HOME: repo.home, XDG_CONFIG_HOME: join(repo.home, ".config"), TERM: "dumb", GIT_CONFIG_NOSYSTEM: "1", ...env },
    cols: 200,
    rows: 50,
  });
  return Object.assign(terminal, {
    /** Type a line and wait for `until` (the next prompt by default). */
    async run(line: string, until = "\n> ") {
      terminal.send(`${line}\r`);
      await terminal.waitFor(until);
    },
    exit(): Promise<number> {
      terminal.send("/exit\r");
      return terminal.proc.exited;
    },
  });
}

/** What the REPL printed for the last `line` typed at its prompt, up to the next prompt. */
const answerTo = (output: string, line: string) => {
  const start = output.lastIndexOf(`> ${line}\r`);
  return output.slice(start, output.indexOf("\n> ", start));
};

describe.skipIf(!existsSync(BINARY) || !SCRIPT)("media in the REPL (dist/coder in a pseudo-terminal)", () => {
  test("/add an image: /ls lists it read-only, /tokens counts it by OpenAI's tiles, it is sent as a part, /drop removes it", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    writeFileSync(join(repo.root, "shot.png"), await png(1024, 1024));
    const s = await serve([{ model: "gpt-4.1", text: "A pattern.", repeat: true }]);
    const repl = startRepl(repo, s, ["app.py"]);
    await repl.waitFor("> ");
    await repl.run("/add shot.png");
    expect(answerTo(repl.output, "/add shot.png")).toContain("shot.png is an image: it joins the chat read-only (never edited).");
    await repl.run("/ls");
    expect(answerTo(repl.output, "/ls")).toContain("Read-only files:\r\n  shot.png");
    await repl.run("/tokens");
    // 1024×1024 → 768×768 → 4 tiles: 85 + 4 × 170 = 765, plus the block's few words.
    const row = /([\d,]+)\s+(?:\$[\d.]+\s+)?images and documents: shot\.png/.exec(answerTo(repl.output, "/tokens"));
    expect(Number(row?.[1]?.replaceAll(",", ""))).toBeGreaterThan(765);
    expect(Number(row?.[1]?.replaceAll(",", ""))).toBeLessThan(765 + 40);
    await repl.run("what is it?", "Tokens:");
    await repl.waitFor("> ");
    await repl.run("/drop shot.png");
    await repl.run("and now?", "Tokens:");
    await repl.waitFor("> ");
    expect(await repl.exit()).toBe(0);
    const [withImage, without] = mainRequests(s);
    expect(JSON.stringify(withImage.messages)).toContain('"type":"image_url"');
    expect(JSON.stringify(without.messages)).not.toContain('"type":"image_url"');
  });

  test("/web: a page with chrome, a code block and a table becomes clean Markdown in the chat; slow, huge, non-HTML and non-http URLs are refused", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    const s = await serve([{ model: "gpt-4.1", text: "Use create_widget.", repeat: true }], {
      "/docs/widgets": { body: WIDGETS },
      "/slow": { body: "<p>late</p>", delayMs: 10_000 },
      "/huge": { bytes: 8_000_000 },
      "/report.pdf": { body: "%PDF-1.4", contentType: "application/pdf" },
    });
    const repl = startRepl(repo, s, ["--web-timeout", "1"]);
    await repl.waitFor("> ");
    const page = `${s.origin}/docs/widgets`;
    await repl.run(`/web ${page}`);
    const added = answerTo(repl.output, `/web ${page}`);
    const tokens = Number(/read-only text: \.coder\/web\/127\.0\.0\.1-\d+-docs-widgets\.md, (\d+) tokens\./.exec(added)?.[1]);
    expect(tokens).toBeGreaterThan(100);
    const saved = readFileSync(join(repo.root, ".coder", "web", readdirSync(join(repo.root, ".coder", "web"))[0]!), "utf8");
    expect(saved).toStartWith(`# Widget API · Widget Docs\n\nSource: ${page}\n\nThe widget API creates and configures widgets.`);
    expect(saved).toContain('```python\nfrom widgets import create_widget\n\ngear = create_widget(name="gear", size=3)\nprint(gear.size * 2)\n```');
    expect(saved).toContain("| Option | Type | Default |\n| --- | --- | --- |\n| name | str | required |");
    for (const chrome of ["Log in", "Pricing", "Getting started", "cookies", "analytics", "Search the docs"]) expect(saved).not.toContain(chrome);

    for (const [path, refusal] of [
      ["/slow", `${s.origin}/slow did not answer within 1 s (--web-timeout)`],
      ["/huge", `${s.origin}/huge is more than the 5.0 MB /web reads`],
      ["/report.pdf", `${s.origin}/report.pdf is application/pdf, not a web page: /web reads HTML and plain-text pages`],
    ]) {
      await repl.run(`/web ${s.origin}${path}`);
      expect(answerTo(repl.output, `/web ${s.origin}${path}`)).toContain(`warning: ${refusal}`);
    }
    await repl.run("/web file:///etc/passwd");
    expect(answerTo(repl.output, "/web file:///etc/passwd")).toContain("file:///etc/passwd is not an http(s) URL; /web fetches only web pages");

    await repl.run("how do I make a widget?", "Tokens:");
    await repl.waitFor("> ");
    expect(await repl.exit()).toBe(0);
    const request = JSON.stringify(mainRequests(s)[0].messages);
    expect(request).toContain("This file is for reference only. Do not edit it.");
    expect(request).toContain("gear = create_widget(name=\\\"gear\\\", size=3)");
  });

  test("/web goes through HTTP_PROXY, except for hosts in NO_PROXY", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    // The fake server is the proxy: it answers the absolute-form request for a host that does not exist.
    const s = await serve([], { "/guide": { body: "<html><body><p>Proxied guide text.</p></body></html>" }, "/local": { body: "<p>Direct page text.</p>" } });
    const repl = startRepl(repo, s, [], { HTTP_PROXY: s.origin, NO_PROXY: "127.0.0.1" });
    await repl.waitFor("> ");
    await repl.run("/web http://docs.invalid/guide");
    expect(answerTo(repl.output, "/web http://docs.invalid/guide")).toContain("Added http://docs.invalid/guide to the chat");
    await repl.run(`/web ${s.origin}/local`);
    expect(answerTo(repl.output, `/web ${s.origin}/local`)).toContain(`Added ${s.origin}/local to the chat`);
    expect(await repl.exit()).toBe(0);
    const hosts = s.requests.filter((r) => r.path === "/guide" || r.path === "/local").map((r) => [r.path, r.headers.host]);
    expect(hosts).toEqual([
      ["/guide", "docs.invalid"],
      ["/local", new URL(s.origin).host],
    ]);
  });

  test("--detect-urls (on in the REPL) offers a message's URL and sends the page with it; --no-detect-urls does not ask", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    const s = await serve([{ model: "gpt-4.1", text: "Read it.", repeat: true }], { "/docs/widgets": { body: WIDGETS } });
    const url = `${s.origin}/docs/widgets`;
    const repl = startRepl(repo, s, []);
    await repl.waitFor("> ");
    repl.send(`summarise ${url}, please\r`);
    await repl.waitFor(`Add ${url} to the chat?`);
    repl.send("\r"); // Yes, the default
    await repl.waitFor("Tokens:");
    await repl.waitFor("> ");
    expect(await repl.exit()).toBe(0);
    const request = JSON.stringify(mainRequests(s)[0].messages);
    expect(request).toContain("Source: " + url);
    expect(lastUser(mainRequests(s)[0])).toStartWith(`summarise ${url}, please`);

    const quiet = startRepl(repo, s, ["--no-detect-urls"]);
    await quiet.waitFor("> ");
    await quiet.run(`summarise ${url}?again`, "Tokens:");
    await quiet.waitFor("> ");
    expect(await quiet.exit()).toBe(0);
    expect(quiet.output).not.toContain("to the chat?");
  });

  test("/voice records with the recorder on PATH, transcribes through /audio/transcriptions and leaves the text in the input line", async () => {
    const repo = makeRepo({ "app.py": "def main():\n    pass\n" });
    const folder = mkdtempSync(join(tmpdir(), "coder-voice-"));
    const fixture = join(folder, "hello.wav");
    writeFileSync(fixture, wav(0.5));
    const s = await serve([{ transcript: "add a docstring to main" }, { model: "gpt-4.1", text: "Done." }]);
    const repl = startRepl(repo, s, ["--voice-language", "en", "app.py"], { PATH: stubTools(["rec"]), VOICE_FIXTURE: fixture, VOICE_ARGS: join(folder, "args") });
    await repl.waitFor("> ");
    repl.send("/voice\r");
    await repl.waitFor("press Enter to stop");
    // Enter once the stub recorder runs (it writes its arguments after setting its trap).
    for (let i = 0; i < 200 && !existsSync(join(folder, "args")); i++) await Bun.sleep(25);
    repl.send("\r");
    await repl.waitFor("Transcribing ...");
    await repl.waitFor("> add a docstring to main");
    // The text waits in the input line: edit it, then send.
    repl.send(", briefly\r");
    await repl.waitFor("Tokens:");
    await repl.waitFor("> ");
    expect(await repl.exit()).toBe(0);
    expect(readFileSync(join(folder, "args"), "utf8")).toMatch(/^-q -c 1 -r 16000 -b 16 \/.+\/recording\.wav\n$/);
    expect(s.transcriptionBodies()).toEqual([{ model: "whisper-1", language: "en", response_format: "json", file: { name: "recording.wav", type: expect.any(String), size: readFileSync(fixture).length } }]);
    expect(lastUser(mainRequests(s)[0])).toStartWith("add a docstring to main, briefly");
  });

  test("/paste saves the clipboard's image under .coder/pastes/NAME.png and sends it; text joins the chat; /copy and /copy-context fill the clipboard", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    const clip = mkdtempSync(join(tmpdir(), "coder-clip-"));
    const image = await png(200, 100);
    writeFileSync(join(clip, "image.png"), image);
    writeFileSync(join(clip, "targets"), "TARGETS\nimage/png\n");
    const s = await serve([{ model: "gpt-4.1", text: "The chart shows growth." }, { model: "gpt-4.1", text: "That traceback is a NameError." }]);
    const repl = startRepl(repo, s, ["app.py"], { PATH: stubTools(["xclip"]), CLIP_DIR: clip });
    await repl.waitFor("> ");
    await repl.run("/paste chart");
    expect(answerTo(repl.output, "/paste chart")).toContain("Pasted the clipboard's image as .coder/pastes/chart.png (200×100); it is in the chat, read-only.");
    expect(readFileSync(join(repo.root, ".coder", "pastes", "chart.png"))).toEqual(Buffer.from(image));
    await repl.run("what does the chart show?", "Tokens:");
    await repl.waitFor("> ");

    writeFileSync(join(clip, "targets"), "TARGETS\nUTF8_STRING\n");
    writeFileSync(join(clip, "text"), "NameError: name 'x' is not defined\n");
    await repl.run("/paste");
    expect(answerTo(repl.output, "/paste")).toContain("Added the clipboard's text to the chat (1 line,");
    await repl.run("why?", "Tokens:");
    await repl.waitFor("> ");

    await repl.run("/copy");
    expect(readFileSync(join(clip, "copied"), "utf8")).toBe("That traceback is a NameError.");
    await repl.run("/copy-context");
    const context = readFileSync(join(clip, "copied"), "utf8");
    expect(context).toContain("app.py\n```\nprint('hi')\n```");
    expect(context).not.toContain("iVBOR");
    expect(answerTo(repl.output, "/copy-context")).toContain("Images and documents cannot be copied as text: .coder/pastes/chart.png left out.");
    expect(await repl.exit()).toBe(0);

    const [first, second] = mainRequests(s);
    expect(JSON.stringify(first.messages)).toContain('{"type":"text","text":".coder/pastes/chart.png:"},{"type":"image_url"');
    expect(JSON.stringify(second.messages)).toContain("I pasted this from the clipboard:\\n\\n```\\nNameError: name 'x' is not defined\\n```");
  });

  test("with no clipboard tool and no recorder, /paste, /copy and /voice say what to install", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    writeFileSync(join(repo.root, "spec.pdf"), pdf(1));
    const s = await serve([]);
    const repl = startRepl(repo, s, [], { PATH: stubTools([]) });
    await repl.waitFor("> ");
    await repl.run("/paste");
    expect(answerTo(repl.output, "/paste")).toContain("Cannot reach the clipboard: no clipboard tool was found: install wl-clipboard (Wayland), or xclip or xsel (X11).");
    await repl.run("/voice");
    expect(answerTo(repl.output, "/voice")).toContain("No audio recorder found: install sox (for `rec`), alsa-utils (for `arecord`) or ffmpeg, then try /voice again.");
    await repl.run("/read-only spec.pdf");
    await repl.run("/ls");
    expect(answerTo(repl.output, "/ls")).toContain("Read-only files:\r\n  spec.pdf");
    expect(await repl.exit()).toBe(0);
  });
});
