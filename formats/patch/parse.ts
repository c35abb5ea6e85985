// Parsing the `*** Begin Patch` … `*** End Patch` envelope (pure): Add File,
// Delete File, Update File (+ Move to) with `@@` chunks and `*** End of File`.

export interface PatchChunk {
  /** The texts after consecutive `@@` lines (e.g. `class Foo:`, `def bar(self):`): the chunk lies after them, in order. */
  scopes: string[];
  /** Lines with their ` `/`-`/`+` prefix. */
  lines: string[];
  /** `*** End of File`: the chunk ends at the file's end. */
  atEnd: boolean;
}

export type PatchOp =
  | { op: "add"; path: string; content: string; source: string }
  | { op: "delete"; path: string; source: string }
  | { op: "update"; path: string; moveTo: string | null; chunks: PatchChunk[]; source: string };

export class PatchSyntaxError extends Error {}

const DIRECTIVE = /^\*\*\* (Add File|Delete File|Update File|Move to|End Patch|End of File|Begin Patch)(?::\s*(.*))?\s*$/;

function directive(line: string): { kind: string; arg: string } | null {
  const m = DIRECTIVE.exec(line.trim());
  return m ? { kind: m[1]!, arg: (m[2] ?? "").trim() } : null;
}

/** Every file operation of every patch envelope in `text`; [] when there is none. */
export function parsePatches(text: string): PatchOp[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const ops: PatchOp[] = [];
  let i = 0;
  while (i < lines.length) {
    const d = directive(lines[i]!);
    if (!d || (d.kind !== "Begin Patch" && !["Add File", "Delete File", "Update File"].includes(d.kind))) {
      i++;
      continue;
    }
    if (d.kind === "Begin Patch") i++;
    i = parseEnvelope(lines, i, ops);
  }
  return ops;
}

function syntax(line: number, message: string): PatchSyntaxError {
  return new PatchSyntaxError(
    `${message} (line ${line + 1} of your reply). Nothing from this patch was applied. A patch is \`*** Begin Patch\`, then per file \`*** Add File: path\` (every line starting with +), \`*** Delete File: path\` or \`*** Update File: path\` (optional \`*** Move to: path\`, then \`@@\` chunks of ' ', '-' and '+' lines), and finally \`*** End Patch\`. Send the whole patch again.`,
  );
}

function parseEnvelope(lines: string[], start: number, ops: PatchOp[]): number {
  let i = start;
  while (i < lines.length) {
    const d = directive(lines[i]!);
    if (d?.kind === "End Patch") return i + 1;
    if (!d) {
      if (lines[i]!.trim() === "" || /^`{3,}/.test(lines[i]!.trim())) {
        i++;
        continue;
      }
      throw syntax(i, `Expected a file directive (\`*** Add File:\`, \`*** Update File:\`, \`*** Delete File:\`) or \`*** End Patch\`, found ${JSON.stringify(lines[i]!.slice(0, 80))}`);
    }
    if (!d.arg && d.kind !== "End of File") throw syntax(i, `\`*** ${d.kind}:\` needs a path`);
    const from = i;
    i++;
    if (d.kind === "Add File") {
      const body: string[] = [];
      while (i < lines.length && !directive(lines[i]!)) {
        const l = lines[i]!;
        if (l.startsWith("+")) body.push(l.slice(1));
        else if (l.trim() === "" && (i + 1 >= lines.length || directive(lines[i + 1]!))) {
          /* a blank line before the next directive */
        } else if (/^`{3,}\s*$/.test(l.trim())) {
          /* a fence around the patch */
        } else throw syntax(i, `In \`*** Add File: ${d.arg}\`, every line must start with +`);
        i++;
      }
      ops.push({ op: "add", path: d.arg, content: body.length ? body.join("\n") + "\n" : "", source: lines.slice(from, i).join("\n") });
    } else if (d.kind === "Delete File") {
      ops.push({ op: "delete", path: d.arg, source: lines[from]! });
    } else if (d.kind === "Update File") {
      let moveTo: string | null = null;
      const mv = i < lines.length ? directive(lines[i]!) : null;
      if (mv?.kind === "Move to") {
        if (!mv.arg) throw syntax(i, "`*** Move to:` needs a path");
        moveTo = mv.arg;
        i++;
      }
      const chunks: PatchChunk[] = [];
      let chunk: PatchChunk | null = null;
      while (i < lines.length) {
        const l = lines[i]!;
        const dd = directive(l);
        if (dd?.kind === "End of File") {
          if (chunk) chunk.atEnd = true;
          i++;
          continue;
        }
        if (dd) break;
        if (l.startsWith("@@")) {
          const scope = l.replace(/^@@+/, "").replace(/@@+\s*$/, "").trim();
          if (chunk && chunk.lines.length === 0) {
            if (scope) chunk.scopes.push(scope); // `@@ class A` then `@@ def f`: one chunk, nested scopes
          } else {
            chunk = { scopes: scope ? [scope] : [], lines: [], atEnd: false };
            chunks.push(chunk);
          }
        } else if (/^`{3,}\s*$/.test(l)) {
          /* a fence around the patch */
        } else {
          if (!chunk) {
            chunk = { scopes: [], lines: [], atEnd: false };
            chunks.push(chunk);
          }
          chunk.lines.push(l);
        }
        i++;
      }
      for (const c of chunks) while (c.lines.length && c.lines[c.lines.length - 1]!.trim() === "") c.lines.pop();
      const real = chunks.filter((c) => c.lines.some((l) => l.startsWith("+") || l.startsWith("-")));
      if (real.length === 0 && !moveTo) throw syntax(from, `\`*** Update File: ${d.arg}\` has no changed lines`);
      ops.push({ op: "update", path: d.arg, moveTo, chunks: real, source: lines.slice(from, i).join("\n") });
    } else {
      throw syntax(i - 1, `Unexpected \`*** ${d.kind}\``);
    }
  }
  throw syntax(lines.length - 1, "The patch has no `*** End Patch` line: it was cut off or not closed");
}
