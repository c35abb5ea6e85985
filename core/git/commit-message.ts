// Commit messages for coder's commits: the weak model's prompt, cleaning its
// reply into one Conventional-Commits line, and the deterministic fallback.
// Pure functions; core/git/git.ts re-exports them.

import { posix } from "node:path";
import type { ChatMessage } from "../plugin.ts";

/** Lines added and removed in one file of a change. */
export interface DiffStat {
  path: string;
  added: number;
  removed: number;
  /** The change creates the file. */
  created?: boolean;
  /** The change deletes the file. */
  deleted?: boolean;
}

/** The longest subject line coder writes. */
export const MAX_SUBJECT = 72;
const CC_TYPES = ["feat", "fix", "refactor", "docs", "test", "chore", "style", "perf", "build", "ci"];
const GENERIC = /^(update|updates|updated|change|changes|changed|fix|fixes|edit|edits|commit|wip|misc|code changes|update files?|update code|various changes)\.?$/i;

/**
 * The request for the weak model that writes a commit message for a reply's change.
 * Send it as is; pass the reply's text through `cleanCommitMessage`.
 */
export function commitMessagePrompt(request: string, diff: string): ChatMessage[] {
  const maxDiff = 24_000;
  const shownDiff = diff.length > maxDiff ? `${diff.slice(0, maxDiff)}\n... (diff truncated)` : diff;
  return [
    {
      role: "system",
      content: [
        "You write git commit messages.",
        "Reply with exactly one line in Conventional Commits form: `type: summary` or `type(scope): summary`,",
        `where type is one of ${CC_TYPES.join(", ")}.`,
        `The whole line is at most ${MAX_SUBJECT} characters, the summary is in the imperative mood ("add", not "added"),`,
        "starts with a lower-case letter, has no trailing period and says what changed, specifically.",
        "No quotes, no code fences, no body, no explanation: only the line.",
      ].join("\n"),
    },
    {
      role: "user",
      content: `The user asked for:\n${request.trim() || "(no request text)"}\n\nThe change:\n${shownDiff}`,
    },
  ];
}

/** `--commit-prompt` and `--commit-language`: the user's own commit-message instructions. */
export interface CommitStyle {
  commitPrompt?: string;
  commitLanguage?: string;
}

/** `messages` (from `commitMessagePrompt`) with the user's system prompt and language, when set. */
export function styleCommitPrompt(messages: ChatMessage[], style: CommitStyle = {}): ChatMessage[] {
  const prompt = style.commitPrompt?.trim();
  const language = style.commitLanguage?.trim();
  if (!prompt && !language) return messages;
  return messages.map((m) => {
    if (m.role !== "system") return m;
    const base = prompt || m.content;
    return { ...m, content: language ? `${base}\nWrite the commit message in ${language}.` : base };
  });
}

/**
 * The first usable line of a model's commit-message reply, made a Conventional-Commits
 * line of at most 72 characters; null when there is nothing usable (empty or generic).
 */
