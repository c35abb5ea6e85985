// A provided tool's two shapes, made one for the gathering step: a JSON Schema tool is sent
// as it is; a typed tool's JSON Schema comes from its zod (or Standard JSON Schema)
// declaration, and the model's arguments are checked and parsed by that same declaration.
import type { JsonSchema, ParameterSchema, ProvidedTool, SchemaResult, ToolSpec, TypedTool } from "../plugin.ts";

/** Is this a typed tool (parameters declared with a schema library) rather than a JSON Schema one? */
export function isTypedTool(tool: ProvidedTool): tool is TypedTool {
  return "parameters" in tool && typeof (tool.parameters as Partial<ParameterSchema> | null)?.["~standard"] === "object";
}

const made = new WeakMap<object, JsonSchema>();

/** The JSON Schema of a typed tool's declaration (what the model may send), made once per schema object. */
async function jsonSchemaOf(schema: ParameterSchema): Promise<JsonSchema> {
  const known = made.get(schema);
  if (known) return known;
  const standard = schema["~standard"] as ParameterSchema["~standard"] & { jsonSchema?: { input?: (o: { target: string }) => JsonSchema } };
  let json: JsonSchema;
  if (standard.vendor === "zod") {
    // zod 4's own converter; the input side, so fields with a default are optional to the model.
    const { toJSONSchema } = await import("zod");
    json = toJSONSchema(schema as unknown as Parameters<typeof toJSONSchema>[0], { io: "input", unrepresentable: "any" }) as JsonSchema;
  } else if (typeof standard.jsonSchema?.input === "function") {
    json = standard.jsonSchema.input({ target: "draft-07" });
  } else {
    throw new Error(`its parameters come from ${standard.vendor}, which offers no JSON Schema (declare them with zod, or give a JSON Schema tool's spec)`);
  }
  const { $schema: _dialect, ...rest } = json;
  made.set(schema, rest);
  return rest;
}

/** The spec sent to the model for a tool of either shape. Throws, with a one-line reason, when a typed tool's schema cannot be made. */
export async function toolSpec(tool: ProvidedTool): Promise<ToolSpec> {
  if (!isTypedTool(tool)) return tool.spec;
  return { name: tool.name, description: tool.description, parameters: await jsonSchemaOf(tool.parameters) };
}

/** The tool's name, whichever shape. */
export function toolName(tool: ProvidedTool): string {
  return isTypedTool(tool) ? tool.name : tool.spec.name;
}

/**
 * Run one call: a typed tool's arguments are checked and parsed first (a mismatch is a value
 * naming each field at fault, for the model); a JSON Schema tool gets them as they came.
 */
export async function callTool(tool: ProvidedTool, args: Record<string, unknown>, signal: AbortSignal): Promise<{ ok: true; run: () => ReturnType<ProvidedTool["call"]> } | { ok: false; problem: string }> {
  if (!isTypedTool(tool)) return { ok: true, run: () => tool.call(args, signal) };
  const result: SchemaResult<unknown> = await tool.parameters["~standard"].validate(args);
  if (result.issues) {
    const where = (path: readonly (PropertyKey | { key: PropertyKey })[] | undefined) =>
      path?.length ? path.map((p) => String(typeof p === "object" ? p.key : p)).join(".") : "(the arguments)";
    return { ok: false, problem: `the arguments do not match the tool's parameters: ${result.issues.map((i) => `${where(i.path)}: ${i.message}`).join("; ")}.` };
  }
  const value = result.value;
  return { ok: true, run: () => tool.call(value, signal) };
}
