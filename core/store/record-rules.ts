/**
 * The meaning of the Records port in plain code: expiry, conditions, updates and page sizes. Adapters that
 * evaluate conditions themselves (SQLite) call these; adapters that push them to the database (DynamoDB)
 * translate the same rules and are held to them by the contract suite.
 */
import type { RecordItem, RecordQuery, RecordUpdate, WriteCondition } from "./ports.ts";

/** Current time in (fractional) Unix seconds, the unit of `ttl` and `expiresAt`. */
export const nowSeconds = (): number => Date.now() / 1000;

/** An expiry that is a number in the past; anything else (absent, not a number) never expires. */
export const isExpired = (expiry: unknown, now: number): boolean => typeof expiry === "number" && expiry < now;

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export function pageSize(limit: number | undefined, max = MAX_PAGE_SIZE, fallback = DEFAULT_PAGE_SIZE): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new RangeError(`limit must be 1..${max}`);
  return limit;
}

export function checkQuery(query: RecordQuery): void {
  if (query.prefix !== undefined && (query.from !== undefined || query.to !== undefined)) {
    throw new RangeError("a query takes either a prefix or a range, not both");
  }
}

/** Key attributes must be non-empty strings (DynamoDB rejects empty key values, so both platforms do). */
export function checkItem(item: RecordItem): void {
  for (const name of ["pk", "sk"] as const) {
    if (typeof item[name] !== "string" || item[name] === "") throw new RangeError(`${name} must be a non-empty string`);
  }
  for (const name of ["gsi1pk", "gsi1sk"] as const) {
    const value = item[name];
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      throw new RangeError(`${name} must be a non-empty string when present`);
    }
  }
}

const KEY_ATTRIBUTES = new Set(["pk", "sk"]);

export function checkUpdate(update: RecordUpdate): void {
  const set = Object.keys(update.set ?? {});
  const remove = update.remove ?? [];
  for (const name of [...set, ...remove]) {
    if (KEY_ATTRIBUTES.has(name)) throw new RangeError(`cannot update key attribute ${name}`);
  }
  const overlap = remove.find((name) => set.includes(name));
  if (overlap) throw new RangeError(`attribute ${overlap} is both set and removed`);
}

/** `update` applied to a copy of `item`. Setting an attribute to `undefined` removes it, as JSON would. */
export function applyUpdate(item: RecordItem, update: RecordUpdate): RecordItem {
  const next: RecordItem = { ...item };
  for (const [name, value] of Object.entries(update.set ?? {})) {
    if (value === undefined) delete next[name];
    else next[name] = value;
  }
  for (const name of update.remove ?? []) delete next[name];
  return next;
}

/** Whether `condition` holds for `current`, the live item or undefined when absent or expired. */
export function conditionHolds(current: RecordItem | undefined, condition: WriteCondition | undefined): boolean {
  if (!condition) return true;
  if (condition.exists === true && current === undefined) return false;
  if (condition.exists === false && current !== undefined) return false;
  for (const [name, expected] of Object.entries(condition.equals ?? {})) {
    const actual = current?.[name];
    if (expected === null ? actual !== undefined : !deepEqual(actual, expected)) return false;
  }
  return true;
}

/** Structural equality of JSON values; object key order does not matter (DynamoDB maps are unordered). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every(
    (key) =>
      Object.hasOwn(b, key) && deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}
