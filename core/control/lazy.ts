/**
 * Input a service reads only after its permission checks: the value, or a function that reads and validates
 * it (a handler passes `() => readBody(request, schema, limit)`). So a caller aimed at a resource it may not
 * touch gets Forbidden or NotFound, never a validation error that would tell it about the resource.
 */
export type Lazy<T> = T | (() => Promise<T>);

export function resolveLazy<T>(input: Lazy<T>): Promise<T> {
  return typeof input === "function" ? (input as () => Promise<T>)() : Promise.resolve(input);
}
