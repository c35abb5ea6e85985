// One config file: JSONC parsing and validation against the zod schema derived
// from the option table (config-schema.ts), with errors naming file, line, key path
// and what was expected. A file whose every value is plainly what its key takes is
// read without zod, which costs more to load than the rest of a start.
import { findNodeAtLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { type ConfigLayer, type LayerKind, displayPath, isProjectLayer } from "./config.ts";
import { ConfigError } from "../errors.ts";
import { readCappedText, SMALL_FILE_BYTES } from "../edit/read.ts";
import { type OptionSpec, type OptionTable, type PluginRef, configKeys } from "./options.ts";

/** The zod schemas (config-schema.ts), loaded the first time a file or value is not plainly valid. */
function schemas(): typeof import("./config-schema.ts") {
  return require("./config-schema.ts") as typeof import("./config-schema.ts");
}

/** The JSON Schema that `coder config schema` prints: the kernel's keys and every loaded plugin's. */
export function jsonSchema(table: OptionTable): Record<string, unknown> {
  return schemas().jsonSchema(table);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

type Check = (value: unknown) => boolean;
/** A strict, partial object schema told without zod: each key (in the schema's order) with its check or nested shape. */
interface Shape {
  [key: string]: Check | Shape;
}

const positiveInt: Check = (v) => typeof v === "number" && Number.isInteger(v) && v > 0;
const finite: Check = (v) => typeof v === "number" && Number.isFinite(v);
const text: Check = (v) => typeof v === "string";
const flag: Check = (v) => typeof v === "boolean";
const oneOf = (...values: string[]): Check => (v) => typeof v === "string" && values.includes(v);

/** config-schema.ts `modelOverrideSchema`, told without zod (config.test.ts checks the two agree). */
export const MODEL_OVERRIDE_SHAPE: Shape = {
  contextWindow: positiveInt,
  maxOutput: positiveInt,
  prices: { input: finite, output: finite, cacheRead: finite, cacheWrite: finite },
  editFormat: text,
  weakModel: text,
  editorModel: text,
  editorFormat: text,
  encoding: text,
  prompting: { reminder: oneOf("user", "system"), addendum: oneOf("lazy", "overeager") },
  capabilities: {
    tools: flag,
    systemPrompt: flag,
    temperature: flag,
    reasoningEffort: flag,
    reasoningLevels: (v) => Array.isArray(v) && v.every(text),
    thinkingTokens: flag,
    prefill: flag,
    cache: oneOf("auto", "breakpoints", "none"),
    images: flag,
    pdf: flag,
  },
};

/** `value` as zod gives back a strict, partial object of `shape` (keys in the shape's order); null when zod must decide. */
function plainShape(shape: Shape, value: unknown): Record<string, unknown> | null {
  if (!isPlainObject(value) || Object.keys(value).some((key) => !Object.hasOwn(shape, key))) return null;
  const data: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(shape)) {
    if (!Object.hasOwn(value, key)) continue;
    const inner = typeof check === "function" ? (check(value[key]) ? value[key] : null) : plainShape(check, value[key]);
    if (inner === null) return null;
    data[key] = inner;
  }
  return data;
}

/** Model overrides (`models`) as zod gives them back, or null when zod must decide. */
function plainModels(value: unknown): Record<string, unknown> | null {
  if (!isPlainObject(value)) return null;
  const data: Record<string, unknown> = {};
  for (const [name, override] of Object.entries(value)) {
    const plain = plainShape(MODEL_OVERRIDE_SHAPE, override);
    if (plain === null) return null;
    data[name] = plain;
  }
  return data;
}

/**
 * `value` is what zod's schema for `spec` (config-schema.ts valueSchema) accepts, told without
 * zod; false means "not sure", and zod decides (and words the error). zod gives every value back
 * unchanged but model overrides, whose keys it puts in its schema's order (see plainValue).
 */
export function plainlyValidValue(spec: OptionSpec, value: unknown): boolean {
  switch (spec.type) {
    case "boolean":
      return typeof value === "boolean";
    case "number":
      return typeof value === "number" && Number.isFinite(value) && (spec.positive ? value > 0 : value >= 0);
    case "string":
      return typeof value === "string";
    case "list":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "enum":
      return typeof value === "string" && (spec.values ?? []).includes(value);
    case "plugins":
      return Array.isArray(value) && value.every((entry) => (typeof entry === "string" ? entry.length > 0 : plainPluginEntry(entry)));
    case "command-map":
      return typeof value === "string" || (isPlainObject(value) && Object.values(value).every((v) => typeof v === "string"));
    case "object":
      return isPlainObject(value);
    case "models":
      return plainModels(value) !== null;
  }
}

/** A plainly valid value as zod gives it back. */
const plainValue = (spec: OptionSpec | undefined, value: unknown): unknown => (spec?.type === "models" ? plainModels(value) : value);

function plainPluginEntry(entry: unknown): boolean {
  if (!isPlainObject(entry) || Object.keys(entry).some((k) => k !== "path" && k !== "sha256")) return false;
  if (typeof entry.path !== "string" || entry.path.length === 0) return false;
  return entry.sha256 === undefined || (typeof entry.sha256 === "string" && /^[0-9a-f]{64}$/.test(entry.sha256));
}

/**
 * What zod's schema of the whole file gives for `raw` when every key is the table's and every
 * value plainly valid (see plainlyValidValue): the same values in the schema's key order
 * ($schema, then the table's); null when zod must decide.
 */
export function plainData(raw: Record<string, unknown>, table: OptionTable): Record<string, unknown> | null {
  const specs = configKeys(table);
  const byKey = new Map(specs.map((spec) => [spec.key, spec]));
  const plain = Object.entries(raw).every(([key, value]) => {
    if (value === undefined) return key === "$schema" || byKey.has(key);
    if (key === "$schema") return typeof value === "string";
    const spec = byKey.get(key);
    return spec !== undefined && plainlyValidValue(spec, value);
  });
  if (!plain) return null;
  const data: Record<string, unknown> = {};
  for (const key of ["$schema", ...specs.map((spec) => spec.key)]) if (raw[key] !== undefined) data[key] = plainValue(byKey.get(key), raw[key]);
  return data;
}

function expectedText(spec: OptionSpec | undefined): string | undefined {
  if (!spec) return undefined;
  switch (spec.type) {
    case "boolean":
      return "true or false";
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "list":
      return "a list of strings";
    case "enum":
      return `one of ${spec.values?.map((v) => `"${v}"`).join(", ")}`;
    case "models":
      return "an object of model name → { contextWindow, maxOutput, prices, editFormat, prompting, ... }";
    case "plugins":
      return 'a list of "./path.ts" or { "path": "./path.ts", "sha256": "<hex>" }';
    case "command-map":
      return 'a command, or an object of language → command (e.g. { "python": "ruff check" })';
    case "object":
      return "an object";
  }
}

function typeOfJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** jsonc-parser's error codes, in words. */
function jsonProblem(code: string): string {
  const words: Record<string, string> = {
    InvalidSymbol: "unexpected character",
    InvalidNumberFormat: "malformed number",
    PropertyNameExpected: "expected a key in double quotes",
    ValueExpected: "expected a value",
    ColonExpected: 'expected ":" after the key',
    CommaExpected: 'expected "," between entries',
    CloseBraceExpected: 'expected "}" to close the object',
    CloseBracketExpected: 'expected "]" to close the list',
    EndOfFileExpected: "unexpected text after the end of the object",
    InvalidCommentToken: "malformed comment",
    UnexpectedEndOfComment: "comment never closed",
    UnexpectedEndOfString: "string never closed",
    UnexpectedEndOfNumber: "number cut off",
    InvalidUnicode: "invalid \\u escape",
    InvalidEscapeCharacter: "invalid escape character",
    InvalidCharacter: "invalid character in a string",
  };
  return words[code] ?? code;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function nodeLine(text: string, tree: Node | undefined, path: (string | number)[]): number {
  if (!tree) return 1;
  for (let n = path.length; n >= 0; n--) {
    const node = findNodeAtLocation(tree, path.slice(0, n));
    if (node) return lineAt(text, node.parent?.type === "property" ? node.parent.offset : node.offset);
  }
  return 1;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

function closestKey(key: string, table: OptionTable): string | undefined {
  const keys = configKeys(table).map((s) => s.key);
  const lower = key.toLowerCase().replace(/[-_]/g, "");
  return keys.find((k) => k.toLowerCase() === lower) ?? keys.find((k) => distance(k.toLowerCase(), lower) <= 2);
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * Parse and validate one config file's text against `table`. Every problem becomes one line
 * `file:line: key.path: what was expected`; all lines go in one ConfigError. With `deferUnknown`
 * (plugins not loaded yet), a top-level key the table lacks is kept in `pending` for
 * `settlePending` instead: a plugin may declare it.
 */
export function parseConfigText(text: string, file: string, kind: LayerKind, cwd: string | undefined, table: OptionTable, deferUnknown = false): ConfigLayer {
  const shown = displayPath(file, cwd);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  if (errors.length) {
    const first = errors[0]!;
    const line = lineAt(text, first.offset);
    const column = first.offset - text.lastIndexOf("\n", first.offset - 1);
    throw new ConfigError(`${shown}:${line}: invalid JSON at column ${column}: ${jsonProblem(printParseErrorCode(first.error))} (fix the file; comments and trailing commas are allowed)`);
  }
  const raw: unknown = tree ? nodeValue(tree) : {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new ConfigError(`${shown}:1: a config file must hold a JSON object, got ${typeOfJson(raw)}`);
  const plain = plainData(raw as Record<string, unknown>, table);
  const result = plain ? { success: true as const, data: plain } : schemas().configSchema(table).safeParse(raw);
  const problems: string[] = [];
  const pending: Record<string, { value: unknown; line: number }> = {};
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path as (string | number)[];
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          const line = nodeLine(text, tree, [...path, key]);
          const where = pathText([...path, key]);
          if (path.length === 0 && deferUnknown) {
            pending[key] = { value: (raw as Record<string, unknown>)[key], line };
          } else if (path.length === 0) {
            problems.push(unknownKeyProblem(`${shown}:${line}`, key, table));
          } else {
            problems.push(`${shown}:${line}: unknown key "${where}"`);
          }
        }
        continue;
      }
      const line = nodeLine(text, tree, path);
      const spec = path.length === 1 ? table.byKey.get(String(path[0])) : undefined;
      const value = path.reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string | number, unknown>)[k] : undefined), raw);
      problems.push(valueProblem(`${shown}:${line}`, path, spec, value, issue.message));
    }
  }
  const data = (result.success ? result.data : strictlyKnown(raw as Record<string, unknown>, table)) as Record<string, unknown>;
  if (isProjectLayer(kind)) {
    for (const spec of configKeys(table)) {
      if (spec.notInProject && data[spec.key] !== undefined) problems.push(notInProjectProblem(`${shown}:${nodeLine(text, tree, [spec.key])}`, spec));
    }
  }
  if (problems.length) throw new ConfigError(problems.join("\n"));
  const values: Record<string, unknown> = {};
  const lines: Record<string, number> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === "$schema" || value === undefined || key in pending) continue;
    values[key] = key === "plugins" ? (value as (string | { path: string; sha256?: string })[]).map((p) => toPluginRef(p, file)) : value;
    lines[key] = nodeLine(text, tree, [key]);
  }
  return { kind, file, text, values, lines, ...(Object.keys(pending).length ? { pending } : {}) };
}

