/**
 * SCIM filters (RFC 7644 3.4.2.2) as identity providers send them: `userName eq "a@b.c"`,
 * `externalId eq "x"`, `displayName eq "Eng"`, `emails[type eq "work"].value eq "a@b.c"`,
 * joined with `and` / `or`, grouped with parentheses, negated with `not (...)`.
 * Parsed into a small tree, evaluated against a resource's SCIM representation.
 */

export type CompareOp = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "ge" | "lt" | "le";

export type Filter =
  | { kind: "compare"; path: AttrPath; op: CompareOp; value: string | number | boolean | null }
  | { kind: "present"; path: AttrPath }
  | { kind: "and" | "or"; left: Filter; right: Filter }
  | { kind: "not"; filter: Filter };

/** `emails[type eq "work"].value` -> attribute `emails`, element filter, sub-attribute `value`. */
export interface AttrPath {
  attribute: string;
  where?: Filter;
  sub?: string;
}

export class FilterSyntaxError extends Error {}

/**
 * Bounds of a filter, so that a hostile one answers 400 instead of exhausting the stack (the parser recurses per
 * group) or the CPU (each term is evaluated against every resource). Identity providers send a comparison or
 * two (`userName eq "..."`, `emails[type eq "work"].value eq "..."`); these leave ample room.
 */
export const MAX_FILTER_CHARS = 4096;
/** Groups `( )`, `not ( )` and value filters `[ ]` nested in one another. */
export const MAX_FILTER_DEPTH = 16;

const COMPARE_OPS = new Set(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]);
const CORE_URN = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i;

