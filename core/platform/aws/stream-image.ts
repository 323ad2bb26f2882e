/**
 * DynamoDB's typed attribute values as they appear in stream records (`NewImage`: `{ "S": "x" }`,
 * `{ "N": "1" }`, `{ "M": {...} }`...) to plain values and back. A dozen lines instead of
 * @aws-sdk/util-dynamodb, which is only a transitive dependency here and would grow the stream worker's bundle.
 */

export type StreamAttribute =
  | { S: string }
  | { N: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { B: string }
  | { M: StreamImage }
  | { L: StreamAttribute[] }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] };

export type StreamImage = Record<string, StreamAttribute>;

/** An image (item) as a plain object: numbers as numbers, sets as arrays, binaries as base64 text. */
export function fromImage(image: StreamImage): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(image)) out[name] = fromAttribute(value);
  return out;
}

export function fromAttribute(value: StreamAttribute): unknown {
  if ("S" in value) return value.S;
  if ("N" in value) return Number(value.N);
  if ("BOOL" in value) return value.BOOL;
  if ("NULL" in value) return null;
  if ("M" in value) return fromImage(value.M);
  if ("L" in value) return value.L.map(fromAttribute);
  if ("B" in value) return value.B;
  if ("SS" in value) return [...value.SS];
  if ("NS" in value) return value.NS.map(Number);
  if ("BS" in value) return [...value.BS];
  throw new TypeError(`unknown DynamoDB attribute type ${Object.keys(value).join(",")}`);
}

/** A plain JSON-like object as an image (undefined attributes left out), for tests and the benchmark. */
export function toImage(item: Record<string, unknown>): StreamImage {
  const out: StreamImage = {};
  for (const [name, value] of Object.entries(item)) if (value !== undefined) out[name] = toAttribute(value);
  return out;
}

export function toAttribute(value: unknown): StreamAttribute {
  if (value === null) return { NULL: true };
  if (typeof value === "string") return { S: value };
  if (typeof value === "number") return { N: String(value) };
  if (typeof value === "boolean") return { BOOL: value };
  if (Array.isArray(value)) return { L: value.filter((entry) => entry !== undefined).map(toAttribute) };
  if (typeof value === "object") return { M: toImage(value as Record<string, unknown>) };
  throw new TypeError(`cannot convert a ${typeof value} to a DynamoDB attribute`);
}
