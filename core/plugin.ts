// The public plugin API: every type a plugin (built-in or user) sees.
// Types only: nothing here exists at run time, so a plugin file imports it with
// `import type` and needs neither coder's sources nor node_modules to run.

/** The plugin API version this kernel implements. A plugin declares the version it was written for. */
export type ApiVersion = 1;

/**
 * What a plugin module's default export is: a plugin object, or a function of the
 * kernel's capabilities that returns one.
 *
 * @example
 * import type { Plugin } from "./coder-plugin";
 * export default ((kit) => ({
 *   apiVersion: 1,
 *   name: "git-branch",
 *   context: [{ name: "git-branch", stability: "session", provide: async () => {
 *     const r = await kit.run(["git", "branch", "--show-current"]);
 *     return { text: `Current git branch: ${r.stdout.trim()}` };
 *   } }],
 * })) satisfies Plugin;
 */
export type Plugin = PluginObject | ((kit: Kit) => PluginObject | Promise<PluginObject>);

/** One plugin: a named bundle of edit formats, context providers, model adapters, slash commands and tool providers. */
export interface PluginObject {
  apiVersion: ApiVersion;
  /** Unique plugin name, shown in `coder plugins` and in error messages. */
  name: string;
  /** Allow this plugin's items to replace already registered items of the same name (e.g. a better `diff` format). */
  override?: boolean;
  formats?: EditFormat[];
  context?: ContextProvider[];
  models?: ModelAdapter[];
  commands?: SlashCommand[];
  /** Read-only tools the model may call to gather information before it answers (see `ToolProvider`). */
  tools?: ToolProvider[];
}

// ─── Messages ────────────────────────────────────────────────────────────────

export type Role = "system" | "user" | "assistant" | "tool";

/**
 * A chat message as coder keeps it; adapters translate it to their wire format.
 *
 * `content` is always the message's text. A message that also carries images or
 * documents lists them in `parts` (text parts included, in order); its `content`
 * is then the text of those text parts, so code written for text-only messages
 * keeps working. Adapters that know parts send `parts`; the kernel refuses to send
 * an image or a document to a model whose info does not say it takes them.
 *
 * @example
 * const m: ChatMessage = {
 *   role: "user",
 *   content: "What is wrong with this dialog?",
 *   parts: [
 *     { type: "text", text: "What is wrong with this dialog?" },
 *     { type: "image", mediaType: "image/png", data: base64, width: 1280, height: 720, name: "shot.png" },
 *   ],
 * };
 */
export interface ChatMessage {
  role: Role;
  content: string;
  /** The message as text, image and document parts (user messages only); absent for plain text. */
  parts?: ContentPart[];
  /** Assistant messages that called tools. */
  toolCalls?: ToolCall[];
  /** Tool messages: the id of the call this message answers. */
  toolCallId?: string;
  /** Set by the kernel on the last message of a cacheable prefix (for providers with explicit breakpoints). */
  cacheBreakpoint?: boolean;
}

/** The image formats every provider with vision takes. */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** One part of a message: text, an image, or a document (a PDF). Binary data travels base64-encoded. */
export type ContentPart = TextPart | ImagePart | DocumentPart;

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImagePart {
  type: "image";
  mediaType: ImageMediaType;
  /** The image file's bytes, base64. */
  data: string;
  /** Pixels; token counts follow the provider's rules from them (unknown: counted as the largest image the provider keeps). */
  width?: number;
  height?: number;
  /** Where it came from (a path), for messages and `/tokens`. */
  name?: string;
}

export interface DocumentPart {
  type: "document";
  mediaType: "application/pdf";
  /** The file's bytes, base64. */
  data: string;
  /** The file name sent with it (providers require one), e.g. "spec.pdf". */
  name: string;
  /** Page count when known (token estimates are per page). */
  pages?: number;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON arguments string, as the model produced it. */
  arguments: string;
}

/** A function offered to the model as a native tool (JSON Schema parameters). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export type JsonSchema = { [key: string]: unknown };

/** The model's complete reply to one request. */
export interface ModelReply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other";

// ─── Edit formats ────────────────────────────────────────────────────────────

