// A tool with typed parameters: declared once with zod, they are both the JSON Schema the
// model is sent and the checked, typed value `call` receives (a mismatch goes back to the
// model, naming the field, and `call` is not run). zod is an npm package: run this plugin
// from a folder whose node_modules has zod 4, or bundle it first
// (`bun build typed-tool.ts --outfile typed-tool.js --target bun`).
import { z } from "zod";
import type { Plugin } from "../../core/plugin.ts";

const LINES = z.object({
  path: z.string().describe("repository-relative path of a text file"),
  from: z.number().int().min(1).default(1).describe("first line to show (1-based)"),
  count: z.number().int().min(1).max(200).default(20).describe("how many lines"),
});

export default ((kit) => ({
  apiVersion: 2,
  name: "typed-tool",
  tools: [
    {
      name: "lines",
      tools: () => [
        kit.tool({
          name: "read_lines",
          description: "Show some lines of a repository file, numbered.",
          parameters: LINES,
          origin: "plugin typed-tool",
          confirm: "auto",
          // `from` and `count` are numbers here, their defaults applied: zod parsed the arguments.
          async call({ path, from, count }) {
            const text = await kit.files.read(path);
            if (text === null) return { text: `${path}: no such text file in the repository`, isError: true };
            const lines = text.split("\n").slice(from - 1, from - 1 + count);
            return { text: lines.map((line, i) => `${from + i}: ${line}`).join("\n") };
          },
        }),
      ],
    },
  ],
})) satisfies Plugin;
