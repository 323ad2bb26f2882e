import type { RE2JS } from "re2js";
import { badRequest } from "../../http/errors.ts";

/**
 * The condition language of conditional routing (Portkey-compatible, MongoDB-like). A query is an object whose
 * keys are either logical operators (`$and`, `$or`: arrays of queries) or field paths rooted at
 * `metadata.` (x-gateway-metadata), `params.` (the JSON request body) or `url.` (`url.pathname`), mapped to a
 * value (equality) or to an object of comparison operators, all of which must hold:
 * `$eq $ne $gt $gte $lt $lte $in $nin $regex`.
 *
 * Comparisons: `$eq`/`$in` compare strictly, except that a number and a numeric string compare as numbers
 * (metadata values are always strings); `$gt`... compare numbers (numeric strings included) or else two strings;
 * a missing field matches only `$ne` and `$nin`. `$regex` tests strings (RE2 syntax, linear time; compiled once).
 */

export interface QueryContext {
  metadata: Record<string, string>;
  params: Record<string, unknown>;
  url: { pathname: string };
}

export type Predicate = (context: QueryContext) => boolean;

const COMPARISONS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$regex"]);
const ROOTS = new Set(["metadata", "params", "url"]);
const MAX_REGEX_LENGTH = 512;

/**
 * RE2 is a large module that only configs with a `$regex` need: it is loaded by the first such config
 * (`loadRegexEngine`, awaited by whoever compiles a config that mentions `$regex`), not at every cold start.
 */
let re2: typeof import("re2js") | undefined;

export async function loadRegexEngine(): Promise<void> {
  re2 ??= await import("re2js");
}

/** Whether compiling this config text needs the regex engine loaded first. */
export const needsRegexEngine = (configText: string): boolean => re2 === undefined && configText.includes("$regex");

/** Compiles (and validates) a query; errors are 400s naming `param` + the offending path. */
export function compileQuery(query: unknown, param: string): Predicate {
  if (!isPlainObject(query))
    throw badRequest(`Invalid value for '${param}': a query must be an object.`, param, "invalid_config");
  const parts: Predicate[] = [];
  for (const [key, value] of Object.entries(query)) {
    const at = `${param}.${key}`;
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value) || value.length === 0) {
        throw badRequest(`Invalid value for '${at}': ${key} takes a non-empty array of queries.`, at, "invalid_config");
      }
      const children = value.map((child, index) => compileQuery(child, `${at}[${index}]`));
      parts.push(
        key === "$and"
          ? (context) => children.every((child) => child(context))
          : (context) => children.some((child) => child(context)),
      );
      continue;
    }
    if (key.startsWith("$")) {
      throw badRequest(
        `Invalid value for '${at}': unknown operator ${key} at the top of a query (use $and or $or, or a field path).`,
        at,
        "invalid_config",
      );
    }
    const root = key.split(".")[0]!;
    if (!ROOTS.has(root) || key === root) {
      throw badRequest(
        `Invalid value for '${at}': a field path starts with metadata., params. or url.`,
        at,
        "invalid_config",
      );
    }
    const read = fieldReader(key);
    const test = compileField(value, at);
    parts.push((context) => test(read(context)));
  }
  if (parts.length === 1) return parts[0]!;
  return (context) => parts.every((part) => part(context));
}

function fieldReader(path: string): (context: QueryContext) => unknown {
  const [root, ...rest] = path.split(".");
  const whole = rest.join(".");
  return (context) => {
    const base = (context as unknown as Record<string, unknown>)[root!];
    if (!isPlainObject(base)) return undefined;
    // Metadata keys may contain dots themselves: the whole remainder wins when it is a key.
    if (Object.hasOwn(base, whole)) return base[whole];
    let current: unknown = base;
    for (const segment of rest) {
      if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
      else if (isPlainObject(current) && Object.hasOwn(current, segment)) current = current[segment];
      else return undefined;
    }
    return current;
  };
}

type Test = (value: unknown) => boolean;

