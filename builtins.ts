// The one list of built-in plugins. They register through the same door as a
// user's --plugin file; each is loaded lazily so start-up stays cheap.
import type { BuiltinPlugin } from "./core/plugins/loader.ts";

export const BUILTINS: BuiltinPlugin[] = [
  // formats
  { origin: "built-in:formats/editblock", load: () => import("./formats/editblock/index.ts") },
  { origin: "built-in:formats/wholefile", load: () => import("./formats/wholefile/index.ts") },
  { origin: "built-in:formats/udiff", load: () => import("./formats/udiff/index.ts") },
  { origin: "built-in:formats/patch", load: () => import("./formats/patch/index.ts") },
  { origin: "built-in:formats/tool", load: () => import("./formats/tool/index.ts") },
  { origin: "built-in:formats/ask", load: () => import("./formats/ask/index.ts") },
  { origin: "built-in:formats/architect", load: () => import("./formats/architect/index.ts") },
  { origin: "built-in:formats/context", load: () => import("./formats/context/index.ts") },
  // model adapters
  { origin: "built-in:plugins/openai", load: () => import("./plugins/openai/index.ts") },
  // context providers
  { origin: "built-in:plugins/repomap", load: () => import("./plugins/repomap/index.ts") },
  // commands
  { origin: "built-in:plugins/commands", load: () => import("./plugins/commands/index.ts") },
  { origin: "built-in:plugins/media", load: () => import("./plugins/media/index.ts") },
  // MCP servers: tools, resources and prompts
  { origin: "built-in:plugins/mcp", load: () => import("./plugins/mcp/index.ts") },
];
