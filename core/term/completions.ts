// What the REPL's completion menu offers: slash commands (each once, with its summary),
// a command's own completions of its argument (paths for /add, model and format names),
// and in plain text the repository's file names and the identifiers of the last prompt
// (chat files and repo map).
import type { AutocompleteItem, AutocompleteProvider, AutocompleteSuggestions } from "@mariozechner/pi-tui";

export interface CompletionSource {
  /** Command names (without the slash) and their summaries. */
  commands(): { name: string; summary: string }[];
  /** A command's completions of its argument, as whole argument strings. */
  argument(command: string, arg: string): string[];
  /** Words worth completing in plain text: file names and identifiers. */
  words(): Iterable<string>;
}

/** At most this many entries in the menu (it scrolls). */
const MAX_ITEMS = 200;

export class CoderCompletions implements AutocompleteProvider {
  constructor(private readonly source: CompletionSource) {}

  async getSuggestions(lines: string[], cursorLine: number, cursorCol: number, options: { force?: boolean }): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? "").slice(0, cursorCol);
    const suggestions = cursorLine === 0 && before.startsWith("/") ? this.command(before) : this.word(before, options.force === true);
    return suggestions && suggestions.items.length ? suggestions : null;
  }

  private command(before: string): AutocompleteSuggestions | null {
    const space = before.indexOf(" ");
    if (space < 0) {
      const seen = new Set<string>();
      const items: AutocompleteItem[] = [];
      for (const c of this.source.commands()) {
        const value = `/${c.name}`;
        if (seen.has(value) || !value.startsWith(before)) continue;
        seen.add(value);
        items.push({ value, label: value, description: c.summary });
      }
      return { items: items.sort((a, b) => a.value.localeCompare(b.value)), prefix: before };
    }
    const arg = before.slice(space + 1);
    let found: string[];
    try {
      found = this.source.argument(before.slice(1, space), arg);
    } catch {
      return null;
    }
    const items = [...new Set(found)].filter((v) => v !== arg).slice(0, MAX_ITEMS);
    return { items: items.map((value) => ({ value, label: value })), prefix: arg };
  }

  private word(before: string, force: boolean): AutocompleteSuggestions | null {
    const word = /[\w.\-/]*$/.exec(before)?.[0] ?? "";
    if (word.length < (force ? 1 : 3)) return null;
    const matches = new Set<string>();
    for (const w of this.source.words()) {
      if (w !== word && w.startsWith(word)) matches.add(w);
      if (matches.size >= MAX_ITEMS) break;
    }
    const items = [...matches].sort((a, b) => a.length - b.length || a.localeCompare(b)).map((value) => ({ value, label: value }));
    return { items, prefix: word };
  }

  applyCompletion(lines: string[], cursorLine: number, cursorCol: number, item: AutocompleteItem, prefix: string): { lines: string[]; cursorLine: number; cursorCol: number } {
    const line = lines[cursorLine] ?? "";
    const start = cursorCol - prefix.length;
    // A command name gets its space, ready for the argument.
    const value = item.value.startsWith("/") && start === 0 ? `${item.value} ` : item.value;
    const next = [...lines];
    next[cursorLine] = `${line.slice(0, start)}${value}${line.slice(cursorCol)}`;
    return { lines: next, cursorLine, cursorCol: start + value.length };
  }
}

/** Identifiers in texts (three characters or more), each once. */
export function identifiersIn(texts: Iterable<string>): Set<string> {
  const words = new Set<string>();
  for (const text of texts) for (const m of text.matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)) words.add(m[0]);
  return words;
}
