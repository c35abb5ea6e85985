// The files of a chat: editable ones (in the order added) and read-only ones.
// One object is shared by an architect and its editor coder.
import { resolve } from "node:path";
import { UsageError } from "../errors.ts";

/** The chat's files, shared by an architect and its editor. */
export class ChatFiles {
  readonly editable: string[] = [];
  readonly readOnly: string[] = [];

  add(path: string): boolean {
    if (this.editable.includes(path)) return false;
    this.editable.push(path);
    const ro = this.readOnly.indexOf(path);
    if (ro >= 0) this.readOnly.splice(ro, 1);
    return true;
  }

  addReadOnly(path: string): boolean {
    if (this.readOnly.includes(path) || this.editable.includes(path)) return false;
    this.readOnly.push(path);
    return true;
  }

  drop(path: string): boolean {
    for (const list of [this.editable, this.readOnly]) {
      const i = list.indexOf(path);
      if (i >= 0) {
        list.splice(i, 1);
        return true;
      }
    }
    return false;
  }
}

/** A read-only file's path in the chat: repository-relative inside the repository, else absolute. */
export function readOnlyPath(files: { toRelative(typed: string): string }, typed: string): string | null {
  try {
    return files.toRelative(typed);
  } catch (error) {
    // Outside the repository (a UsageError from toRelative): kept by its absolute path, never written.
    if (error instanceof UsageError && /outside the repository/.test(error.message)) return resolve(typed);
    return null;
  }
}
