// What reaches the terminal or a pipe: model text made harmless for a terminal, and
// writes to a stdout whose reader went away (`coder --json … | head -1`) dropped quietly.

/**
 * Text from the model made safe for a terminal: escape sequences (clear screen, cursor
 * moves, window titles, colours that never reset) and other control characters are shown
 * as caret notation (`^[`) instead of acting; carriage returns, which would overwrite the
 * line already printed, are dropped. Line feeds and tabs stay.
 */
export function terminalSafe(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]/g, (c) => {
    if (c === "\r") return "";
    const code = c.charCodeAt(0);
    if (code === 0x7f) return "^?";
    if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
    return `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

const closed = new WeakSet<NodeJS.WriteStream>();
const watched = new WeakSet<NodeJS.WriteStream>();

/**
 * A writer for `stream` that goes quiet once its reader has gone (EPIPE): the run finishes
 * its work (a write batch is never cut short) without an error about the closed pipe.
 */
export function pipeWriter(stream: NodeJS.WriteStream): (text: string) => void {
  if (!watched.has(stream)) {
    watched.add(stream);
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      closed.add(stream);
    });
  }
  return (text) => {
    if (closed.has(stream)) return;
    try {
      stream.write(text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
      closed.add(stream);
    }
  };
}
