// The one place coder reads ignore files, with the `ignore` library's gitignore semantics:
// every `.gitignore` from the root down and `.git/info/exclude` (what git would ignore, for
// `--no-git` and `kit.files.ignored`), and `.coderignore` (or `--ignore-file`: what coder
// leaves alone). The file store refuses ignored files and the file listing skips them, so
// `--no-git` never opens a secret like `.env`.
import { readCappedText, SMALL_FILE_BYTES } from "./read.ts";
import { UsageError } from "../errors.ts";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

export class IgnoreRules {
  /** Folder (repository-relative, "" for the root) → its rules, or null when it has none. */
  private readonly rules = new Map<string, Ignore | null>();

  constructor(private readonly root: string) {}

  /** Is `rel` (a repository path with forward slashes) ignored, itself or through a folder above it? */
  isIgnored(rel: string, isDir = false): boolean {
    const parts = rel.split("/").filter(Boolean);
    // git never looks inside an ignored folder, so a rule below it cannot bring a file back.
    for (let i = 1; i <= parts.length; i++) {
      if (this.matches(parts.slice(0, i), i < parts.length || isDir)) return true;
    }
    return false;
  }

  /** The deepest `.gitignore` with a rule for the path decides, as in git. */
  private matches(parts: string[], isDir: boolean): boolean {
    let ignored = false;
    for (let depth = 0; depth < parts.length; depth++) {
      const rules = this.rulesIn(parts.slice(0, depth).join("/"));
      if (!rules) continue;
      const sub = parts.slice(depth).join("/") + (isDir ? "/" : "");
      const verdict = rules.test(sub);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }

  private rulesIn(dir: string): Ignore | null {
    if (this.rules.has(dir)) return this.rules.get(dir) ?? null;
    const texts = [readOrEmpty(join(this.root, dir, ".gitignore"))];
    if (dir === "") texts.unshift(readOrEmpty(join(this.root, ".git", "info", "exclude")));
    const text = texts.join("\n");
    const rules = text.trim() ? ignore().add(text) : null;
    this.rules.set(dir, rules);
    return rules;
  }
}

/** An ignore file's text ("" when missing); one that is not a small regular file is refused, naming it. */
function readOrEmpty(file: string): string {
  const read = readCappedText(file, { maxBytes: SMALL_FILE_BYTES });
  if (read.problem) throw new UsageError(`${read.problem}; coder cannot tell which files it ignores (make it a regular file)`);
  return read.text ?? "";
}

/**
 * The rules of `.coderignore` (or the `--ignore-file` given), or null when there is no such
 * file. One that cannot be read is refused, naming it: coder fails closed, as listing every
 * file would show what the file hides.
 */
export function coderIgnoreRules(file: string): Ignore | null {
  const read = readCappedText(file, { maxBytes: SMALL_FILE_BYTES });
  if (read.problem) throw new UsageError(`${read.problem}; it lists the files coder leaves alone, so coder stops here (make it a regular file)`);
  return read.text === null ? null : ignore().add(read.text);
}

/**
 * What coder leaves alone in one repository: `.coderignore` (or `ignoreFile`), and what git
 * ignores. In a repository git answers itself (`gitIgnores`: its user-wide excludes count
 * too); without git, the `.gitignore` files do, and `tracked` (the walk's listing) keeps a
 * listed file in.
 */
export class RepoIgnore {
  private readonly rules: IgnoreRules;

  constructor(
    root: string,
    private readonly ignoreFile: string = join(root, ".coderignore"),
    private readonly gitIgnores?: (rel: string) => boolean,
  ) {
    this.rules = new IgnoreRules(root);
  }

  /** Is `rel` (repository-relative, forward slashes) ignored? */
  async isIgnored(rel: string, tracked: (rel: string) => Promise<boolean>): Promise<boolean> {
    if (rel === ".git" || rel.startsWith(".git/")) return true;
    // Read each time, as the listing is: an edit to .coderignore counts at once.
    if (coderIgnoreRules(this.ignoreFile)?.ignores(rel)) return true;
    if (this.gitIgnores) return this.gitIgnores(rel);
    return this.rules.isIgnored(rel) && !(await tracked(rel));
  }
}