/**
 * An edit format: how the model is told to write edits, and how its reply is
 * turned into changes. `parse` is pure; `apply` changes only the staged
 * workspace it is given: the kernel gates, dirty-commits and writes afterwards.
 *
 * @example
 * const whole: EditFormat<WholeEdit> = {
 *   name: "whole",
 *   summary: "the full new content of each file",
 *   prompts: (ctx) => ({ system: "...", examples: [], reminder: "..." }),
 *   parse: (reply, ctx) => ({ edits: [...], shell: [] }),
 *   apply: (edits, ws) => edits.map((e) => { ws.write(e.path, e.content); return { edit: e, status: "applied", path: e.path }; }),
 *   report: (outcomes, ctx) => kit.reports.failedEdits(outcomes, ctx),
 * };
 */
export interface EditFormat<E extends Edit = Edit> {
  /** The `--edit-format` name. */
  name: string;
  /** One line for `coder plugins` and `/help`. */
  summary: string;
  /** System rules, few-shot examples and reminder, for the current chat. */
  prompts(ctx: PromptContext): FormatPrompts;
  /**
   * Turn a reply into edits and shell suggestions. Throws `kit.FormatError` (message
   * written for the model: what was wrong, how to fix it) when the reply is malformed.
   */
  parse(reply: ModelReply, ctx: ParseContext): ParsedReply<E>;
  /** Apply edits to the staged workspace; one outcome per edit, never throws for a mismatch. */
  apply(edits: E[], ws: Workspace): EditOutcome<E>[] | Promise<EditOutcome<E>[]>;
  /** The repair-grade reflection text for a reply in which some outcome is not `applied`. */
  report(outcomes: EditOutcome<E>[], ctx: ReportContext): string;
  /** Native tool functions sent with the request (formats carried by tool calls). */
  tools?: ToolSpec[];
  /**
   * `"editor"`: the reply is a plan, handed as the request to an editor coder
   * (the editor model and format). `"none"`: answers only, never edits.
   * `"files"`: the reply names the repository files to work on; the kernel adds them to the chat.
   * Default: the format edits files itself.
   */
  mode?: "edit" | "editor" | "none" | "files";
}

export interface FormatPrompts {
  /** The format's rules; the kernel adds platform facts and the fence note. */
  system: string;
  /** Few-shot examples as alternating user/assistant messages. */
  examples: ChatMessage[];
  /** A short reminder placed after the current request. */
  reminder: string;
}

export interface PromptContext {
  /** The fence the model must use: opening and closing markers, e.g. ["```", "```"]. */
  fence: Fence;
  /** True for the `editor-` variant (architect's editor): edit only, no explanations. */
  editorOnly: boolean;
  /** e.g. "linux x64, bash". */
  platform: string;
  /** Chat files (repository-relative), for prompts that name them. */
  chatFiles: readonly string[];
  /** May the model suggest shell commands? */
  shellSuggestions: boolean;
}

export type Fence = readonly [open: string, close: string];

export interface ParseContext {
  fence: Fence;
  chatFiles: readonly string[];
  /** Map a path as the model wrote it onto a repository path (decoration stripped, basename/suffix/close match among chat files). */
  resolvePath(raw: string): string;
  /**
   * Every file of the repository (tracked, or all without git), repository-relative: lets a
   * parser tell a path from prose (e.g. paths with spaces are plausible only where some exist).
   * Optional (additive to API version 1): absent when the kernel does not say.
   */
  repoFiles?: readonly string[];
}

export interface ParsedReply<E extends Edit = Edit> {
  edits: E[];
  /** Shell commands the model suggested (run only after the gate allows). */
  shell: ShellSuggestion[];
}

export interface ShellSuggestion {
  command: string;
}

/** The fields every format's edit carries; formats add their own. */
export interface Edit {
  /** Repository-relative target path (already resolved). */
  path: string;
  /** The block as the model wrote it, echoed in failure reports. */
  source: string;
  /** Set when the edit came from a native tool call. */
  toolCallId?: string;
  /**
   * Every repository path the edit writes or deletes, when that is more than `path`
   * (e.g. `[path, newPath]` for a rename). The kernel gates each one as it gates `path`
   * (chat files allowed, other files asked, read-only and outside paths refused). Absent: `[path]`.
   */
  paths?: readonly string[];
}

