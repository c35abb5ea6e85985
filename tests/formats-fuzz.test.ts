// Fuzzing every edit format with generated and mutated replies against a real
// repository in a temp dir: parse throws nothing but FormatError, apply never throws,
// nothing is written outside the repository or into .git/, and no file is corrupted
// (what lands on disk reads back exactly as staged; untouched files keep their bytes).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FormatError } from "../core/errors.ts";
import { FileStore } from "../core/edit/files.ts";
import type { EditFormat, ModelReply, ParseContext, ToolCall } from "../core/plugin.ts";
import { resolveModelPath } from "../core/edit/paths.ts";
import editblock from "../formats/editblock/index.ts";
import patch from "../formats/patch/index.ts";
import { loadFormat, testKit } from "./support/format-kit.ts";
import tool from "../formats/tool/index.ts";
import udiff from "../formats/udiff/index.ts";
import wholefile from "../formats/wholefile/index.ts";

const ITERATIONS = 2400;
const SEED = 0xc0de;

function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof prng>;

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join("\n") + "\n";
const latin1 = (s: string) => Uint8Array.from([...s].map((c) => c.charCodeAt(0)));

const FILES: Record<string, string | Uint8Array> = {
  "src/app.py": lines(60, (i) => (i % 7 === 0 ? `def f${i}(x):` : i % 7 === 6 ? "" : `    y${i} = x + ${i}  # step ${i}`)),
  "src/util.ts": lines(40, (i) => (i % 5 === 0 ? `export function g${i}(a: number) {` : i % 5 === 4 ? "}" : `  const v${i} = a * ${i};`)),
  "win.txt": lines(30, (i) => `windows line ${i}\r`),
  "legacy.txt": latin1(lines(20, (i) => `caf\u00e9 ${i} \u00ff\u00fe \u00e0 la ligne`)),
  "bom.txt": new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(lines(10, (i) => `bom line ${i}`))]),
  "unicode.md": lines(15, (i) => `# ${"\u{1F600}".repeat(i % 3)} 漢字 ${i} — ünïcödé`),
  "dup.txt": lines(20, (i) => (i % 2 ? "same line" : `other ${i}`)),
  "bin.dat": new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 3]),
};
const CHAT = ["src/app.py", "src/util.ts", "win.txt", "legacy.txt", "bom.txt", "unicode.md", "dup.txt"];
const TRICKS = ["../escape.txt", "../../etc/passwd", "/etc/passwd", "/tmp/abs.txt", ".git/config", ".git/hooks/pre-commit", "out/secret.txt", "out/new.txt", "src/../../up.txt", "C:\\Windows\\x.txt", "bin.dat", "a\u0000b.txt", "x".repeat(300) + ".txt", "~/.bashrc", "./src/../.git/HEAD", "src/\u202eevil.txt", "`src/app.py`:", "app.py", "dir with space/new file.txt"];

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) out.set(r, "<link>");
      else if (e.isDirectory()) walk(join(d, e.name), r);
      else out.set(r, Buffer.from(readFileSync(join(d, e.name))).toString("base64"));
    }
  };
  walk(dir, "");
  return out;
}

// ─── reply generators ────────────────────────────────────────────────────────

function pickPath(r: Rng): string {
  const x = r.next();
  if (x < 0.7) return r.pick(CHAT);
  if (x < 0.82) return `new/${r.int(1000)}.txt`;
  return r.pick(TRICKS);
}

function region(r: Rng, text: string | null): { search: string; replace: string } {
  if (text === null || text === "" || r.chance(0.08)) return { search: "", replace: lines(1 + r.int(4), (i) => `added ${i} ${r.int(99)}`) };
  const ls = text.split("\n").slice(0, -1);
  const start = r.int(ls.length);
  const len = r.chance(0.02) ? ls.length : 1 + r.int(Math.min(6, ls.length - start));
  const chunk = ls.slice(start, start + len);
  const search = chunk.join("\n") + "\n";
  let repl = chunk.map((l) => (r.chance(0.4) ? l.replace(/\d+/, String(r.int(1000))) : l));
  if (r.chance(0.2)) repl.push(`inserted ${r.int(100)}`);
  if (r.chance(0.1)) repl = [];
  if (r.chance(0.02)) repl = Array.from({ length: 3000 }, (_, i) => `huge ${i}`);
  return { search, replace: repl.length ? repl.join("\n") + "\n" : "" };
}

function editblockReply(r: Rng, read: (p: string) => string | null, fenced: boolean): string {
  const parts: string[] = ["Here are the changes:\n"];
  for (let k = 0, n = 1 + r.int(4); k < n; k++) {
    const path = pickPath(r);
    const { search, replace } = region(r, read(path));
    const body = `<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n`;
    parts.push(fenced ? "```python\n" + path + "\n" + body + "```\n" : path + "\n```python\n" + body + "```\n");
  }
  if (r.chance(0.2)) parts.push("```bash\nnpm test\n```\n");
  return parts.join("\n");
}

