// Bench section "formats": parse + apply throughput of SEARCH/REPLACE blocks on a big
// file, and how often each rung of the matcher ladder fires over the Aider fixture
// corpus (real SEARCH texts from 9,038 chat-history sections, perturbed the ways
// models get them wrong). Run by scripts/bench.ts, or alone: bun scripts/bench/formats.ts
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "../../core/files.ts";
import { matcher } from "../../core/matcher.ts";
import type { EditFormat } from "../../core/plugin.ts";
import editblock from "../../formats/editblock/index.ts";
import { parseEditBlocks } from "../../formats/editblock/parse.ts";
import { loadFormat, testKit } from "../../formats/test-kit.ts";

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

/** A perturbation of a SEARCH text (and the REPLACE that goes with it), as models get them wrong. */
type Perturb = (search: string) => [search: string, replace: string];
const R = "REPLACED\n";

const PERTURBATIONS: [string, Perturb][] = [
  ["as written", (s) => [s, R]],
  ["trailing spaces added", (s) => [s.replace(/\n/g, "  \n"), R]],
  ["indentation shifted", (s) => {
    const ls = s.split("\n");
    const ind = Math.min(...ls.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
    return [ind > 0 ? ls.map((l) => l.slice(ind)).join("\n") : ls.map((l) => (l.trim() ? "    " + l : l)).join("\n"), R];
  }],
  ["spurious blank first line", (s) => ["\n" + s, R]],
  ["middle elided with ...", (s) => {
    const ls = s.split("\n").slice(0, -1);
    if (ls.length < 6) return [s, R];
    return [[ls[0], ls[1], "...", ls[ls.length - 2], ls[ls.length - 1]].join("\n") + "\n", [ls[0], ls[1], "...", "REPLACED"].join("\n") + "\n"];
  }],
  ["one line mistyped", (s) => {
    const ls = s.split("\n");
    const k = ls.findIndex((l, i) => i >= Math.floor(ls.length / 2) && /[a-z]/.test(l));
    if (k >= 0) ls[k] = ls[k]!.replace(/[a-z]/, (c) => (c === "x" ? "y" : "x"));
    return [ls.join("\n"), R];
  }],
];

function rungCounts(): string[] {
  const path = join(FIXTURES, "chat-history", "editblock_chat_history_cases.json");
  if (!existsSync(path)) return ["  (rung counts skipped: ../shared/fixtures/aider is absent)"];
  const data = JSON.parse(readFileSync(path, "utf8"));
  const unique = new Set<string>();
  for (const c of data.cases) {
    if (c.expect_error) continue;
    for (const b of parseEditBlocks(c.reply, c.fence, []).blocks) if (b.search.trim().split("\n").length >= 2) unique.add(b.search);
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
  for (const [name, perturb] of PERTURBATIONS) {
    const counts: Record<string, number> = {};
    searches.forEach((search, i) => {
      const file = neighbour(i, 1) + "\n# --- separator ---\n" + search + "\n# --- separator ---\n" + neighbour(i, 7);
      const [s, r0] = perturb(search);
      const r = matcher.replace(file, s, r0);
      calls++;
      const key = r.status === "applied" ? r.rung : r.reason;
      counts[key] = (counts[key] ?? 0) + 1;
    });
    const order = ["exact", "trailing-whitespace", "indentation", "leading-blank", "elision", "fuzzy", "ambiguous", "not-found", "already-applied", "no-op"];
    out.push(`  ${name.padEnd(26)} ${order.filter((k) => counts[k]).map((k) => `${k} ${counts[k]}`).join(", ")}`);
  }
  out.push(`  (${calls} matcher calls in ${fmt(ms(t0))} ms)`);
  const cases = join(FIXTURES, "editblock_cases.json");
  const chunks = JSON.parse(readFileSync(cases, "utf8")).cases.filter((c: { kind: string }) => c.kind === "replace_chunk");
  const rungs = chunks.map((c: { files: Record<string, string>; search: string; replace: string }) => {
    const r = matcher.replace(c.files["file.txt"]!, c.search, c.replace);
    return r.status === "applied" ? r.rung : r.reason;
  });
  out.push(`  Aider's replace_chunk vectors (${chunks.length}): ${rungs.join(", ")}`);
  return out;
}

export default async function run(): Promise<void> {
  console.log("formats: parse + apply throughput");
  console.log(await throughput(50_000, 500, false));
  console.log(await throughput(50_000, 500, true));
  console.log(await throughput(5_000, 100, false));
  console.log("formats: matcher rung hits over the fixture corpus");
  for (const line of rungCounts()) console.log(line);
}

if (import.meta.main) await run();