/**
 * A staged view of the repository for `apply`. Reads see earlier staged writes;
 * nothing reaches the disk until the kernel has validated every edit of the reply.
 */
export interface Workspace {
  /** Files in the chat (editable), repository-relative. */
  readonly chatFiles: readonly string[];
  /** Text of a file (staged if written), or null when it does not exist. */
  read(path: string): string | null;
  exists(path: string): boolean;
  write(path: string, content: string): void;
  remove(path: string): void;
  /** Why `path` may not be written (outside the repository, .git/, binary, ignored), or null. Formats turn it into a `refused` outcome. */
  check?(path: string): string | null;
}

export type EditOutcome<E extends Edit = Edit> =
  | { status: "applied"; edit: E; path: string; rung?: MatchRung; note?: string }
  | { status: "failed"; edit: E; path: string; reason: EditFailureReason; detail: string; match?: MatchFailure }
  | { status: "skipped"; edit: E; path: string; detail: string };

export type EditFailureReason = MatchFailureReason | "missing-file" | "refused" | "invalid";

export interface ReportContext {
  fence: Fence;
  /** How many edits of this reply were applied (they must not be sent again). */
  appliedCount: number;
}

// ─── The shared matcher ──────────────────────────────────────────────────────

/**
 * Which rung of the matching ladder found the place, strictest first. `blank-lines`: SEARCH
 * differs from the file only in blank lines (its non-blank lines match one place).
 */
export type MatchRung = "exact" | "trailing-whitespace" | "indentation" | "leading-blank" | "blank-lines" | "elision" | "fuzzy";

/**
 * Limits on one `Matcher.replace` call (both optional, both additive to API version 1).
 *
 * @example
 * kit.matcher.replace(text, search, replace, { loosest: "exact" }); // exact copies only
 * kit.matcher.replace(text, search, replace, { at: 42 });           // only the match that starts on line 42
 */
export interface MatchOptions {
  /** Climb the ladder no further than this rung. */
  loosest?: MatchRung;
  /** 1-based line the match must start on (e.g. one of an `ambiguous` failure's candidates). */
  at?: number;
}

export type MatchFailureReason = "not-found" | "ambiguous" | "already-applied" | "no-op";

/** A region of the file close to (or matching) the SEARCH text. Lines are 1-based, inclusive. */
export interface MatchCandidate {
  startLine: number;
  endLine: number;
  /** 0..1, 1 = identical. */
  similarity: number;
  text: string;
}

export interface MatchSuccess {
  status: "applied";
  content: string;
  rung: MatchRung;
  startLine: number;
  endLine: number;
}

export interface MatchFailure {
  status: "failed";
  reason: MatchFailureReason;
  /** Closest regions (not-found) or every matching location (ambiguous). */
  candidates: MatchCandidate[];
}

export type MatchResult = MatchSuccess | MatchFailure;

export interface Matcher {
  /** Every rung of the ladder, strictest first (for `MatchOptions.loosest`, and to rank the rungs edits used). */
  readonly rungs: readonly MatchRung[];
  /** Replace the whole-line text `search` by `replace` in `content`, climbing the ladder (as far as `options` allow). */
  replace(content: string, search: string, replace: string, options?: MatchOptions): MatchResult;
  /** Render a failure as text for the model: the rule broken and "did you mean these lines". */
  explain(failure: MatchFailure, search: string, replace: string, path: string): string;
}

// ─── Context providers ───────────────────────────────────────────────────────

/**
 * Adds context to every request. The kernel orders blocks most-stable first so
 * provider prompt caches hit: `static` (e.g. conventions files) and `session`
 * (e.g. the repo map) come before the history, `turn` after the chat files.
 */
export interface ContextProvider {
  name: string;
  stability: "static" | "session" | "turn";
  provide(turn: TurnContext): Promise<ContextBlock | null> | ContextBlock | null;
  /**
   * Called with each request the user types (not with reflections), before its prompt is
   * built: the provider may ask the user and change the chat, e.g. offer to add the web
   * pages the message names. Optional.
   *
   * @example
   * onMessage: async (message, session) => {
   *   if (/\bTODO\b/.test(message) && (await session.confirm?.("Add TODO.md to the chat?"))) await session.addReadOnly(["TODO.md"]);
   * },
   */
  onMessage?(message: string, session: Session): Promise<void> | void;
}

