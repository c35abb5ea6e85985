// The public plugin API: every type a plugin (built-in or user) sees.
// Types only: nothing here exists at run time, so a plugin file imports it with
// `import type` and needs neither coder's sources nor node_modules to run.

/**
 * The plugin API versions this kernel loads. A plugin declares the version it was written for:
 * 1 (formats, context, models, commands, tools) or 2 (adds options, subcommands; see the README's
 * table). A version 1 plugin loads unchanged.
 */
export type ApiVersion = 1 | 2;

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
  /**
   * Options this plugin reads (apiVersion 2): each becomes a flag, a CODER_* variable and a config
   * key, shown in `--help`, the config schema, `coder config show` and `/settings` like the
   * kernel's. Read them with `kit.options.get(spec)`.
   */
  options?: readonly PluginOption[];
  /** `coder NAME ...` commands this plugin answers (apiVersion 2), e.g. `coder map`. */
  subcommands?: Subcommand[];
  /**
   * Once every plugin has loaded and options are settled, before any request (apiVersion 2):
   * start what the plugin needs. A throw is reported and the plugin's hooks still run.
   */
  setup?(): void | Promise<void>;
  /**
   * At exit, also on SIGTERM, SIGINT and SIGHUP (apiVersion 2): close what `setup` or later work
   * opened (servers, files, timers). Every plugin's `dispose` runs at once, within a time limit
   * of 3 seconds; one that takes longer is reported and left behind.
   */
  dispose?(): void | Promise<void>;
  /** Before each request goes out, sequential (apiVersion 2): change the messages sent (not the chat's history). */
  onRequest?: Hook<(event: RequestEvent) => HookResult<RequestChange>>;
  /** After each reply has streamed, in parallel (apiVersion 2): observe it. */
  onReply?: Hook<(event: ReplyEvent) => void | Promise<void>>;
  /** Before each edited file is written, sequential (apiVersion 2): refuse it with a reason the user sees, or change its new content. */
  onEdit?: Hook<(event: EditEvent) => HookResult<EditVerdict>>;
  /** Before coder commits a reply's changes, sequential (apiVersion 2): change the message, add trailers, or refuse the commit. */
  onCommit?: Hook<(event: CommitEvent) => HookResult<CommitChange>>;
  /** Before a tool call the model made is run, sequential (apiVersion 2): refuse it with a reason the model hears. */
  onToolCall?: Hook<(event: ToolCallEvent) => HookResult<ToolCallVerdict>>;
}

// ─── Hooks ───────────────────────────────────────────────────────────────────

/**
 * A hook: its handler, or `{ order, handler }`. Plugins' handlers of one hook run in load order
 * (built-ins, config plugins, then --plugin files); `order: "pre"` ones first, `"post"` ones last.
 * Sequential hooks see the previous handler's result; a throwing handler is reported with the
 * plugin's name and the hook, counts as "no change", and never stops the session.
 *
 * @example
 * onCommit: { order: "post", handler: ({ message }) => ({ trailers: ["Reviewed-by: bot"] }) },
 */
export type Hook<H> = H | { order?: "pre" | "post"; handler: H };

/** What a sequential handler returns: its change, or nothing for none. */
export type HookResult<T> = T | void | undefined | Promise<T | void | undefined>;

/** The names of the hooks, for messages and the kernel's runner. */
export type HookName = Extract<keyof PluginObject, `on${string}`>;

export interface RequestEvent {
  model: string;
  /** The messages about to be sent (as changed by earlier handlers). */
  messages: readonly ChatMessage[];
}

export interface RequestChange {
  /** The messages to send instead. */
  messages?: ChatMessage[];
}

export interface ReplyEvent {
  model: string;
  text: string;
  toolCalls: readonly ToolCall[];
  finishReason: FinishReason;
}

export interface EditEvent {
  /** Repository-relative path. */
  path: string;
  /** The file's text now; null for a new file. */
  before: string | null;
  /** Its text after the edit (as changed by earlier handlers); null when the edit deletes it. */
  after: string | null;
  /** The edit format the reply used. */
  format: string;
}

/** `veto`: the file is not written, and the user (and the model, in the repair report) hears why. `content`: write this instead. */
export type EditVerdict = { veto: string } | { content: string };

export interface CommitEvent {
  /** The commit message (as changed by earlier handlers). */
  message: string;
  /** Repository-relative paths committed. */
  files: readonly string[];
}

export interface CommitChange {
  message?: string;
  /** Lines such as "Refs: JIRA-12", added to the message's trailer block. */
  trailers?: string[];
  /** Refuse the commit: the files stay written and uncommitted, and the user hears why. */
  veto?: string;
}

export interface ToolCallEvent {
  name: string;
  /** The raw JSON arguments, as the model produced them. */
  arguments: string;
  /** Where the tool comes from, e.g. "MCP server docs". */
  origin: string;
}

export type ToolCallVerdict = { veto: string };

// ─── Options ─────────────────────────────────────────────────────────────────

/**
 * One option a plugin declares. The key is the config-file key (camelCase); the flag is its
 * kebab-case form (`--map-tokens`), the environment variable `CODER_<SNAKE>` (`CODER_MAP_TOKENS`).
 * Declare it `as const` so `kit.options.get` infers its value's type.
 *
 * @example
 * const TICKET = { key: "ticketPrefix", type: "string", default: "JIRA", arg: "PREFIX", help: "prefix of ticket ids in commit trailers" } as const satisfies PluginOption;
 * // later, in a hook: const prefix: string = kit.options.get(TICKET);
 */