export function cleanCommitMessage(text: string): string | null {
  const lines = text
    .replace(/```[a-z]*\n?/gi, "\n")
    .split("\n")
    .map((l) => l.trim().replace(/^["'`]+|["'`]+$/g, "").replace(/^(commit message|message|subject)\s*:\s*/i, "").trim())
    .filter((l) => l.length > 0);
  // A chatty model may lead with "Here is the message:"; the conventional line wins, else the first real one.
  const conventional = lines.find((l) => CC_TYPES.includes(/^([a-z]+)[(!:]/i.exec(l)?.[1]?.toLowerCase() ?? ""));
  const line = conventional ?? lines.find((l) => !l.endsWith(":"));
  if (!line) return null;
  const m = /^([a-z]+)(\([^)]*\))?(!)?:\s*(.+)$/i.exec(line);
  let type = m?.[1]?.toLowerCase() ?? "";
  let scope = m?.[2] ?? "";
  let summary = (m ? m[4] : line) ?? "";
  if (!CC_TYPES.includes(type)) {
    if (m) summary = line; // "Something: else" is not a type
    type = guessType(summary, []);
    scope = "";
  }
  summary = summary.replace(/\.+$/, "").trim();
  summary = lowerFirstWord(summary);
  if (!summary || GENERIC.test(summary)) return null;
  return fitSubject(`${type}${scope}${m?.[3] ?? ""}: `, summary);
}

/**
 * A deterministic one-line Conventional-Commits message (≤ 72 chars, imperative,
 * never empty or generic) from the changed files and the user's request; used when
 * the weak model cannot write one.
 */
export function fallbackCommitMessage(paths: readonly string[], diffstat: readonly DiffStat[], request: string): string {
  const files = paths.length ? [...paths] : diffstat.map((d) => d.path);
  const created = diffstat.filter((d) => d.created).map((d) => d.path);
  const deleted = diffstat.filter((d) => d.deleted).map((d) => d.path);
  const subject = files.length === 0 ? "the repository" : files.length === 1 ? posix.basename(files[0]!) : `${posix.basename(files[0]!)} and ${files.length - 1} more file${files.length > 2 ? "s" : ""}`;
  const type = guessType(request, files);
  const fromRequest = imperativeFromRequest(request);
  if (fromRequest) {
    const prefix = `${type}: `;
    const withFile = `${fromRequest} in ${subject}`;
    if (prefix.length + withFile.length <= MAX_SUBJECT && files.length > 0 && !fromRequest.includes(posix.basename(files[0]!))) return `${prefix}${withFile}`;
    return fitSubject(prefix, fromRequest);
  }
  if (files.length > 0 && created.length === files.length) return fitSubject(`${type === "fix" || type === "chore" ? "feat" : type}: `, `add ${subject}`);
  if (files.length > 0 && deleted.length === files.length) return fitSubject("chore: ", `remove ${subject}`);
  const added = diffstat.reduce((n, d) => n + d.added, 0);
  const removed = diffstat.reduce((n, d) => n + d.removed, 0);
  return fitSubject(`${type}: `, `update ${subject} (+${added} -${removed})`);
}

const IMPERATIVE = /^(add|fix|remove|delete|rename|refactor|implement|create|update|change|make|use|move|replace|support|handle|improve|extract|document|test|clean|simplify|convert|introduce|allow|prevent|avoid|ensure|set|drop|bump|write|return|raise|validate|check|correct|optimi[sz]e|split|merge|reorder|sort|format)\b/i;

function imperativeFromRequest(request: string): string | null {
  let line = request.split("\n").map((l) => l.trim()).find((l) => l.length > 0) ?? "";
  line = line.replace(/^(please|pls|could you|can you|would you|i want you to|i'd like you to|let's|lets)\s+/i, "").replace(/^(please)\s+/i, "");
  line = line.replace(/[.!?]+$/, "").replace(/\s+/g, " ").trim();
  if (!IMPERATIVE.test(line)) return null;
  line = lowerFirstWord(line);
  return GENERIC.test(line) ? null : line;
}

/** "Add x" → "add x", but "API: …", "README" and "WRITE" keep their case (acronyms, names). */
function lowerFirstWord(text: string): string {
  const word = /^\S+/.exec(text)?.[0] ?? "";
  if (word.length > 1 && word === word.toUpperCase()) return text;
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function guessType(text: string, files: readonly string[]): string {
  const t = text.toLowerCase();
  if (files.length > 0 && files.every((f) => /(^|\/)(tests?|__tests__|spec)\/|[._-](test|spec)\.[a-z]+$|^test_/.test(f))) return "test";
  if (files.length > 0 && files.every((f) => /\.(md|mdx|rst|txt|adoc)$/i.test(f))) return "docs";
  if (/\b(fix|bug|broken|crash|error|wrong|incorrect)\b/.test(t)) return "fix";
  if (/\b(refactor|rename|clean ?up|simplify|extract|reorgani[sz]e)\b/.test(t)) return "refactor";
  if (/\b(tests?|spec)\b/.test(t)) return "test";
  if (/\b(docs?|readme|documentation|comments?)\b/.test(t)) return "docs";
  if (/\b(add|implement|create|support|introduce|new|feature)\b/.test(t)) return "feat";
  return "chore";
}

/** `prefix + summary`, the summary cut at a word so the line fits in 72 characters. */
export function fitSubject(prefix: string, summary: string): string {
  const room = MAX_SUBJECT - prefix.length;
  if (summary.length <= room) return prefix + summary;
  const cut = summary.slice(0, room + 1);
  const space = cut.lastIndexOf(" ");
  const short = (space > room / 2 ? cut.slice(0, space) : cut.slice(0, room)).replace(/[\s,;:(-]+$/, "");
  return prefix + short;
}

/**
 * `message` with `trailers` (e.g. "Refs: JIRA-12", "Co-authored-by: …") in one trailer block, as
 * git parses them: joined to a trailer block the message already ends with, else after a blank line.
 */
export function withTrailers(message: string, trailers: readonly string[]): string {
  const body = message.replace(/\s+$/, "");
  const lines = body.split("\n");
  const fresh = trailers.filter((t) => !lines.includes(t));
  if (!fresh.length) return body;
  const lastParagraph = lines.slice(lines.lastIndexOf("") + 1);
  const endsInBlock = lines.includes("") && lastParagraph.every((l) => /^[A-Za-z0-9-]+: \S/.test(l));
  return `${body}${endsInBlock ? "\n" : "\n\n"}${fresh.join("\n")}`;
}
