/**
 * DynamoDB's typed attribute values (`{ "S": "x" }`, `{ "N": "1" }`, `{ "M": {...} }`...) to and from plain
 * JavaScript values, with the behaviour our adapters relied on from lib-dynamodb's `removeUndefinedValues`:
 * undefined map entries and list elements are left out, numbers must be finite and exactly representable,
 * and objects other than plain ones (Date, Map, class instances) are refused rather than guessed at.
 */

export type AttributeValue =
  | { S: string }
  | { N: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { B: string }
  | { M: AttributeMap }
  | { L: AttributeValue[] }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] };

export type AttributeMap = Record<string, AttributeValue>;

/** A plain object as a DynamoDB item (or key, or expression values); undefined attributes are left out. */
export function marshallItem(item: Record<string, unknown>): AttributeMap {
  const out: AttributeMap = {};
  for (const [name, value] of Object.entries(item)) {
    if (value !== undefined) out[name] = marshallValue(value);
  }
  return out;
}

export function marshallValue(value: unknown): AttributeValue {
  switch (typeof value) {
    case "string":
      return { S: value };
    case "boolean":
      return { BOOL: value };
    case "number":
      return { N: numberText(value) };
    case "bigint":
      return { N: value.toString() };
    case "object":
      if (value === null) return { NULL: true };
      if (Array.isArray(value)) return { L: value.filter((entry) => entry !== undefined).map(marshallValue) };
      if (value instanceof Uint8Array) return { B: Buffer.from(value).toString("base64") };
      if (isPlainObject(value)) return { M: marshallItem(value) };
      break;
  }
  throw new TypeError(`cannot store a ${describe(value)} in DynamoDB: only JSON-like values are supported`);
}

function numberText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`cannot store ${value} in DynamoDB`);
  // A JavaScript number past 2^53 has already lost digits: refuse it rather than store a different number.
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw new RangeError(`${value} is beyond Number.MAX_SAFE_INTEGER: store it as a string or a bigint`);
  }
  return String(value);
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (typeof value !== "object" || value === null) return typeof value;
  return value.constructor?.name ?? "object";
}

/** A DynamoDB item as a plain object. */
export function unmarshallItem(item: AttributeMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) out[name] = unmarshallValue(value);
  return out;
}

export function unmarshallValue(value: AttributeValue): unknown {
  if ("S" in value) return value.S;
  if ("N" in value) return Number(value.N);
  if ("BOOL" in value) return value.BOOL;
  if ("NULL" in value) return null;
  if ("M" in value) return unmarshallItem(value.M);
  if ("L" in value) return value.L.map(unmarshallValue);
  if ("B" in value) return new Uint8Array(Buffer.from(value.B, "base64"));
  if ("SS" in value) return new Set(value.SS);
  if ("NS" in value) return new Set(value.NS.map(Number));
  if ("BS" in value) return new Set(value.BS.map((entry) => new Uint8Array(Buffer.from(entry, "base64"))));
  throw new TypeError(`unknown DynamoDB attribute type ${Object.keys(value).join(",")}`);
}