export interface ContextBlock {
  /** Text sent as a user message (with a short assistant acknowledgement). */
  text: string;
  /** A label for `/tokens`. */
  label?: string;
  /**
   * Images or documents sent with the block: the user message carries `text` as its first
   * part, then these. The kernel checks the model takes them before any request is made.
   */
  parts?: ContentPart[];
}

export interface TurnContext {
  root: string;
  chatFiles: readonly string[];
  readOnlyFiles: readonly string[];
  /** The current request's text ("" when rendering outside a request, e.g. `coder map`). */
  message: string;
  /** Repository files and identifiers named in the chat so far. */
  mentionedFiles: readonly string[];
  mentionedIdents: readonly string[];
  model: ModelInfo;
  /** Effective options (read-only), e.g. `options.mapTokens`. */
  options: Readonly<Record<string, unknown>>;
  interactive: boolean;
  signal: AbortSignal;
}

// ─── Model adapters ──────────────────────────────────────────────────────────

/** Talks to one family of model endpoints. */
export interface ModelAdapter {
  name: string;
  /** Does this adapter serve `model` (as given to `--model`, e.g. "openai/gpt-4.1")? */
  matches(model: string): boolean;
  /** What is known of the model; undefined when the adapter's table lacks it. */
  info(model: string): ModelInfo | undefined;
  /** Every model the adapter's table knows, for `coder models`. */
  list?(): ModelInfo[];
  /**
   * The model to use when nothing names one, from the API keys present in `env` (the process
   * and the repository's `.env`), e.g. ANTHROPIC_API_KEY set → an Anthropic model; null when
   * none of its keys is set.
   *
   * @example
   * defaultModel: (env) => (env.MY_API_KEY ? "my/model-large" : null)
   */
  defaultModel?(env: Readonly<Record<string, string | undefined>>): string | null;
  /** The variables `defaultModel` looks for, named in the warning when no adapter finds a key. */
  defaultModelKeys?: readonly string[];
  /** Stream one reply. Throws an Error with a one-line message when the request finally fails. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  /**
   * Speech to text through the provider of `request.model` (an OpenAI-compatible
   * `/audio/transcriptions` endpoint). Throws an Error with a one-line message on failure. Optional.
   */
  transcribe?(request: TranscriptionRequest, signal: AbortSignal): Promise<string>;
}

/** Audio to transcribe, for `ModelAdapter.transcribe` and `kit.transcribe`. */
export interface TranscriptionRequest {
  /** The chat model whose provider transcribes (the adapter picks that provider's speech model). */
  model: string;
  /** The recording's bytes. */
  audio: Uint8Array;
  /** File name whose extension names the format, e.g. "recording.wav". */
  fileName: string;
  /** ISO-639-1 language of the speech, e.g. "en"; absent: detected. */
  language?: string;
  apiBase?: string;
  apiKey?: string;
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
}

export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  stream: boolean;
  maxTokens?: number;
  temperature?: number;
  /** `--reasoning-effort`: sent only to models whose capabilities say they take it. */
  reasoningEffort?: string;
  /** `--thinking-tokens`: the thinking budget, sent only to models that take one (0 turns thinking off). */
  thinkingTokens?: number;
  /** False: accept any TLS certificate (`--no-verify-ssl`). */
  verifySsl?: boolean;
  /** From `--api-base` / `--api-key`; the adapter falls back to its provider table and env. */
  apiBase?: string;
  apiKey?: string;
  /** Environment (API keys from the process and the repository's `.env`). */
  env: Readonly<Record<string, string | undefined>>;
  /** Give up after this long, retries and their waits included (`--timeout` seconds × 1000); the adapter's default otherwise. */
  timeoutMs?: number;
}

export type ModelEvent =
  | { type: "text"; text: string }
  | { type: "tool-call"; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: "usage"; promptTokens: number; completionTokens: number; cachedTokens: number; cacheWriteTokens?: number }
  | { type: "finish"; reason: FinishReason }
  /** The adapter is retrying (a 429, 5xx, timeout or cut stream); text streamed so far is void. */
  | { type: "retry"; attempt: number; delayMs: number; reason: string };