/** The keys of a file whose only problems were deferred unknown keys: its known keys, validated. */
function strictlyKnown(raw: Record<string, unknown>, table: OptionTable): Record<string, unknown> {
  const known = Object.fromEntries(Object.entries(raw).filter(([key]) => key === "$schema" || table.byKey.has(key)));
  const result = schemas().configSchema(table).safeParse(known);
  return result.success ? (result.data as Record<string, unknown>) : {};
}

function unknownKeyProblem(where: string, key: string, table: OptionTable): string {
  const hint = closestKey(key, table);
  return `${where}: unknown key "${key}"${hint ? ` (did you mean "${hint}"?)` : ""}; expected one of the keys in \`coder config schema\``;
}

function valueProblem(where: string, path: readonly (string | number)[], spec: OptionSpec | undefined, value: unknown, fallback: string): string {
  const expected = spec?.type === "number" && typeof value === "number" ? (spec.positive ? `a number of ${spec.positive} above 0` : "a number of 0 or more") : expectedText(spec);
  return `${where}: ${pathText(path)}: ${expected ? `expected ${expected}, got ${typeOfJson(value)}` : fallback}`;
}

function notInProjectProblem(where: string, spec: OptionSpec): string {
  const use = spec.secret ? "the environment, the repository's .env or the global config" : "the command line, the environment or the global config";
  return `${where}: ${spec.key} may not be set in a project config (use ${use})`;
}

