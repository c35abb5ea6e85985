// Ctrl-R in the REPL: an incremental search back through the input history, as in a
// shell. Typing narrows it, Ctrl-R again finds the next older match, Enter (or any
// motion key) takes the match into the prompt, Esc or Ctrl-G puts back what was there.
import { matchesKey } from "@mariozechner/pi-tui";

export interface SearchStep {
  /** Text to put in the prompt (the search ended). */
  accept?: string;
  /** The key also goes on to the editor (a motion key that ended the search). */
  passThrough?: boolean;
}

export class HistorySearch {
  active = false;
  private query = "";
  /** Index into the history (newest first) of the current match; -1: none. */
  private at = -1;
  private original = "";

  constructor(private readonly entries: () => readonly string[]) {}

  begin(current: string): void {
    this.active = true;
    this.query = "";
    this.at = -1;
    this.original = current;
  }

  /** The line shown under the prompt while searching. */
  status(): string {
    const match = this.at >= 0 ? (this.entries()[this.at] ?? "") : "";
    const shown = match.split("\n")[0] ?? "";
    return `(reverse-i-search)\`${this.query}': ${shown}${match.includes("\n") ? " …" : ""}${this.query && this.at < 0 ? "  (no match)" : ""}`;
  }

  handle(data: string): SearchStep {
    if (matchesKey(data, "ctrl+r")) {
      this.find(this.at + 1);
      return {};
    }
    if (matchesKey(data, "escape") || matchesKey(data, "ctrl+g") || matchesKey(data, "ctrl+c")) {
      this.active = false;
      return { accept: this.original };
    }
    if (matchesKey(data, "backspace")) {
      this.query = this.query.slice(0, -1);
      this.find(0);
      return {};
    }
    if (matchesKey(data, "enter")) {
      this.active = false;
      return { accept: this.match() };
    }
    if (data.length === 1 && data >= " ") {
      this.query += data;
      this.find(Math.max(0, this.at));
      return {};
    }
    // Any other key (arrows, Home, Ctrl-E): take the match and let the key act on it.
    this.active = false;
    return { accept: this.match(), passThrough: true };
  }

  private match(): string {
    return this.at >= 0 ? (this.entries()[this.at] ?? this.original) : this.original;
  }

  private find(from: number): void {
    const all = this.entries();
    for (let i = from; i < all.length; i++) {
      if ((all[i] ?? "").includes(this.query)) {
        this.at = i;
        return;
      }
    }
    if (from === 0) this.at = -1;
  }
}
