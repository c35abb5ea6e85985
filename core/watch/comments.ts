// AI comments (`--watch-files`): a comment that starts or ends with "ai" asks something of
// the model; ending in "AI!" it asks for a change, "AI?" a question. Found in any embedded
// language's comment syntax (line and one-line block comments); files no grammar covers get
// the common line markers (#, //, --, ;). Pure functions of the file's text.
import { type CommentSyntax, languageFor } from "../../grammars/languages.ts";

export type AiAction = "!" | "?";

export interface AiComment {
  /** 0-based line. */
  line: number;
  /** The comment as written, from its marker to the end of the line (trimmed). */
  text: string;
  /** "!" (make the change), "?" (answer), or null (context for the others). */
  action: AiAction | null;
}

/** Markers for files no grammar covers: Aider's set (shell/Python, C-like, SQL/Lua, Lisp). */
const COMMON: readonly string[] = ["#", "//", "--", ";+"];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The comment patterns for a file: its language's markers, or the common ones. */
function patterns(path: string): RegExp[] {
  const syntax: CommentSyntax | undefined = languageFor(path)?.comment;
  const lines = syntax ? (syntax.line ? [escape(syntax.line)] : []) : COMMON;
  const out: RegExp[] = [];
  if (lines.length) out.push(new RegExp(`(?:${lines.join("|")}) *(?:ai\\b.*|.*\\bai[?!]?) *$`, "i"));
  if (syntax?.block) {
    const [open, close] = syntax.block.map(escape) as [string, string];
    out.push(new RegExp(`${open} *(?:ai\\b.*?|.*?\\bai[?!]?) *${close} *$`, "i"));
  }
  return out;
}

/** What a comment asks: its words after the marker, starting or ending with ai! / ai?. */
function actionOf(comment: string): AiAction | null {
  const words = comment
    .toLowerCase()
    .replace(/^[^a-z0-9?!]+/, "")
    .replace(/[^a-z0-9?!]+$/, "");
  if (words.startsWith("ai!") || words.endsWith("ai!")) return "!";
  if (words.startsWith("ai?") || words.endsWith("ai?")) return "?";
  return null;
}

/** Every AI comment in `text`, a file at `path`. */
export function findAiComments(path: string, text: string): AiComment[] {
  // A cheap test first: most saves of most files hold no "ai" at all.
  if (!/ai/i.test(text)) return [];
  const found: AiComment[] = [];
  const regexes = patterns(path);
  text.split("\n").forEach((raw, line) => {
    const source = raw.replace(/\r$/, "");
    for (const re of regexes) {
      const m = re.exec(source);
      if (!m) continue;
      const comment = m[0].trim();
      found.push({ line, text: comment, action: actionOf(comment) });
      break;
    }
  });
  return found;
}

/** What a set of comments asks for: the last one that asks anything decides (as in Aider). */
export function actionOfAll(comments: readonly AiComment[]): AiAction | null {
  return comments.findLast((c) => c.action !== null)?.action ?? null;
}

/**
 * `text` without the AI comments still in it: a line that is only the comment goes,
 * a comment after code is cut off. Returns null when none of them is left.
 */
export function removeAiComments(text: string, comments: readonly AiComment[]): string | null {
  const wanted = new Set(comments.map((c) => c.text));
  const lines = text.split("\n");
  let changed = false;
  const kept: string[] = [];
  for (const line of lines) {
    const hit = [...wanted].find((c) => line.trimEnd().endsWith(c));
    if (!hit) {
      kept.push(line);
      continue;
    }
    changed = true;
    const code = line.slice(0, line.trimEnd().length - hit.length).trimEnd();
    if (code.trim()) kept.push(code);
  }
  return changed ? kept.join("\n") : null;
}
