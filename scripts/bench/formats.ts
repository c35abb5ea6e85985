// Bench section "formats": parse + apply throughput of SEARCH/REPLACE blocks on a big
// file, and how often each rung of the matcher ladder fires over the Aider fixture
// corpus (real SEARCH texts from 9,038 chat-history sections, perturbed the ways
// models get them wrong). Run by scripts/bench.ts, or alone: bun scripts/bench/formats.ts
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "../../core/edit/files.ts";
import { matcher } from "../../core/edit/matcher.ts";
import type { EditFormat } from "../../core/plugin.ts";
import editblock from "../../formats/editblock/index.ts";
import { parseEditBlocks } from "../../core/edit/blocks.ts";
import { loadFormat, testKit } from "../../tests/support/format-kit.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "..", "shared", "fixtures", "aider");

const ms = (t0: number) => performance.now() - t0;
const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

async function throughput(lines: number, blocks: number, indentShift: boolean): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), "coder-bench-"));
  const file = Array.from({ length: lines }, (_, i) => `    value_${i} = compute(${i}, "row ${i}")  # line ${i}`).join("\n") + "\n";
  writeFileSync(join(root, "big.py"), file);
  const step = Math.floor(lines / blocks);
  const parts: string[] = [];
  for (let b = 0; b < blocks; b++) {
    const i = b * step + 1;
    const strip = (l: string) => (indentShift ? l.trimStart() : l);
    const search = [i, i + 1, i + 2].map((k) => strip(`    value_${k} = compute(${k}, "row ${k}")  # line ${k}`)).join("\n");
    const replace = [i, i + 1, i + 2].map((k) => strip(`    value_${k} = compute_fast(${k})  # line ${k}`)).join("\n");
    parts.push(`big.py\n\`\`\`python\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\``);
  }
  const reply = parts.join("\n\n");
  const kit = testKit(root);
  const diff: EditFormat = await loadFormat(editblock, "diff", kit);
  const ctx = { fence: ["```", "```"] as const, chatFiles: ["big.py"], resolvePath: (r: string) => r };

  let t0 = performance.now();
  const parsed = diff.parse({ text: reply, toolCalls: [], finishReason: "stop" }, ctx);
  const parseMs = ms(t0);
  const store = new FileStore(root);
  const ws = store.workspace(["big.py"]);
  t0 = performance.now();
  const outcomes = await diff.apply(parsed.edits, ws);
  const applyMs = ms(t0);
  t0 = performance.now();
  await store.writeAll(ws.changes());
  const writeMs = ms(t0);
  const ok = outcomes.filter((o) => o.status === "applied").length;
  rmSync(root, { recursive: true, force: true });
  return (
    `  ${blocks} blocks${indentShift ? " (indentation rung)" : ""} against a ${fmt(lines)}-line file (${fmt(file.length / 1e6)} MB): ` +
    `parse ${fmt(parseMs)} ms, apply ${fmt(applyMs)} ms (${fmt((blocks / applyMs) * 1000)} blocks/s), write ${fmt(writeMs)} ms; ${ok}/${blocks} applied`
  );
}

/**
 * A perturbation of a SEARCH text as models get them wrong: the SEARCH and REPLACE sent, and
 * what the SEARCH region must become (null: the text has nothing to perturb this way).
 */
type Perturb = (search: string) => { search: string; replace: string; expect: string } | null;
const R = "REPLACED\n";
const lines = (s: string) => s.split("\n").slice(0, -1);
const text = (ls: string[]) => ls.map((l) => l + "\n").join("");
const replaced = (search: string) => ({ search, replace: R, expect: R });