export interface ModelInfo {
  /** Full name, e.g. "openai/gpt-4.1". */
  name: string;
  contextWindow: number;
  maxOutput: number;
  /** USD per million tokens. */
  prices: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  editFormat: string;
  weakModel?: string;
  editorModel?: string;
  editorFormat?: string;
  capabilities: {
    tools: boolean;
    systemPrompt: boolean;
    temperature: boolean;
    reasoningEffort: boolean;
    /** The `reasoningEffort` levels it accepts, when not every one of low, medium, high. */
    reasoningLevels?: readonly string[];
    /** Takes a thinking-token budget (`--thinking-tokens`). */
    thinkingTokens?: boolean;
    /** Can continue a reply cut by `length` from an assistant prefill. */
    prefill: boolean;
    /** How prompt caching works: automatic prefix cache, explicit breakpoints, or none. */
    cache: "auto" | "breakpoints" | "none";
    /** Takes image parts (PNG, JPEG, GIF, WebP). Absent: no. */
    images?: boolean;
    /** Takes PDF document parts. Absent: no. */
    pdf?: boolean;
  };
  /** How the provider sizes and counts images; absent: OpenAI's rules. */
  imageRules?: ImageRules;
  /** js-tiktoken encoding name; o200k_base when absent. */
  encoding?: string;
  /** True when the model was not in any table and defaults were used. */
  unknown?: boolean;
}

/**
 * How a provider sizes and bills images, as it publishes them. Images larger than it
 * keeps are downscaled before sending; token counts (`/tokens`) follow `tokens`.
 *
 * @example
 * // Anthropic: at most 1568 pixels on the long side and about 1.19 megapixels, width × height / 750 tokens.
 * const rules: ImageRules = { tokens: "area", maxEdge: 1568, maxPixels: 1_192_464, maxBytes: 3_750_000 };
 */
export interface ImageRules {
  /** OpenAI's 512-pixel tiles (85 + 170 a tile), Anthropic's width × height / 750, Gemini's 768-pixel tiles (258 a tile). */
  tokens: "tiles" | "area" | "gemini-tiles";
  /** The largest side the provider keeps; larger images are scaled down to fit a square of this size. */
  maxEdge: number;
  /** Then the shorter side is scaled down to this (OpenAI: 768). */
  maxShortEdge?: number;
  /** Then the image is scaled down to at most this many pixels (Anthropic). */
  maxPixels?: number;
  /** The largest image file the provider accepts, in bytes. */
  maxBytes: number;
}

// ─── Slash commands ──────────────────────────────────────────────────────────

/**
 * A `/name arg` command of the REPL.
 *
 * @example
 * const hello: SlashCommand = { name: "hello", summary: "say hello", run: (arg, s) => s.print(`hello ${arg}`) };
 */
export interface SlashCommand {
  name: string;
  summary: string;
  usage?: string;
  complete?(arg: string, session: Session): string[];
  run(arg: string, session: Session): void | Promise<void>;
  /**
   * Also answer `/NAME` for names this command claims, when no command has that name nor
   * starts with it (e.g. the MCP plugin's `/server:prompt`). `run` then gets "NAME arg".
   * Optional (additive to API version 1).
   *
   * @example
   * matches: (name) => name.startsWith("docs:"),
   * run: (line, s) => { const [name, ...args] = line.split(" "); ... },
   */
  matches?(name: string, session: Session): boolean;
}

