// The zod schema of a config file, derived from the option table (config-file.ts loads this
// only for a file its own check does not pass plainly: zod costs more to load than the rest of
// a start), and the JSON Schema that `coder config schema` prints.
import { z } from "zod";
import { type OptionSpec, type OptionTable, configKeys } from "./options.ts";

// Zod's compiled fast path costs more to build than it saves on a few small files.
z.config({ jitless: true });

// ─── Schema ──────────────────────────────────────────────────────────────────

export const modelOverrideSchema = z
  .object({
    contextWindow: z.number().int().positive(),
    maxOutput: z.number().int().positive(),
    prices: z.object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() }).partial().strict(),
    editFormat: z.string(),
    weakModel: z.string(),
    editorModel: z.string(),
    editorFormat: z.string(),
    encoding: z.string(),
    prompting: z.object({ reminder: z.enum(["user", "system"]), addendum: z.enum(["lazy", "overeager"]) }).partial().strict(),
    capabilities: z
      .object({
        tools: z.boolean(),
        systemPrompt: z.boolean(),
        temperature: z.boolean(),
        reasoningEffort: z.boolean(),
        reasoningLevels: z.array(z.string()),
        thinkingTokens: z.boolean(),
        prefill: z.boolean(),
        cache: z.enum(["auto", "breakpoints", "none"]),
        images: z.boolean(),
        pdf: z.boolean(),
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

const pluginEntrySchema = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/, "a 64-digit lowercase hex sha256").optional() }).strict(),
]);

export function valueSchema(spec: OptionSpec): z.ZodType {
  switch (spec.type) {
    case "boolean":
      return z.boolean();
    case "number":
      // Every number option is a budget, a count or a time: none means anything below 0.
      return spec.positive ? z.number().positive() : z.number().min(0);
    case "string":
      return z.string();
    case "list":
      return z.array(z.string());
    case "enum":
      return z.enum(spec.values as [string, ...string[]]);
    case "models":
      return z.record(z.string(), modelOverrideSchema);
    case "plugins":
      return z.array(pluginEntrySchema);
    case "command-map":
      return z.union([z.string(), z.record(z.string(), z.string())]);
    case "object":
      // The entries are the declaring plugin's to check (e.g. plugins/mcp/config.ts for mcpServers).
      return z.record(z.string(), z.unknown());
  }
}

/** The zod schema of a config file, derived from the option table. */
export function configSchema(table: OptionTable) {
  const shape: Record<string, z.ZodType> = { $schema: z.string().optional().describe("JSON Schema reference (ignored)") };
  for (const spec of configKeys(table)) shape[spec.key] = valueSchema(spec).optional().describe(spec.help);
  return z.object(shape).strict();
}

/** The JSON Schema that `coder config schema` prints: the kernel's keys and every loaded plugin's. */
export function jsonSchema(table: OptionTable): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema(table), { target: "draft-2020-12" }) as Record<string, unknown>;
  return { ...schema, title: "coder config (.coder.json, .coder.local.json, $XDG_CONFIG_HOME/coder/config.json)" };
}

