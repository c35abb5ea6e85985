// The plugin API's text, which `coder plugin new` writes beside a new plugin. Apart from
// scaffold.ts: that one is a code pack (scripts/build.ts CODE_PACKS), and a pack cannot embed a file.
import { readAssetText } from "../../grammars/packed.ts";
// @ts-expect-error TypeScript reads this as core/plugin.ts's (types-only) module; `type: "file"` makes the default export the file's path.
import pluginApiFile from "../plugin.ts" with { type: "file" };

/** The text of core/plugin.ts: embedded packed by scripts/build.ts (as a file, not a string in the code), on disk from source. */
export function pluginApiText(): string {
  return readAssetText(pluginApiFile);
}