/** What a slash command may do with the running session. */
export interface Session {
  readonly root: string;
  /** The directory paths the user types (`/save FILE`) are relative to. */
  readonly cwd: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly model: ModelInfo;
  readonly editFormat: string;
  chatFiles(): readonly string[];
  readOnlyFiles(): readonly string[];
  /** Add files to the chat (editable); returns the repository paths added, with errors printed. */
  addFiles(paths: string[]): Promise<string[]>;
  addReadOnly(paths: string[]): Promise<string[]>;
  dropFiles(paths: string[]): string[];
  /** Send a request through the turn loop, optionally with another edit format for this one request. */
  send(message: string, editFormat?: string): Promise<void>;
  setModel(name: string): void;
  setEditFormat(name: string): void;
  clearHistory(): void;
  /** The token use of the next request, per chunk. */
  tokenReport(): Promise<string>;
  /** Context providers' blocks, refreshed now (e.g. `/map-refresh`). */
  refreshContext(name?: string): Promise<string>;
  git: SessionGit | null;
  /** Run a shell command (after the gate) and optionally add its output to the chat. */
  runShell(command: string): Promise<{ code: number; output: string }>;
  print(text: string): void;
  warn(text: string): void;
  commands(): readonly SlashCommand[];
  formats(): readonly string[];
  exit(): void;
  /**
   * Ask the user a yes/no question through the gate (Yes / No / Don't ask again; yes under
   * --yes-always, no when nobody can answer). Questions with the same `key` share one
   * remembered "Don't ask again" (default: the question itself). Optional: a kernel without it answers nothing.
   */
  confirm?(question: string, options?: { key?: string }): Promise<boolean>;
  /** Put text into the conversation as context for the next request without sending one (e.g. a command's output). */
  addToChat?(text: string): void;
  /**
   * Offer a finished command's output, as for the commands the model suggests: when it failed,
   * ask whether to send it to the model as a fix request (sent now); otherwise ask whether to
   * add it to the chat. Optional: a kernel without it offers nothing.
   */
  offerOutput?(command: string, result: { code: number; output: string }): Promise<void>;
  /** What the last reply changed, whether it was committed or not (`/diff`); optional. */
  lastDiff?(): Promise<string>;
  /** True when a person answers questions (the REPL); optional. */
  readonly interactive?: boolean;
  /**
   * Put text in the REPL's input line for the user to edit and send (e.g. a voice
   * transcription); without an input line (one-shot modes) it is printed. Optional.
   */
  setInput?(text: string): void;
  /** The text of the model's last reply in this chat, or null before the first (`/copy`); optional. */
  lastReply?(): string | null;
  /** The messages of the next request, chunk by chunk in the order they are sent (`/copy-context`); optional. */
  promptChunks?(): Promise<PromptChunk[]>;
  /** Run a `/name arg` line as if typed (e.g. `/load` replaying a saved chat). */
  runCommand?(line: string): Promise<void>;
  /** The model each role uses now: main, weak (commit messages, summaries), editor (architect's edits). */
  modelFor?(role: "main" | "weak" | "editor"): string;
  /**
   * Change a setting of the option table for the rest of the session, from its text as typed
   * (e.g. `setOption("reasoningEffort", "high", "/reasoning-effort")`); a bad value throws a
   * one-line error naming `where` (default: the setting's flag).
   */
  setOption?(key: string, value: string | undefined, where?: string): void;
  /** Every setting with its effective value and where it came from, as `coder config show` lists them. */
  settings?(): readonly { key: string; value: unknown; source: string }[];
  /** Every model the adapters' tables know (and config `models`), for `/models`. */
  listModels?(): readonly ModelInfo[];
  /** Check files as after an edit, but whole: the syntax check, then the lint command(s). */
  lint?(paths: string[], onOutput?: (text: string) => void): Promise<{ ok: boolean; output: string }>;
  /** The last error the session reported (a failed request, a command's problem), or null. */
  lastError?(): string | null;
  /**
   * Run a command the user typed (no gate), its output shown as it arrives and, in a terminal,
   * its stdin the terminal's. Optional: without it, run through `kit.run` and print the output.
   */
  runUserCommand?(command: string): Promise<{ code: number; output: string }>;
}

/** One chunk of a request's prompt, as `/tokens` lists them. */
export interface PromptChunk {
  kind: "system" | "examples" | "static" | "session" | "history" | "chat-files" | "turn" | "current";
  label: string;
  messages: ChatMessage[];
}

export interface SessionGit {
  /** Undo coder's last commit when safe; returns what was done or why it refused. */
  undo(): Promise<{ ok: boolean; message: string }>;
  /** The diff of the last reply's changes. */
  lastDiff(): Promise<string>;
  commitPending(message?: string): Promise<{ ok: boolean; message: string }>;
  run(args: string[]): Promise<{ code: number; output: string }>;
}

// ─── Tool providers ──────────────────────────────────────────────────────────

