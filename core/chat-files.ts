// The files of a chat: editable ones (in the order added) and read-only ones.
// One object is shared by an architect and its editor coder.

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
