// Architect mode's hand-off: the architect's reply is a plan, and an editor coder
// (its own model and edit format, no repo map, fresh history) turns it into edits.
import type { Options } from "../config/options.ts";
import type { ModelInfo } from "../plugin.ts";
import type { Registry } from "../plugins/registry.ts";
import type { SendResult, TurnResult } from "./types.ts";

/** The editor's model and edit format: options first, then the architect model's table entry; only a format that edits. */
export function chooseEditor(options: Options, model: string, modelInfo: ModelInfo, architectFormat: string, registry: Registry): { model: string; editFormat: string } {
  const editorModel = options.editorModel ?? modelInfo.editorModel ?? model;
  const editorInfo = registry.modelInfo(editorModel);
  let editorFormat = options.editorEditFormat ?? modelInfo.editorFormat ?? editorInfo.editFormat;
  const mode = registry.formats.get(editorFormat)?.item.mode ?? "edit";
  if (editorFormat === architectFormat || mode !== "edit" || !registry.formats.has(editorFormat)) {
    const fallback = registry.fallbackFormat();
    editorFormat = fallback && fallback !== architectFormat ? fallback : editorFormat;
  }
  return { model: editorModel, editFormat: editorFormat };
}

/** Run the plan as the editor's request, within its own budget; Ctrl-C on the architect's request stops it too. */
export async function runEditor(editor: { runOne(message: string): Promise<TurnResult>; interrupt(): void }, plan: string, parent: AbortController | null): Promise<SendResult> {
  const onAbort = () => editor.interrupt();
  parent?.signal.addEventListener("abort", onAbort);
  try {
    const result = await editor.runOne(plan);
    return { reflection: null, failing: !result.ok };
  } finally {
    parent?.signal.removeEventListener("abort", onAbort);
  }
}