/**
 * Offers the model tools to call while it gathers information, before it answers in the
 * edit format (the gathering step of core/chat/tool-calls.ts). Calls go through the gate: the
 * user is asked (Yes / No / Don't ask again for this tool) unless the tool says `confirm: "auto"`.
 * Results are capped in size and sent back; the model answers once it has what it needs, within
 * `--max-tool-calls`. Tools should only read: edits still come in the edit format.
 * Optional (additive to API version 1).
 *
 * @example
 * const todos: ToolProvider = {
 *   name: "todos",
 *   tools: () => [{
 *     spec: { name: "list_todos", description: "List the TODO comments of the repository", parameters: { type: "object", properties: {} } },
 *     confirm: "auto",
 *     call: async () => ({ text: (await kit.run(["git", "grep", "-n", "TODO"])).stdout }),
 *   }],
 * };
 */
export interface ToolProvider {
  name: string;
  /**
   * The tools on offer for this request ([] for none). Called before each request of a turn; a
   * provider that must start something to know its tools should cache them. Names must be unique
   * across providers and must not clash with the edit format's tools (`[A-Za-z0-9_-]`, at most 64).
   */
  tools(turn: TurnContext): Promise<ProvidedTool[]> | ProvidedTool[];
  /**
   * `coder doctor`: check what the tools need (e.g. that each MCP server starts), one row per
   * thing checked, with the effective options. Optional.
   */
  check?(options: Readonly<Record<string, unknown>>): Promise<ToolCheck[]>;
}

/** One row of a tool provider's `coder doctor` check. */
export interface ToolCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** One tool a provider offers. */
export interface ProvidedTool {
  spec: ToolSpec;
  /** Where the tool comes from, shown when the user is asked, e.g. "MCP server docs". */
  origin?: string;
  /** "ask" (default): the gate asks before each call; "auto": the call runs without a question. */
  confirm?: "ask" | "auto";
  /** Run one call; a failure the model should hear about is `{ text, isError: true }`, not a throw. */
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
}

/** What a tool call returned, as text for the model. */
export interface ToolResult {
  text: string;
  isError?: boolean;
}

// ─── The kit: capabilities handed to plugins ─────────────────────────────────

