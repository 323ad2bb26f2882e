/** Opaque page cursors: base64url of a JSON value (a last key). Callers must treat them as opaque strings. */

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** Decodes a cursor made by encodeCursor; throws RangeError for anything else so callers can answer 400. */
export function decodeCursor<T extends object>(cursor: string): T {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof value === "object" && value !== null) return value as T;
  } catch {
    // fall through
  }
  throw new RangeError("invalid cursor");
}
