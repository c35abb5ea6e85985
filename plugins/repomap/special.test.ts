import { expect, test } from "bun:test";
import type { RankedEntry } from "./rank.ts";
import { capBareNames, renderOrder, specialFiles } from "./special.ts";

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The render order as map.ts composed it before renderOrder: special files, the filtered ranking, capBareNames over both. */
function composed(ranked: readonly RankedEntry[], files: readonly string[], chat: readonly string[], budget: number, count: (text: string) => number): RankedEntry[] {
  const rankedPaths = new Set(ranked.filter((e) => e.line !== undefined).map((e) => e.path));
  const special: RankedEntry[] = specialFiles(files, chat)
    .filter((f) => !rankedPaths.has(f))
    .map((path) => ({ path }));
  const specialSet = new Set(special.map((e) => e.path));
  return capBareNames([...special, ...ranked.filter((e) => e.line !== undefined || !specialSet.has(e.path))], budget, count);
}

const FILES = ["README.md", "package.json", "go.mod", "Makefile", "tsconfig.json", "svc/a/pom.xml", "svc/a/src/Main.java", "svc/b/Cargo.toml", "svc/b/src/lib.rs", "lib/x.ts", "lib/y.ts", "docs/guide.md", "a-very-long-name/".repeat(3) + "notes.txt"];

test("renderOrder is the special files, the ranking and capBareNames as composed before; over a first part with the whole's shown special files, its kept entries begin the whole's", () => {
  const next = random(3);
  const count = (text: string) => Math.ceil(text.length / 3);
  let parts = 0;
  for (let round = 0; round < 200; round++) {
    // A third of the rankings list no file by name (renderOrder's shortcut).
    const bareShare = next() < 0.33 ? 0 : 0.4;
    const ranked: RankedEntry[] = Array.from({ length: Math.floor(next() * 60) }, () => {
      const path = FILES[Math.floor(next() * FILES.length)]!;
      return next() < bareShare ? { path } : { path, name: "f", line: Math.floor(next() * 50) };
    });
    const chat = next() < 0.5 ? ["svc/a/src/Main.java"] : next() < 0.5 ? ["svc/b/src/lib.rs", "lib/x.ts"] : [];
    const files = FILES.filter(() => next() < 0.85);
    const budget = 20 + Math.floor(next() * 600);
    const whole = renderOrder(ranked, files, chat, budget, count);
    expect(whole.entries).toEqual(composed(ranked, files, chat, budget, count));
    // A first part: its kept entries are the whole's first ones, as many as the whole's kept
    // entries `consumed` says they take of the ranking.
    const cut = Math.floor(next() * (ranked.length + 1));
    const part = renderOrder(ranked.slice(0, cut), files, chat, budget, count, new Set(whole.shown));
    expect(part.entries.slice(0, part.kept)).toEqual(whole.entries.slice(0, part.kept));
    for (let n = 0; n <= whole.kept; n++) if (whole.consumed(n) <= cut) expect(part.kept).toBeGreaterThanOrEqual(n);
    if (cut < ranked.length) parts++;
  }
  expect(parts).toBeGreaterThan(100);
});

test("special files: the README, the manifests nearest each chat file, root manifests and build files, listed ones only, chat files never", () => {
  expect(specialFiles(FILES, ["svc/a/src/Main.java"])).toEqual(["README.md", "svc/a/pom.xml", "package.json", "go.mod", "Makefile"]);
  expect(specialFiles(FILES.filter((f) => f !== "README.md"), ["svc/b/src/lib.rs", "README.md"])).toEqual(["svc/b/Cargo.toml", "package.json", "go.mod", "Makefile", "tsconfig.json"]);
  expect(specialFiles(["package.json", "src/a.ts"], ["package.json"])).toEqual([]);
});