function compileField(spec: unknown, param: string): Test {
  const operators =
    isPlainObject(spec) && Object.keys(spec).length > 0 && Object.keys(spec).every((key) => key.startsWith("$"));
  if (!operators) {
    if (isPlainObject(spec) && Object.keys(spec).some((key) => key.startsWith("$"))) {
      throw badRequest(`Invalid value for '${param}': do not mix operators and plain keys.`, param, "invalid_config");
    }
    return (value) => equals(value, spec);
  }
  const tests: Test[] = [];
  for (const [operator, operand] of Object.entries(spec as Record<string, unknown>)) {
    const at = `${param}.${operator}`;
    if (!COMPARISONS.has(operator)) {
      throw badRequest(
        `Invalid value for '${at}': unknown operator ${operator}; use one of ${[...COMPARISONS].join(" ")}.`,
        at,
        "invalid_config",
      );
    }
    tests.push(compileOperator(operator, operand, at));
  }
  return tests.length === 1 ? tests[0]! : (value) => tests.every((test) => test(value));
}

function compileOperator(operator: string, operand: unknown, param: string): Test {
  switch (operator) {
    case "$eq":
      return (value) => equals(value, operand);
    case "$ne":
      return (value) => !equals(value, operand);
    case "$in":
    case "$nin": {
      if (!Array.isArray(operand))
        throw badRequest(`Invalid value for '${param}': ${operator} takes an array.`, param, "invalid_config");
      const isIn: Test = (value) =>
        Array.isArray(value)
          ? value.some((item) => operand.some((candidate) => equals(item, candidate)))
          : operand.some((candidate) => equals(value, candidate));
      return operator === "$in"
        ? (value) => value !== undefined && isIn(value)
        : (value) => value === undefined || !isIn(value);
    }
    case "$regex": {
      if (typeof operand !== "string" || operand.length > MAX_REGEX_LENGTH) {
        throw badRequest(
          `Invalid value for '${param}': $regex takes a pattern string of at most ${MAX_REGEX_LENGTH} characters.`,
          param,
          "invalid_config",
        );
      }
      // RE2 (linear time in the input): a JavaScript RegExp backtracks, and a pattern such as `^(a+)+$` made
      // one request's model name block the event loop for seconds. RE2 syntax has no look-around or
      // back-references: such patterns are refused here.
      if (!re2) throw new Error("compileQuery: a $regex needs loadRegexEngine() first");
      let pattern: RE2JS;
      try {
        pattern = re2.RE2JS.compile(operand);
      } catch (error) {
        throw badRequest(
          `Invalid value for '${param}': ${(error as Error).message} ($regex uses RE2 syntax: no look-around or back-references).`,
          param,
          "invalid_config",
        );
      }
      return (value) => typeof value === "string" && pattern.test(value);
    }
    default: {
      if (typeof operand !== "number" && typeof operand !== "string") {
        throw badRequest(
          `Invalid value for '${param}': ${operator} takes a number or a string.`,
          param,
          "invalid_config",
        );
      }
      const holds: (sign: number) => boolean =
        operator === "$gt"
          ? (sign) => sign > 0
          : operator === "$gte"
            ? (sign) => sign >= 0
            : operator === "$lt"
              ? (sign) => sign < 0
              : (sign) => sign <= 0;
      return (value) => {
        const sign = compare(value, operand);
        return sign !== undefined && holds(sign);
      };
    }
  }
}

const isNumeric = (value: unknown): boolean =>
  typeof value === "number"
    ? Number.isFinite(value)
    : typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value));

function equals(value: unknown, expected: unknown): boolean {
  if (value === expected) return true;
  if (value === undefined) return false;
  if (typeof value !== typeof expected && isNumeric(value) && isNumeric(expected))
    return Number(value) === Number(expected);
  if (typeof value === "object" && typeof expected === "object" && value !== null && expected !== null) {
    return JSON.stringify(value) === JSON.stringify(expected);
  }
  return false;
}

/** Sign of value - operand, or undefined when they do not compare (missing, or mixed non-numeric types). */
function compare(value: unknown, operand: number | string): number | undefined {
  if (isNumeric(value) && isNumeric(operand)) return Math.sign(Number(value) - Number(operand));
  if (typeof value === "string" && typeof operand === "string") return value < operand ? -1 : value > operand ? 1 : 0;
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
