type JsonContainer = Record<string, unknown> | unknown[];

/**
 * A deep copy of a JSON value (objects, arrays, strings, numbers, booleans, null), such as a parsed stream
 * event's item that the caller goes on changing. About 15 times cheaper than structuredClone for the small items
 * of a stream (which goes through V8's serializer), which every streamed Responses answer pays. Walked with an
 * explicit stack, so a provider's deeply nested event cannot overflow the call stack.
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  const root = emptyLike(value as JsonContainer);
  const pending: Array<[from: JsonContainer, to: JsonContainer]> = [[value as JsonContainer, root]];
  while (pending.length > 0) {
    const [from, to] = pending.pop()!;
    for (const key of Object.keys(from)) {
      let field = (from as Record<string, unknown>)[key];
      if (typeof field === "object" && field !== null) {
        const copy = emptyLike(field as JsonContainer);
        pending.push([field as JsonContainer, copy]);
        field = copy;
      }
      // JSON.parse makes `__proto__` an own field; assigned, it would set the copy's prototype instead.
      if (key === "__proto__") Object.defineProperty(to, key, { value: field, enumerable: true, writable: true });
      else (to as Record<string, unknown>)[key] = field;
    }
  }
  return root as T;
}

const emptyLike = (value: JsonContainer): JsonContainer => (Array.isArray(value) ? [] : {});
