// Which repository files a run works with: `--ignore-file` (Aider's `--aiderignore`)
// in place of `.coderignore`, and `--subtree-only`, which keeps the repo map, completion
// and `/add` globs to the current directory's subtree.
import { relative, resolve, sep } from "node:path";

export interface FileScope {
  /** Absolute path of the gitignore-style file of paths to leave alone; undefined: `.coderignore`. */
  ignoreFile?: string;
  /** Repository-relative folder prefix ("src/api/") the listing keeps to; "" for the whole repository. */
  subtree: string;
}

export function fileScope(o: { ignoreFile?: string; subtreeOnly: boolean }, root: string, cwd: string): FileScope {
  const rel = relative(root, cwd);
  const inside = rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel);
  return {
    ignoreFile: o.ignoreFile === undefined ? undefined : resolve(root, o.ignoreFile),
    subtree: o.subtreeOnly && inside ? `${rel.split(sep).join("/")}/` : "",
  };
}

/** The files of `files` inside the scope's subtree. */
export function inSubtree(files: string[], scope: FileScope): string[] {
  return scope.subtree ? files.filter((f) => f.startsWith(scope.subtree)) : files;
}
