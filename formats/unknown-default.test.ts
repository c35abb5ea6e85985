// Issue 22: which edit format an unknown model defaults to. The one that fails safest: over
// the ways a weak model deviates (elided code, lines retyped from memory, a reply cut off,
// a listing that stops early, a decorated path), count what each format does with the reply:
// the intended change, a repair message, or a silent wrong write. The default is `diff`.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FormatError } from "../core/errors.ts";
import type { EditFormat } from "../core/plugin.ts";
import { loadFormat, runReply, tempRepo, textReply } from "../tests/support/format-kit.ts";
import editblock from "./editblock/index.ts";
import wholefile from "./wholefile/index.ts";

const BODY = Array.from({ length: 12 }, (_, k) => `def helper_${k}(value):\n    return value + ${k}\n\n`).join("");
const BEFORE = `"""Small helpers."""\n\n${BODY}def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n\n\n${BODY.replaceAll("helper_", "other_")}`;
const AFTER = BEFORE.replace("    result = 0\n    for item in items:\n        result += item\n    return result", "    acc = 0\n    for item in items:\n        acc += item\n    return acc");
const OLD_FN = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return result\n";
const NEW_FN = "def total(items):\n    acc = 0\n    for item in items:\n        acc += item\n    return acc\n";

const whole = (content: string, close = true) => `calc.py\n\`\`\`python\n${content}${close ? "```\n" : ""}`;
const block = (search: string, replace: string, close = true) => `calc.py\n\`\`\`python\n<<<<<<< SEARCH\n${search}=======\n${replace}${close ? ">>>>>>> REPLACE\n```\n" : ""}`;

/** Each deviation as the two formats would carry it. */
const DEVIATIONS: { name: string; whole: string; diff: string }[] = [
  { name: "as taught", whole: whole(AFTER), diff: block(OLD_FN, NEW_FN) },
  {
    name: "elided code (\"... unchanged\")",
    whole: whole(AFTER.slice(0, AFTER.indexOf("def total")) + NEW_FN + "\n\n# ... rest of the file unchanged ...\n"),
    diff: block("    result = 0\n...\n        result += item\n    return result\n", "    acc = 0\n...\n        acc += item\n    return acc\n"),
  },
  {
    name: "a line retyped from memory (quotes changed)",
    whole: whole(AFTER.replace('"""Small helpers."""', "'''Small helpers.'''")),
    diff: block(`'''Small helpers.'''\n\n${OLD_FN}`.replace("\n\ndef total", "\n\n\ndef total"), NEW_FN),
  },
  { name: "reply cut off", whole: whole(AFTER.slice(0, 300), false), diff: block(OLD_FN, NEW_FN.slice(0, 30) + "\n", false) },
  { name: "listing stops early, fence closed", whole: whole(AFTER.slice(0, AFTER.indexOf("def other_0"))), diff: block(OLD_FN, NEW_FN) },
  { name: "decorated path line", whole: `**calc.py**\n\`\`\`python\n${AFTER}\`\`\`\n`, diff: `**calc.py**\n\`\`\`python\n<<<<<<< SEARCH\n${OLD_FN}=======\n${NEW_FN}>>>>>>> REPLACE\n\`\`\`\n` },
];

type Outcome = "intended" | "repair" | "silent wrong write" | "nothing";

async function outcome(fmt: EditFormat, reply: string): Promise<Outcome> {
  const repo = tempRepo({ "calc.py": BEFORE });
  try {
    const { outcomes } = await runReply(fmt, textReply(reply), repo);
    const now = readFileSync(join(repo.root, "calc.py"), "utf8");
    if (now === AFTER) return "intended";
    if (outcomes.some((o) => o.status === "failed")) return now === BEFORE ? "repair" : "silent wrong write";
    return now === BEFORE ? "nothing" : "silent wrong write";
  } catch (error) {
    if (error instanceof FormatError) return "repair";
    throw error;
  }
}

describe("the unknown-model default fails safest (issue 22, item 13)", () => {
  test("diff never writes a wrong file over the deviations; whole does", async () => {
    const formats = { diff: await loadFormat(editblock, "diff"), whole: await loadFormat(wholefile, "whole") };
    const table: string[] = [];
    const silent = { diff: 0, whole: 0 };
    for (const d of DEVIATIONS) {
      const w = await outcome(formats.whole, d.whole);
      const e = await outcome(formats.diff, d.diff);
      if (w === "silent wrong write") silent.whole++;
      if (e === "silent wrong write") silent.diff++;
      table.push(`  ${d.name.padEnd(44)} whole: ${w.padEnd(20)} diff: ${e}`);
    }
    console.log(`Unknown-model default, deviations of a weak model:\n${table.join("\n")}\n  silent wrong writes: whole ${silent.whole}, diff ${silent.diff}`);
    expect(silent.diff).toBe(0);
    expect(silent.whole).toBeGreaterThan(0);
  });
});