function wholeReply(r: Rng, read: (p: string) => string | null): string {
  const parts: string[] = [];
  for (let k = 0, n = 1 + r.int(3); k < n; k++) {
    const path = pickPath(r);
    const text = read(path) ?? "";
    const body = r.chance(0.5) ? text.replace(/\d/g, () => String(r.int(10))) : lines(1 + r.int(8), (i) => `new content ${i}`);
    parts.push(`${path}\n\`\`\`\n${body}\`\`\`\n`);
  }
  return parts.join("\n");
}

function udiffReply(r: Rng, read: (p: string) => string | null): string {
  const parts: string[] = ["```diff"];
  for (let k = 0, n = 1 + r.int(3); k < n; k++) {
    const path = pickPath(r);
    const { search, replace } = region(r, read(path));
    const minus = search.split("\n").slice(0, -1).map((l) => (r.chance(0.5) ? " " + l : "-" + l));
    const plus = replace.split("\n").slice(0, -1).map((l) => "+" + l);
    parts.push(search === "" ? `--- /dev/null\n+++ ${path}` : `--- ${path}\n+++ ${path}`, "@@ ... @@", ...minus, ...plus);
  }
  parts.push("```");
  return parts.join("\n") + "\n";
}

function patchReply(r: Rng, read: (p: string) => string | null): string {
  const parts: string[] = ["*** Begin Patch"];
  for (let k = 0, n = 1 + r.int(3); k < n; k++) {
    const path = pickPath(r);
    const x = r.next();
    if (x < 0.2) parts.push(`*** Add File: ${path}`, ...lines(1 + r.int(5), (i) => `+added ${i}`).split("\n").slice(0, -1));
    else if (x < 0.3) parts.push(`*** Delete File: ${path}`);
    else {
      const { search, replace } = region(r, read(path));
      parts.push(`*** Update File: ${path}`);
      if (r.chance(0.2)) parts.push(`*** Move to: ${pickPath(r)}`);
      parts.push(r.chance(0.3) ? `@@ ${(read(path) ?? "").split("\n")[0]}` : "@@");
      parts.push(...search.split("\n").slice(0, -1).map((l) => "-" + l), ...replace.split("\n").slice(0, -1).map((l) => "+" + l));
      if (r.chance(0.1)) parts.push("*** End of File");
    }
  }
  parts.push("*** End Patch");
  return parts.join("\n") + "\n";
}

function toolCalls(r: Rng, read: (p: string) => string | null): ToolCall[] {
  const calls: ToolCall[] = [];
  for (let k = 0, n = 1 + r.int(4); k < n; k++) {
    const path = pickPath(r);
    const { search, replace } = region(r, read(path));
    const args = r.chance(0.2) ? { path, content: replace } : { path, search, replace };
    let json = JSON.stringify(args);
    if (r.chance(0.1)) json = json.slice(0, r.int(json.length));
    if (r.chance(0.05)) json = JSON.stringify({ ...args, path: r.int(5) });
    calls.push({ id: `call_${k}`, name: "content" in args ? "create_file" : r.chance(0.03) ? "delete_file" : "edit_file", arguments: json });
  }
  return calls;
}

// ─── mutations ───────────────────────────────────────────────────────────────