export interface PluginOption {
  key: string;
  /** `object`: config only, any JSON object (the plugin checks its entries). */
  type: "boolean" | "string" | "number" | "list" | "enum" | "object";
  /** Allowed values for `enum`. */
  values?: readonly string[];
  default?: boolean | string | number | readonly string[];
  /** One line for `--help`, the schema and `/settings`. */
  help: string;
  /** Value placeholder in `--help`, e.g. "N". */
  arg?: string;
  /** The `--help` heading (default: "Plugin NAME"). */
  group?: string;
  /** Booleans: accept `--no-<flag>`. */
  negatable?: boolean;
  /**
   * Booleans: when on, the option stands for these options' values (set as if from the same
   * source, after every source is read), e.g. `--architect` for `--edit-format architect`.
   */
  implies?: Readonly<Record<string, string | number | boolean>>;
  /** Only on the command line (and env), not a config key. */
  cliOnly?: boolean;
  /** Only in config files, not a flag. */
  configOnly?: boolean;
  /** No CODER_* environment variable. */
  noEnv?: boolean;
  /**
   * Set in the repository's own config, it takes effect only in a trusted repository, because it
   * runs code on the user's machine or weakens coder's protections.
   */
  needsTrust?: "runs code" | "weakens your protections";
  /** With `needsTrust`: this value (the safe one) needs no trust. */
  safeValue?: boolean;
  /** The repository's own config may never set it (secrets, endpoints, paths coder writes). */
  notInProject?: boolean;
  /** Numbers: 0 makes no sense (a time bound, a size cap); the unit names it in errors. */
  positive?: "seconds" | "megabytes";
  /** Shown masked in `coder config show` and `/settings`. */
  secret?: boolean;
  /** `object`: entries from several config files add up by key (a later file's entry winning) instead of replacing. */
  merge?: "by-key";
  /**
   * `object`: an editor's MCP servers (ACP's `session/new`) join this option's entries, by name,
   * in the `{ command, args, env }` / `{ url, type, headers }` shape other tools write; they are
   * the user's choice, so they need no trust. Optional (apiVersion 2).
   */
  editorMcpServers?: boolean;
  /**
   * With `needsTrust: "runs code"`: what a value runs, so trust also covers the scripts outside
   * the repository they name: shell command lines (run in the repository root), or programs run
   * without a shell (`argv`, in `cwd`, relative to the repository root; `label` names the entry
   * in the trust question).
   */
  runs?(value: unknown): (string | RunsProgram)[];
}

/** A program an option's value runs without a shell (e.g. an MCP server), for trust to cover. */
export interface RunsProgram {
  argv: readonly string[];
  cwd?: string;
  label?: string;
}

/** The type of an option's value, from its declaration. */
export type OptionValue<S> = S extends { type: "boolean" }
  ? boolean
  : S extends { type: "number" }
    ? number
    : S extends { type: "list" }
      ? string[]
      : S extends { type: "enum"; values: readonly (infer V)[] }
        ? V
        : S extends { type: "object" }
          ? Record<string, unknown>
          : string;

/** What `kit.options.get` returns: the value, or undefined for an option without a default that nothing set. */
export type OptionRead<S extends PluginOption> = S extends { default: unknown } | { type: "list" | "object" } ? OptionValue<S> : OptionValue<S> | undefined;

// ─── Subcommands ─────────────────────────────────────────────────────────────

/**
 * `coder NAME [ARG ...]`: a command of the command line (not of the chat). It runs once
 * settings, trust and every plugin are in place, and its return value is the exit code.
 *
 * @example
 * const stats: Subcommand = {
 *   name: "stats", usage: "[--json]", summary: "count the repository's files",
 *   run: async (args, cli) => {
 *     const n = (await kit.files.list()).length;
 *     cli.json ? cli.printJson({ files: n }) : cli.print(`${n} files`);
 *     return 0;
 *   },
 * };
 */
export interface Subcommand {
  name: string;
  /** One line for `--help`. */
  summary: string;
  /** Its arguments as `--help` shows them after the name, e.g. "list [--json]". */
  usage?: string;
  /** A boolean option (declared by the same plugin) that also runs this command, e.g. `showRepoMap` for `--show-repo-map`. */
  flag?: string;
  /** Longer help for `coder NAME --help`, shown after the summary and before the options the plugin declares. */
  help?: string;
  run(args: readonly string[], cli: SubcommandContext): Promise<number> | number;
}