/** Where a blank line goes in: the middle of the text, between two lines. */
const addedAt = (ls: string[]) => Math.max(1, Math.floor(ls.length / 2));
/** Which blank line drops out: the inner one nearest the middle (null when there is none). */
function droppedAt(ls: string[]): number | null {
  const inner = ls.map((l, i) => (l.trim() === "" && i > 0 && i < ls.length - 1 ? i : -1)).filter((i) => i >= 0);
  if (inner.length === 0) return null;
  const mid = ls.length / 2;
  return inner.sort((a, b) => Math.abs(a - mid) - Math.abs(b - mid))[0]!;
}
/**
 * The REPLACE of a realistic edit: the text as the model sent it (`sent`, where original line i
 * is line `moved(i)`) with one non-blank line changed, and the original with the same change.
 */
function oneLineChanged(sent: string[], original: string[], moved: (i: number) => number): { replace: string; expect: string } {
  const k = original.findIndex((l, i) => i >= Math.floor(original.length / 3) && l.trim() !== "");
  const mark = (ls: string[], at: number) => ls.map((l, i) => (i === at ? `${l} /* changed */` : l));
  return { replace: text(mark(sent, moved(k))), expect: text(mark(original, k)) };
}

const PERTURBATIONS: [string, Perturb][] = [
  ["as written", replaced],
  ["trailing spaces added", (s) => replaced(s.replace(/\n/g, "  \n"))],
  ["indentation shifted", (s) => {
    const ls = s.split("\n");
    const ind = Math.min(...ls.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
    return replaced(ind > 0 ? ls.map((l) => l.slice(ind)).join("\n") : ls.map((l) => (l.trim() ? "    " + l : l)).join("\n"));
  }],
  ["spurious blank first line", (s) => replaced("\n" + s)],
  ["middle elided with ...", (s) => {
    const ls = lines(s);
    if (ls.length < 6) return null;
    const search = text([ls[0]!, ls[1]!, "...", ls[ls.length - 2]!, ls[ls.length - 1]!]);
    return { search, replace: text([ls[0]!, ls[1]!, "...", "REPLACED"]), expect: text([...ls.slice(0, -2), "REPLACED"]) };
  }],
  ["one line mistyped", (s) => {
    const ls = s.split("\n");
    const k = ls.findIndex((l, i) => i >= Math.floor(ls.length / 2) && /[a-z]/.test(l));
    if (k >= 0) ls[k] = ls[k]!.replace(/[a-z]/, (c) => (c === "x" ? "y" : "x"));
    return replaced(ls.join("\n"));
  }],
  ["one blank line added", (s) => {
    const ls = lines(s);
    return replaced(text(ls.toSpliced(addedAt(ls), 0, "")));
  }],
  ["one blank line dropped", (s) => {
    const ls = lines(s);
    const k = droppedAt(ls);
    return k === null ? null : replaced(text(ls.toSpliced(k, 1)));
  }],
  ["blank added, 1 line edited", (s) => {
    const ls = lines(s);
    const at = addedAt(ls);
    const sent = ls.toSpliced(at, 0, "");
    return { search: text(sent), ...oneLineChanged(sent, ls, (i) => (i < at ? i : i + 1)) };
  }],
  ["blank dropped, 1 line edited", (s) => {
    const ls = lines(s);
    const k = droppedAt(ls);
    if (k === null) return null;
    const sent = ls.toSpliced(k, 1);
    return { search: text(sent), ...oneLineChanged(sent, ls, (i) => (i < k ? i : i - 1)) };
  }],
];

/** Lines compared without their surrounding whitespace (a re-indented replacement is still right). */
const shape = (s: string) => s.split("\n").map((l) => l.trim()).join("\n");

interface RungTally {
  counts: Record<string, number>;
  wrong: number;
  skipped: number;
}

function rungCounts(): { lines: string[]; wrong: number } {
  const path = join(FIXTURES, "chat-history", "editblock_chat_history_cases.json");
  if (!existsSync(path)) return { lines: ["  (rung counts skipped: ../shared/fixtures/aider is absent)"], wrong: 0 };
  const data = JSON.parse(readFileSync(path, "utf8"));
  const unique = new Set<string>();
  for (const c of data.cases) {
    if (c.expect_error) continue;
    let blocks: { search: string }[] = [];
    try {
      blocks = parseEditBlocks(c.reply, c.fence, []).blocks;
    } catch {
      continue; // a section coder reads as malformed (its markers do not pair up): no SEARCH text to take
    }
    for (const b of blocks) if (b.search.trim().split("\n").length >= 2) unique.add(b.search);
  }
  const searches = [...unique];
  // Neighbours share no line with the SEARCH text (as the rest of a real file would not repeat it).
  const own = searches.map((t) => new Set(t.split("\n").map((l) => l.trim()).filter((l) => l.length > 3)));
  const neighbour = (i: number, step: number) => {
    for (let k = 1; k < searches.length; k++) {
      const j = (i + step * k) % searches.length;
      if (j !== i && ![...own[j]!].some((l) => own[i]!.has(l))) return searches[j]!;
    }
    return "";
  };
  const out = [`  corpus: ${searches.length} distinct multi-line SEARCH texts from the chat history, each placed in a file between two others`];
  const t0 = performance.now();
  let calls = 0;
  let wrong = 0;
  for (const [name, perturb] of PERTURBATIONS) {
    const t: RungTally = { counts: {}, wrong: 0, skipped: 0 };
    searches.forEach((search, i) => {
      const before = neighbour(i, 1) + "\n# --- separator ---\n";
      const after = "\n# --- separator ---\n" + neighbour(i, 7);
      const p = perturb(search);
      if (!p) {
        t.skipped++;
        return;
      }
      const r = matcher.replace(before + search + after, p.search, p.replace);
      calls++;
      const key = r.status === "applied" ? r.rung : r.reason;
      t.counts[key] = (t.counts[key] ?? 0) + 1;
      if (r.status === "applied" && shape(r.content) !== shape(before + p.expect + after)) t.wrong++;
    });
    wrong += t.wrong;
    const order = ["exact", "trailing-whitespace", "indentation", "leading-blank", "blank-lines", "elision", "fuzzy", "ambiguous", "not-found", "already-applied", "no-op"];
    const total = Object.values(t.counts).reduce((a, b) => a + b, 0);
    const right = order.slice(0, 7).reduce((a, k) => a + (t.counts[k] ?? 0), 0) - t.wrong;
    out.push(
      `  ${name.padEnd(29)} ${order.filter((k) => t.counts[k]).map((k) => `${k} ${t.counts[k]}`).join(", ")}` +
        ` | right ${right}/${total} (${fmt((100 * right) / Math.max(total, 1))}%), wrong ${t.wrong}${t.skipped ? `, ${t.skipped} n/a` : ""}`,
    );
  }
  out.push(`  (${calls} matcher calls in ${fmt(ms(t0))} ms; silent wrong edits: ${wrong})`);
  const cases = join(FIXTURES, "editblock_cases.json");
  const chunks = JSON.parse(readFileSync(cases, "utf8")).cases.filter((c: { kind: string }) => c.kind === "replace_chunk");
  const rungs = chunks.map((c: { files: Record<string, string>; search: string; replace: string }) => {
    const r = matcher.replace(c.files["file.txt"]!, c.search, c.replace);
    return r.status === "applied" ? r.rung : r.reason;
  });
  out.push(`  Aider's replace_chunk vectors (${chunks.length}): ${rungs.join(", ")}`);
  return { lines: out, wrong };
}

export default async function run(): Promise<void> {
  console.log("formats: parse + apply throughput");
  console.log(await throughput(50_000, 500, false));
  console.log(await throughput(50_000, 500, true));
  console.log(await throughput(5_000, 100, false));
  console.log("formats: matcher rung hits over the fixture corpus (right = the edit landed where it belongs)");
  for (const line of rungCounts().lines) console.log(line);
}

if (import.meta.main) await run();
