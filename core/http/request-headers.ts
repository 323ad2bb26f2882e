/** What the gateway reads from request headers: a subset of the Web `Headers` API (which satisfies it). */
export interface HeaderSource extends Iterable<[string, string]> {
  get(name: string): string | null;
  has(name: string): boolean;
}