/** What a subcommand gets besides its arguments. */
export interface SubcommandContext {
  /** Effective options (read-only). */
  readonly options: Readonly<Record<string, unknown>>;
  /** `--json` was given: print one JSON document (`printJson`) instead of text. */
  readonly json: boolean;
  /** A line (or lines) of text on stdout. */
  print(text: string): void;
  /** One JSON document on stdout. */
  printJson(value: unknown): void;
  /** A warning on stderr. */
  warn(text: string): void;
  /**
   * Every value the command line itself gave option `key`, in the order typed (`options` keeps
   * only the last of a repeated flag, and may come from config or the environment); empty when
   * the flag was not typed. Optional (additive to API version 2).
   * @example const models = cli.flagValues?.("model") ?? []; // coder eval --model a --model b
   */
  flagValues?(key: string): string[];
  /** Stop with a usage error (exit 2): the message says what was wrong and what to type instead. */
  usage(message: string): never;
  /**
   * The block the named context provider gives for these chat files (typed paths, relative to
   * where coder runs), outside any request, and the budget the kernel gives it then (`coder map`);
   * `block` is null when it has nothing, or when its budget is 0 (then it is not asked).
   */
  context(provider: string, chatFiles: readonly string[]): Promise<{ block: ContextBlock | null; budget: ContextBudget }>;
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
  /**
   * This format is the fallback (apiVersion 2): for a model whose table names no registered
   * format (a model no adapter knows), for architect's editor when the format named does not
   * edit, and for an editor's "code" mode. The first registered format that says so is used
   * (the built-in `diff`: it fails safest); without one, the first format that edits.
   */
  fallback?: boolean;
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
  /**
   * The file's text as the model was shown it in the request this reply answers (null: shown as
   * not existing yet), or undefined when it was not shown (a file outside the chat; one an earlier
   * edit of the reply wrote counts as shown as written). Differs from `read` when the file changed
   * while the model answered; `kit.formats.stage` merges a whole new text onto that change, and
   * refuses one for an existing file that was not shown (it would be written blind).
   */
  shown?(path: string): string | null | undefined;
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
  /**
   * Set when the SEARCH text quotes a file as last committed (or saved, under an editor's
   * unsaved buffer, or as the model was shown it), and those lines have changed since (the
   * user's edit): the current lines, 1-based, of `path`. Such a SEARCH never lands
   * approximately; `explain` asks for the current lines instead. `kit.formats.stage` sets it
   * too, for a whole text whose change meets one made while the model answered.
   */
  userChange?: { path: string; startLine: number; endLine: number; text: string; committedLine: number; was?: "committed" | "saved" | "shown" };
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

// ─── Format helpers: what the built-in formats share ────────────────────────

/** What a reply says about where one edit goes (consulted only when SEARCH matches several places). */
export interface PlacementHints {
  /** Line numbers the model gave (1-based), e.g. "around line 42" or a hunk's `@@ -42,7`. */
  lines?: readonly number[];
  /** Names the model gave as the edit's enclosing scope, e.g. `Wishlist` from "in `Wishlist.total`". */
  scopes?: readonly string[];
}

/** The place chosen (its first line, 1-based) and the clue that chose it, for the edit's note. */
export interface Placement {
  at: number;
  why: string;
}

/** One way to read a block with several divider-shaped lines: SEARCH and REPLACE on either side of one. */
export interface SplitReading {
  search: string;
  replace: string;
  /** The divider line, trimmed. */
  divider: string;
}

/** An edit that replaces the whole lines `search` by `replace` in `path` (empty `search`: create or fill the file). */
export interface SearchReplaceEdit extends Edit {
  search: string;
  replace: string;
  /** Clues to where the edit goes, consulted only when SEARCH matches several places. */
  hints?: PlacementHints;
  /** Set when the block holds several divider-shaped lines: the file decides which one divides it. */
  splits?: readonly SplitReading[];
  /** Set when the file was not in the chat as the model wrote the edit: it has not seen the content. */
  unseen?: boolean;
}

/** Where a SEARCH/REPLACE block's file path stands: on the line before the opening fence, or the first line inside it. */
export type BlockPathPlace = "before-fence" | "in-fence";

/** One SEARCH/REPLACE block as `kit.formats.parseBlocks` read it from a reply. */
export interface SearchReplaceBlock {
  /** The path as the model wrote it (decoration stripped; resolve it with `ParseContext.resolvePath`). */
  filename: string;
  /** The preferred split's texts (the first at a canonical `=======`, else the first). */
  search: string;
  replace: string;
  /** 0-based line of the SEARCH marker. */
  line: number;
  /** 0-based line of the `>>>>>>> REPLACE` marker. */
  end: number;
  /** Every way to split the block, when it holds more than one divider-shaped line (pass them on as `SearchReplaceEdit.splits`). */
  splits?: SplitReading[];
}

/** What `kit.formats.parseBlocks` reads from a reply: its blocks, and the commands of its shell-tagged fences. */
export interface SearchReplaceBlocks {
  blocks: SearchReplaceBlock[];
  shell: string[];
}

/**
 * The helpers the built-in formats share, for a user's format to reuse (`kit.formats`).
 *
 * @example
 * // A format whose parser yields SearchReplaceEdits applies them as `diff` does:
 * apply: (edits, ws) => kit.formats.applySearchReplace(edits, ws),
 */
export interface FormatHelpers {
  /**
   * Apply SEARCH/REPLACE edits in order to the staged workspace through `kit.matcher` (its whole
   * ladder, and its guard: a SEARCH quoting lines the user has changed since the last commit never
   * lands approximately). A SEARCH found in several places lands where the edit's `hints` (or the
   * previous edit of the same file) point to exactly one; a SEARCH not in the named file is tried
   * in the other chat files; an empty SEARCH creates (or fills an empty) file. One outcome per
   * edit, never throws for a mismatch.
   */
  applySearchReplace<E extends SearchReplaceEdit>(edits: E[], ws: Workspace): EditOutcome<E>[];
  /**
   * Fence parsing of SEARCH/REPLACE blocks with the path on the line before the opening fence
   * (`pathAt: "before-fence"`, the default, as `diff` writes them) or on the first line inside it
   * (`"in-fence"`, as `diff-fenced` does): markers of 5-9 characters, the path matched against
   * `chatFiles`, shell-tagged fences as commands. Throws `kit.FormatError`, written for the model,
   * on a missing path or marker.
   */
  parseBlocks(text: string, fence: Fence, chatFiles?: readonly string[], pathAt?: BlockPathPlace): SearchReplaceBlocks;
  /** The commands of every fence of `text` tagged with a shell language (```bash, ````sh, ...). */
  shellBlocks(text: string): string[];
  /** Is `line` a fence opening tagged with a shell language? */
  isShellFence(line: string): boolean;
  /** The command of the shell fence opening at `lines[at]`, and the index of the line after its closing fence. */
  readShellBlock(lines: readonly string[], at: number): { command: string; next: number };
  /**
   * Stage `content` as the whole new text of `path`, written from the text the model was shown
   * (`ws.shown`): an applied outcome, or a refused one with the workspace's reason. When the file
   * changed while the model answered, the model's change is merged onto the file as it is now
   * (three-way, as git merges); a change to the same lines fails, nothing staged, and says what
   * those lines read now. Where `path` has uncommitted changes and `content` has the last commit's
   * lines in their place (written from an older copy), the user's lines are kept and the outcome's
   * note says which.
   */
  stage<E extends Edit>(edit: E, ws: Workspace, path: string, content: string, note?: string): EditOutcome<E>;
  /** Placement clues in the prose a reply puts before an edit ("around line 42", "in `Cart.total`"). */
  hintsFromProse(prose: string): PlacementHints;
  /** Placement clues of a diff hunk's `@@ -40,7 +40,8 @@ class Cart:` line. */
  hintsFromHunkHeader(header: string): PlacementHints;
  /**
   * The one candidate of an ambiguous match the clues support, or null when none does or they
   * disagree. `previousEnd`: the last line of the previous edit of the same file, or null.
   */
  choosePlace(candidates: readonly MatchCandidate[], content: string, hints: PlacementHints, previousEnd: number | null): Placement | null;
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
  /**
   * Its block for this request, kept within `budget.tokens` (0: the provider is off or the window
   * has no room left; the kernel then does not call it). `budget` is the provider's share of the
   * model's context window, as its `budget` claim and the other providers' claims settle it.
   */
  provide(turn: TurnContext, budget: ContextBudget): Promise<ContextBlock | null> | ContextBlock | null;
  /**
   * How much of the context window this provider asks for (apiVersion 2). Without a claim, a
   * provider shares what the claims leave. Optional.
   *
   * @example
   * // 1/8 of the window within 1,024-4,096 tokens, or the user's `--todo-tokens N` (0: off); before lower priorities.
   * budget: { priority: 10, option: TODO_TOKENS, share: { fraction: 1 / 8, min: 1024, max: 4096 } },
   */
  budget?: BudgetClaim;
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
  /**
   * A few words for the REPL's start-up banner, or null to say nothing. Optional.
   *
   * @example
   * banner: (_context, budget) => (budget.tokens === 0 ? "todos: off" : `todos: ${budget.tokens} tokens`)
   */
  banner?(context: Pick<TurnContext, "model" | "options" | "chatFiles">, budget: ContextBudget): string | null;
}

/**
 * A context provider's claim on the context window. The kernel serves claims by `priority`
 * (higher first; equal ones in load order), each getting what it asks for while the window
 * (less the reply's reserve and what the chat files and history take) has room.
 */
export interface BudgetClaim {
  /** Default 0. */
  priority?: number;
  /** A number option this plugin declares: the tokens the user asks for (0 turns the provider off). Set, it wins over `share`. */
  option?: PluginOption & { type: "number" };
  /** Without the option set: this fraction of the model's context window, within `min` and `max` tokens. Absent: everything left. */
  share?: { fraction: number; min?: number; max?: number };
}

/** What `provide` gets: its share of the window for this request. */
export interface ContextBudget {
  /** Tokens this provider's block should fit in. */
  tokens: number;
  /** Tokens of the window nobody claimed, for a provider that may grow past `tokens` when it helps (e.g. a map with no chat files). */
  spare: number;
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

/** A provider of `ModelAdapter.providers`: the prefix of its models, where it answers, the key it takes. */
export interface ProviderSetup {
  /** The prefix of `--model provider/model`. */
  name: string;
  /** Its OpenAI-compatible base URL; absent when the user must give one (a custom server). */
  baseUrl?: string;
  /** Environment variables that may hold its key (the first is where set-up saves one). */
  keyEnv: readonly string[];
  /** Answers without a key (a local server). */
  keyOptional?: boolean;
  /** Environment variables that may hold its base URL (the first is where set-up saves one). */
  baseEnv?: readonly string[];
}

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
  /** The model to use when no adapter's `defaultModel` found a key and nothing names one (the first adapter's that says). Optional. */
  fallbackModel?: string;
  /**
   * Why `model` cannot be used for want of an API key in `env` (naming what to set), or null when
   * its key is there or it needs none. Lets an editor offer a sign-in before the first request.
   *
   * @example
   * missingKey: (model, env) => (env.MY_API_KEY ? null : "no API key: set MY_API_KEY")
   */
  missingKey?(model: string, env: Readonly<Record<string, string | undefined>>): string | null;
  /**
   * The providers a person may pick in guided set-up (`coder init`, a first run without a key),
   * and how the kernel tells whether a model's key is missing. Optional.
   *
   * @example
   * providers: () => [{ name: "my", baseUrl: "https://api.my.dev/v1", keyEnv: ["MY_API_KEY"] }]
   */
  providers?(): ProviderSetup[];
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
  /** The model's reasoning as it streams (`reasoning_content` / `reasoning` deltas): shown, never part of the reply. */
  | { type: "reasoning"; text: string }
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
  /** How the prompt is shaped for this model (absent: the defaults). Optional (additive to API version 1). */
  prompting?: PromptSettings;
}

/**
 * Per-model prompt settings, from the model table or a config's `models` entry.
 *
 * @example
 * // .coder.json: send gpt-4.1 the reminder as a system message, and the "lazy" addendum
 * { "models": { "openai/gpt-4.1": { "prompting": { "reminder": "system", "addendum": "lazy" } } } }
 */
export interface PromptSettings {
  /**
   * Where the format's reminder goes: `user` (default) appends it to the last user message;
   * `system` sends it as a system message after the current request (models that weigh
   * system messages more; a user message for models without a system role).
   */
  reminder?: "user" | "system";
  /**
   * A sentence added to the system message: `lazy` for models that elide code ("... rest
   * unchanged") or stop halfway; `overeager` for models that change more than was asked.
   */
  addendum?: "lazy" | "overeager";
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
  /**
   * Send a request through the turn loop, optionally with another edit format for this one
   * request. `options.typed`: what the user typed, when `message` wraps it in more text (e.g.
   * `/help QUESTION` sends the question over the documentation): context providers'
   * `onMessage` (URL offers, ...) see only that.
   */
  send(message: string, editFormat?: string, options?: { typed?: string }): Promise<void>;
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
  /** Each registered edit format with its one-line summary (for `/edit-format`), its mode, and whether it is the fallback for unknown models. */
  formatSummaries(): readonly { name: string; summary: string; mode: NonNullable<EditFormat["mode"]>; fallback: boolean }[];
  exit(): void;
  /**
   * Ask the user a yes/no question through the gate (Yes / No / Don't ask again; yes under
   * --yes-always, no when nobody can answer). Questions with the same `key` share one
   * remembered "Don't ask again" (default: the question itself).
   */
  confirm(question: string, options?: { key?: string }): Promise<boolean>;
  /** Put text into the conversation as context for the next request without sending one (e.g. a command's output). */
  addToChat(text: string): void;
  /**
   * Offer a finished command's output, as for the commands the model suggests: when it failed,
   * ask whether to send it to the model as a fix request (sent now); otherwise ask whether to
   * add it to the chat.
   */
  offerOutput(command: string, result: { code: number; output: string }): Promise<void>;
  /** What the last reply changed, whether it was committed or not (`/diff`). */
  lastDiff(): Promise<string>;
  /** True when a person answers questions (the REPL). */
  readonly interactive: boolean;
  /**
   * Put text in the REPL's input line for the user to edit and send (e.g. a voice
   * transcription); without an input line (one-shot modes) it is printed.
   */
  setInput(text: string): void;
  /** The text of the model's last reply in this chat, or null before the first (`/copy`). */
  lastReply(): string | null;
  /** The messages of the next request, chunk by chunk in the order they are sent (`/copy-context`). */
  promptChunks(): Promise<PromptChunk[]>;
  /** Run a `/name arg` line as if typed (e.g. `/load` replaying a saved chat). */
  runCommand(line: string): Promise<void>;
  /** The model each role uses now: main, weak (commit messages, summaries), editor (architect's edits). */
  modelFor(role: "main" | "weak" | "editor"): string;
  /**
   * Change a setting of the option table for the rest of the session, from its text as typed
   * (e.g. `setOption("reasoningEffort", "high", "/reasoning-effort")`); a bad value throws a
   * one-line error naming `where` (default: the setting's flag).
   */
  setOption(key: string, value: string | undefined, where?: string): void;
  /** Every setting with its effective value and where it came from, as `coder config show` lists them. */
  settings(): readonly { key: string; value: unknown; source: string }[];
  /** Every model the adapters' tables know (and config `models`), for `/models`. */
  listModels(): readonly ModelInfo[];
  /**
   * Check files as after an edit, but whole: the syntax check, then the lint command(s).
   * `failed`: the files with problems (named in a failing command's output, or every file the
   * command checked when it names none). `stopped`: a cancel stopped a command, or an editor
   * refused to run it, so the files were not all checked.
   */
  lint(paths: string[], onOutput?: (text: string) => void): Promise<{ ok: boolean; output: string; failed?: string[]; stopped?: boolean }>;
  /** The last error the session reported (a failed request, a command's problem), or null. */
  lastError(): string | null;
  /**
   * Run a command the user typed (no gate), its output shown as it arrives and, in a terminal,
   * its stdin the terminal's.
   */
  runUserCommand(command: string): Promise<{ code: number; output: string }>;
  /**
   * Run a test command as the tests after an edit run: shown as it runs (the terminal's live
   * output, an editor's card or terminal). Its exit code and output (stdout, then stderr);
   * `stopped` when a cancel ended it or an editor refused to run it (nothing to report then).
   */
  runTests(command: string): Promise<{ code: number; output: string; stopped?: boolean }>;
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
  /**
   * How the user lets this provider's tools run without a question, said when `--yes-always`
   * declines a call with nobody to ask, e.g. `set "mcpTools": "auto"`. Optional (apiVersion 2).
   */
  runUnasked?: string;
}

/** One row of a tool provider's `coder doctor` check. */
export interface ToolCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * One tool a provider offers: its parameters declared as JSON Schema (`JsonTool`, as MCP servers
 * give them), or with a zod schema (`TypedTool`), whose JSON Schema the kernel sends and whose
 * checked, typed value `call` receives.
 */
export type ProvidedTool = JsonTool | TypedTool;

/** A tool whose parameters are plain JSON Schema: `call` gets the arguments object unchecked. */
export interface JsonTool {
  spec: ToolSpec;
  parameters?: never;
  /** Where the tool comes from, shown when the user is asked, e.g. "MCP server docs". */
  origin?: string;
  /** "ask" (default): the gate asks before each call; "auto": the call runs without a question. */
  confirm?: "ask" | "auto";
  /** Run one call; a failure the model should hear about is `{ text, isError: true }`, not a throw. */
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
}

/**
 * A tool whose parameters are declared once, with zod (4): the JSON Schema sent to the model is
 * made from the declaration, the model's arguments are checked against it (a mismatch goes back
 * to the model, naming the field, and the tool is not called), and `call` gets the parsed value,
 * typed. Declare it with `kit.tool(...)` so `call`'s argument type is inferred. Optional
 * (apiVersion 2). A plugin with zod bundles it (`bun build --target bun`); any Standard Schema
 * that offers `~standard.jsonSchema` works too.
 *
 * @example
 * import { z } from "zod";
 * const grep = kit.tool({
 *   name: "grep_todos",
 *   description: "Lines with TODO comments in files matching a glob",
 *   parameters: z.object({ glob: z.string().describe("e.g. src/*.ts"), limit: z.number().int().max(200).default(50) }),
 *   confirm: "auto",
 *   call: async ({ glob, limit }) => ({ text: (await kit.run(["git", "grep", "-n", "TODO", "--", glob])).stdout.split("\n").slice(0, limit).join("\n") }),
 * });
 */
export interface TypedTool<S extends ParameterSchema = ParameterSchema> {
  spec?: never;
  name: string;
  description: string;
  parameters: S;
  origin?: string;
  confirm?: "ask" | "auto";
  call(args: ParametersOf<S>, signal: AbortSignal): Promise<ToolResult>;
}

/**
 * What a typed tool's `parameters` is: a zod 4 schema, or another Standard Schema
 * (standardschema.dev) library's schema. Only the members the kernel reads are named here.
 */
export interface ParameterSchema<T = unknown> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => SchemaResult<T> | Promise<SchemaResult<T>>;
    readonly types?: { readonly input: unknown; readonly output: T } | undefined;
  };
}

