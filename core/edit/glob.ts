// The one glob syntax of coder's file lists (`kit.files.glob`, `/add src/**/*.ts`), on Bun's
// own matcher: `*` and `?` within one folder, `**` across folders, `[abc]`, `{a,b}`.
const globs = new Map<string, InstanceType<typeof Bun.Glob>>();

/**
 * Does the glob `pattern` match `path` (repository-relative, forward slashes)? `*` and `?`
 * stay inside one folder, `**` crosses folders, `[abc]` and `{a,b}` as in a shell.
 * @example globMatches("src/**\/*.ts", "src/a/b.ts") // true
 */
export function globMatches(pattern: string, path: string): boolean {
  let glob = globs.get(pattern);
  if (!glob) {
    glob = new Bun.Glob(pattern);
    if (globs.size > 200) globs.clear();
    globs.set(pattern, glob);
  }
  return glob.match(path);
}
