import type { IncomingHttpHeaders } from "node:http";

/** What the gateway reads from request headers: a subset of the Web `Headers` API (which satisfies it). */
export interface HeaderSource extends Iterable<[string, string]> {
  get(name: string): string | null;
  has(name: string): boolean;
}

/**
 * Node's parsed request headers (lower-case names, repeated headers already joined) behind the HeaderSource
 * interface. The Web `Headers` object the HTTP adapter would otherwise build validates, copies and sorts every
 * header: measurable on the data plane, which reads a handful of them.
 */
export class NodeHeaders implements HeaderSource {
  readonly #raw: IncomingHttpHeaders;

  constructor(raw: IncomingHttpHeaders) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    const value = this.#lookup(name);
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }

  has(name: string): boolean {
    return this.#lookup(name) !== undefined;
  }

  /**
   * Own properties only: Node's headers object inherits Object.prototype, and names come from clients
   * (`x-gateway-forward-headers`), so `constructor` or `__proto__` must find nothing. The gateway asks in lower
   * case; only other callers pay for the conversion.
   */
  #lookup(name: string): string | string[] | undefined {
    const raw = this.#raw;
    if (Object.hasOwn(raw, name)) return raw[name];
    const lower = name.toLowerCase();
    return lower !== name && Object.hasOwn(raw, lower) ? raw[lower] : undefined;
  }

  [Symbol.iterator](): Iterator<[string, string]> {
    // An array's iterator: cheaper than a generator, and the headers are read whole at most twice a request.
    const entries: Array<[string, string]> = [];
    for (const name of Object.keys(this.#raw)) {
      const value = this.#raw[name];
      if (value !== undefined) entries.push([name, Array.isArray(value) ? value.join(", ") : value]);
    }
    return entries[Symbol.iterator]();
  }
}

/** The headers of a request as the handlers read them: the platform's cheap view when it gave one. */
export function headersOf(request: Request, ctx: { headers?: HeaderSource }): HeaderSource {
  return ctx.headers ?? request.headers;
}
