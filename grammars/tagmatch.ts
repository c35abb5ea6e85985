// Our own matcher for the tags queries: the .scm text parsed here into patterns and
// matched against the syntax tree with web-tree-sitter's node calls, so that no
// process pays tree-sitter's query compiler (its pattern analysis runs inside
// WebAssembly: 80-400 ms for TypeScript's tags query, per language per thread).
// It yields the matches `Query.matches` yields, in its order, for the query
// features it supports; a query using anything else is not compiled here
// (compileTagMatcher returns null) and keeps tree-sitter's Query.
import type { Language, Node } from "web-tree-sitter";

/** One capture of a match, as web-tree-sitter's QueryCapture. */
export interface TagCapture {
  name: string;
  node: Node;
}

/** One match, as web-tree-sitter's QueryMatch (the fields the repo map reads). */
export interface TagMatch {
  patternIndex: number;
  captures: TagCapture[];
}

/** What the repo map runs a tags query through: our matcher, or tree-sitter's Query. */
export interface TagQuery {
  matches(node: Node): TagMatch[];
}

// ─── The query text ──────────────────────────────────────────────────────────

/** A named node `(type …)`, a wildcard `(_)` / `_`, or an anonymous node `"text"`. */
interface NodePattern {
  kind: "node";
  /** null: a wildcard. */
  type: string | null;
  named: boolean;
  field: string | null;
  negated: string[];
  children: Sequence;
  captures: string[];
  quantifier: Quantifier;
}

interface AltPattern {
  kind: "alt";
  options: Pattern[];
  field: string | null;
  captures: string[];
  quantifier: Quantifier;
}

/** Parenthesised siblings: only at the top of a query (a nested one is spliced into its parent, or unsupported). */
interface GroupPattern {
  kind: "group";
  children: Sequence;
  field: string | null;
  captures: string[];
  quantifier: Quantifier;
}

type Pattern = NodePattern | AltPattern | GroupPattern;
type Quantifier = "" | "?" | "*" | "+";

/** Child patterns in order; anchors[i]: an anchor `.` before item i (anchors[items.length]: after the last). */
interface Sequence {
  items: Pattern[];
  anchors: boolean[];
}

export interface Predicate {
  operator: string;
  args: ({ capture: string } | { text: string })[];
}

export interface ParsedPattern {
  pattern: Pattern;
  predicates: Predicate[];
}

/** Raised for query syntax this parser does not take: the language keeps tree-sitter's Query. */
export class UnsupportedQuery extends Error {}

/** Parses a tags query's text into its top-level patterns (in order: a pattern's index is its place here). */
export function parseQuery(source: string): ParsedPattern[] {
  return new QueryParser(source).parseAll();
}

class QueryParser {
  #src: string;
  #at = 0;
  #predicates: Predicate[] = [];

  constructor(source: string) {
    this.#src = source;
  }

