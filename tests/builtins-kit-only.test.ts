// Built-ins use only the kit (STYLE.md, "Built-ins eat their own cooking"): no `Bun.*`, no
// `node:child_process` and no `node:fs` write in the non-test sources of plugins/ and formats/,
// so every process, every temp file and every write goes through the one checked place in
// core/ that a user's plugin gets too. What stays is on the short allow-list below, each entry
// with its reason; an entry that no longer matches anything fails too, so the list only shrinks.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** node:fs functions that write, create, move or remove (sync, callback and promise forms). */
const FS_WRITES = [
  "writeFile", "appendFile", "rename", "rm", "rmdir", "unlink", "mkdir", "mkdtemp", "copyFile", "cp", "symlink", "link",
  "chmod", "chown", "lchown", "truncate", "ftruncate", "utimes", "lutimes", "futimes", "write", "writev", "open", "createWriteStream",
];

interface Allowed {
  /** Repository path of the file. */
  file: string;
  /** The offending text the entry covers (a substring of the line). */
  text: string;
  why: string;
}

const ALLOWED: Allowed[] = [
  { file: "plugins/repomap/parse.ts", text: "Bun.hash", why: "a fast non-cryptographic hash of strings in memory (no I/O)" },
  { file: "plugins/repomap/tags.ts", text: "Bun.hash", why: "a fast non-cryptographic hash of strings in memory (no I/O)" },
  { file: "plugins/repomap/map.ts", text: "Bun.CryptoHasher", why: "sha256 of strings in memory for the map's cache keys (no I/O)" },
  { file: "plugins/repomap/rank-quick.ts", text: "Bun.CryptoHasher", why: "sha256 of the listed paths in memory: the kept ranking's check that the listing is the one it was made for (no I/O)" },
  { file: "plugins/mcp/servers.ts", text: "Bun.CryptoHasher", why: "sha256 of strings in memory for the MCP tool cache's keys (no I/O; node:crypto would load on every task for it)" },
  { file: "plugins/repomap/stat-path.ts", text: 'from "node:fs"', why: "openSync with O_RDONLY | O_NOFOLLOW | O_NONBLOCK: the tag scan's Worker threads (and its in-thread fallback) have no kit; they read only files of the kit's listing, without following a link or waiting on a pipe (no write)" },
  { file: "plugins/repomap/cold.ts", text: 'from "node:fs"', why: "openSync with O_RDONLY | O_NOFOLLOW: reads the head of each listed file (the pre-scan) without following a link (no write)" },
  { file: "plugins/repomap/scan.ts", text: "Bun.main", why: "finds the Worker's entry inside the compiled binary (a path, no I/O)" },
];

/** Non-test TypeScript sources under `dir` (tests and their testdata may use anything). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    const path = relative(ROOT, join(entry.parentPath, entry.name)).split("\\").join("/");
    if (!entry.isFile() || !/\.(ts|js|mjs)$/.test(entry.name)) continue;
    if (/\.test\.ts$/.test(entry.name) || path.includes("/testdata/")) continue;
    out.push(path);
  }
  return out.sort();
}

interface Offence {
  file: string;
  line: number;
  text: string;
  what: string;
}

/** What in `source` steps past the kit: Bun.*, child_process, an fs write imported or called through a namespace. */
export function offences(file: string, source: string): Offence[] {
  const found: Offence[] = [];
  const lines = source.split("\n");
  const say = (i: number, what: string) => found.push({ file, line: i + 1, text: lines[i]!.trim(), what });
  const fsNamespaces: string[] = [];
  for (const [i, line] of lines.entries()) {
    const code = line.replace(/\/\/.*$/, "");
    if (/\bBun\s*\./.test(code) || /\bfrom\s+["']bun["']/.test(code)) say(i, "Bun.*");
    if (/["'](node:)?child_process["']/.test(code)) say(i, "child_process");
  }
  // Imports from node:fs: named writes, or a namespace whose writes are looked for below.
  const imports = /import\s+(?:type\s+)?([^;]*?)\s+from\s+["'](?:node:)?fs(?:\/promises)?["']/g;
  for (const m of source.matchAll(imports)) {
    const at = source.slice(0, m.index).split("\n").length - 1;
    const clause = m[1]!;
    const ns = /\*\s+as\s+(\w+)/.exec(clause)?.[1] ?? /^(\w+)\s*(?:,|$)/.exec(clause.trim())?.[1];
    if (ns) fsNamespaces.push(ns);
    const named = /\{([^}]*)\}/.exec(clause)?.[1] ?? "";
    for (const part of named.split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!.trim();
      if (!name) continue;
      if (FS_WRITES.some((w) => name === w || name === `${w}Sync`)) say(at, `node:fs ${name}`);
    }
  }
  const requires = /require\(\s*["'](?:node:)?(fs|child_process)(?:\/promises)?["']\s*\)/g;
  for (const m of source.matchAll(requires)) say(source.slice(0, m.index).split("\n").length - 1, `require("${m[1]}")`);
  for (const ns of fsNamespaces) {
    const call = new RegExp(`\\b${ns}\\.(${FS_WRITES.join("|")})(Sync)?\\b`);
    for (const [i, line] of lines.entries()) {
      const m = call.exec(line);
      if (m) say(i, `node:fs ${m[1]}${m[2] ?? ""}`);
    }
  }
  return found;
}

describe("built-ins use only the kit", () => {
  const all = [...sources("plugins"), ...sources("formats")].flatMap((file) => offences(file, readFileSync(join(ROOT, file), "utf8")));
  const allowed = (o: Offence) => ALLOWED.some((a) => a.file === o.file && o.text.includes(a.text));

  test("no Bun.*, node:child_process or node:fs write in plugins/ and formats/ beyond the allow-list", () => {
    const report = all.filter((o) => !allowed(o)).map((o) => `${o.file}:${o.line}: ${o.what}: ${o.text}`);
    expect(report).toEqual([]);
  });

  test("every allow-list entry still matches something (the list only shrinks)", () => {
    const stale = ALLOWED.filter((a) => !all.some((o) => o.file === a.file && o.text.includes(a.text))).map((a) => `${a.file}: ${a.text}`);
    expect(stale).toEqual([]);
  });

  test("the scanner finds each kind of step past the kit", () => {
    const sample = [
      'import { readFileSync, writeFileSync as put } from "node:fs";',
      'import * as fs from "node:fs/promises";',
      'import { spawn } from "node:child_process";',
      "const p = Bun.spawn(['ls']);",
      "await fs.writeFile('x', 'y');",
      "// Bun.spawn in a comment is fine",
      "const cp = require('child_process');",
    ].join("\n");
    expect(offences("x.ts", sample).map((o) => `${o.line}: ${o.what}`)).toEqual([
      "3: child_process",
      "4: Bun.*",
      "7: child_process",
      "1: node:fs writeFileSync",
      "7: require(\"child_process\")",
      "5: node:fs writeFile",
    ]);
  });
});