export interface Kit {
  apiVersion: ApiVersion;
  /** coder's version. */
  version: string;
  /** Repository root (or the current directory without git). */
  root: string;
  /** The directory coder was started in (for ACP, the session's folder): paths the user types are relative to it. */
  cwd: string;
  /** The shared SEARCH/REPLACE matcher: every format's edits land through it. */
  matcher: Matcher;
  /** Standard failure reports, so formats render them alike. */
  reports: Reports;
  /** Throw this from `parse` for a malformed reply; its message goes to the model. */
  FormatError: new (message: string) => Error;
  tokens: {
    /** Tokens of `text` for the current model's encoding (sampled for very large texts). */
    count(text: string): number;
  };
  /** Images and documents: what a file is, how a provider sizes an image, what parts cost. */
  media: {
    /** The media type of a file from its first bytes (PNG, JPEG, GIF, WebP or PDF), or null (also when unreadable). */
    typeOf(absolutePath: string): ImageMediaType | "application/pdf" | null;
    /** The size a provider scales a width × height image to before looking at it, never larger (OpenAI's rules when absent). */
    fit(width: number, height: number, rules?: ImageRules): { width: number; height: number };
    /** Prompt tokens of image and document parts by the rules (text parts count nothing here). */
    tokens(parts: readonly ContentPart[], rules?: ImageRules): number;
  };
  files: {
    /** Text of a repository file, or null when it is missing, binary or outside the repository. */
    read(path: string): Promise<string | null>;
    /** Files git tracks (or every file without git), repository-relative, honouring `.coderignore`. */
    list(): Promise<string[]>;
    /** Repository-relative path → absolute path (refuses paths outside the repository). */
    absolute(path: string): string;
    /**
     * Bytes of a file (relative to the root, or absolute: read-only files may live anywhere) through
     * coder's one capped reader: a regular file only (a link to /dev/zero, a FIFO or a device is
     * refused before a byte is read), at most `maxBytes` (default `--max-file-size`). A refusal is
     * a value whose `problem` names the file and what is wrong. Optional (additive to API version 1).
     *
     * @example
     * const r = kit.files.readBytes?.("logo.png");
     * if (r && !r.ok) session.warn(r.problem);
     */
    readBytes?(path: string, options?: { maxBytes?: number }): { ok: true; bytes: Uint8Array } | { ok: false; missing: boolean; problem: string };
  };
  diff: {
    /** A unified diff of one file's change, for showing. */
    unified(path: string, before: string, after: string): string;
  };
  /**
   * Run a command without a shell (argv) or through the shell (string), in the repository root,
   * through `spawn`: a timeout ends the command's whole process group, not just the shell.
   * `onOutput` sees stdout and stderr as they arrive; `inheritStdin` lets the command read the terminal.
   */
  run(
    command: string[] | string,
    options?: { cwd?: string; timeoutMs?: number; input?: string; inheritStdin?: boolean; onOutput?: (text: string) => void; signal?: AbortSignal },
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * Run argv (no shell) in its own process group: a timeout or an abort sends SIGTERM to the whole
   * group (the command and every process it started), then SIGKILL after `graceMs` (default 2 s).
   * `inheritStdin` keeps the command in coder's group so it can read the terminal. Never throws.
   * Optional (additive to API version 1).
   *
   * @example
   * const r = await kit.spawn?.(["npm", "test"], { timeoutMs: 600_000, signal });
   * if (r?.timedOut) kit.log.warn("npm test timed out; it and its children were stopped");
   */
  spawn?(argv: string[], options?: SpawnOptions): Promise<SpawnResult>;
  log: Logger;
  /** A folder this plugin may keep caches in (`.coder/cache/<plugin>`), created on demand (never through a link). */
  cacheDir(plugin: string): string;
  /**
   * coder's folder in the repository, `.coder/`. A cloned repository decides what is in it, so
   * write there only through these: they check every folder on the way and the file itself,
   * and never write through a link (a planted one is refused with an Error naming it).
   */
  state: {
    /**
     * Replace `.coder/<path>` with `data` (text as UTF-8, or bytes) atomically: an exclusive
     * new temp file, then a rename. Returns the absolute path written.
     * @example kit.state.write("cache/my-plugin/index.json", JSON.stringify(index))
     */
    write(path: string, data: string | Uint8Array): string;
    /**
     * The checked absolute path of `.coder/<path>`, for a file that other code opens and writes
     * in place (a SQLite database): its folders are made and are real folders; the file, and the
     * same name with each of `siblings` appended, are absent or plain files without other links.
     * @example new Database(kit.state.file("cache/my-plugin/db.sqlite", ["-wal", "-shm", "-journal"]), { create: true })
     */
    file(path: string, siblings?: readonly string[]): string;
  };
  /** Model info for any model name, from the adapters and config (defaults for unknown models). */
  modelInfo(model: string): ModelInfo;
  /** Stream a request through the registered adapters (for plugins that call a model themselves). */
  complete(request: Omit<ModelRequest, "env" | "stream">, signal?: AbortSignal): Promise<ModelReply>;
  /**
   * Speech to text through the adapter serving `request.model` (`--api-base` / `--api-key` and
   * the environment's keys apply). Throws an Error with a one-line message when it cannot.
   */
  transcribe(request: Omit<TranscriptionRequest, "env">, signal?: AbortSignal): Promise<string>;
}

/** How `kit.spawn` runs a command. */
export interface SpawnOptions {
  /** Where (default: the repository root). */
  cwd?: string;
  /** The whole environment (default: coder's). */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. */
  input?: string | Uint8Array;
  /** Read the terminal instead (the command then stays in coder's process group). */
  inheritStdin?: boolean;
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL (default 2 s). */
  graceMs?: number;
  signal?: AbortSignal;
  /** Each chunk of stdout and stderr as it arrives. */
  onOutput?: (text: string) => void;
}

/** What `kit.spawn` returns: 124 after a timeout, 130 after an abort, 127 when it could not start. */
export interface SpawnResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** Why the command could not start (not found, not executable); code is then 127. */
  startError?: string;
}

export interface Reports {
  /** Summary of a reply's outcomes: each failure echoed with the matcher's explanation, and the applied ones listed. */
  failedEdits(outcomes: EditOutcome[], ctx: ReportContext): string;
}

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}