type Token = { type: "word" | "string" | "(" | ")" | "[" | "]"; text: string };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const char = input[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if ("()[]".includes(char)) {
      tokens.push({ type: char as Token["type"], text: char });
      i++;
    } else if (char === '"') {
      let text = "";
      i++;
      while (i < input.length && input[i] !== '"') {
        if (input[i] === "\\" && i + 1 < input.length) i++;
        text += input[i];
        i++;
      }
      if (input[i] !== '"') throw new FilterSyntaxError("Unterminated string in filter.");
      i++;
      tokens.push({ type: "string", text });
    } else {
      let text = "";
      while (i < input.length && !/[\s()[\]"]/.test(input[i]!)) text += input[i++];
      tokens.push({ type: "word", text });
    }
  }
  return tokens;
}

/**
 * A PATCH path (RFC 7644 3.5.2): `active`, `name.givenName`, `members[value eq "id"]`,
 * `emails[type eq "work"].value`, or an extension's `urn:...:2.0:User:department` (attribute = the URN).
 */
export function parsePatchPath(text: string): AttrPath {
  const trimmed = text.trim().replace(CORE_URN, "");
  if (/^urn:/i.test(trimmed)) {
    const colon = trimmed.lastIndexOf(":");
    return { attribute: trimmed.slice(0, colon), sub: trimmed.slice(colon + 1) };
  }
  const bracket = trimmed.indexOf("[");
  if (bracket > 0) {
    const close = trimmed.lastIndexOf("]");
    if (close < bracket) throw new FilterSyntaxError(`Invalid path '${text}'.`);
    const rest = trimmed.slice(close + 1);
    if (rest !== "" && !/^\.[A-Za-z$][\w$-]*$/.test(rest)) throw new FilterSyntaxError(`Invalid path '${text}'.`);
    return {
      attribute: trimmed.slice(0, bracket),
      where: parseFilter(trimmed.slice(bracket + 1, close)),
      ...(rest ? { sub: rest.slice(1) } : {}),
    };
  }
  if (!/^[A-Za-z$][\w$-]*(\.[A-Za-z$][\w$-]*)?$/.test(trimmed)) throw new FilterSyntaxError(`Invalid path '${text}'.`);
  const dot = trimmed.indexOf(".");
  return dot > 0 ? { attribute: trimmed.slice(0, dot), sub: trimmed.slice(dot + 1) } : { attribute: trimmed };
}

/** Parses a filter; FilterSyntaxError (SCIM `invalidFilter`) when it is not one. */
export function parseFilter(input: string): Filter {
  if (input.length > MAX_FILTER_CHARS) {
    throw new FilterSyntaxError(`The filter is longer than ${MAX_FILTER_CHARS} characters.`);
  }
  const tokens = tokenize(input);
  let position = 0;
  let depth = 0;
  const nested = <T>(parse: () => T): T => {
    if (++depth > MAX_FILTER_DEPTH) {
      throw new FilterSyntaxError(`The filter nests groups deeper than ${MAX_FILTER_DEPTH} levels.`);
    }
    const result = parse();
    depth--;
    return result;
  };
  const peek = () => tokens[position];
  const next = () => {
    const token = tokens[position++];
    if (!token) throw new FilterSyntaxError("Unexpected end of filter.");
    return token;
  };
  const isWord = (token: Token | undefined, word: string) =>
    token?.type === "word" && token.text.toLowerCase() === word;

  function parseOr(): Filter {
    let left = parseAnd();
    while (isWord(peek(), "or")) {
      next();
      left = { kind: "or", left, right: parseAnd() };
    }
    return left;
  }
  function parseAnd(): Filter {
    let left = parseUnary();
    while (isWord(peek(), "and")) {
      next();
      left = { kind: "and", left, right: parseUnary() };
    }
    return left;
  }
  function parseUnary(): Filter {
    if (isWord(peek(), "not")) {
      next();
      return { kind: "not", filter: parseGroup() };
    }
    if (peek()?.type === "(") return parseGroup();
    return parseComparison();
  }
  function parseGroup(): Filter {
    if (next().type !== "(") throw new FilterSyntaxError("Expected '('.");
    const inner = nested(parseOr);
    if (next().type !== ")") throw new FilterSyntaxError("Expected ')'.");
    return inner;
  }
  function parseComparison(): Filter {
    const path = parsePath();
    const opToken = next();
    const op = opToken.text.toLowerCase();
    if (opToken.type !== "word") throw new FilterSyntaxError(`Expected an operator, got '${opToken.text}'.`);
    if (op === "pr") return { kind: "present", path };
    if (!COMPARE_OPS.has(op)) throw new FilterSyntaxError(`Unknown operator '${opToken.text}'.`);
    return { kind: "compare", path, op: op as CompareOp, value: parseValue(next()) };
  }
  function parsePath(): AttrPath {
    const token = next();
    if (token.type !== "word") throw new FilterSyntaxError(`Expected an attribute, got '${token.text}'.`);
    const head = token.text.replace(CORE_URN, "");
    if (peek()?.type === "[") {
      next();
      const where = nested(parseOr);
      if (next().type !== "]") throw new FilterSyntaxError("Expected ']'.");
      const after = peek();
      let sub: string | undefined;
      if (after?.type === "word" && after.text.startsWith(".")) {
        next();
        sub = after.text.slice(1);
      }
      return { attribute: head, where, ...(sub ? { sub } : {}) };
    }
    const dot = head.indexOf(".");
    return dot > 0 ? { attribute: head.slice(0, dot), sub: head.slice(dot + 1) } : { attribute: head };
  }

  if (tokens.length === 0) throw new FilterSyntaxError("Empty filter.");
  const filter = parseOr();
  if (position !== tokens.length) throw new FilterSyntaxError(`Unexpected '${tokens[position]!.text}' in filter.`);
  return filter;
}

function parseValue(token: Token): string | number | boolean | null {
  if (token.type === "string") return token.text;
  if (token.type !== "word") throw new FilterSyntaxError(`Expected a value, got '${token.text}'.`);
  const word = token.text.toLowerCase();
  if (word === "true") return true;
  if (word === "false") return false;
  if (word === "null") return null;
  const number = Number(token.text);
  if (token.text !== "" && Number.isFinite(number)) return number;
  throw new FilterSyntaxError(`Expected a value, got '${token.text}'.`);
}

/** The value of an attribute, matched case-insensitively as SCIM attribute names are. */
export function attributeOf(resource: unknown, name: string): unknown {
  if (!resource || typeof resource !== "object" || Array.isArray(resource)) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(resource)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** Attributes compared exactly (RFC 7643: `caseExact` true); the rest ignore case. */
const CASE_EXACT = new Set(["id", "externalid"]);

function valuesAt(resource: unknown, path: AttrPath): unknown[] {
  const raw = attributeOf(resource, path.attribute);
  let values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (path.where) values = values.filter((element) => matchesFilter(path.where!, element));
  if (path.sub) values = values.map((element) => attributeOf(element, path.sub!)).filter((v) => v !== undefined);
  return values.flatMap((value) => (Array.isArray(value) ? value : [value]));
}

function compare(op: CompareOp, actual: unknown, expected: string | number | boolean | null, exact: boolean) {
  if (expected === null) return op === "eq" ? actual == null : op === "ne" ? actual != null : false;
  let left = actual;
  let right: unknown = expected;
  if (typeof left === "string" && typeof right === "string" && !exact) {
    left = left.toLowerCase();
    right = right.toLowerCase();
  }
  switch (op) {
    case "eq":
      return left === right;
    case "ne":
      return left !== right;
    case "co":
      return typeof left === "string" && left.includes(String(right));
    case "sw":
      return typeof left === "string" && left.startsWith(String(right));
    case "ew":
      return typeof left === "string" && left.endsWith(String(right));
    default: {
      if (typeof left !== typeof right || (typeof left !== "string" && typeof left !== "number")) return false;
      const l = left as string | number;
      const r = right as string | number;
      return op === "gt" ? l > r : op === "ge" ? l >= r : op === "lt" ? l < r : l <= r;
    }
  }
}

/** Whether a resource (its SCIM JSON) matches the filter. */
export function matchesFilter(filter: Filter, resource: unknown): boolean {
  switch (filter.kind) {
    case "and":
      return matchesFilter(filter.left, resource) && matchesFilter(filter.right, resource);
    case "or":
      return matchesFilter(filter.left, resource) || matchesFilter(filter.right, resource);
    case "not":
      return !matchesFilter(filter.filter, resource);
    case "present":
      return valuesAt(resource, filter.path).some((value) => value !== null && value !== "");
    case "compare": {
      const values = valuesAt(resource, filter.path);
      const exact = CASE_EXACT.has((filter.path.sub ?? filter.path.attribute).toLowerCase());
      if (filter.op === "ne") return values.every((value) => compare("ne", value, filter.value, exact));
      return values.some((value) => compare(filter.op, value, filter.value, exact));
    }
  }
}