const MARKERS = ["<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "```", "*** Begin Patch", "*** End Patch", "*** Update File:", "@@", "--- ", "+++ "];
const NOISE = ["\u0000", "\u202e", "\ud800", "\u{1F4A9}", "\r", "\t", "é", "\uFEFF", "漢", "\n\n", "`", "..."];

function mutate(r: Rng, text: string): string {
  let t = text;
  if (r.chance(0.15)) t = t.slice(0, r.int(t.length + 1));
  if (r.chance(0.2)) {
    const m = r.pick(MARKERS);
    const at = t.indexOf(m);
    if (at >= 0) {
      const damaged = r.pick([m.slice(1), m.slice(0, -1), m + m[0], m.replace(/[A-Z]/, "x"), " " + m, ""]);
      t = t.slice(0, at) + damaged + t.slice(at + m.length);
    }
  }
  if (r.chance(0.1)) t = t.replace(/\n/g, "\r\n");
  if (r.chance(0.15)) {
    for (let k = 0, n = 1 + r.int(5); k < n; k++) {
      const at = r.int(t.length + 1);
      t = t.slice(0, at) + r.pick(NOISE) + t.slice(at);
    }
  }
  if (r.chance(0.05)) t = t + "\n" + t;
  return t;
}

// ─── the test ────────────────────────────────────────────────────────────────

describe("formats fuzz", () => {
  test(`${ITERATIONS} generated and mutated replies across every format`, async () => {
    const base = mkdtempSync(join(tmpdir(), "coder-fuzz-"));
    const root = join(base, "repo");
    const outside = join(base, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "secret\n");
    mkdirSync(join(root, ".git", "hooks"), { recursive: true });
    writeFileSync(join(root, ".git", "config"), "[core]\n");
    const restore = () => {
      for (const [p, c] of Object.entries(FILES)) {
        mkdirSync(join(root, p, ".."), { recursive: true });
        writeFileSync(join(root, p), c);
      }
      for (const e of readdirSync(root)) if (!(e in FILES) && !["src", ".git", "out"].includes(e)) rmSync(join(root, e), { recursive: true, force: true });
      for (const e of readdirSync(join(root, "src"))) if (!(`src/${e}` in FILES)) rmSync(join(root, "src", e), { recursive: true, force: true });
    };
    restore();
    symlinkSync(outside, join(root, "out"));
    const outsideBefore = snapshot(outside);
    const gitBefore = snapshot(join(root, ".git"));
    const baseEntries = readdirSync(base).sort();

    const kit = testKit(root);
    const formats: Record<string, EditFormat> = {
      diff: await loadFormat(editblock, "diff", kit),
      "diff-fenced": await loadFormat(editblock, "diff-fenced", kit),
      whole: await loadFormat(wholefile, "whole", kit),
      udiff: await loadFormat(udiff, "udiff", kit),
      patch: await loadFormat(patch, "patch", kit),
      tool: await loadFormat(tool, "tool", kit),
    };
    const r = prng(SEED);
    const stats = { formatErrors: 0, applied: 0, failed: 0, written: 0, refused: 0 };
    const ctx: ParseContext = { fence: ["```", "```"], chatFiles: CHAT, resolvePath: (raw) => resolveModelPath(raw, CHAT, Object.keys(FILES)) };

    for (let it = 0; it < ITERATIONS; it++) {
      const store = new FileStore(root, { fsync: false });
      const read = (p: string) => store.read(p);
      const name = r.pick(Object.keys(formats));
      const format = formats[name]!;
      let reply: ModelReply;
      if (name === "tool") reply = { text: "", toolCalls: toolCalls(r, read), finishReason: "tool_calls" };
      else {
        const gen = { diff: () => editblockReply(r, read, false), "diff-fenced": () => editblockReply(r, read, true), whole: () => wholeReply(r, read), udiff: () => udiffReply(r, read), patch: () => patchReply(r, read) }[name]!;
        reply = { text: mutate(r, gen()), toolCalls: [], finishReason: r.chance(0.1) ? "length" : "stop" };
      }
      const before = snapshot(root);
      let parsed;
      try {
        parsed = format.parse(reply, ctx);
      } catch (err) {
        if (!(err instanceof FormatError)) throw new Error(`iteration ${it} (${name}): parse threw ${String(err)}\n${reply.text.slice(0, 400)}`);
        stats.formatErrors++;
        continue;
      }
      const ws = store.workspace(CHAT);
      const outcomes = await format.apply(parsed.edits, ws);
      expect(outcomes.length).toBe(parsed.edits.length);
      for (const o of outcomes) stats[o.status === "applied" ? "applied" : "failed"]++;
      format.report(outcomes, { fence: ctx.fence, appliedCount: outcomes.filter((o) => o.status === "applied").length });
      const changes = ws.changes();
      const report = await store.writeAll(changes);
      stats.written += report.written.length;
      stats.refused += report.refused.length;

      // Nothing outside the repository, nothing in .git/, no temp files left.
      expect(readdirSync(base).sort()).toEqual(baseEntries);
      expect(snapshot(outside)).toEqual(outsideBefore);
      expect(snapshot(join(root, ".git"))).toEqual(gitBefore);
      const after = snapshot(root);
      for (const p of after.keys()) if (p.includes(".coder-")) throw new Error(`temp file left: ${p}`);
      // Written files read back exactly as staged; everything else keeps its bytes.
      const written = new Set(report.written.map((w) => w.path));
      for (const w of report.written) {
        if (w.after === null) expect(existsSync(join(root, w.path))).toBe(false);
        // (A text that starts with U+FEFF reads back with it taken as the byte-order mark.)
        else expect(new FileStore(root).read(w.path)).toBe(w.after.replace(/^\uFEFF/, ""));
      }
      for (const [p, bytes] of before) if (!written.has(p)) expect(after.get(p)).toBe(bytes);
      if (report.written.length) restore();
    }
    console.log(`formats fuzz: ${ITERATIONS} replies, seed ${SEED}:`, JSON.stringify(stats));
    expect(stats.applied).toBeGreaterThan(ITERATIONS / 2);
    expect(stats.formatErrors).toBeGreaterThan(50);
    rmSync(base, { recursive: true, force: true });
  }, 120_000);
});
