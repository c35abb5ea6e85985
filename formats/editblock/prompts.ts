// Prompts of the SEARCH/REPLACE formats: `diff` (path before the fence) and
// `diff-fenced` (path inside the fence). Written for coder; the rules follow what
// is known to work for this format (exact copies, unique matches, small blocks).
import type { Fence, FormatPrompts, PromptContext } from "../../core/plugin.ts";
import { ESCAPED_TEXT, filesRule, formatPrompts, openFence } from "../prompting.ts";
import { shellRule } from "../shell.ts";

type Variant = "diff" | "diff-fenced";

/** One SEARCH/REPLACE block as the model should write it. */
export function block(variant: Variant, fence: Fence, path: string, lang: string, search: string, replace: string): string {
  const open = openFence(fence, lang);
  const body = `<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n${fence[1]}`;
  return variant === "diff" ? `${path}\n${open}\n${body}` : `${open}\n${path}\n${body}`;
}

/** The two steps that put the path and the opening fence in place, in this variant's order (repair messages say them too). */
export function pathSteps(variant: Variant, fence: Fence): [string, string] {
  const path = (where: string) => `The file's path alone on ${where}, exactly as shown to you (relative to the repository root), with no decoration.`;
  const open = fence[0].startsWith("<") ? `The opening fence: ${fence[0]}.` : `The opening fence with the code's language: ${fence[0]}python (or the right language).`;
  return variant === "diff" ? [path("a line"), open] : [open, path("the next line")];
}

function rules(variant: Variant, ctx: PromptContext): string {
  const [first, second] = pathSteps(variant, ctx.fence);
  const moves = ctx.shellSuggestions
    ? "- To rename or delete a file, suggest the `git mv` or `git rm` command instead of a block."
    : "- Blocks cannot rename or delete a file: leave that to the user.";
  return `# How to write edits: SEARCH/REPLACE blocks

Every change to a file is a *SEARCH/REPLACE block*, made of:
1. ${first}
2. ${second}
3. The line \`<<<<<<< SEARCH\`.
4. A run of lines copied from the current file, unchanged.
5. The line \`=======\`.
6. The lines that replace them.
7. The line \`>>>>>>> REPLACE\`.
8. The closing fence: ${ctx.fence[1]}

Rules:
- The SEARCH lines must be a verbatim copy of lines in the file as it is now: every character, indentation, comment, docstring and blank line. Never retype them from memory. ${ESCAPED_TEXT}
- The SEARCH lines must match exactly one place in the file. If they could match several places, add surrounding lines until they are unique. A block that matches more than one place is rejected.
- Keep blocks small: the lines that change plus a line or two around them. Several small blocks are better than one big one; never repeat long runs of unchanged lines. Do not leave lines out with \`...\`.
- Blocks are applied in the order you write them, so a later block must match the file as the earlier blocks left it.
- ${filesRule(ctx)}
- To move code, use two blocks: one that deletes it where it is, one that inserts it where it goes.
- To create a file, write a block with the new path (with its directories), an empty SEARCH section and the whole content in the REPLACE section.
${moves}`;
}

/** An example reply's blocks (Python files), as this variant writes them. */
function blocks(variant: Variant, ctx: PromptContext, ...edits: [path: string, search: string, replace: string][]): string {
  return edits.map(([path, search, replace]) => block(variant, ctx.fence, path, "python", search, replace)).join("\n\n");
}

export function editBlockPrompts(variant: Variant, ctx: PromptContext): FormatPrompts {
  return formatPrompts(ctx, {
    editor:
      "You are an expert software developer applying a change that has already been planned. Turn the requested change into edits to the files. Reply with the edit blocks only: no explanations, no questions.",
    role: "You are an expert software developer. Follow the user's request, using the conventions, libraries and style already in the code. If the request is ambiguous, ask a question instead of guessing.",
    lastStep: "Write each change as a SEARCH/REPLACE block, following the rules below.",
    afterSteps:
      'Code changes only ever go in SEARCH/REPLACE blocks. When the user answers a proposal with "ok", "go ahead" or the like, they want that proposal as blocks. Reply in the user\'s language.',
    rules: [rules(variant, ctx), shellRule(ctx)].join("\n\n"),
    examples: [
      {
        request: "In greet.py, make greet() take a name and use it in the message.",
        explanation: "greet() will take a `name` parameter and put it in the greeting, and the caller will pass one.",
        edits: blocks(
          variant,
          ctx,
          ["greet.py", 'def greet():\n    return "Hello, world"\n', 'def greet(name):\n    return f"Hello, {name}"\n'],
          ["greet.py", 'if __name__ == "__main__":\n    print(greet())\n', 'if __name__ == "__main__":\n    print(greet("Ada"))\n'],
        ),
      },
      {
        request: "Move the slugify helper out of app/views.py into a new app/text.py and import it.",
        explanation: "slugify() moves to a new app/text.py; views.py drops its copy and imports it.",
        edits: blocks(
          variant,
          ctx,
          ["app/text.py", "", 'import re\n\n\ndef slugify(title):\n    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n'],
          ["app/views.py", "import re\n\nfrom app.models import Post\n", "from app.models import Post\nfrom app.text import slugify\n"],
          ["app/views.py", 'def slugify(title):\n    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")\n\n\n', ""],
        ),
      },
    ],
    reminder: `Reminder: write every change as a SEARCH/REPLACE block (${variant === "diff" ? "path line, then the fence" : "fence, then the path line"}; SEARCH copied exactly from the current file and matching one place; small blocks; empty SEARCH to create a file).`,
    editorReminder: " Reply with the blocks only.",
  });
}