/** A Standard Schema check's result: the parsed value, or the issues found. */
export type SchemaResult<T> =
  | { readonly value: T; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> };

/** The parsed type of a parameter schema. */
export type ParametersOf<S> = S extends { readonly "~standard": { readonly types?: infer Types } } ? (NonNullable<Types> extends { readonly output: infer O } ? O : unknown) : unknown;

/** What a tool call returned, as text for the model. */
export interface ToolResult {
  text: string;
  isError?: boolean;
}

// ─── The kit: capabilities handed to plugins ─────────────────────────────────

export interface Kit {
  /** The newest plugin API version this kernel implements. */
  apiVersion: ApiVersion;
  /** coder's version. */
  version: string;
  /**
   * Options: a declared option's effective value, typed from its declaration. Read it when you
   * use it (in a provider, a command, a hook), not while the plugin loads: flags and config
   * files are settled once every plugin has declared its options, and `/settings` may change
   * them during the session.
   *
   * @example
   * const MAX = { key: "todoMax", type: "number", default: 20, arg: "N", help: "most TODOs listed" } as const satisfies PluginOption;
   * const max: number = kit.options.get(MAX);
   */
  options: {
    get<const S extends PluginOption>(spec: S): OptionRead<S>;
  };
  /**
   * Ask the user from anywhere (a provider, a tool, a hook), through the gate and the front end
   * in use: the REPL's one-key prompt, an ACP permission request, yes under --yes-always, no when
   * nobody can answer (one-shot, --json, a subcommand). "Don't ask again" is remembered under
   * `key` (default: the question).
   *
   * @example
   * if (await kit.ui.confirm("Upload the diff to the review tool?", { key: "review-upload" })) await upload();
   *
   * `select` and `input` ask for one of `choices` or a line of text. They return the person's
   * answer (null when they cancel, or answer with nothing and no default is declared); under
   * --yes-always, when nobody can answer (one-shot `-m`, `--json`), and in a front end that
   * cannot ask such a question (an ACP editor without form elicitation, for `input`), they
   * return `default` (null without one) without asking, and say so unless --yes-always chose it.
   * The REPL lists the choices and reads a number or a name, or a line; an ACP editor gets a
   * permission request whose options are the choices, or an `elicitation/create` form.
   *
   * @example
   * const level = await kit.ui.select("Review depth?", ["quick", "thorough"] as const, { default: "quick" });
   * const title = await kit.ui.input("Title of the pull request?", { default: "Update" });
   */
  ui: {
    confirm(question: string, options?: { key?: string; detail?: string }): Promise<boolean>;
    select<const T extends string>(question: string, choices: readonly T[], options?: { default?: T; detail?: string }): Promise<T | null>;
    input(question: string, options?: { default?: string; detail?: string }): Promise<string | null>;
  };
  /** Repository root (or the current directory without git). */
  root: string;
  /** The directory coder was started in (for ACP, the session's folder): paths the user types are relative to it. */
  cwd: string;
  /** The shared SEARCH/REPLACE matcher: every format's edits land through it. */
  matcher: Matcher;
  /** Standard failure reports, so formats render them alike. */
  reports: Reports;
  /** The helpers the built-in formats share: SEARCH/REPLACE application, placement hints. */
  formats: FormatHelpers;
  /** Throw this from `parse` for a malformed reply; its message goes to the model. */
  FormatError: new (message: string) => Error;
  tokens: {
    /**
     * Tokens of `text` in `encoding` (an encoding's name, as `encoding(model)` gives it; sampled for
     * very large texts). Without one, in the encoding of the model coder was started with: a
     * session's model may change since (`/model`), so count for a turn in `encoding(turn.model)`.
     *
     * @example kit.tokens.count(text, kit.tokens.encoding?.(turn.model))
     */
    count(text: string, encoding?: string): number;
    /**
     * The name of the encoding `count` counts in for `model` (e.g. "o200k_base"), or for the model
     * coder was started with when absent: to count in it and to keep counts under it. Optional
     * (additive to API version 1).
     */
    encoding?(model?: ModelInfo): string;
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
     * a value whose `problem` names the file and what is wrong.
     *
     * @example
     * const r = kit.files.readBytes("logo.png");
     * if (!r.ok) session.warn(r.problem);
     */
    readBytes(path: string, options?: { maxBytes?: number }): { ok: true; bytes: Uint8Array } | { ok: false; missing: boolean; problem: string };
    /**
     * The repository's files (as `list()`: tracked, or every file without git, never what
     * `.gitignore` or `.coderignore` hides) whose path matches the glob `pattern`: `*` and `?`
     * within one folder, `**` across folders, `[abc]`, `{a,b}`.
     * @example const tests = await kit.files.glob("src/**\/*.test.ts");
     */
    glob(pattern: string): Promise<string[]>;
    /** Does the glob `pattern` (the syntax of `glob`) match `path`? For lists a plugin holds itself. */
    matches(pattern: string, path: string): boolean;
    /**
     * Does coder leave this repository path alone: matched by `.coderignore` (or `--ignore-file`),
     * or ignored by git and not tracked (git's own answer: `.gitignore` files, `.git/info/exclude`,
     * the user's `core.excludesFile`; without git, the `.gitignore` files)? Paths inside `.git/`
     * are ignored; a path outside the repository is refused (throws).
     * @example if (await kit.files.ignored(".env")) return;
     */
    ignored(path: string): Promise<boolean>;
  };
  diff: {
    /** A unified diff of one file's change, for showing. */
    unified(path: string, before: string, after: string): string;
  };
  /**
   * Run a command without a shell (argv) or through the shell (string), in the repository root,
   * through `spawn`: a timeout ends the command's whole process group, not just the shell.
   * `onOutput` sees stdout and stderr as they arrive; `inheritStdin` lets the command read the terminal;
   * an abort of `signal` ends the process group as a timeout does.
   */
  run(
    command: string[] | string,
    options?: { cwd?: string; timeoutMs?: number; input?: string; inheritStdin?: boolean; onOutput?: (text: string) => void; signal?: AbortSignal },
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * Run argv (no shell) in its own process group: a timeout or an abort sends SIGTERM to the whole
   * group (the command and every process it started), then SIGKILL after `graceMs` (default 2 s).
   * `inheritStdin` keeps the command in coder's group so it can read the terminal. Never throws.
   *
   * @example
   * const r = await kit.spawn(["npm", "test"], { timeoutMs: 600_000, signal });
   * if (r.timedOut) kit.log.warn("npm test timed out; it and its children were stopped");
   */
  spawn(argv: string[], options?: SpawnOptions): Promise<SpawnResult>;
  /**
   * Start argv (no shell) and keep talking to it: a server over stdin/stdout, a recorder you stop
   * when the user is done. It runs in its own process group (unless `foreground`), so `stop()`,
   * and coder's exit however it exits, end it and every process it started (SIGTERM, then
   * SIGKILL). Throws an Error naming the command when it cannot start.
   *
   * @example
   * const server = kit.start(["my-lsp", "--stdio"], { stdin: "pipe", onStdout: (bytes) => parser.push(bytes) });
   * await server.write(request);
   * await server.stop();
   */
  start(argv: string[], options?: StartOptions): RunningChild;
  /** The full path of an executable on PATH, or null (`kit.which("ffmpeg")`). */
  which(command: string): string | null;
  /**
   * A new private folder under the system's temp folder (for a recording, a converted file, a
   * scratch copy of a project), named `coder-<prefix>-XXXXXX`; write into it through the folder
   * (see `TempFolder`). `remove()` deletes it and all in it. Remove it when done; coder does not track it.
   * @example const tmp = kit.tempFolder("voice"); try { ... } finally { tmp.remove(); }
   */
  tempFolder(prefix: string): TempFolder;
  /**
   * A folder `kit.tempFolder(prefix)` made earlier (an earlier coder's, left behind by a kill), to
   * clean up: only a real folder directly in the system's temp folder whose name has that prefix;
   * null for any other path.
   * @example kit.reopenTempFolder("eval", leftover)?.remove()
   */
  reopenTempFolder(prefix: string, path: string): TempFolder | null;
  /**
   * A folder the user named for output (relative to `cwd`, or absolute), e.g. a run directory:
   * made when first written, and written only inside, never through a link (see `OutputFolder`).
   * @example const out = kit.outputFolder("results"); out.write("run.json", json); out.append("log.jsonl", line);
   */
  outputFolder(path: string): OutputFolder;
  /** The command line that runs this coder again (the compiled binary, or bun with main.ts from the sources), for a child coder. */
  self(): string[];
  log: Logger;
  /**
   * Replace a file the user named (a report, an export; relative to `cwd`, or absolute) with
   * `data` (text as UTF-8, or bytes) atomically: an exclusive new temp file beside it, then a
   * rename, so a reader never sees half of it. A link or anything but a regular file at that name
   * is refused with an Error naming it, never written through. Returns the absolute path written.
   * @example kit.writeOutput("report.html", html)
   */
  writeOutput(path: string, data: string | Uint8Array): string;
  /**
   * A folder this plugin may keep caches in (`.coder/cache/<plugin>`), created on demand (never
   * through a link). Write files there with `state.write("cache/<plugin>/...", data)`.
   */
  cacheDir(plugin: string): string;
  /**
   * A cache store: keyed values (text or bytes) in named buckets, kept in one SQLite file at
   * `.coder/cache/<namespace>/cache.sqlite`, so a plugin needs no database of its own. Opened
   * once per call (keep the store; `close()` it when done). Safe with two coder processes on one
   * repository (one writes at a time; readers never wait). A store written under another
   * `version` is emptied when opened. Never throws: a planted link, a file locked past the wait or
   * one that cannot be rebuilt gives a temporary store in memory (`file` null) with one warning;
   * a corrupt file is rebuilt; failed reads read as missing, failed writes return false.
   *
   * @example
   * const cache = kit.cache("my-plugin", { version: 3 });
   * const hit = cache.get("summaries", path);
   * if (hit === null) cache.put("summaries", path, summarise(text));
   */
  cache(namespace: string, options?: { version?: string | number }): CacheStore;
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
    /**
     * The bytes of `.coder/<path>` when it is a plain file (not a link, device or pipe) of at
     * most `maxBytes` (default 16 MiB); null otherwise, or when it is missing.
     * @example const cached = kit.state.read("cache/my-plugin/index.json")
     */
    read(path: string, maxBytes?: number): Uint8Array | null;
  };
  /**
   * Declare a tool with typed parameters (see `TypedTool`): returns it unchanged, and lets
   * TypeScript infer `call`'s argument from `parameters`.
   */
  tool<S extends ParameterSchema>(tool: TypedTool<S>): TypedTool<S>;
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

/** What a cache store keeps under a key: text, or bytes. */
export type CacheValue = string | Uint8Array;

/** Writes that land together (`CacheStore.batch`). */
export interface CacheWrites {
  put(bucket: string, key: string, value: CacheValue): void;
  delete(bucket: string, keys: readonly string[]): void;
  /** Drops all but the `count` entries of `bucket` written last. */
  keepNewest(bucket: string, count: number): void;
}

/** `kit.cache(namespace)`: keyed values in buckets, persistent under `.coder/cache/`. */
export interface CacheStore {
  /** The file it lives in, or null for a temporary store in memory (the file could not be used; a warning said why). */
  readonly file: string | null;
  /** The value under `key` in `bucket`, or null. */
  get(bucket: string, key: string): CacheValue | null;
  /** Every entry of `bucket` (empty when unreadable). */
  entries(bucket: string): Map<string, CacheValue>;
  put(bucket: string, key: string, value: CacheValue): boolean;
  delete(bucket: string, keys: readonly string[]): boolean;
  /** Drops all but the `count` entries of `bucket` written last. */
  keepNewest(bucket: string, count: number): boolean;
  /** Several writes as one transaction: all land, or none (false). */
  batch(write: (writes: CacheWrites) => void): boolean;
  close(): void;
}

/**
 * A private temp folder (`kit.tempFolder`). Every path is relative to `path` and stays inside it
 * (an absolute path or `..` is refused); folders on the way are made, and a link among them is
 * refused with an Error naming it. A file is replaced whole (a new file, then a rename), so a
 * link planted at its name is replaced, never written through.
 */
export interface TempFolder {
  /** Its absolute real path. */
  readonly path: string;
  /** Replace `rel` with `data` (text as UTF-8, or bytes). Returns the absolute path. */
  write(rel: string, data: string | Uint8Array): string;
  /**
   * Copy the file or folder at `source` (anywhere: it is only read) to `rel`, modes kept: a
   * folder's regular files and folders, less the top-level entries named in `skip`; links and
   * devices in it are left out. Returns the absolute path.
   */
  copyIn(source: string, rel: string, options?: { skip?: readonly string[] }): string;
  /** Remove `rel` (a file, a link itself, or a folder and all in it) when it is there; with no `rel`, the whole folder. */
  remove(rel?: string): void;
}

/**
 * A folder the user named for output (`kit.outputFolder`). Paths are relative to it and stay
 * inside it; a link, or anything but a plain file, at a name written is refused with an Error
 * naming it (under `.coder/`, every folder on the way is checked as for coder's own records).
 */
export interface OutputFolder {
  /** Its absolute path. */
  readonly path: string;
  /** Replace `rel` with `data` whole (a new file, then a rename: a reader never sees half). Returns the absolute path. */
  write(rel: string, data: string | Uint8Array): string;
  /**
   * Add `text` to the end of `rel` (made when missing) with one write, so a kill leaves whole
   * lines or a torn last one, never a line in the middle of another. A file with other hard
   * links is refused too. Returns the absolute path.
   */
  append(rel: string, text: string): string;
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
  /** Keep stdout's bytes as they came too (`SpawnResult.stdoutBytes`): an image, or other output that is not text. */
  bytes?: boolean;
}

/** How `kit.start` runs a command. */
export interface StartOptions {
  /** Where (default: the repository root). */
  cwd?: string;
  /** The whole environment (default: coder's). */
  env?: Record<string, string | undefined>;
  /** "pipe": write to it with `write`; "ignore" (the default): it reads nothing. */
  stdin?: "pipe" | "ignore";
  /** Each chunk of stdout as it arrives (stdout is dropped without it). */
  onStdout?: (chunk: Uint8Array) => void;
  /** Each chunk of stderr as text (the last 4,000 characters are kept in `stderrTail` either way). */
  onStderr?: (text: string) => void;
  /** Stay in coder's process group, so the terminal's Ctrl-C reaches the command too (a recorder the user may cancel). */
  foreground?: boolean;
}

/** How a started command ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  code: number | null;
  signal: string | null;
}

/** A command started with `kit.start`. */
export interface RunningChild {
  readonly pid: number;
  /** Write to its stdin (`stdin: "pipe"`); resolves once the pipe took it, rejects when the pipe is closed. */
  write(data: string | Uint8Array): Promise<void>;
  /** Close its stdin (a server that reads to the end then leaves). */
  endInput(): void;
  /** Resolves when its first process has exited. */
  readonly exited: Promise<ChildExit>;
  /** Resolves once it exited and its output pipes closed (waited for at most a second after the exit: a process left behind may hold them). */
  readonly closed: Promise<void>;
  /** Send `signal` (default SIGTERM) to its process group (to it alone when `foreground`). */
  kill(signal?: string): void;
  /** End it: SIGTERM (or `signal`) to the group, up to `graceMs` (default 2 s) to exit, then SIGKILL to whatever is left; resolves when it is over. */
  stop(options?: { signal?: string; graceMs?: number }): Promise<ChildExit>;
  /** The last lines it wrote on stderr, joined with " | " (for a one-line report). */
  stderrTail(lines?: number): string;
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
  /** stdout's bytes, with `bytes: true`. */
  stdoutBytes?: Uint8Array;
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