  parseAll(): ParsedPattern[] {
    const out: ParsedPattern[] = [];
    for (;;) {
      this.#skip();
      if (this.#at >= this.#src.length) return out;
      this.#predicates = [];
      const pattern = this.#pattern();
      if (pattern === "anchor" || pattern === null || "predicate" in pattern || "negatedField" in pattern) this.#fail("a pattern");
      out.push({ pattern: unwrap(pattern), predicates: this.#predicates });
    }
  }

  #fail(what: string): never {
    throw new UnsupportedQuery(`expected ${what} at offset ${this.#at}: ${JSON.stringify(this.#src.slice(this.#at, this.#at + 40))}`);
  }

  #skip(): void {
    const src = this.#src;
    while (this.#at < src.length) {
      const c = src[this.#at]!;
      if (c === ";") {
        const end = src.indexOf("\n", this.#at);
        this.#at = end < 0 ? src.length : end + 1;
      } else if (c === " " || c === "\n" || c === "\t" || c === "\r") this.#at++;
      else return;
    }
  }

  #identifier(): string {
    const start = this.#at;
    while (this.#at < this.#src.length && /[\w.\-?!/]/.test(this.#src[this.#at]!)) this.#at++;
    if (this.#at === start) this.#fail("a name");
    return this.#src.slice(start, this.#at);
  }

  #string(): string {
    // At the opening quote.
    let out = "";
    this.#at++;
    const src = this.#src;
    while (this.#at < src.length && src[this.#at] !== '"') {
      if (src[this.#at] === "\\") {
        const next = src[this.#at + 1];
        out += next === "n" ? "\n" : next === "t" ? "\t" : next === "r" ? "\r" : next === "0" ? "\0" : (next ?? "");
        this.#at += 2;
      } else out += src[this.#at++];
    }
    if (src[this.#at] !== '"') this.#fail("a closing quote");
    this.#at++;
    return out;
  }

  /** One child item: a pattern (with its field, quantifier and captures), an anchor, a negated field or a predicate. */
  #pattern(): Pattern | "anchor" | { predicate: true } | { negatedField: string } | null {
    this.#skip();
    const src = this.#src;
    const c = src[this.#at];
    if (c === undefined) return null;
    if (c === ".") {
      this.#at++;
      return "anchor";
    }
    if (c === "!") {
      this.#at++;
      return { negatedField: this.#identifier() };
    }
    let field: string | null = null;
    if (/[a-zA-Z_]/.test(c)) {
      // A field `name: pattern` or a bare wildcard `_`.
      const save = this.#at;
      const word = this.#identifier();
      this.#skip();
      if (src[this.#at] === ":") {
        this.#at++;
        field = word;
        this.#skip();
      } else if (word === "_") {
        return this.#suffixes({ kind: "node", type: null, named: false, field, negated: [], children: emptySeq(), captures: [], quantifier: "" });
      } else {
        this.#at = save;
        this.#fail("a pattern");
      }
    }
    const d = src[this.#at];
    let pattern: Pattern;
    if (d === '"') {
      pattern = { kind: "node", type: this.#string(), named: false, field, negated: [], children: emptySeq(), captures: [], quantifier: "" };
    } else if (d === "_" && field !== null) {
      this.#at++;
      pattern = { kind: "node", type: null, named: false, field, negated: [], children: emptySeq(), captures: [], quantifier: "" };
    } else if (d === "[") {
      this.#at++;
      const options: Pattern[] = [];
      for (;;) {
        this.#skip();
        if (src[this.#at] === "]") {
          this.#at++;
          break;
        }
        const option = this.#pattern();
        if (option === null || option === "anchor" || "predicate" in option || "negatedField" in option) this.#fail("an alternative");
        options.push(unwrap(option));
      }
      pattern = { kind: "alt", options, field, captures: [], quantifier: "" };
    } else if (d === "(") {
      this.#at++;
      this.#skip();
      const e = src[this.#at];
      if (e === "#") {
        if (field !== null) this.#fail("a pattern after a field");
        this.#at++;
        this.#predicate();
        return { predicate: true };
      }
      if (e !== undefined && /[a-zA-Z_]/.test(e)) {
        const type = this.#identifier();
        if (type.includes("/") || type === "MISSING" || type === "ERROR") throw new UnsupportedQuery(`node type ${type}`);
        const node: NodePattern = { kind: "node", type: type === "_" ? null : type, named: true, field, negated: [], children: emptySeq(), captures: [], quantifier: "" };
        this.#sequence(node.children, node.negated);
        pattern = node;
      } else {
        const group: GroupPattern = { kind: "group", children: emptySeq(), field, captures: [], quantifier: "" };
        const negated: string[] = [];
        this.#sequence(group.children, negated);
        if (negated.length > 0) this.#fail("no negated field in a group");
        pattern = group;
      }
    } else this.#fail("a pattern");
    return this.#suffixes(pattern);
  }

  #suffixes(pattern: Pattern): Pattern {
    const src = this.#src;
    for (;;) {
      this.#skip();
      const c = src[this.#at];
      if (c === "?" || c === "*" || c === "+") {
        if (pattern.quantifier) throw new UnsupportedQuery("two quantifiers on one pattern");
        pattern.quantifier = c;
        this.#at++;
      } else if (c === "@") {
        this.#at++;
        pattern.captures.push(this.#identifier());
      } else return pattern;
    }
  }

  /** Children up to the closing parenthesis. */
  #sequence(seq: Sequence, negated: string[]): void {
    let anchor = false;
    for (;;) {
      this.#skip();
      if (this.#src[this.#at] === ")") {
        this.#at++;
        seq.anchors[seq.items.length] = anchor;
        return;
      }
      const item = this.#pattern();
      if (item === null) this.#fail("a closing parenthesis");
      if (item === "anchor") {
        anchor = true;
        continue;
      }
      if ("predicate" in item) continue;
      if ("negatedField" in item) {
        negated.push(item.negatedField);
        continue;
      }
      const child = unwrap(item);
      if (child.kind === "group") {
        // Siblings in parentheses inside a node: spliced into the parent's children when plain.
        if (child.quantifier || child.field || child.captures.length > 0) throw new UnsupportedQuery("a quantified or captured group of siblings");
        const inner = child.children;
        for (let i = 0; i < inner.items.length; i++) {
          seq.anchors[seq.items.length] = (i === 0 && anchor) || inner.anchors[i]!;
          seq.items.push(inner.items[i]!);
        }
        anchor = inner.anchors[inner.items.length]!;
        continue;
      }
      seq.anchors[seq.items.length] = anchor;
      seq.items.push(child);
      anchor = false;
    }
  }

  #predicate(): void {
    const operator = this.#identifier();
    const args: Predicate["args"] = [];
    const src = this.#src;
    for (;;) {
      this.#skip();
      const c = src[this.#at];
      if (c === ")") {
        this.#at++;
        break;
      }
      if (c === "@") {
        this.#at++;
        args.push({ capture: this.#identifier() });
      } else if (c === '"') args.push({ text: this.#string() });
      else if (c !== undefined && /[\w]/.test(c)) args.push({ text: this.#identifier() });
      else this.#fail("a predicate argument");
    }
    this.#predicates.push({ operator, args });
  }
}

function emptySeq(): Sequence {
  return { items: [], anchors: [false] };
}

/** A group of one pattern is that pattern (its field, quantifier and captures carried over). */
function unwrap(pattern: Pattern): Pattern {
  if (pattern.kind !== "group" || pattern.children.items.length !== 1) return pattern;
  const { anchors } = pattern.children;
  if (anchors[0] || anchors[1]) return pattern;
  const inner = pattern.children.items[0]!;
  if (pattern.quantifier && inner.quantifier) return pattern;
  if (pattern.field && inner.field) return pattern;
  return {
    ...inner,
    field: inner.field ?? pattern.field,
    quantifier: inner.quantifier || pattern.quantifier,
    captures: [...inner.captures, ...pattern.captures],
  } as Pattern;
}

// ─── Compiled against a language ─────────────────────────────────────────────

interface CNode {
  kind: "node";
  /** Public symbol ids this pattern's type names; null: any type (named only when `named`). */
  ids: Set<number> | null;
  named: boolean;
  field: number;
  negated: number[];
  children: CSeq;
  captures: string[];
  quantifier: Quantifier;
}

interface CAlt {
  kind: "alt";
  options: CStep[];
  field: number;
  captures: string[];
  quantifier: Quantifier;
}

type CStep = CNode | CAlt;

interface CSeq {
  items: CStep[];
  anchors: boolean[];
  /** Field ids named by the items (their children's fields are looked up only then). */
  fields: number[];
}

interface CPattern {
  index: number;
  /** A single pattern, or siblings (a top-level group). */
  root: CStep | CSeq;
  predicates: ((captures: TagCapture[]) => boolean)[];
  /** Types the pattern's first node may have (null: any), for finding candidates. */
  entry: Set<number> | null;
}

/**
 * Our matcher for a tags query, or null when the query uses what it does not
 * support (then the caller compiles tree-sitter's Query). Throws on a node type or
 * field the language does not have, as tree-sitter's compiler does.
 */
export function compileTagMatcher(language: Language, source: string): TagQuery | null {
  let parsed: ParsedPattern[];
  try {
    parsed = parseQuery(source);
  } catch (error) {
    if (error instanceof UnsupportedQuery) return null;
    throw error;
  }
  try {
    return new TagMatcher(language, parsed);
  } catch (error) {
    if (error instanceof UnsupportedQuery) return null;
    throw error;
  }
}

class TagMatcher implements TagQuery {
  readonly #patterns: CPattern[];
  /** Type names for descendantsOfType: every pattern's entry types, or null when some pattern may start at any node. */
  readonly #entryNames: string[] | null;
  /** Patterns by the type ids they may start at; those that may start anywhere. */
  readonly #byEntry = new Map<number, CPattern[]>();
  readonly #anyEntry: CPattern[] = [];
  /** Named flag by type id. */
  readonly #named: Uint8Array;

  constructor(language: Language, parsed: ParsedPattern[]) {
    const symbols = symbolTable(language, typeNames(parsed));
    const supertypes = new Set(language.supertypes);
    const fieldId = (name: string | null): number => {
      if (name === null) return 0;
      const id = language.fieldIdForName(name);
      if (id === null || id <= 0) throw new Error(`the tags query names a field ${name} the grammar does not have`);
      return id;
    };
    const compileStep = (pattern: Pattern): CStep => {
      if (pattern.kind === "group") throw new UnsupportedQuery("a group of siblings inside an alternation");
      if (pattern.kind === "alt") {
        return { kind: "alt", options: pattern.options.map(compileStep), field: fieldId(pattern.field), captures: pattern.captures, quantifier: pattern.quantifier };
      }
      let ids: Set<number> | null = null;
      if (pattern.type !== null) {
        ids = symbols.get(`${pattern.named ? "n" : "a"}:${pattern.type}`) ?? null;
        if (!ids) throw new Error(`the tags query names a node type ${pattern.type} the grammar does not have`);
        for (const id of ids) if (supertypes.has(id)) throw new UnsupportedQuery(`supertype ${pattern.type}`);
      }
      return {
        kind: "node",
        ids,
        named: pattern.named,
        field: fieldId(pattern.field),
        negated: pattern.negated.map(fieldId),
        children: compileSeq(pattern.children),
        captures: pattern.captures,
        quantifier: pattern.quantifier,
      };
    };
    const compileSeq = (seq: Sequence): CSeq => {
      const items = seq.items.map(compileStep);
      const fields = new Set<number>();
      const collect = (step: CStep): void => {
        if (step.field) fields.add(step.field);
        if (step.kind === "alt") step.options.forEach(collect);
      };
      items.forEach(collect);
      return { items, anchors: seq.anchors, fields: [...fields] };
    };
    this.#patterns = parsed.map(({ pattern, predicates }, index) => {
      let root: CStep | CSeq;
      if (pattern.kind === "group") {
        if (pattern.quantifier || pattern.field || pattern.captures.length > 0) throw new UnsupportedQuery("a quantified top-level group");
        root = compileSeq(pattern.children);
        if (root.anchors[0] || root.anchors[root.items.length]) throw new UnsupportedQuery("an anchor at the edge of a top-level group");
        if (root.items.every((item) => item.quantifier === "?" || item.quantifier === "*")) throw new UnsupportedQuery("a group of optional patterns only");
      } else {
        if (pattern.quantifier) throw new UnsupportedQuery("a quantified top-level pattern");
        root = compileStep(pattern);
      }
      return { index, root, predicates: predicates.flatMap((p) => compilePredicate(p)), entry: entryTypes(root) };
    });
    const names = new Set<string>();
    for (const pattern of this.#patterns) {
      if (!pattern.entry) {
        this.#anyEntry.push(pattern);
        continue;
      }
      for (const id of pattern.entry) {
        names.add(symbolName(language, id));
        let list = this.#byEntry.get(id);
        if (!list) this.#byEntry.set(id, (list = []));
        list.push(pattern);
      }
    }
    this.#entryNames = this.#anyEntry.length > 0 ? null : [...names];
    const count = language.nodeTypeCount;
    this.#named = new Uint8Array(count);
    for (let id = 0; id < count; id++) this.#named[id] = language.nodeTypeIsNamed(id) ? 1 : 0;
  }

  matches(root: Node): TagMatch[] {
    const run = new MatchRun(this.#named);
    const candidates = this.#entryNames ? root.descendantsOfType(this.#entryNames) : allDescendants(root);
    const seenParents = new Set<string>();
    for (const node of candidates) {
      const typeId = node.typeId;
      const patterns = this.#anyEntry.length === 0 ? this.#byEntry.get(typeId) : this.#patterns;
      if (!patterns) continue;
      for (const pattern of patterns) {
        if (pattern.entry && !pattern.entry.has(typeId)) continue;
        if ("items" in pattern.root) {
          // Siblings: matched once over the children of each parent a candidate has.
          const parent = node.parent;
          const key = parent ? parent.id : -1;
          const seen = `${pattern.index}:${key}`;
          if (seenParents.has(seen)) continue;
          seenParents.add(seen);
          const siblings = parent ? run.children(parent, pattern.root.fields) : { nodes: [node], types: Int32Array.of(typeId), fields: null, looked: null };
          run.topSequence(pattern, siblings, key);
        } else {
          run.rootStep(pattern, node, typeId);
        }
      }
    }
    return run.finish(this.#patterns);
  }
}

function compilePredicate(predicate: Predicate): ((captures: TagCapture[]) => boolean)[] {
  const { operator, args } = predicate;
  const textsOf = (captures: TagCapture[], name: string): string[] => captures.filter((c) => c.name === name).map((c) => c.node.text);
  const first = args[0];
  switch (operator) {
    case "eq?":
    case "not-eq?":
    case "any-eq?":
    case "any-not-eq?": {
      const positive = operator === "eq?" || operator === "any-eq?";
      const all = !operator.startsWith("any-");
      const second = args[1];
      if (args.length !== 2 || !first || !("capture" in first) || !second) throw new UnsupportedQuery(`#${operator} arguments`);
      return [
        (captures) => {
          const left = textsOf(captures, first.capture);
          const test = (text: string): boolean => {
            if ("capture" in second) return textsOf(captures, second.capture).some((other) => (text === other) === positive);
            return (text === second.text) === positive;
          };
          return all ? left.every(test) : left.some(test);
        },
      ];
    }
    case "match?":
    case "not-match?":
    case "any-match?":
    case "any-not-match?": {
      const second = args[1];
      if (args.length !== 2 || !first || !("capture" in first) || !second || !("text" in second)) throw new UnsupportedQuery(`#${operator} arguments`);
      const positive = operator === "match?" || operator === "any-match?";
      const all = !operator.startsWith("any-");
      const regex = new RegExp(second.text);
      return [
        (captures) => {
          const texts = textsOf(captures, first.capture);
          if (texts.length === 0) return !positive;
          const test = (text: string): boolean => regex.test(text) === positive;
          return all ? texts.every(test) : texts.some(test);
        },
      ];
    }
    case "any-of?":
    case "not-any-of?": {
      if (!first || !("capture" in first) || !args.slice(1).every((a) => "text" in a)) throw new UnsupportedQuery(`#${operator} arguments`);
      const positive = operator === "any-of?";
      const values = new Set(args.slice(1).map((a) => (a as { text: string }).text));
      return [
        (captures) => {
          const texts = textsOf(captures, first.capture);
          if (texts.length === 0) return !positive;
          return texts.every((text) => values.has(text)) === positive;
        },
      ];
    }
    default:
      // is?, is-not?, set!, strip!, select-adjacent! …: properties and directives, which
      // web-tree-sitter hands back without filtering the match; the repo map reads none.
      return [];
  }
}

/** Public symbol ids by "n:name" (named) and "a:name" (anonymous), visible symbols only. */
function symbolTable(language: Language, used: Set<string>): Map<string, Set<number>> {
  const table = new Map<string, Set<number>>();
  const count = language.nodeTypeCount;
  const supertypes = new Set(language.supertypes);
  for (let id = 0; id < count; id++) {
    const name = language.nodeTypeForId(id);
    if (name === null || !used.has(name)) continue;
    const supertype = supertypes.has(id);
    if (!language.nodeTypeIsVisible(id) && !supertype) continue;
    const key = `${supertype || language.nodeTypeIsNamed(id) ? "n" : "a"}:${name}`;
    let ids = table.get(key);
    if (!ids) table.set(key, (ids = new Set()));
    ids.add(id);
  }
  return table;
}

function symbolName(language: Language, id: number): string {
  return language.nodeTypeForId(id) ?? "ERROR";
}

/** Every node type name the patterns use. */
function typeNames(parsed: ParsedPattern[]): Set<string> {
  const names = new Set<string>();
  const visit = (pattern: Pattern): void => {
    if (pattern.kind === "alt") pattern.options.forEach(visit);
    else {
      if (pattern.kind === "node" && pattern.type !== null) names.add(pattern.type);
      pattern.children.items.forEach(visit);
    }
  };
  for (const { pattern } of parsed) visit(pattern);
  return names;
}

/** The types a match's first node may have; null: any type. */
function entryTypes(root: CStep | CSeq): Set<number> | null {
  if ("items" in root) {
    const out = new Set<number>();
    for (const item of root.items) {
      const types = entryTypes(item);
      if (!types) return null;
      for (const id of types) out.add(id);
      if (item.quantifier !== "?" && item.quantifier !== "*") return out;
    }
    return out;
  }
  if (root.kind === "node") return root.ids ? new Set(root.ids) : null;
  const out = new Set<number>();
  for (const option of root.options) {
    const types = entryTypes(option);
    if (!types) return null;
    for (const id of types) out.add(id);
  }
  return out;
}

function allDescendants(root: Node): Node[] {
  const out: Node[] = [];
  const cursor = root.walk();
  try {
    for (;;) {
      out.push(cursor.currentNode);
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return out;
      }
    }
  } finally {
    cursor.delete();
  }
}

// ─── Matching ────────────────────────────────────────────────────────────────

/** What stays the same while one sequence is matched against one list of children. */
interface SeqRun {
  seq: CSeq;
  kids: Kids;
  /** A pattern's top-level sequence: it starts at a given child and has no parent whose first or last child matters. */
  top: boolean;
  done: (caps: Caps | null, last: Node | null, first: Node | null) => void;
}

interface Kids {
  nodes: Node[];
  /** Each child's type id, -1 until read (each read is a call into WebAssembly): see typeAt. */
  types: Int32Array;
  /** Each child's field id (0: none), when the pattern names fields. */
  fields: Int32Array | null;
  /** The field ids looked up so far. */
  looked: Set<number> | null;
}

/** Captures as a linked list (shared prefixes while enumerating). */
interface Caps {
  name: string;
  node: Node;
  next: Caps | null;
}

interface Found {
  pattern: number;
  /** The match's first node (its depth orders matches finishing on the same node). */
  root: Node;
  /** Matches of one pattern that tree-sitter compares: on one node, or (siblings) under one parent. */
  group: number;
  /** The node on which tree-sitter's cursor finishes the match: the one the pattern's last step matched. */
  last: Node;
  captures: TagCapture[];
}

class MatchRun {
  #kids = new Map<number, Kids>();
  #found: Found[] = [];
  readonly #named: Uint8Array;

  constructor(named: Uint8Array) {
    this.#named = named;
  }

  /** Whether a node of this type id is named (ERROR and ids past the table are). */
  isNamed(typeId: number): boolean {
    return typeId >= this.#named.length || this.#named[typeId] === 1;
  }

  children(node: Node, fields: number[]): Kids {
    let kids = this.#kids.get(node.id);
    if (!kids) {
      const nodes = node.children as Node[];
      kids = { nodes, types: new Int32Array(nodes.length).fill(-1), fields: null, looked: null };
      this.#kids.set(node.id, kids);
    }
    for (const field of fields) {
      if (kids.looked?.has(field)) continue;
      (kids.looked ??= new Set()).add(field);
      const fieldsOf = (kids.fields ??= new Int32Array(kids.nodes.length));
      for (const child of node.childrenForFieldId(field)) {
        const at = kids.nodes.findIndex((n) => n.id === child.id);
        if (at >= 0 && fieldsOf[at] === 0) fieldsOf[at] = field;
      }
    }
    return kids;
  }

  rootStep(pattern: CPattern, node: Node, typeId: number): void {
    const step = pattern.root as CStep;
    this.#step(step, node, typeId, 0, null, (caps, last) => this.#record(pattern.index, node, node.id, last, caps));
  }

  topSequence(pattern: CPattern, siblings: Kids, parent: number): void {
    const seq = pattern.root as CSeq;
    const nodes = siblings.nodes;
    for (let start = 0; start < nodes.length; start++) {
      if (pattern.entry && !pattern.entry.has(typeAt(siblings, start))) continue;
      const run: SeqRun = { seq, kids: siblings, top: true, done: (caps, last, first) => this.#record(pattern.index, first!, parent, last!, caps) };
      this.#sequence(run, 0, start, -1, null, null);
    }
  }

  #record(pattern: number, root: Node, group: number, last: Node, caps: Caps | null): void {
    const captures: TagCapture[] = [];
    for (let c = caps; c; c = c.next) captures.push({ name: c.name, node: c.node });
    captures.reverse();
    this.#found.push({ pattern, root, group, last, captures });
  }

  /** Matches one step against one node; calls `done` once per way it matches. */
  #step(step: CStep, node: Node, typeId: number, field: number, caps: Caps | null, done: (caps: Caps | null, last: Node) => void, outer: string[] = NONE): void {
    if (step.field && step.field !== field) return;
    if (step.kind === "alt") {
      // An alternation's captures are its options' (after their own), on the node the option matched.
      const captures = outer.length === 0 ? step.captures : [...step.captures, ...outer];
      for (const option of step.options) this.#step(option, node, typeId, field, caps, done, captures);
      return;
    }
    if (step.ids) {
      if (!step.ids.has(typeId)) return;
    } else if (step.named && !this.isNamed(typeId)) return;
    for (const negated of step.negated) if (node.childForFieldId(negated)) return;
    const withMine = addCaptures(outer, node, addCaptures(step.captures, node, caps));
    if (step.children.items.length === 0) {
      done(withMine, node);
      return;
    }
    const kids = this.children(node, step.children.fields);
    this.#sequence({ seq: step.children, kids, top: false, done: (inner, last) => done(inner, last!) }, 0, 0, -1, withMine, node);
  }

  /**
   * Matches the run's items[i…] against its kids from index `from` on; `prev` is the index of the
   * child the previous item matched (-1: none yet). Top-level sequences start at exactly `from`.
   */
  #sequence(run: SeqRun, i: number, from: number, prev: number, caps: Caps | null, last: Node | null, first: Node | null = null, carried = false): void {
    const { seq, kids, top, done } = run;
    const nodes = kids.nodes;
    // An anchor before a skipped optional item carries to the next one (or the end).
    const anchored = carried || seq.anchors[i]!;
    if (i === seq.items.length) {
      if (anchored && !top) {
        for (let k = prev + 1; k < nodes.length; k++) if (this.isNamed(typeAt(kids, k))) return;
      }
      done(caps, last, first);
      return;
    }
    const item = seq.items[i]!;
    const immediate = anchored && !(top && prev < 0);
    // Zero repetitions of an optional item.
    if (item.quantifier === "?" || item.quantifier === "*") this.#sequence(run, i + 1, from, prev, caps, last, first, anchored);
    const repeat = item.quantifier === "*" || item.quantifier === "+";
    for (let k = from; k < nodes.length; k++) {
      if (top && prev < 0 && k !== from) break;
      const node = nodes[k]!;
      if (immediate && k > prev + 1) {
        // Only unnamed nodes may be skipped between anchored siblings (or before the first child).
        if (this.isNamed(typeAt(kids, k - 1)) && k - 1 > prev) break;
      }
      const field = kids.fields ? kids.fields[k]! : 0;
      if (item.field && item.field !== field) continue;
      this.#step(item, node, typeAt(kids, k), field, caps, (inner, stepLast) => {
        const start = first ?? node;
        // One more repetition, or on to the next item.
        if (repeat) this.#repeat(run, i, k + 1, inner, start);
        this.#sequence(run, i + 1, k + 1, k, inner, stepLast, start);
      });
    }
  }

  /** Further repetitions of a `*`/`+` item. */
  #repeat(run: SeqRun, i: number, from: number, caps: Caps | null, first: Node | null): void {
    const { seq, kids } = run;
    const item = seq.items[i]!;
    const nodes = kids.nodes;
    for (let k = from; k < nodes.length; k++) {
      // A repetition follows the last without a named node between (as tree-sitter matches them).
      if (k > from && this.isNamed(typeAt(kids, k - 1))) break;
      const node = nodes[k]!;
      const field = kids.fields ? kids.fields[k]! : 0;
      if (item.field && item.field !== field) continue;
      this.#step(item, node, typeAt(kids, k), field, caps, (inner, stepLast) => {
        this.#repeat(run, i, k + 1, inner, first);
        this.#sequence(run, i + 1, k + 1, k, inner, stepLast, first);
      });
    }
  }

  /**
   * The matches in tree-sitter's order, after its filtering: per pattern and first
   * node, a match whose captures another's contain is dropped (tree-sitter keeps
   * the longest of matches in progress together); then the predicates.
   */
  finish(patterns: CPattern[]): TagMatch[] {
    const found = this.#found;
    const kept: Found[] = [];
    const groups = new Map<string, Found[]>();
    for (const f of found) {
      const key = `${f.pattern}:${f.group}`;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = []));
      group.push(f);
    }
    for (const group of groups.values()) {
      if (group.length === 1) {
        kept.push(group[0]!);
        continue;
      }
      const sets = group.map((f) => new Set(f.captures.map((c) => `${c.name}\u0000${c.node.id}`)));
      for (let a = 0; a < group.length; a++) {
        let drop = false;
        for (let b = 0; b < group.length && !drop; b++) {
          if (a === b) continue;
          if (!contains(sets[b]!, sets[a]!)) continue;
          // Equal sets: keep the first; a strictly smaller one goes.
          if (sets[a]!.size < sets[b]!.size || b < a) drop = true;
        }
        if (!drop) kept.push(group[a]!);
      }
    }
    // Depth only breaks ties of nodes with the same range (an ancestor is no shorter).
    const depth = new Map<number, number>();
    const depthOf = (node: Node): number => {
      let d = depth.get(node.id);
      if (d === undefined) {
        const parent = node.parent;
        d = parent ? depthOf(parent) + 1 : 0;
        depth.set(node.id, d);
      }
      return d;
    };
    const order = (a: Node, b: Node): number =>
      a.id === b.id ? 0 : a.startIndex - b.startIndex || b.endIndex - a.endIndex || depthOf(a) - depthOf(b);
    kept.sort((a, b) => order(a.last, b.last) || depthOf(a.root) - depthOf(b.root) || a.pattern - b.pattern);
    const out: TagMatch[] = [];
    for (const f of kept) {
      const predicates = patterns[f.pattern]!.predicates;
      if (predicates.every((p) => p(f.captures))) out.push({ patternIndex: f.pattern, captures: f.captures });
    }
    return out;
  }
}

const NONE: string[] = [];

function typeAt(kids: Kids, k: number): number {
  let type = kids.types[k]!;
  if (type < 0) type = kids.types[k] = kids.nodes[k]!.typeId;
  return type;
}

function contains(big: Set<string>, small: Set<string>): boolean {
  if (small.size > big.size) return false;
  for (const k of small) if (!big.has(k)) return false;
  return true;
}

function addCaptures(names: string[], node: Node, caps: Caps | null): Caps | null {
  let out = caps;
  for (const name of names) out = { name, node, next: out };
  return out;
}
