// Watching a repository's files for changes, cheaply on large repositories: one
// non-recursive watch per folder that holds a listed file (so ignored trees such as
// node_modules/ or build output are never watched), events folded into batches.
import { type FSWatcher, watch } from "node:fs";
import { join } from "node:path";

export interface WatcherOptions {
  root: string;
  /** The repository files to watch (tracked and not ignored), repository-relative with "/". */
  listFiles(): Promise<string[]>;
  /** May a path that is not in the listing (a new file) be reported? E.g. "not ignored by git". */
  accept(rel: string): boolean;
  /** Changed paths, a batch after `quietMs` without further events. */
  onChange(paths: string[]): void;
  quietMs?: number;
}

export class RepoWatcher {
  private readonly watchers: FSWatcher[] = [];
  private known = new Set<string>();
  private pending = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly opts: WatcherOptions) {}

  /** Start watching; returns how many folders are watched. */
  async start(): Promise<number> {
    const files = await this.opts.listFiles();
    this.known = new Set(files);
    const folders = new Set([""]);
    for (const file of files) {
      const slash = file.lastIndexOf("/");
      folders.add(slash < 0 ? "" : file.slice(0, slash));
    }
    for (const folder of folders) {
      try {
        const watcher = watch(join(this.opts.root, folder), { persistent: true }, (_event, name) => {
          if (typeof name === "string" && name) this.changed(folder ? `${folder}/${name}` : name);
        });
        watcher.on("error", () => watcher.close()); // a folder removed while watched
        this.watchers.push(watcher);
      } catch {
        // a folder that vanished between the listing and now
      }
    }
    return this.watchers.length;
  }

  private changed(rel: string): void {
    if (!this.known.has(rel) && !this.opts.accept(rel)) return;
    this.pending.add(rel);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), this.opts.quietMs ?? 150);
  }

  private flush(): void {
    const paths = [...this.pending];
    this.pending.clear();
    if (paths.length) this.opts.onChange(paths);
  }

  stop(): void {
    clearTimeout(this.timer);
    for (const w of this.watchers.splice(0)) w.close();
  }
}