/**
 * Once every plugin has declared its options: each layer's `pending` keys checked against the
 * whole table, as `parseConfigText` checks the kernel's (value, project rule); a key nobody
 * declares is the unknown-key error, its suggestion drawn from every option. Moves the values
 * into the layers; throws one ConfigError listing every problem.
 */
export function settlePending(layers: ConfigLayer[], table: OptionTable, cwd?: string): void {
  const problems: string[] = [];
  for (const layer of layers) {
    if (!layer.pending) continue;
    const shown = displayPath(layer.file, cwd);
    for (const [key, { value, line }] of Object.entries(layer.pending)) {
      const spec = table.byKey.get(key);
      const where = `${shown}:${line}`;
      if (!spec || spec.cliOnly) {
        problems.push(unknownKeyProblem(where, key, table));
        continue;
      }
      const checked = plainlyValidValue(spec, value) ? { success: true as const, data: plainValue(spec, value) } : schemas().valueSchema(spec).safeParse(value);
      if (!checked.success) problems.push(valueProblem(where, [key], spec, value, checked.error.issues[0]?.message ?? "invalid value"));
      else if (spec.notInProject && isProjectLayer(layer.kind)) problems.push(notInProjectProblem(where, spec));
      else {
        layer.values[key] = checked.data;
        layer.lines[key] = line;
      }
    }
    delete layer.pending;
  }
  if (problems.length) throw new ConfigError(problems.join("\n"));
}

function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object":
      return Object.fromEntries((node.children ?? []).map((p) => [p.children![0]!.value as string, p.children![1] ? nodeValue(p.children![1]) : undefined]));
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

function toPluginRef(entry: string | { path: string; sha256?: string }, file: string): PluginRef {
  return typeof entry === "string" ? { path: entry, source: file } : { path: entry.path, sha256: entry.sha256, source: file };
}

/** Read and validate a config file; messages show its path relative to `cwd` (where coder runs). */
export function readConfigFile(file: string, kind: LayerKind, cwd: string, table: OptionTable, deferUnknown = false): ConfigLayer {
  const read = readCappedText(file, { maxBytes: SMALL_FILE_BYTES, name: displayPath(file, cwd) });
  if (read.text === null) throw new ConfigError(read.problem ? `${read.problem}: cannot use it as a config file` : `${displayPath(file, cwd)}: cannot read config file (not found)`);
  return parseConfigText(read.text, file, kind, cwd, table, deferUnknown);
}
